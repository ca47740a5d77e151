"""Samplers over a space with more levels than a stage can hold (a spec's declared ranges):
domain randomization draws `per_stage` levels afresh every stage, PLR replays half from the levels
it scored (by its replay distribution) and draws the other half fresh."""

from __future__ import annotations

from gymwright.engineer.evidence import Evidence, StageEvidence
from gymwright.engineer.space import ConfigSpace
from gymwright.engineer.ued import DomainRandomization, PrioritizedReplay

SPACE = ConfigSpace.for_spec("mapf_frozenlake", {"size": [3, 4, 5, 6], "n_agents": [2, 3]},
                             {"wait_ratio": [0.0, 0.25, 0.5, 0.75], "hole_density": [0.0, 0.1, 0.2, 0.3]})


def test_a_space_s_allowed_rule_removes_levels() -> None:
    every = len(SPACE.levels())
    narrow = ConfigSpace(SPACE.structural, SPACE.knobs, allowed=lambda p: p["size"] != 3)
    assert every == 128 and len(narrow.levels()) == 96 and all(p["size"] != 3 for p in narrow.levels())


def test_domain_randomization_draws_per_stage_levels_afresh() -> None:
    dr = DomainRandomization(SPACE, per_stage=16, seed=5)
    stages = [{b.label for b in dr.initial().buckets} for _ in range(3)]
    assert all(len(s) == 16 for s in stages) and stages[0] != stages[1]
    assert "16 drawn for the stage" in dr.propose_stage(StageEvidence("s", "valid", (0.3, 0.6), [])).rationale


def _scored(mixture, scores: dict[str, float]) -> StageEvidence:
    buckets = [(b, Evidence("s", b.params, "valid", 0.5, (0.3, 0.6),
                            train_stats={"positive_advantage": scores.get(b.label, 0.001)})) for b in mixture.buckets]
    return StageEvidence("s", "valid", (0.3, 0.6), buckets, stage=1)


def test_plr_replays_half_from_its_scored_levels_and_draws_the_rest_fresh() -> None:
    hot_seen = cold_seen = 0
    for seed in range(40):
        plr = PrioritizedReplay(SPACE, per_stage=16, seed=seed)
        first = plr.initial()
        hot = {b.label for b in first.buckets[:4]}
        p = plr.propose_stage(_scored(first, {label: 1.0 for label in hot}))
        labels = [b.label for b in p.mixture.buckets]
        assert len(labels) == 16 == len(set(labels))
        assert len(set(labels) & {b.label for b in first.buckets}) >= 8  # half replayed from the buffer
        assert "8 replayed from 16 scored" in p.rationale and "8 fresh" in p.rationale
        hot_seen += len(hot & set(labels))
        cold_seen += len(({b.label for b in first.buckets} - hot) & set(labels))
    assert hot_seen / (40 * 4) > 1.5 * cold_seen / (40 * 12)  # the high scores are replayed more often
