"""Stages as mixtures: buckets and their shares, the heuristic engineer per bucket and on the
shares, the LLM engineer's mixture reply bounded by the spec, and a curriculum over map sizes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gymwright.curriculum import CurriculumOptions, evolve
from gymwright.engineer import FixedEngineer, HeuristicEngineer, LLMEngineer
from gymwright.engineer.evidence import Evidence, Knob, StageEvidence
from gymwright.engineer.mixture import Bucket, Mixture
from gymwright.errors import GymwrightError
from gymwright.llm.client import LLM
from gymwright.llm.scripted import ScriptedProvider

BASE = {"n_agents": 2, "max_steps": 12, "hole_density": 0.2, "wait_ratio": 0.25}


def stage(successes: dict[int, float], effect: float = -0.2) -> StageEvidence:
    mix = Mixture.over("size", list(successes), BASE)
    rows = []
    for b in mix.buckets:
        s = successes[b.params["size"]]
        knobs = [Knob("wait_ratio", 0.25, 0.0, 1.0, False, effect, 0.02),
                 Knob("hole_density", 0.2, 0.0, 0.6, False, effect / 4, 0.02)]
        rows.append((b, Evidence("mapf_frozenlake", b.params, "valid", s, (0.4, 0.8), knobs=knobs)))
    return StageEvidence("mapf_frozenlake", "valid", (0.4, 0.8), rows)


def test_a_mixture_gives_each_bucket_its_share_of_the_copies() -> None:
    mix = Mixture([Bucket({"size": 3}, 0.6, "a"), Bucket({"size": 5}, 0.4, "b")])
    copies = mix.per_copy(10)
    assert [c["size"] for c in copies].count(3) == 6 and len(copies) == 10
    tiny = Mixture([Bucket({"size": 3}, 0.99, "a"), Bucket({"size": 5}, 0.01, "b")]).per_copy(4)
    assert [c["size"] for c in tiny].count(5) == 1, "every bucket keeps at least one copy"
    with pytest.raises(GymwrightError, match="do not fit"):
        mix.per_copy(1)
    with pytest.raises(GymwrightError, match="distinct"):
        Mixture([Bucket({}, 1, "a"), Bucket({}, 1, "a")])


def test_the_heuristic_moves_each_bucket_and_the_data_toward_the_hardest() -> None:
    p = HeuristicEngineer().propose_stage(stage({3: 0.95, 4: 0.6, 5: 0.1}))
    by = {b.label: b for b in p.mixture.buckets}
    assert by["size=3"].params["wait_ratio"] > 0.25, "too easy: harder"
    assert by["size=4"].params["wait_ratio"] == 0.25, "inside the band: kept"
    assert by["size=5"].params["wait_ratio"] < 0.25, "too hard: easier"
    assert by["size=5"].share > by["size=4"].share > by["size=3"].share >= 0.05
    assert abs(sum(b.share for b in p.mixture.buckets) - 1) < 1e-9
    assert "[size=3]" in p.rationale and "data shares" in p.rationale


def test_the_fixed_engineer_keeps_the_mixture() -> None:
    ev = stage({3: 0.95, 5: 0.1})
    p = FixedEngineer().propose_stage(ev)
    assert p.mixture.to_list() == Mixture([b for b, _ in ev.buckets]).to_list()


def test_the_llm_engineer_answers_per_bucket_within_bounds(tmp_path: Path) -> None:
    reply = {"buckets": {"size=3": {"params": {"wait_ratio": 0.5, "hole_density": 0.9, "size": 9, "view_radius": 3},
                                    "share": 0.2},
                         "size=5": {"params": {"wait_ratio": 0.1}, "share": 0.8}},
             "rationale": "size 3 is solved: more waiting there; most data on size 5"}
    script = tmp_path / "engineer.yaml"
    script.write_text(yaml.safe_dump([{"json": reply}] * 3))
    provider = ScriptedProvider(script)
    ev = stage({3: 0.95, 5: 0.1})
    ev.history = [{"index": 0, "mixture": [{"label": "size=3", "share": 0.5, "params": {}, "success": 0.9}]}]
    p = LLMEngineer(LLM(provider, retries=0)).propose_stage(ev)
    by = {b.label: b for b in p.mixture.buckets}
    assert by["size=3"].params["size"] == 3, "a bucket keeps its identity"
    assert "view_radius" not in by["size=3"].params, "only the knobs move (a view radius would change the shapes)"
    assert by["size=3"].params["hole_density"] == 0.6 and "clamped hole_density" in p.rationale
    assert by["size=5"].params["wait_ratio"] == 0.1 and by["size=5"].share == pytest.approx(0.8)
    prompt = provider.requests[0].messages[0].content
    assert "Bucket size=3" in prompt and "Earlier stages" in prompt and "Guideline" in prompt
    assert "the knobs you may set: hole_density, wait_ratio" in prompt
    assert set(provider.requests[0].schema["properties"]["buckets"]["properties"]["size=3"]["properties"]["params"]
               ["properties"]) == {"hole_density", "wait_ratio"}
    LLMEngineer(LLM(provider, retries=0), with_history=False, with_guideline=False).propose_stage(ev)
    bare = provider.requests[1].messages[0].content
    assert "Earlier stages" not in bare and "Guideline" not in bare and "Bucket size=5" in bare


@pytest.mark.slow  # about 10 s: the engineer's smoke test is test_curriculum's evolve run
def test_a_curriculum_over_map_sizes_records_each_bucket(tmp_path: Path) -> None:
    mix = Mixture.over("size", [3, 4], BASE)
    opts = CurriculumOptions(stages=2, steps_per_stage=4096, num_envs=32, eval_episodes=40, record_episodes=8,
                             knobs=("wait_ratio", "hole_density"))
    records = evolve("mapf_frozenlake", mix, HeuristicEngineer(), tmp_path / "run", opts)
    assert [len(r.mixture) for r in records] == [2, 2] and records[0].params == {}
    assert records[1].mixture[0]["params"] == records[0].proposed_mixture[0]["params"]
    assert {x["label"] for x in records[0].mixture} == {"size=3", "size=4"}
    rows = [json.loads(x) for x in (tmp_path / "run" / "curriculum.jsonl").read_text().splitlines()]
    assert rows[0]["mixture"][0]["success"] == records[0].mixture[0]["success"]
    log = [json.loads(x) for x in (tmp_path / "run" / "stage0" / "train.jsonl").read_text().splitlines()]
    assert {k.split("/")[0] for r in log for k in r if k.startswith("config")} == {"config0", "config1"}  # per bucket
    from gymwright.report import write_report

    page = write_report(tmp_path / "run", tmp_path / "r.html", run_verifier=False).path.read_text()
    assert "size=3 " in page and "size=4 " in page and "data shares" in page  # per bucket, and the rationale


@pytest.mark.slow  # over 5 s; the suite's time budget (CI runs it with -m slow)
def test_cli_evolve_trains_a_mixture(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gymwright.cli import app

    result = CliRunner().invoke(app, ["evolve", "mapf_frozenlake", "-k", "1", "--steps", "4096", "-e", "heuristic",
                                      "--mix", "size=3,4", "-p", "max_steps=12", "--knob", "wait_ratio",
                                      "-o", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    (stage,) = json.loads(result.stdout)["stages"]
    assert [b["label"] for b in stage["mixture"]] == ["size=3", "size=4"]
    assert all(b["params"]["max_steps"] == 12 for b in stage["mixture"])
    bad = CliRunner().invoke(app, ["evolve", "mapf_frozenlake", "--mix", "size", "-o", str(tmp_path / "x")])
    assert bad.exit_code != 0 and "NAME=V1,V2" in bad.output


@pytest.mark.slow
def test_a_policy_of_one_shared_role_acts_for_more_agents(tmp_path: Path) -> None:
    from gymwright.train import TrainConfig, load_policy, play_episodes, train

    params = {"size": 4, "n_agents": 2, "max_steps": 12}
    result = train(TrainConfig(spec="mapf_frozenlake", params=params, total_steps=2048, num_envs=32,
                               out=tmp_path / "t"))
    policy = load_policy(result.checkpoint)
    ev = play_episodes("mapf_frozenlake", {**params, "n_agents": 4}, policy, episodes=8, seed=3)
    assert ev.episode_returns.shape == (8, 4)
    indexed = train(TrainConfig(spec="mapf_frozenlake", params=params, total_steps=512, num_envs=32,
                                agent_index=True, out=tmp_path / "i"))
    with pytest.raises(ValueError, match="agent_index"):
        play_episodes("mapf_frozenlake", {**params, "n_agents": 4}, load_policy(indexed.checkpoint), episodes=2)


def test_the_llm_engineer_in_steps_answers_directions_that_move_one_knob(tmp_path: Path) -> None:
    reply = {"buckets": {"size=3": {"change": "harder", "knob": "wait_ratio", "data": "less"},
                         "size=5": {"change": "easier", "knob": "hole_density", "data": "more"}},
             "rationale": "size 3 is too easy, size 5 too hard"}
    script = tmp_path / "engineer.yaml"
    script.write_text(yaml.safe_dump([{"json": reply}]))
    provider = ScriptedProvider(script)
    ev = stage({3: 0.95, 5: 0.1})  # both knobs lower success when raised
    p = LLMEngineer(LLM(provider, retries=0), steps=True).propose_stage(ev)
    by = {b.label: b for b in p.mixture.buckets}
    assert by["size=3"].params["wait_ratio"] == pytest.approx(0.35), "harder: wait_ratio up one step"
    assert by["size=5"].params["hole_density"] == pytest.approx(0.14), "easier: holes down one step (0.06)"
    assert by["size=5"].share > 0.5 > by["size=3"].share
    assert "harder: wait_ratio 0.25 -> 0.35" in p.rationale
    schema = provider.requests[0].schema["properties"]["buckets"]["properties"]["size=3"]
    assert schema["properties"]["change"]["enum"] == ["harder", "easier", "keep"]


def test_the_step_mode_moves_no_knob_without_a_measurable_effect(tmp_path: Path) -> None:
    reply = {"buckets": {"size=3": {"change": "harder", "knob": "wait_ratio", "data": "same"}}, "rationale": "r"}
    script = tmp_path / "engineer.yaml"
    script.write_text(yaml.safe_dump([{"json": reply}]))
    ev = stage({3: 0.95}, effect=-0.01)  # within its 0.02 half-width: noise
    p = LLMEngineer(LLM(ScriptedProvider(script), retries=0), steps=True).propose_stage(ev)
    assert p.mixture.buckets[0].params["wait_ratio"] == 0.25 and "no measurable effect" in p.rationale


def test_training_figures_per_bucket_come_from_the_last_half_of_the_log() -> None:
    from gymwright.curriculum.measure import _train_stats

    two = Mixture.over("size", [3, 4], BASE)
    log = [{"config0/metrics/valid": 0.0, "config1/metrics/valid": 0.0},  # the first half is left out
           {"config0/metrics/valid": 0.2, "config0/positive_advantage": 0.5, "config1/metrics/valid": 0.6},
           {"config0/metrics/valid": 0.4, "config1/positive_advantage": 0.1}]
    assert _train_stats(two, log, "valid") == [{"valid": 0.30000000000000004, "positive_advantage": 0.5},
                                               {"valid": 0.6, "positive_advantage": 0.1}]
    one = Mixture.single({**BASE, "size": 3})
    assert _train_stats(one, [{"metrics/valid": 0.1}, {"metrics/valid": 0.5}], "valid") == [{"valid": 0.5}]
    assert _train_stats(two, None, "valid") == [{}, {}]


def test_training_figures_per_bucket_from_an_rllib_log_of_copies() -> None:
    """RLlib logs each env copy (`config{copy}`): a bucket's figure is the mean over its copies."""
    from gymwright.curriculum.measure import _train_stats

    two = Mixture.over("n_agents", [2, 3], {"size": 4})  # 4 copies: 0-1 two walkers, 2-3 three
    row = {"config0/metrics/valid": 0.9, "config1/metrics/valid": 0.7, "config2/metrics/valid": 0.1,
           "config3/metrics/valid": 0.3}
    assert _train_stats(two, [row, row], "valid", per_copy=4) == [{"valid": 0.8}, {"valid": 0.2}]
