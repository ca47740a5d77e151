"""Warm starts and the curriculum runner: the policy carries over, the engineer changes the
environment, every stage is recorded (JSONL, store lineage with the rationale)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.curriculum import CurriculumOptions, evolve
from gymwright.engineer import FixedEngineer, HeuristicEngineer
from gymwright.store import Store
from gymwright.train import TrainConfig, train
from gymwright.train.checkpoint import CheckpointError, load

MAPF = {"size": 3, "n_agents": 2, "max_steps": 12}


@pytest.mark.slow
def test_a_warm_start_carries_the_policy_over_to_other_params(tmp_path: Path) -> None:
    first = train(TrainConfig(spec="mapf_frozenlake", params=MAPF, total_steps=4096, num_envs=32, out=tmp_path / "a"))
    frozen = train(TrainConfig(spec="mapf_frozenlake", params={**MAPF, "max_steps": 20}, total_steps=1024,
                               num_envs=32, lr=0.0, init_from=first.checkpoint, out=tmp_path / "b"))
    a, b = load(first.checkpoint), load(frozen.checkpoint)  # weights_only: checkpoints hold no pickled objects
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])  # lr 0: nothing moved
    with pytest.raises(CheckpointError):
        train(TrainConfig(spec="cake_negotiation", total_steps=1024, num_envs=32, init_from=first.checkpoint,
                          out=tmp_path / "c"))


@pytest.mark.slow  # over 5 s; the suite's time budget (CI runs it with -m slow)
def test_evolve_runs_stages_and_records_them(tmp_path: Path) -> None:
    opts = CurriculumOptions(stages=2, steps_per_stage=8192, num_envs=64, eval_episodes=60, band=(0.4, 0.8))
    with Store.open(tmp_path / "store") as store:
        records = evolve("mapf_frozenlake", MAPF, HeuristicEngineer(), tmp_path / "run", opts, store=store)
        assert [r.index for r in records] == [0, 1]
        assert records[1].params == records[0].proposal  # the proposal is the next stage's config
        assert all(0.0 <= r.success <= 1.0 and r.rationale for r in records)
        if records[1].spec_sha != records[0].spec_sha:
            (edge,) = [e for e in store.lineage(records[1].spec_sha) if e.child == records[1].spec_sha]
            assert edge.parent == records[0].spec_sha and "curriculum" in edge.reason
    lines = (tmp_path / "run" / "curriculum.jsonl").read_text().splitlines()
    assert [json.loads(x)["index"] for x in lines] == [0, 1]
    assert (tmp_path / "run" / "stage1" / "checkpoint.pt").exists()


@pytest.mark.slow  # over 5 s, and not its stage's one smoke test (the default suite's 4-minute budget)
def test_the_fixed_engineer_keeps_every_stage_the_same(tmp_path: Path) -> None:
    opts = CurriculumOptions(stages=2, steps_per_stage=4096, num_envs=32, eval_episodes=30)
    records = evolve("mapf_frozenlake", MAPF, FixedEngineer(), tmp_path / "run", opts)
    assert records[0].params == records[1].params == MAPF


def test_cli_evolve_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["evolve", "mapf_frozenlake", "-k", "1", "--steps", "4096", "-e", "fixed",
                                      "-p", "size=3", "-p", "n_agents=2", "-o", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert len(data["stages"]) == 1 and data["stages"][0]["engineer"] == "fixed"
    bad = CliRunner().invoke(app, ["evolve", "mapf_frozenlake", "-e", "llm", "-o", str(tmp_path / "x")])
    assert bad.exit_code == 1 and "needs a model" in bad.output


GOAL_SPACE = {"structural": {"size": [3, 4], "n_agents": [2, 3]}, "knobs": {"wait_ratio": [0.0, 0.25, 0.5]}}
SMALL = {"size": 3, "n_agents": 2, "max_steps": 12, "wait_ratio": 0.25, "view_radius": 1}


def goal_options(**kw: object) -> CurriculumOptions:
    from gymwright.engineer import ConfigSpace

    space = ConfigSpace.for_spec("mapf_frozenlake", GOAL_SPACE["structural"], GOAL_SPACE["knobs"],
                                 {"max_steps": 12, "view_radius": 1})
    cells = {"4x4 3 agents": {**SMALL, "size": 4, "n_agents": 3, "wait_ratio": 0.5}}
    return CurriculumOptions(**{"stages": 3, "steps_per_stage": 4096, "num_envs": 32, "eval_episodes": 20,
                                "record_episodes": 5, "validation": cells, "validation_episodes": 20, "space": space,
                                "guard": True, "target": "3 walkers on 4x4", "band": (0.0, 0.01), **kw})


@pytest.mark.slow
def test_a_failed_model_call_keeps_the_stage_and_the_last_stage_asks_nothing(tmp_path: Path) -> None:
    import yaml

    from gymwright.engineer import LLMEngineer
    from gymwright.engineer.mixture import Bucket, Mixture
    from gymwright.llm.client import LLM
    from gymwright.llm.scripted import ScriptedProvider

    script = tmp_path / "engineer.yaml"
    reply = {"buckets": [{"size": 4, "n_agents": 3, "wait_ratio": 0.5, "share": 1.0}], "rationale": "go to the target"}
    script.write_text(yaml.safe_dump([{"error": 500}, {"json": reply}]))
    provider = ScriptedProvider(script)
    start = Mixture([Bucket(SMALL, 1.0, "size=3 n_agents=2")])
    records = evolve("mapf_frozenlake", start, LLMEngineer(LLM(provider, retries=0)), tmp_path / "run", goal_options())
    assert len(provider.requests) == 2, "one call per stage that will be trained: none after the last"
    assert "500" in records[0].engineer_error and records[0].unchanged and "the stage is kept" in records[0].rationale
    assert [b["label"] for b in records[2].trained_mixture] == ["size=4 n_agents=3"]  # the reply trained stage 3
    assert records[2].rationale.startswith("last stage: no proposal")
    assert all(r.validation is not None and 0.0 <= r.validation["mean"] <= 1.0 for r in records)
    assert "stage 2 of 3" in provider.requests[1].messages[0].content


@pytest.mark.slow
def test_a_guarded_heuristic_curriculum_moves_agent_counts_and_records_its_guardrail(tmp_path: Path) -> None:
    from gymwright.engineer.mixture import Bucket, Mixture

    start = Mixture([Bucket(SMALL, 1.0, "size=3 n_agents=2")])
    records = evolve("mapf_frozenlake", start, HeuristicEngineer(), tmp_path / "run", goal_options())
    trained = [{b["label"] for b in r.trained_mixture} for r in records]
    assert trained[0] == {"size=3 n_agents=2"} and len(trained[1]) == 2  # the band's top (0.01) is reached: opened
    assert any("n_agents=3" in label for t in trained for label in t) or any("size=4" in label for t in trained for label in t)
    assert records[0].guard == "" and all(r.guard in ("keep", "revert", "rollback") for r in records[1:])
    for r in records[1:]:
        assert (r.guard == "keep") == r.guard_reason.endswith(": kept"), r.guard_reason
        if r.guard == "rollback":
            assert r.policy == records[r.index - 1].policy, "a rolled-back stage leaves the previous policy"
    lines = [json.loads(x) for x in (tmp_path / "run" / "curriculum.jsonl").read_text().splitlines()]
    assert [x["guard"] for x in lines] == [r.guard for r in records] and lines[-1]["policy"]


@pytest.mark.slow
def test_prioritized_replay_scores_every_level_from_the_training_log(tmp_path: Path) -> None:
    from gymwright.engineer import PrioritizedReplay

    opts = goal_options(stages=2, guard=False)
    plr = PrioritizedReplay(opts.space)
    records = evolve("mapf_frozenlake", plr.initial(), plr, tmp_path / "run", opts)
    first, second = ([b["share"] for b in r.trained_mixture] for r in records)
    assert len(first) == len(second) == len(opts.space.levels()) == 12  # agent counts 2 and 3 in one batch
    assert max(first) - min(first) < 1e-9 and max(second) > 2 * min(second)  # uniform, then prioritized
    assert "positive value loss" in records[0].rationale


class _CostlierSteps:
    """An engineer that raises step_cost every stage: a change that cannot move `holes` (there are
    none), so it is aimed at the band and moves nothing."""

    name = "script"
    reads_knob_effects = False

    def propose_stage(self, evidence):  # type: ignore[no-untyped-def]
        from gymwright.engineer.engineers import StageProposal, current_mixture

        mix = current_mixture(evidence)
        cost = mix.buckets[0].params.get("step_cost", 0.01) + 0.05
        return StageProposal(mix.with_changes({mix.buckets[0].label: {"step_cost": cost}}), "costlier steps", self.name)


@pytest.mark.slow  # over 5 s; the suite's time budget (CI runs it with -m slow)
def test_a_guarded_run_without_validation_reverts_a_change_that_missed_its_aim(tmp_path: Path) -> None:
    opts = CurriculumOptions(stages=3, steps_per_stage=2048, num_envs=16, eval_episodes=10, record_episodes=2,
                             band=(0.5, 1.0), task_metric="holes", guard=True)
    records = evolve("mapf_frozenlake", {**MAPF, "hole_density": 0.0}, _CostlierSteps(), tmp_path / "run", opts)
    assert records[0].guard == ""
    assert records[1].guard == "revert" and "did not move the training metric toward the band" in records[1].guard_reason
    assert records[1].trained_mixture[0]["params"]["step_cost"] == pytest.approx(0.06)  # the change was trained
    assert "step_cost" not in records[1].mixture[0]["params"]  # and undone: back to the start config
    lines = [json.loads(x) for x in (tmp_path / "run" / "curriculum.jsonl").read_text().splitlines()]
    assert lines[1]["guard"] == "revert"
