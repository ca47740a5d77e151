"""`engineer.py`'s designer-lever arms, the static arm and the declared_ranges experiment: what each
method may use, where the static arm reads its mixture, and which levels the declared ranges hold.

Run with `pytest benchmarks/test_engineer_levers.py` (not part of the main suite).
"""

from __future__ import annotations

import json
from pathlib import Path

import engineer
import pytest

from gymwright.engineer import HeuristicEngineer
from gymwright.engineer.ued import DomainRandomization, PrioritizedReplay


def test_the_lever_arms_are_heuristic_engineers_with_their_levers_and_the_samplers_have_none() -> None:
    space = engineer.EXPERIMENTS["in_distribution"].space()
    for arm in ("heuristic-levers", "heuristic-park", "heuristic-imitation", "heuristic-rules", "heuristic-end",
                "heuristic-partners", "heuristic-rules-trials"):
        assert isinstance(engineer.make_engineer(arm, space, None), HeuristicEngineer)
    assert engineer.LEVER_ARMS["heuristic-levers"] == {"park_cost": None, "imitation": 0.1}
    assert engineer.LEVER_ARMS["llm"]["weight"] is None and "llm-plain" not in engineer.LEVER_ARMS
    assert not any(m in engineer.LEVER_ARMS for m in ("fixed", "dr", "plr", "heuristic"))
    assert "static" in engineer.BASELINES  # unguarded, and every engineer is paired with it
    assert engineer.levers_of("heuristic-rules")["end_on:conflicts"] == 1.0
    assert engineer.TRIAL_ARMS == {"heuristic-rules-trials": 3}  # the same levers, with K=3 trials a stage
    assert engineer.levers_of("heuristic-rules-trials") == engineer.levers_of("heuristic-rules")
    # the static arm starts as the run it copies: with that run's levers, and none after a plain engineer
    assert engineer.levers_of("static", "runs/x/heuristic-levers") == engineer.LEVER_ARMS["heuristic-levers"]
    assert engineer.levers_of("static", "runs/x/heuristic") == {}


def test_the_static_arm_trains_another_run_s_last_mixture_and_levers(tmp_path: Path) -> None:
    folder = tmp_path / "in_distribution" / "heuristic-levers-seed3"
    folder.mkdir(parents=True)
    last = {"index": 3, "levers": {"park_cost": 0.5, "imitation": 0.05},
            "trained_mixture": [{"label": "size=5", "params": {"size": 5, "n_agents": 3}, "share": 0.25},
                                {"label": "size=6", "params": {"size": 6, "n_agents": 3}, "share": 0.75}]}
    folder.joinpath("curriculum.jsonl").write_text(json.dumps({"index": 0}) + "\n" + json.dumps(last) + "\n")
    static = engineer.StaticEngineer.of(f"{tmp_path}/heuristic-levers", "in_distribution", 3)
    p = static.propose_stage(None)
    assert [(b.label, b.params["size"], round(b.share, 2)) for b in p.mixture.buckets] == [("size=5", 5, 0.25),
                                                                                         ("size=6", 6, 0.75)]
    assert p.mixture.levers == {"park_cost": 0.5, "imitation": 0.05}
    with pytest.raises(SystemExit, match="run heuristic-levers on seed 4 first"):
        engineer.StaticEngineer.of(f"{tmp_path}/heuristic-levers", "in_distribution", 4)
    with pytest.raises(SystemExit, match="needs --static-from RUNS/METHOD"):
        engineer.StaticEngineer.of(None, "in_distribution", 0)


