"""`gymwright train` and `gymwright play`, through the real commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from gymwright.cli import app

runner = CliRunner()
FAST = ["--steps", "512", "--num-envs", "64"]


def invoke(*args: str) -> Result:
    return runner.invoke(app, list(args))


def assert_clean_failure(result: Result, *fragments: str) -> None:
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, Exception), repr(result.exception)
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output, (fragment, result.output)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("cli") / "cake"
    result = runner.invoke(app, ["train", "cake_negotiation", *FAST, "--out", str(out), "--json",
                                 "-p", "discount=0.8", "--tensorboard"])
    assert result.exit_code == 0, result.output
    return out, json.loads(result.stdout)


def test_train_json_has_the_promised_keys(trained: tuple[Path, dict]) -> None:
    out, data = trained
    assert {"agent_steps_per_second", "final_return", "metrics", "checkpoint"} <= set(data)
    assert data["agent_steps_per_second"] > 0
    assert set(data["final_return"]) == {"bargainer"}
    assert {"agreed", "rounds", "first_share"} <= set(data["metrics"])
    assert Path(data["checkpoint"]) == out / "checkpoint.pt" and (out / "checkpoint.pt").exists()
    rows = [json.loads(x) for x in (out / "train.jsonl").read_text().splitlines()]
    assert [r["update"] for r in rows] == list(range(1, data["updates"] + 1))
    assert list((out / "tb").glob("events.out.tfevents.*"))


def test_train_prints_a_summary_and_the_next_command(tmp_path: Path) -> None:
    out = tmp_path / "cake"
    result = invoke("train", "cake_negotiation", *FAST, "--out", str(out))
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())  # rich wraps long lines
    assert "trained 1 updates, 1,024 env steps" in text and "return bargainer=" in text
    assert "metrics agreed=" in text and "first_share=" in text
    assert f"Next: `gymwright play cake_negotiation --policy {out / 'checkpoint.pt'} --render --episodes 1`." in text


def test_play_watches_the_policy(trained: tuple[Path, dict]) -> None:
    out, _ = trained
    result = invoke("play", "cake_negotiation", "--policy", str(out), "--render", "--episodes", "1")
    assert result.exit_code == 0, result.output
    assert "seed 0: step 1" in result.output and "propose(share=" in result.output
    result = invoke("play", "cake_negotiation", "--policy", str(out / "checkpoint.pt"), "--episodes", "4", "--json")
    assert result.exit_code == 0, result.output
    episodes = json.loads(result.stdout)
    assert len(episodes) == 4 and all(ep["ended"] for ep in episodes)


def test_play_refuses_a_checkpoint_of_another_spec(trained: tuple[Path, dict]) -> None:
    out, _ = trained
    assert_clean_failure(invoke("play", "stag_hunt", "--policy", str(out)),
                         "was trained on spec cake_negotiation", "pass the spec it was trained on")
    assert_clean_failure(invoke("play", "cake_negotiation", "--policy", str(out), "-p", "offer_levels=21"),
                         "was trained on roles")
    assert_clean_failure(invoke("play", "cake_negotiation", "--policy", str(out / "nothing.pt")), "no checkpoint at")


def test_train_errors_are_clean(trained: tuple[Path, dict], tmp_path: Path) -> None:
    out, _ = trained
    assert_clean_failure(invoke("train", "cake_negotiation", "--algo", "dqn"), "unknown --algo 'dqn'")
    assert_clean_failure(invoke("train", "cake_negotiation", "--backend", "tpu"), "unknown --backend")
    assert_clean_failure(invoke("train", "cake_negotiation", *FAST, "--out", str(out)), "already holds a run", "--resume")
    assert_clean_failure(invoke("train", "cake_negotiation", *FAST, "--out", str(tmp_path / "x"), "-p", "discount=3"),
                         "out of its range")
    assert_clean_failure(invoke("train", "stag_hunt", *FAST, "--out", str(out), "--resume"),
                         "was trained on spec cake_negotiation")


def test_train_resume_continues_the_run(trained: tuple[Path, dict]) -> None:
    out, data = trained
    result = invoke("train", "cake_negotiation", "--steps", "2048", "--num-envs", "64", "--out", str(out),
                    "--resume", "--json", "-p", "discount=0.8")  # 64 copies x 16 steps: 2 updates
    assert result.exit_code == 0, result.output
    assert data["updates"] == 1 and json.loads(result.stdout)["updates"] == 2


def test_rllib_backend_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "gymwright.train.rllib", None)  # as if not installed
    assert_clean_failure(invoke("train", "cake_negotiation", "--backend", "rllib", "--out", str(tmp_path / "r")),
                         "--backend rllib", "pip install")
