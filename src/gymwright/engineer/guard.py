"""Guardrails that keep what works ("From Trainee to Trainer": keep changes that help).

After a stage trains, its validation result (the transfer signal) is compared with the stage
before:

- **rollback**: validation fell by more than the 95% interval of the difference: the stage's
  policy and environment are discarded and the next stage starts again from the previous stage's
  policy on the previous stage's environment;
- **revert**: the engineer's change before this stage was followed by no improvement of
  validation (within noise or worse): the policy is kept (it is not measurably worse), but the
  environment goes back to what it was before the change;
- **keep**: otherwise.

The guarded curriculum runner records every decision with its reason, and shows the engineer
the changes it undid (so it does not propose them again).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gymwright.engineer.evidence import Validation

KEEP, REVERT, ROLLBACK = "keep", "revert", "rollback"


@dataclass
class GuardDecision:
    action: str  # keep, revert or rollback
    reason: str


def judge(stage: int, previous: Validation | None, current: Validation, changed: bool) -> GuardDecision:
    """The decision after stage `stage` (0-based) whose validation is `current`; `previous` is the
    kept policy's validation before it, `changed` whether the engineer changed the environment."""
    if previous is None:
        return GuardDecision(KEEP, f"stage {stage + 1}: first validation {current.mean:.3f}")
    ci = math.hypot(previous.ci95, current.ci95)
    before, after = previous.mean, current.mean
    if before - after > ci:
        return GuardDecision(ROLLBACK, f"stage {stage + 1}: validation fell {before:.3f} -> {after:.3f}, by more than "
                                       f"the 95% interval of the difference ({ci:.3f}): rolled back to the previous "
                                       "stage's policy and environment")
    if changed and after <= before:
        return GuardDecision(REVERT, f"stage {stage + 1}: validation did not improve after the engineer's change "
                                     f"({before:.3f} -> {after:.3f}): the environment goes back to before the change, "
                                     "the policy is kept")
    return GuardDecision(KEEP, f"stage {stage + 1}: validation {before:.3f} -> {after:.3f}: kept")