def test_the_declared_ranges_span_every_declared_lever_and_hold_only_levels_the_game_can_make() -> None:
    exp = engineer.EXPERIMENTS["declared_ranges"]
    space = exp.space()
    levels = space.levels()
    assert {p["size"] for p in levels} == {3, 4, 5, 6, 8, 10} and {p["n_agents"] for p in levels} == {1, 2, 3, 4, 5}
    assert {p["slip"] for p in levels} == {0.0, 0.25, 0.5} and {p["max_steps"] for p in levels} == {10, 40, 100, 400}
    assert not any(p["n_agents"] == 1 and p["wait_ratio"] > 0 for p in levels)  # a wait needs two walkers
    blocked = engineer._infeasible()
    assert not any((p["size"], p["n_agents"], p["hole_density"], p["wait_ratio"]) in blocked for p in levels)
    assert all(p["view_radius"] == 2 and p["layout_pool"] == engineer.DECLARED_POOL for p in levels)
    assert engineer.HELD_OUT_POOL["declared_ranges"] == engineer.HELD_OUT_POOL["in_distribution"]  # judged alike
    assert exp.held_out == engineer.EXPERIMENTS["in_distribution"].held_out
    cells = engineer.validation_cells(exp)
    assert all(c["slip"] == 0.0 and c["max_steps"] == 40 and c["layout_pool"] == 1000 for c in cells.values())


def test_samplers_over_the_declared_ranges_draw_64_levels_a_stage() -> None:
    space = engineer.EXPERIMENTS["declared_ranges"].space()
    a, b = DomainRandomization(space, seed=0), DomainRandomization(space, seed=1)
    first, again = a.initial(), a.initial()
    assert len(first.buckets) == 64 and len({x.label for x in first.buckets}) == 64
    assert [x.label for x in first.buckets] != [x.label for x in again.buckets]  # afresh every stage
    assert [x.label for x in first.buckets] != [x.label for x in b.initial().buckets]  # seeded by the run
    assert len(PrioritizedReplay(space).initial().buckets) == 64
    curated = engineer.EXPERIMENTS["in_distribution"].space()
    assert len(DomainRandomization(curated).initial().buckets) == 48  # a small space: every level, as before


def test_the_llm_arm_sets_levers_from_its_reply_and_a_failed_reply_keeps_the_stage(tmp_path: Path) -> None:
    """The benchmark's `llm` arm with a scripted model: its first reply turns the parking cost on and
    trains two buckets of one size with their own wait ratios; its second reply is no JSON (kept, recorded)."""
    import yaml

    reply = {"buckets": [{"size": 5, "n_agents": 3, "wait_ratio": 0.5, "hole_density": 0.3, "share": 0.5},
                         {"size": 5, "n_agents": 3, "wait_ratio": 0.75, "hole_density": 0.3, "share": 0.5}],
             "rationale": "timeouts: charge parking on another's way", "levers": {"park_cost": 0.5}}
    script = tmp_path / "engineer.yaml"
    script.write_text(yaml.safe_dump([{"json": reply}, {"text": "no json here"}, {"text": "no json here"}]))
    cfg = {"model": f"scripted:{script}", "stages": 3, "steps": 3 * 8192, "band": [0.3, 0.6], "stage_episodes": 6,
           "validation_episodes": 6, "episodes": 6, "out": str(tmp_path / "out"), "imitate": 0, "imitation_coef": 0.0,
           "relabel": 0, "static_from": None, "demo_episodes": 8}
    run = engineer.run_one("in_distribution", "llm", 0, cfg)
    second, third = run.stages[1], run.stages[2]  # stage 2: the first reply; stage 3: after the failed one
    labels = sorted(b["label"] for b in second["trained"])
    assert len(labels) == 2 and all("size=5" in x for x in labels)  # two buckets of one structure, not merged
    lines = [json.loads(x) for x in (tmp_path / "out" / "in_distribution" / "llm-seed0" / "curriculum.jsonl")
             .read_text().splitlines()]
    assert lines[1]["levers"]["park_cost"] == 0.5 and lines[1]["levers"]["imitation"] == 0.1
    assert lines[1]["engineer_error"]  # the second reply failed: the stage as the guardrails kept it goes on
    assert [b["label"] for b in lines[1]["proposed_mixture"]] == [b["label"] for b in lines[1]["mixture"]]
    assert lines[2]["levers"] == lines[1]["proposed_levers"]
    assert [b["label"] for b in third["trained"]] == [b["label"] for b in lines[1]["mixture"]]
