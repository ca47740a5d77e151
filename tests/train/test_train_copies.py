"""`TrainConfig.copies`: a list of configs with the env copies of each (a curriculum's mixture with
its shares). It trains exactly what the one-dict-per-copy list trains, and its log has one
`config{i}/...` set per config instead of one per copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from gymwright.errors import GymwrightError
from gymwright.train import TrainConfig, train
from gymwright.train import checkpoint as ck

SMALL = {"size": 3, "n_agents": 2, "max_steps": 10}
BIG = {"size": 4, "n_agents": 2, "max_steps": 10}
RUN = {"spec": "mapf_frozenlake", "num_envs": 16, "rollout_len": 8, "total_steps": 256, "minibatches": 2, "epochs": 1}


def rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "train.jsonl").read_text().splitlines()]


def test_copies_train_what_the_per_copy_list_trains(tmp_path: Path) -> None:
    per_copy = [SMALL] * 5 + [BIG] * 11
    a = train(TrainConfig(**RUN, params=per_copy, out=tmp_path / "a"))
    b = train(TrainConfig(**RUN, params=[SMALL, BIG], copies=[5, 11], out=tmp_path / "b"))
    wa, wb = ck.load(a.checkpoint)["model"], ck.load(b.checkpoint)["model"]
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    log_a, log_b = rows(tmp_path / "a"), rows(tmp_path / "b")
    assert [r["charts/episodes"] for r in log_a] == [r["charts/episodes"] for r in log_b]
    keys_b = {k.split("/")[0] for r in log_b for k in r if k.startswith("config")}
    assert keys_b == {"config0", "config1"}  # one set per config
    assert len({k.split("/")[0] for r in log_a for k in r if k.startswith("config")}) == 16  # one per copy
    small = [r["config0/metrics/valid"] for r in log_b if "config0/metrics/valid" in r]
    assert small and all(0.0 <= x <= 1.0 for x in small)


@pytest.mark.parametrize("copies", [[5], [5, 10], [0, 16], [5.0, 11]])
def test_bad_copies_are_a_clear_error(tmp_path: Path, copies: list[Any]) -> None:
    with pytest.raises(GymwrightError) as info:
        train(TrainConfig(**RUN, params=[SMALL, BIG], copies=copies, out=tmp_path))
    assert info.value.path == "copies" and "summing to num_envs" in str(info.value.hint)


def test_resume_refuses_other_copies(tmp_path: Path) -> None:
    train(TrainConfig(**{**RUN, "total_steps": 128, "checkpoint_every": 1}, params=[SMALL, BIG], copies=[5, 11],
                      out=tmp_path))
    with pytest.raises(ck.CheckpointError, match="copies"):
        train(TrainConfig(**RUN, params=[SMALL, BIG], copies=[8, 8], out=tmp_path, resume=True))


def test_a_config_file_gives_copies_to_gymwright_train(tmp_path: Path) -> None:
    import yaml
    from typer.testing import CliRunner

    from gymwright.cli import app

    path = tmp_path / "mix.yaml"
    path.write_text(yaml.safe_dump({"params": [SMALL, BIG], "copies": [5, 11], "num_envs": 16, "rollout_len": 8,
                                    "total_steps": 128, "minibatches": 2, "epochs": 1}))
    res = CliRunner().invoke(app, ["train", "mapf_frozenlake", "--config", str(path), "--out", str(tmp_path / "run"),
                                   "--json"])
    assert res.exit_code == 0, res.output
    assert {k.split("/")[0] for r in rows(tmp_path / "run") for k in r if k.startswith("config")} == {"config0", "config1"}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"params": [SMALL, BIG], "copies": [5, 5], "num_envs": 16}))
    res = CliRunner().invoke(app, ["train", "mapf_frozenlake", "--config", str(bad), "--out", str(tmp_path / "r2")])
    assert res.exit_code != 0 and "copies" in res.output and "summing to num_envs" in res.output
