"""Guardrails that keep what works ("From Trainee to Trainer": keep changes that help).

After a stage trains, its validation result (the transfer signal) is compared with the stage
before:

- **rollback**: validation fell by more than the 95% interval of the difference: the stage's
  policy and environment are discarded and the next stage starts again from the previous stage's
  policy on the previous stage's environment;
- **revert**: the engineer's change before this stage was followed by no improvement of
  validation (within noise or worse): the policy is kept (it is not measurably worse), but the
  environment goes back to what it was before the change;
- **revert** also when the change was aimed at the band and missed: a bucket whose knobs the
  engineer moved because its training metric was outside the band did not come measurably nearer
  to the band (by more than `AIM_TOL`) in any such bucket (`judge_aim`), unless validation rose
  at all. The band is only a proxy for the objective: when validation rose, even by less than its
  noise, the validation rule already governs the change (a rise is kept), and undoing it on the
  proxy's word cost a stage (a move whose validation rose 0.450 -> 0.492, just inside the noise,
  was reverted). This rule needs no validation cells, so it also guards runs that have none (the
  demo's pie game cutting 10 -> 5 -> 1 rounds while `agreed` stayed at 1.0 is what it stops
  after the first step);
- **keep**: otherwise.

The guarded curriculum runner records every decision with its reason, and shows the engineer
the changes it undid (so it does not propose them again). `Guard` holds what the rules read from
one stage to the next: the stage last kept, whether the engineer changed the environment, the
reasons given and the mixtures undone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from gymwright.engineer.evidence import StageEvidence, Validation
from gymwright.engineer.mixture import Mixture

KEEP, REVERT, ROLLBACK = "keep", "revert", "rollback"
AIM_TOL = 0.02
"""how much nearer to the band a moved bucket's training metric must come to count as moved"""


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


def band_distance(success: float, band: tuple[float, float]) -> float:
    """How far `success` lies outside the band (0 inside)."""
    return max(0.0, band[0] - success, success - band[1])


def judge_aim(stage: int, before: StageEvidence, after: StageEvidence, band: tuple[float, float]) -> GuardDecision | None:
    """REVERT when the engineer moved the knobs of buckets that were outside the band and none of
    them came nearer to it; None when no such bucket exists or one moved (the validation rule,
    `judge`, decides the rest)."""
    old = {b.label: (b.params, e.success) for b, e in before.buckets}
    aimed = [(b.label, old[b.label][1], e.success) for b, e in after.buckets
             if b.label in old and b.params != old[b.label][0] and band_distance(old[b.label][1], band) > 0]
    if not aimed or any(band_distance(s1, band) < band_distance(s0, band) - AIM_TOL for _, s0, s1 in aimed):
        return None
    shown = "; ".join(f"{label}: {s0:.3f} -> {s1:.3f}" for label, s0, s1 in aimed)
    return GuardDecision(REVERT, f"stage {stage + 1}: the engineer's change did not move the training metric toward "
                                 f"the band {band[0]:g}-{band[1]:g} ({shown}): the environment goes back to before "
                                 "the change, the policy is kept")


def _rose(before: Validation | None, after: Validation | None) -> bool:
    """Validation rose at all (by any amount, noise or not). The band rule stands aside then: the
    objective is validation, and whether a rise inside the noise is kept is the validation rule's
    call (`judge`), not the band's; False when either side has no validation (the band rule is
    then all there is)."""
    if before is None or after is None:
        return False
    return after.mean > before.mean


@dataclass
class Kept:
    """The policy the next stage starts from, and what it was measured on."""

    checkpoint: str
    validation: Validation | None
    mixture: Mixture
    evidence: StageEvidence
    returns: dict[str, float]


@dataclass
class Guard:
    """The guardrails over a curriculum's stages (`on`: `CurriculumOptions.guard`), and their state.
    Unguarded, it only keeps each stage as it comes (`kept`: what the next stage starts from)."""

    on: bool
    say: Callable[[str], None] = lambda _: None
    kept: Kept | None = None
    changed: bool = False  # the engineer changed the environment before the stage being judged
    reasons: list[str] = field(default_factory=list)  # every revert and rollback, shown to the engineer
    rejected: list[Mixture] = field(default_factory=list)  # the mixtures they undid
    _judging: bool = False  # this stage is judged (guarded, a stage kept before it, no edit between)

    def judge(self, stage: int, trained: Mixture, validation: Validation | None, across_edit: bool) -> GuardDecision | None:
        """The validation rule (`judge`) on the stage just trained on `trained`; None when the
        stage is not judged: unguarded, the first stage, across an edit (another game), or no
        validation."""
        self._judging = self.on and self.kept is not None and not across_edit
        if not self._judging or self.kept is None or validation is None:
            return None
        decision = judge(stage, self.kept.validation, validation, self.changed)
        if decision.action != KEEP:
            self._reject(decision, trained)
        return decision

    def judge_aim(self, stage: int, trained: Mixture, evidence: StageEvidence, validation: Validation | None,
                  band: tuple[float, float]) -> GuardDecision | None:
        """The band rule (`judge_aim`) on a stage the validation rule kept: a change aimed at the band
        that missed it, unless validation rose at all (any rise, even inside the noise: the
        validation rule has already judged it, and the band is only a proxy for validation)."""
        if not (self._judging and self.kept is not None and self.changed) or _rose(self.kept.validation, validation):
            return None
        decision = judge_aim(stage, self.kept.evidence, evidence, band)
        if decision is not None:
            self._reject(decision, trained)
        return decision

    def keep(self, kept: Kept) -> None:
        self.kept = kept

    @property
    def last(self) -> Kept:
        """What the last judged stage kept: the policy and environment the next stage starts from
        (set once the first stage is judged; the runner reads it only after)."""
        if self.kept is None:
            raise RuntimeError("Guard.last read before any stage was kept (Guard.keep comes first)")
        return self.kept

    def _reject(self, decision: GuardDecision, trained: Mixture) -> None:
        self.reasons.append(decision.reason)
        self.rejected.append(trained)
        self.say(f"  guardrail: {decision.reason}")
