"""The environment engineer: reads the evidence of a training stage and proposes the next
stage's environment (params now; spec edits later), with a rationale.

```python
from gymwright.engineer import Evidence, HeuristicEngineer, knobs_of, measure_sensitivity
knobs = measure_sensitivity(spec, params, policy, knobs_of(spec, params, structural), "valid")
proposal = HeuristicEngineer().propose(Evidence(spec, params, "valid", success, (0.4, 0.8), knobs=knobs))
```
"""

from gymwright.engineer.engineers import (
    GUIDELINE,
    Engineer,
    FixedEngineer,
    HeuristicEngineer,
    LLMEngineer,
    Proposal,
)
from gymwright.engineer.evidence import (
    Evidence,
    Knob,
    Validation,
    knobs_of,
    measure_sensitivity,
    measure_validation,
)
from gymwright.engineer.space import ConfigSpace
from gymwright.engineer.ued import DomainRandomization, PrioritizedReplay

__all__ = [
    "Engineer", "FixedEngineer", "HeuristicEngineer", "LLMEngineer", "Proposal", "GUIDELINE",
    "Evidence", "Knob", "knobs_of", "measure_sensitivity", "Validation", "measure_validation",
    "ConfigSpace", "DomainRandomization", "PrioritizedReplay",
]
