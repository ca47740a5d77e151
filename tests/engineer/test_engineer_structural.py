"""Structural levers and guardrails: the configuration space, the heuristic's structural rule,
the guardrail's decisions, the UED baselines over the same levels, and the LLM engineer's
mixture of buckets named by structure (a scripted model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from gymwright.curriculum.guard import KEEP, REVERT, ROLLBACK, judge, judge_aim
from gymwright.engineer import (
    ConfigSpace,
    DomainRandomization,
    HeuristicEngineer,
    LLMEngineer,
    PrioritizedReplay,
)
from gymwright.engineer.evidence import Evidence, StageEvidence, Validation
from gymwright.engineer.mixture import Bucket, Mixture
from gymwright.engineer.ued import level_label, replay_distribution
from gymwright.errors import GymwrightError
from gymwright.llm.client import LLM
from gymwright.llm.scripted import ScriptedProvider

FIXED = {"max_steps": 30, "view_radius": 2}
SPACE = ConfigSpace.for_spec("mapf_frozenlake", {"size": [3, 4, 5, 6], "n_agents": [2, 3]},
                             {"wait_ratio": [0.0, 0.25, 0.5, 0.75], "hole_density": [0.1, 0.2]}, FIXED)
TARGET = {**FIXED, "size": 6, "n_agents": 3, "wait_ratio": 0.75, "hole_density": 0.2}


def params(size: int, agents: int = 2, wait: float = 0.25, holes: float = 0.2) -> dict:
    return {**FIXED, "size": size, "n_agents": agents, "wait_ratio": wait, "hole_density": holes}


def stage(successes: dict[str, tuple[dict, float]], history: list | None = None, k: int = 0, stages: int = 4,
          rejected: list | None = None) -> StageEvidence:
    rows = [(Bucket(p, 1.0, label), Evidence("mapf_frozenlake", p, "valid", s, (0.3, 0.6)))
            for label, (p, s) in successes.items()]
    Mixture([b for b, _ in rows])  # normalizes the shares
    return StageEvidence("mapf_frozenlake", "valid", (0.3, 0.6), rows, history or [], k, stages,
                         space=SPACE, targets=[TARGET], rejected=rejected or [])


def test_a_space_is_checked_against_the_spec_and_names_its_levels() -> None:
    with pytest.raises(GymwrightError, match=r"outside the spec's range \[1, 5\]"):
        ConfigSpace.for_spec("mapf_frozenlake", {"n_agents": [2, 7]}, {})
    with pytest.raises(GymwrightError, match="not a param of mapf_frozenlake"):
        ConfigSpace.for_spec("mapf_frozenlake", {"agents": [2]}, {})
    assert len(SPACE.levels()) == 4 * 2 * 4 * 2 and SPACE.label(params(4, 3)) == "size=4 n_agents=3"
    assert SPACE.harder_shapes({"size": 6, "n_agents": 2}) == [{"size": 6, "n_agents": 3}]
    assert SPACE.nearest({"size": 9, "n_agents": 3, "wait_ratio": 0.3, "hole_density": 0.0})["size"] == 6
    assert "n_agents (structural" in SPACE.to_prompt() and "number of walkers" in SPACE.to_prompt()


def test_the_heuristic_opens_the_next_harder_bucket_toward_the_target_when_the_hardest_is_mastered() -> None:
    ev = stage({"size=4 n_agents=2": (params(4), 0.5), "size=5 n_agents=2": (params(5), 0.65)})
    p = HeuristicEngineer().propose_stage(ev)
    labels = [b.label for b in p.mixture.buckets]
    # size 6 with 2 agents and size 5 with 3 agents are both one step harder; both are 2 steps from the
    # target (6, 3), so the tie goes to the first lever's neighbour
    assert labels == ["size=4 n_agents=2", "size=5 n_agents=2", "size=6 n_agents=2"] and "mastered" in p.rationale
    by = {b.label: b for b in p.mixture.buckets}
    assert by["size=5 n_agents=2"].params["wait_ratio"] == 0.5, "above the band: one allowed value harder"
    assert by["size=4 n_agents=2"].params == params(4), "inside the band: kept"


def test_the_heuristic_gives_most_data_where_success_is_nearest_one_half() -> None:
    ev = stage({"size=3 n_agents=2": (params(3), 0.97), "size=4 n_agents=2": (params(4), 0.5),
                "size=5 n_agents=2": (params(5), 0.02)}, history=[
        {"index": 0, "mixture": [{"label": "size=5 n_agents=2", "success": 0.0}]}])
    p = HeuristicEngineer().propose_stage(ev)
    by = {b.label: b.share for b in p.mixture.buckets}
    assert by["size=4 n_agents=2"] > 3 * by["size=3 n_agents=2"] and by["size=4 n_agents=2"] > 3 * by["size=5 n_agents=2"]
    assert min(by.values()) >= 0.05 - 1e-9


def test_the_heuristic_opens_a_bucket_on_a_plateau_or_when_the_budget_runs_out_else_waits() -> None:
    one = {"size=4 n_agents=2": (params(4), 0.4)}
    waits = HeuristicEngineer().propose_stage(stage(one, stages=6))  # 3 structural steps to go, 5 stages left
    assert len(waits.mixture.buckets) == 1, "not mastered, no earlier stage, budget left: wait"
    flat = stage(one, history=[{"index": 0, "mixture": [{"label": "size=4 n_agents=2", "success": 0.38}]}], k=1)
    p = HeuristicEngineer().propose_stage(flat)
    assert len(p.mixture.buckets) == 2 and "stopped improving" in p.rationale
    late = stage({"size=5 n_agents=2": (params(5), 0.4)}, k=2, stages=4)  # 2 steps to (6, 3), 1 stage left
    assert "stage(s) left" in HeuristicEngineer().propose_stage(late).rationale


def test_the_heuristic_does_not_repeat_a_proposal_the_guardrail_undid() -> None:
    ev = stage({"size=4 n_agents=2": (params(4), 0.5), "size=5 n_agents=2": (params(5), 0.65)})
    first = HeuristicEngineer().propose_stage(ev).mixture
    again = HeuristicEngineer().propose_stage(stage(
        {"size=4 n_agents=2": (params(4), 0.5), "size=5 n_agents=2": (params(5), 0.65)}, rejected=[first]))
    assert [b.label for b in again.mixture.buckets] == ["size=4 n_agents=2", "size=5 n_agents=2"]
    assert "undone by the guardrail" in again.rationale


def test_the_guardrail_rolls_back_a_fall_beyond_noise_reverts_a_change_that_did_not_help() -> None:
    before = Validation({"a": 0.5}, 0.5, 0.03)
    assert judge(1, before, Validation({"a": 0.4}, 0.4, 0.03), changed=False).action == ROLLBACK
    assert judge(1, before, Validation({"a": 0.48}, 0.48, 0.03), changed=True).action == REVERT
    assert judge(1, before, Validation({"a": 0.48}, 0.48, 0.03), changed=False).action == KEEP
    assert judge(1, before, Validation({"a": 0.55}, 0.55, 0.03), changed=True).action == KEEP
    assert judge(0, None, before, changed=True).action == KEEP
    assert "rolled back" in judge(1, before, Validation({"a": 0.1}, 0.1, 0.03), changed=True).reason


def _stage(buckets: list[tuple[str, dict, float]]) -> StageEvidence:
    band = (0.3, 0.6)
    return StageEvidence("pie", "agreed", band, [(Bucket(p, 1 / len(buckets), label),
                                                  Evidence("pie", p, "agreed", s, band)) for label, p, s in buckets])


def test_a_change_aimed_at_the_band_that_moved_nothing_is_reverted() -> None:
    before = _stage([("config", {"rounds": 10}, 1.0)])
    stuck = judge_aim(1, before, _stage([("config", {"rounds": 5}, 1.0)]), (0.3, 0.6))
    assert stuck is not None and stuck.action == REVERT
    assert "did not move the training metric toward the band 0.3-0.6 (config: 1.000 -> 1.000)" in stuck.reason
    assert judge_aim(1, before, _stage([("config", {"rounds": 5}, 0.8)]), (0.3, 0.6)) is None  # nearer: kept
    assert judge_aim(1, before, _stage([("config", {"rounds": 5}, 0.99)]), (0.3, 0.6)) is not None  # within AIM_TOL
    inside = _stage([("config", {"rounds": 10}, 0.5)])
    assert judge_aim(1, inside, _stage([("config", {"rounds": 5}, 0.5)]), (0.3, 0.6)) is None  # not aimed at the band
    # a bucket the engineer did not move (here: a new one was opened) is not judged by this rule
    opened = _stage([("config", {"rounds": 10}, 1.0), ("big", {"rounds": 20}, 0.2)])
    assert judge_aim(1, before, opened, (0.3, 0.6)) is None


def test_domain_randomization_is_uniform_over_exactly_the_space() -> None:
    mix = DomainRandomization(SPACE).initial()
    assert [b.params for b in mix.buckets] == SPACE.levels()
    assert np.allclose([b.share for b in mix.buckets], 1 / len(SPACE.levels()))


def test_prioritized_replay_ranks_levels_by_positive_value_loss_with_staleness() -> None:
    p = replay_distribution(np.array([0.1, 0.3, 0.2]), [0, 0, 0], 1, beta=1.0, rho=0.1)
    assert p.sum() == pytest.approx(1.0) and p[1] > p[2] > p[0]
    assert p[1] == pytest.approx(0.9 * 1 / (1 + 1 / 2 + 1 / 3) + 0.1 / 3)  # rank 1: h = 1, staleness uniform
    stale = replay_distribution(np.array([0.1, 0.1]), [1, 0], 2, beta=1.0, rho=1.0)
    assert stale[1] == pytest.approx(2 / 3), "the level scored longest ago gets the staleness mass"
    levels = SPACE.levels()
    rows = [(Bucket(lv, 1.0, level_label(SPACE, lv)),
             Evidence("mapf_frozenlake", lv, "valid", 0.5, (0.3, 0.6), train_stats={"positive_advantage": float(i)}))
            for i, lv in enumerate(levels)]
    out = PrioritizedReplay(SPACE).propose_stage(StageEvidence("mapf_frozenlake", "valid", (0.3, 0.6), rows, stage=1))
    shares = [b.share for b in out.mixture.buckets]
    assert int(np.argmax(shares)) == len(levels) - 1 and "positive value loss" in out.rationale


def test_the_llm_engineer_adds_drops_and_reweights_buckets_within_the_space(tmp_path: Path) -> None:
    reply = {"buckets": [{"size": 5, "n_agents": 3, "wait_ratio": 0.5, "hole_density": 0.2, "share": 0.7},
                         {"size": 9, "n_agents": 2, "wait_ratio": 0.3, "hole_density": 0.2, "share": 0.3}],
             "rationale": "validation is at 3 agents: move there"}
    script = tmp_path / "engineer.yaml"
    script.write_text(yaml.safe_dump([{"json": reply}]))
    provider = ScriptedProvider(script)
    ev = stage({"size=4 n_agents=2": (params(4), 0.5)}, k=1)
    ev.validation = Validation({"6x6 3 agents": 0.12}, 0.12, 0.04, {"optimal": 0.05}, 150)
    ev.target = "3 walkers on 6x6 lakes"
    p = LLMEngineer(LLM(provider, retries=0)).propose_stage(ev)
    by = {b.label: b for b in p.mixture.buckets}
    assert set(by) == {"size=5 n_agents=3", "size=6 n_agents=2"}, "one added, the old one dropped"
    assert by["size=6 n_agents=2"].params["wait_ratio"] == 0.25 and "nearest allowed" in p.rationale
    assert by["size=5 n_agents=3"].share == pytest.approx(0.7)
    prompt = provider.requests[0].messages[0].content
    for text in ("stage 2 of 4", "3 walkers on 6x6 lakes", "validation valid 0.120", "Levers you may use",
                 "The objective is the validation result", "example episodes"):
        assert text in prompt, text
    assert provider.requests[0].schema["properties"]["buckets"]["items"]["properties"]["size"]["enum"] == [3, 4, 5, 6]


def test_past_four_buckets_the_easiest_mastered_is_dropped_and_a_failing_bucket_gets_easier() -> None:
    ev = stage({"size=3 n_agents=2": (params(3), 0.9), "size=4 n_agents=2": (params(4), 0.7),
                "size=5 n_agents=2": (params(5), 0.1), "size=6 n_agents=2": (params(6, wait=0.5), 0.65)})
    p = HeuristicEngineer().propose_stage(ev)
    labels = [b.label for b in p.mixture.buckets]
    assert "size=6 n_agents=3" in labels and "size=3 n_agents=2" not in labels and len(labels) == 4
    assert "dropped size=3 n_agents=2" in p.rationale
    by = {b.label: b for b in p.mixture.buckets}
    assert by["size=5 n_agents=2"].params["wait_ratio"] == 0.0, "below the band: one allowed value easier"


def test_a_miss_of_the_band_is_not_undone_when_validation_rose_at_all() -> None:
    from gymwright.curriculum.guard import _rose

    before = Validation({"a": 0.27}, 0.27, 0.03)
    assert _rose(before, Validation({"a": 0.43}, 0.43, 0.03))  # beyond the noise: the objective moved
    assert _rose(before, Validation({"a": 0.29}, 0.29, 0.03))  # inside the noise: still a rise, kept
    assert not _rose(before, Validation({"a": 0.27}, 0.27, 0.03))  # equal: the band rule decides
    assert not _rose(before, Validation({"a": 0.25}, 0.25, 0.03))  # a fall: the band rule decides
    assert not _rose(None, before) and not _rose(before, None)


def knob_stage(p: dict, success: float, k: int = 0, stages: int = 4) -> StageEvidence:
    """One bucket whose wait ratio moves the metric far more than its hole ratio (measured)."""
    from gymwright.engineer.evidence import Knob

    knobs = [Knob("wait_ratio", p["wait_ratio"], 0.0, 1.0, False, -0.2, 0.02),
             Knob("hole_density", p["hole_density"], 0.0, 0.5, False, -0.05, 0.02)]
    e = Evidence("mapf_frozenlake", p, "valid", success, (0.3, 0.6), knobs=knobs)
    return StageEvidence("mapf_frozenlake", "valid", (0.3, 0.6), [(Bucket(p, 1.0, "b"), e)], [], k, stages,
                         space=SPACE, targets=[TARGET])


def test_harder_knobs_go_first_toward_the_judged_values_then_by_their_effect() -> None:
    at_wait = params(6, 3, wait=0.75, holes=0.1)  # the judged wait ratio (0.75) reached; holes 0.1 short of 0.2
    (b,) = HeuristicEngineer().propose_stage(knob_stage(at_wait, 0.8)).mixture.buckets
    assert (b.params["wait_ratio"], b.params["hole_density"]) == (0.75, 0.2)
    both_short = params(6, 3, wait=0.25, holes=0.1)
    (b,) = HeuristicEngineer().propose_stage(knob_stage(both_short, 0.8)).mixture.buckets
    assert (b.params["wait_ratio"], b.params["hole_density"]) == (0.5, 0.1)  # both short: the larger effect
    band_only = HeuristicEngineer(toward_targets=False).propose_stage(knob_stage(params(6, 3, 0.5, 0.1), 0.8))
    (b,) = band_only.mixture.buckets
    assert (b.params["wait_ratio"], b.params["hole_density"]) == (0.75, 0.1)  # the ablation: the effect alone


def test_inside_the_band_knobs_move_toward_the_judged_values_only_when_the_stages_run_out() -> None:
    short = params(6, 3, wait=0.5, holes=0.1)  # 2 steps short: wait 0.5 -> 0.75, holes 0.1 -> 0.2
    early = HeuristicEngineer().propose_stage(knob_stage(short, 0.45, k=0, stages=4))  # 3 stages left
    assert early.mixture.buckets[0].params == short and "knobs kept" in early.rationale
    late = HeuristicEngineer().propose_stage(knob_stage(short, 0.45, k=1, stages=4))  # 2 stages left
    assert late.mixture.buckets[0].params["wait_ratio"] == 0.75 and "2 step(s) short" in late.rationale
    ablation = HeuristicEngineer(toward_targets=False).propose_stage(knob_stage(short, 0.45, k=1, stages=4))
    assert ablation.mixture.buckets[0].params == short
