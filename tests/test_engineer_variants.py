"""The heuristic engineer picks a variant when no knob can move the task metric toward its band
(the demo's pie game: `agreed` stuck at 1.0 above the band), and only then, and only with edits on."""

from __future__ import annotations

from pathlib import Path

import pytest

from gymwright.engineer import Evidence, HeuristicEngineer, Knob, knobs_of
from gymwright.engineer.evidence import StageEvidence
from gymwright.engineer.mixture import Bucket, Mixture

BAND = (0.4, 0.8)
CAKE = "cake_negotiation"


def flat_knobs() -> list[Knob]:
    """The cake's knobs as measured when every episode agrees: no effect, no noise."""
    return knobs_of(CAKE, {}, {"offer_levels"})


def stage(success: float, knobs: list[Knob], spec: str = CAKE, rejected: list[Mixture] | None = None) -> StageEvidence:
    e = Evidence(spec, {}, "agreed", success, BAND, knobs=knobs)
    return StageEvidence(spec, "agreed", BAND, [(Bucket({}, 1.0, "config"), e)], rejected=rejected or [])


def test_a_stuck_pie_game_gets_the_outside_option_and_says_why() -> None:
    p = HeuristicEngineer(edits=True).propose_stage(stage(1.0, flat_knobs()))
    assert p.variant is not None and p.variant.variant == "outside_option"
    assert p.variant.report is not None and p.variant.report.passed
    assert p.edit is not None and p.edit.spec == p.variant.spec and p.edit.reason == p.variant.reason
    assert p.rationale.startswith("[config] agreed 1.000 is above the band, but no knob had a measurable effect in "
                                  "the needed direction; so the game changes instead of a knob: variant `outside_option`")
    assert "(it writes params.outside_value, state.opted_out, actions.bargainer[3]" in p.rationale
    assert p.rationale.endswith("the spaces differ (bargainer: actions 13 -> 14): the policy cannot carry over as it is")
    assert p.mixture.to_list() == [{"label": "config", "params": {}, "share": 1.0}]


def test_without_edits_the_stuck_game_keeps_its_spec() -> None:
    for engineer in (HeuristicEngineer(), HeuristicEngineer(edits=False)):
        p = engineer.propose_stage(stage(1.0, flat_knobs()))
        assert p.edit is None and p.variant is None
        assert p.rationale == ("[config] agreed 1.000 is above the band, but no knob had a measurable effect in the "
                               "needed direction: no change")


def test_a_knob_that_moves_the_metric_is_used_before_any_variant() -> None:
    knobs = flat_knobs()
    knobs[1].effect, knobs[1].ci95 = 0.08, 0.02  # more rounds: more agreement, beyond noise
    p = HeuristicEngineer(edits=True).propose_stage(stage(1.0, knobs))
    assert p.edit is None and p.mixture.buckets[0].params == {"max_rounds": 5}
    assert "max_rounds 10 -> 5 to make the task harder" in p.rationale


def test_inside_the_band_nothing_changes() -> None:
    p = HeuristicEngineer(edits=True).propose_stage(stage(0.6, flat_knobs()))
    assert p.edit is None and p.rationale.startswith("[config] agreed 0.600 is inside the band")


def test_below_the_band_no_variant_is_proposed() -> None:
    p = HeuristicEngineer(edits=True).propose_stage(stage(0.1, flat_knobs()))
    assert p.edit is None and p.variant is None
    assert p.rationale.endswith("every variant of the library makes a task harder, none easier: no change")


def test_a_knob_move_the_guardrail_undid_counts_as_stuck() -> None:
    knobs = flat_knobs()
    knobs[1].effect, knobs[1].ci95 = 0.08, 0.02
    undone = Mixture([Bucket({"max_rounds": 5}, 1.0, "config")])
    p = HeuristicEngineer(edits=True).propose_stage(stage(1.0, knobs, rejected=[undone]))
    assert p.variant is not None and p.variant.variant == "outside_option"
    assert "max_rounds 10 -> 5 to make the task harder; but the guardrail undid this knob move before; so the game " \
           "changes" in p.rationale


def test_one_config_proposal_carries_the_edit_too() -> None:
    p = HeuristicEngineer(edits=True).propose(Evidence(CAKE, {}, "agreed", 1.0, BAND, knobs=flat_knobs()))
    assert p.variant is not None and p.variant.variant == "outside_option"
    assert HeuristicEngineer().propose(Evidence(CAKE, {}, "agreed", 1.0, BAND, knobs=flat_knobs())).edit is None


@pytest.mark.slow
def test_the_next_stuck_stage_takes_the_next_variant(tmp_path: Path) -> None:
    """On the cake with its outside option, still stuck: two flavours, the seed's next harder version (and
    the library's next variant that applies)."""
    first = HeuristicEngineer(edits=True).propose_stage(stage(1.0, flat_knobs())).variant
    assert first is not None
    path = tmp_path / "cake_outside.yaml"
    path.write_text(first.to_yaml())
    knobs = knobs_of(str(path), {}, {"offer_levels"})
    p = HeuristicEngineer(edits=True).propose_stage(stage(1.0, knobs, spec=str(path)))
    assert p.variant is not None and p.variant.variant == "two_flavours" and p.variant.parent == "cake_negotiation"


def test_when_no_variant_applies_the_engineer_says_which_and_why() -> None:
    p = HeuristicEngineer(edits=True, variants=("obstacles", "one_more_agent")).propose_stage(stage(1.0, flat_knobs()))
    assert p.edit is None and p.variant is None
    assert p.rationale.endswith("no variant of the library applies (obstacles: it has no grid; one_more_agent: no "
                                "role's count is a param below its max (bargainer: 2): a fixed count means the rules "
                                "are written for exactly that many agents): no change")


def test_a_variant_that_adds_an_agent_moves_every_bucket_to_the_new_count() -> None:
    buckets = [Bucket({"n_hunters": 2, "rounds": r}, 0.5, label) for r, label in ((5, "a"), (9, "b"))]
    two = StageEvidence("stag_hunt", "stag_success_rate", BAND,
                        [(b, Evidence("stag_hunt", b.params, "stag_success_rate", 1.0, BAND)) for b in buckets])
    p = HeuristicEngineer(edits=True, variants=("one_more_agent",)).propose_stage(two)
    assert p.variant is not None and p.variant.params == {"n_hunters": 3}
    assert [b.params for b in p.mixture.buckets] == [{"n_hunters": 3, "rounds": 5}, {"n_hunters": 3, "rounds": 9}]
