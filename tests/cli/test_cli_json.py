"""`--json` on every command that has it: results as JSON, and every error (a domain error or a
usage error) as one JSON object on stdout with the diagnostic's fields, a non-zero exit code and
nothing on stderr. The real commands through typer's runner; real files, a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from gymwright.cli import app

runner = CliRunner()
FIELDS = {"ok", "exit_code", "severity", "stage", "path", "message", "hint", "value", "trace", "next", "diagnostics"}


def invoke(*args: object) -> Result:
    return runner.invoke(app, [str(a) for a in args])


def json_error(result: Result, code: int) -> dict:
    """The one JSON error object the command printed; nothing else anywhere."""
    assert result.exit_code == code, result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.stderr == "", result.stderr
    data = json.loads(result.stdout)
    assert set(data) == FIELDS and data["ok"] is False and data["exit_code"] == code
    assert data["severity"] == "error" and data["message"] and data["diagnostics"]
    assert {k: data[k] for k in ("stage", "path", "message", "hint")} == \
        {k: data["diagnostics"][0][k] for k in ("stage", "path", "message", "hint")}
    return data


@pytest.fixture
def existing(tmp_path: Path) -> Path:
    path = tmp_path / "there.py"
    path.write_text("# already here\n")
    return path


def cases(tmp_path: Path, existing: Path) -> dict[str, tuple[list[object], int, str]]:
    """Per command with --json: arguments that fail, the exit code, a fragment of the message."""
    store = tmp_path / "store"
    bad_config = tmp_path / "bad.yaml"
    bad_config.write_text("algo: mappo\nlearning_rate: 0.1\n")
    return {
        "library": (["library", "--json", "--bogus"], 2, "No such option: --bogus"),
        "validate": (["validate", "cake_negotiation", "-p", "discount", "--json"], 2, "expected NAME=VALUE"),
        "verify": (["verify", "cake_negotiation", "--episodes", "0", "--json"], 2, "--episodes"),
        "run": (["run", "no_such_spec", "--json"], 1, "no spec file or library spec named `no_such_spec`"),
        "export": (["export", "cake_negotiation", "-o", existing, "--json"], 1, "already exists; not overwriting it"),
        "design": (["design", "a task", "-o", existing, "--store", store, "--json"], 1, "already exists"),
        "designs": (["designs", "--limit", "0", "--store", store, "--json"], 2, "--limit"),
        "show": (["show", "999", "--store", store, "--json"], 1, "999"),
        "train": (["train", "cake_negotiation", "--algo", "dqn", "--json"], 1, "unknown --algo 'dqn'"),
        "play": (["play", "cake_negotiation", "--policy", tmp_path / "nothing.pt", "--json"], 1, "no checkpoint at"),
        "evaluate": (["evaluate", "cake_negotiation", "--policy", tmp_path / "nothing.pt", "--json"], 1, "no checkpoint at"),
        "evolve": (["evolve", "mapf_frozenlake", "-e", "llm", "-o", tmp_path / "x", "--json"], 1, "needs a model"),
        "report": (["report", tmp_path / "no_run", "--json"], 1, "does not exist"),
        "demo": (["demo", "--config", bad_config, "--out", tmp_path / "demo", "--json"], 1, "unknown key 'learning_rate'"),
        "train-lm": (["train-lm", "cake_negotiation", "--role", "nobody", "--json"], 1, "no role or agent 'nobody'"),
        "eval-lm": (["eval-lm", "no_such_spec", "--json"], 1, "no spec file or library spec named `no_such_spec`"),
    }


def test_every_command_with_json_is_covered() -> None:
    group = typer.main.get_command(app)
    with_json = {name for name, cmd in group.commands.items()  # type: ignore[attr-defined]
                 if any("--json" in p.opts for p in cmd.params)}
    assert with_json == set(cases(Path("/tmp"), Path("/tmp/x")))
    assert {"export", "report", "demo"} <= with_json


@pytest.mark.parametrize("command", sorted(cases(Path("/tmp"), Path("/tmp/x"))))
def test_an_error_under_json_is_one_json_object(command: str, tmp_path: Path, existing: Path) -> None:
    args, code, fragment = cases(tmp_path, existing)[command]
    data = json_error(invoke(*args), code)
    assert fragment in data["message"] + " " + data["path"], data


def test_the_json_error_carries_each_diagnostic(tmp_path: Path) -> None:
    data = json_error(invoke("run", "cake_negotiation", "-p", "discount=3", "--json"), 1)
    assert data["path"].startswith("params.discount") and "out of its range" in data["message"]
    assert "gymwright library" in data["next"]
    config = tmp_path / "cfg.yaml"
    config.write_text("gama: 0.9\nhidden: wide\n")
    data = json_error(invoke("train", "cake_negotiation", "--config", config, "--json"), 1)
    assert [(d["path"], d["stage"]) for d in data["diagnostics"]] == [(f"{config}:1", "config"), (f"{config}:2", "config")]
    assert data["hint"] == "did you mean 'gamma'?"
    data = json_error(invoke("train", "cake_negotiation", "--lr", "fast", "--json"), 2)
    assert data["path"] == "--lr" and "Invalid value for '--lr'" in data["message"]


def test_without_json_errors_stay_text_on_stderr() -> None:
    result = invoke("run", "no_such_spec")
    assert result.exit_code == 1 and result.stdout == ""
    assert "- error [schema] no_such_spec: no spec file" in result.stderr


def test_export_and_report_json_results(tmp_path: Path) -> None:
    module = tmp_path / "env.py"
    result = invoke("export", "cake_negotiation", "-o", module, "-p", "discount=0.8", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["output"] == str(module) and data["params"] == {"discount": 0.8}
    assert data["lines"] == len(module.read_text().splitlines()) and data["import"] == "from env import parallel_env, env"
    run = tmp_path / "run"
    assert invoke("train", "cake_negotiation", "--steps", "128", "--num-envs", "8", "--rollout-len", "8",
                  "--minibatches", "2", "--out", run).exit_code == 0
    result = invoke("report", run, "--no-verify", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert Path(data["report"]) == run / "report.html" and data["bytes"] == (run / "report.html").stat().st_size
    assert "Learning curves" in data["sections"] and "Evaluation" in data["missing"]


@pytest.mark.slow  # over 5 s; the suite's time budget (CI runs it with -m slow)
@pytest.mark.long(66)  # seconds alone on the slow host (pytest --durations)
def test_demo_json_is_one_summary_and_the_steps_go_to_stderr(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = invoke("demo", "--steps", "1000", "--stages", "1", "--num-envs", "16", "--algo", "mappo", "--seed", "2",
                    "--episodes", "10", "--out", out, "--store", tmp_path / "store", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["report"] == str(out / "report.html") and (out / "report.html").exists()
    assert data["config"] == str(out / "config.yaml") and len(data["comparison"]["arms"]["engineer"]["stages"]) == 1
    assert "1. design" in result.stderr and "7. report" in result.stderr
    assert list(data["comparison"]["arms"]) == ["engineer", "fixed"]  # MAPPO cannot train DR's mixture of sizes
    assert "no domain-randomization arm: --algo mappo's critic" in result.stderr
    from gymwright.train import checkpoint as ck

    config = ck.load(Path(data["checkpoint"]))["config"]
    assert (config["algo"], config["seed"], config["num_envs"]) == ("mappo", 2, 16)
