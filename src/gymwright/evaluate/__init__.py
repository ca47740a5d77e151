"""The evaluator: is a generated environment a good training environment?

```python
from gymwright.evaluate import assess
card = assess("mapf_frozenlake", {"size": 4, "n_agents": 2}, policy, history=result.history,
              task_metric="valid", out=Path("runs/mapf/eval"))
print(card.verdict, [(c.name, c.verdict, c.message) for c in card.checks])
```
"""

from gymwright.evaluate.checks import Check
from gymwright.evaluate.scorecard import Scorecard, assess
from gymwright.evaluate.trajectories import Trajectory, record, select, write_jsonl

__all__ = ["assess", "Scorecard", "Check", "Trajectory", "record", "select", "write_jsonl"]
