"""The environment engineer: reads the evidence of a training stage and proposes the next
stage's environment (params now; spec edits later), with a rationale.

```python
from gymwright.engineer import Evidence, HeuristicEngineer, knobs_of, measure_sensitivity
knobs = measure_sensitivity(spec, params, policy, knobs_of(spec, params, structural), "valid")
proposal = HeuristicEngineer().propose(Evidence(spec, params, "valid", success, (0.4, 0.8), knobs=knobs))
```

Every name below is imported when first used, so `gymwright.engineer.registry` (the engineers by
name, which the CLI reads for its options) imports without the engineers' own dependencies.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

HOMES = {
    "Engineer": "engineers", "FixedEngineer": "engineers", "HeuristicEngineer": "engineers",
    "LLMEngineer": "engineers", "Proposal": "engineers", "GUIDELINE": "engineers",
    "Evidence": "evidence", "Knob": "evidence", "knobs_of": "evidence", "measure_sensitivity": "evidence",
    "Validation": "evidence", "measure_validation": "evidence",
    "ConfigSpace": "space", "DomainRandomization": "ued", "PrioritizedReplay": "ued",
}
"""each public name -> the module of this package that defines it"""

__all__ = [
    "Engineer", "FixedEngineer", "HeuristicEngineer", "LLMEngineer", "Proposal", "GUIDELINE",
    "Evidence", "Knob", "knobs_of", "measure_sensitivity", "Validation", "measure_validation",
    "ConfigSpace", "DomainRandomization", "PrioritizedReplay",
]


def __getattr__(name: str) -> Any:
    home = HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'gymwright.engineer' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"gymwright.engineer.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *HOMES])
