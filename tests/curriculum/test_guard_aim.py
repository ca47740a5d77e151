"""The guard's band rule (`Guard.judge_aim`) defers to any rise of validation: a change aimed at
the band that missed it is undone only when validation did not rise (or there is none)."""

from __future__ import annotations

from gymwright.curriculum.guard import KEEP, REVERT, Guard, GuardDecision, Kept
from gymwright.engineer.evidence import Evidence, StageEvidence, Validation
from gymwright.engineer.mixture import Bucket, Mixture

BAND = (0.3, 0.6)
BEFORE_PARAMS = {"size": 5, "n_agents": 3, "wait_ratio": 0.5}
AFTER_PARAMS = {"size": 5, "n_agents": 3, "wait_ratio": 0.75}  # the engineer moved the knob


def _evidence(params: dict, success: float) -> StageEvidence:
    bucket = Bucket(dict(params), 1.0, "size=5 n_agents=3")
    return StageEvidence("mapf_frozenlake", "valid", BAND,
                         [(bucket, Evidence("mapf_frozenlake", params, "valid", success, BAND))])


def _validation(mean: float, ci95: float) -> Validation:
    return Validation({"cell": mean}, mean, ci95)


def _judged(before: Validation | None, after: Validation | None) -> tuple[Guard, Mixture, GuardDecision | None]:
    """A guard that kept a stage whose one bucket trained at 0.9 (above the band) with validation
    `before`, and the validation rule's decision on the stage after the engineer's knob change."""
    guard = Guard(on=True)
    kept_mix = Mixture([Bucket(dict(BEFORE_PARAMS), 1.0, "size=5 n_agents=3")])
    guard.keep(Kept("before.pt", before, kept_mix, _evidence(BEFORE_PARAMS, 0.9), {}))
    guard.changed = True
    trained = Mixture([Bucket(dict(AFTER_PARAMS), 1.0, "size=5 n_agents=3")])
    return guard, trained, guard.judge(1, trained, after, across_edit=False)


def _aim(before: Validation | None, after: Validation | None) -> tuple[Guard, GuardDecision | None]:
    """The band rule's decision on that stage; the aimed bucket stayed at 0.9, no nearer to the
    band 0.3-0.6 than before."""
    guard, trained, _ = _judged(before, after)
    return guard, guard.judge_aim(1, trained, _evidence(AFTER_PARAMS, 0.9), after, BAND)


def test_a_rise_of_validation_inside_the_noise_is_not_reverted_by_the_band_rule() -> None:
    before, after = _validation(0.450, 0.05), _validation(0.492, 0.05)  # rise 0.042 < hypot(0.05, 0.05) = 0.071
    _, _, kept = _judged(before, after)
    assert kept is not None and kept.action == KEEP, "the validation rule keeps the rise"
    guard, decision = _aim(before, after)
    assert decision is None, "validation rose: the band rule stands aside"
    assert guard.reasons == [] and guard.rejected == []


def test_a_fall_or_no_change_of_validation_leaves_a_missed_aim_reverted() -> None:
    for after in (_validation(0.450, 0.05), _validation(0.43, 0.05)):  # equal; a fall inside the noise
        guard, decision = _aim(_validation(0.450, 0.05), after)
        assert decision is not None and decision.action == REVERT, after.mean
        assert "did not move the training metric toward the band 0.3-0.6" in decision.reason
        assert "size=5 n_agents=3: 0.900 -> 0.900" in decision.reason
        assert guard.reasons[-1] == decision.reason and guard.rejected[-1].buckets[0].params == AFTER_PARAMS


def test_without_validation_cells_the_band_rule_alone_decides() -> None:
    guard, decision = _aim(None, None)  # a run with no validation cells (the demo's pie game)
    assert decision is not None and decision.action == REVERT
    assert guard.reasons == [decision.reason]
