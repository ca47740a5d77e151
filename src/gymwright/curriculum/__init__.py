"""Curricula: stages of training between which an engineer (`gymwright.engineer`) redesigns the
environment, and curricula compared for the same budget on held-out configurations.

```python
from gymwright.curriculum import CurriculumOptions, compare, evolve, goal_for
records = evolve("mapf_frozenlake", {"size": 4}, HeuristicEngineer(), Path("runs/evolve"), CurriculumOptions(stages=3))
```

`runner` runs the stages (`evolve`), each trained by `training` (with the `demonstrations` it
imitates, if any), measured by `measure`, judged by the `guard`rails, written as a `record`; an
engineer's spec edit is realized by `edit`. `compare` trains several curricula and judges their
final policies on a `goal` (`mapf_goal` for MAPF-FrozenLake-like specs). This package imports
`gymwright.engineer` (what proposes), never the reverse.
"""

from gymwright.curriculum.compare import Arm, Comparison, compare, goal_for
from gymwright.curriculum.goal import Goal
from gymwright.curriculum.options import CurriculumOptions
from gymwright.curriculum.record import StageRecord
from gymwright.curriculum.runner import evolve

__all__ = ["CurriculumOptions", "StageRecord", "evolve", "Goal", "goal_for", "compare", "Comparison", "Arm"]
