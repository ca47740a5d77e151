"""Warm starts and the curriculum runner: the policy carries over, the engineer changes the
environment, every stage is recorded (JSONL, store lineage with the rationale)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.engineer import FixedEngineer, HeuristicEngineer
from gymwright.engineer.curriculum import CurriculumOptions, evolve
from gymwright.store import Store
from gymwright.train import TrainConfig, train
from gymwright.train.checkpoint import CheckpointError, load

MAPF = {"size": 3, "n_agents": 2, "max_steps": 12}


def test_a_warm_start_carries_the_policy_over_to_other_params(tmp_path: Path) -> None:
    first = train(TrainConfig(spec="mapf_frozenlake", params=MAPF, total_steps=4096, num_envs=32, out=tmp_path / "a"))
    frozen = train(TrainConfig(spec="mapf_frozenlake", params={**MAPF, "max_steps": 20}, total_steps=1024,
                               num_envs=32, lr=0.0, init_from=first.checkpoint, out=tmp_path / "b"))
    a, b = load(first.checkpoint), load(frozen.checkpoint)  # weights_only: checkpoints hold no pickled objects
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])  # lr 0: nothing moved
    with pytest.raises(CheckpointError):
        train(TrainConfig(spec="cake_negotiation", total_steps=1024, num_envs=32, init_from=first.checkpoint,
                          out=tmp_path / "c"))


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
