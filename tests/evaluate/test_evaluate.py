"""The evaluator's checks, each on evidence built to trigger it and on evidence built not to,
then end to end: a spec with a hackable shaping term, trained for real, is flagged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from gymwright.evaluate import assess
from gymwright.evaluate.checks import slope_ci
from gymwright.evaluate.difficulty import difficulty
from gymwright.evaluate.hacking import dominant_shaping, return_without_task, reward_in_failures
from gymwright.evaluate.learnability import learnability, learning_curve
from gymwright.evaluate.trajectories import Step, Trajectory
from gymwright.train import TrainConfig, load_policy, train
from gymwright.train.episodes import EvalResult


def result(ret: float, spread: float, metric: list[float] | None = None, n: int = 100) -> EvalResult:
    rng = np.random.default_rng(0)
    returns = ret + spread * rng.standard_normal((n, 1))
    metrics = {"success": np.array(metric or [0.0] * n, dtype=float)}
    ci = 1.96 * returns[:, 0].std(ddof=1) / np.sqrt(n)
    return EvalResult(n, {"a": float(returns.mean())}, {"a": float(ci)}, {"success": float(metrics["success"].mean())},
                      5.0, ["a_0"], returns, metrics)


def history(returns: list[float], metric: list[float]) -> list[dict]:
    return [{"env_steps": (i + 1) * 100_000, "charts/return/a": r, "metrics/success": m}
            for i, (r, m) in enumerate(zip(returns, metric, strict=True))]


def traj(terms: dict[str, float], success: float) -> Trajectory:
    step = Step(0, {"a_0": "go"}, {"a_0": sum(terms.values())}, {"a_0": terms}, "")
    return Trajectory(0, [step], {"a_0": sum(terms.values())}, {"success": success})


def test_slope_ci_recovers_a_line() -> None:
    slope, ci = slope_ci(np.arange(10.0), 3 * np.arange(10.0) + 1)
    assert slope == pytest.approx(3) and ci == pytest.approx(0, abs=1e-9)


def test_learnability_ok_when_trained_beats_random_and_fail_when_not() -> None:
    assert learnability(result(1.0, 0.1), result(0.0, 0.1), "success").verdict == "ok"
    same = learnability(result(0.5, 0.3), result(0.5, 0.3), "success")
    assert same.verdict == "fail" and "no more than random-legal play" in same.message


def test_learning_curve_rising_flat_and_falling() -> None:
    assert learning_curve(history([0, 1, 2, 3, 4], [0] * 5), ["a"]).verdict == "ok"
    assert learning_curve(history([1, 1.01, 0.99, 1, 1.0], [0] * 5), ["a"]).verdict == "warning"
    assert learning_curve(history([4, 3, 2, 1, 0], [0] * 5), ["a"]).verdict == "fail"
    assert learning_curve([], ["a"]).verdict == "n/a"


def test_difficulty_flags_a_trivially_easy_config_and_passes_one_in_band() -> None:
    easy = difficulty(result(1, 0.1, [1.0] * 100), "success")
    assert easy.verdict == "warning" and "too easy" in easy.message
    hard = difficulty(result(1, 0.1, [0.0] * 100), "success")
    assert hard.verdict == "warning" and "too hard" in hard.message
    assert difficulty(result(1, 0.1, [1.0, 0.0] * 50), "success").verdict == "ok"


def test_return_rising_while_the_task_metric_stays_flat_is_flagged() -> None:
    flagged = return_without_task(history([0, 1, 2, 3, 4], [0.1, 0.1, 0.1, 0.1, 0.1]), ["a"], "success")
    assert flagged.verdict == "warning" and "did not" in flagged.message
    assert return_without_task(history([0, 1, 2, 3, 4], [0, .2, .4, .6, .8]), ["a"], "success").verdict == "ok"


def test_a_dominant_shaping_term_is_flagged_and_a_dominant_task_term_is_not() -> None:
    role_of, first = {"a_0": "a"}, {"a": {"task"}}
    hacked = dominant_shaping([traj({"task": 0.1, "bonus": 2.0}, 0)] * 5, first, role_of)
    assert hacked.verdict == "warning" and "`bonus`" in hacked.message
    assert dominant_shaping([traj({"task": 2.0, "bonus": 0.1}, 1)] * 5, first, role_of).verdict == "ok"


def test_reward_collected_in_failed_episodes_is_flagged() -> None:
    paying = [traj({"task": 1.0}, 1), traj({"task": 0.9}, 0)] * 5
    assert reward_in_failures(paying, "success").verdict == "warning"
    costly = [traj({"task": 1.0}, 1), traj({"task": 0.0}, 0)] * 5
    assert reward_in_failures(costly, "success").verdict == "ok"


HACKABLE = """
gymwright: 1
name: button_or_spin
description: One agent should press the button once; spinning earns a small shaping bonus each step.
params:
  bonus: {default: 0.2, min: 0.0, max: 1.0, doc: shaping reward per spin}
agents: {player: {count: 1}}
state:
  pressed: {type: bool, init: false}
actions:
  player:
    - {name: press}
    - {name: spin}
    - {name: idle}
    - {name: nap}
step:
  - {when: "press[0]", set: {pressed: true}}
terminate: pressed
truncate: "t >= 10"
rewards:
  player:
    - {name: task, expr: "1.0 * pressed"}
    - {name: spin_bonus, expr: "bonus * spin[me]"}
metrics:
  success: {expr: pressed, reduce: last}
observe:
  player: ["t / 10"]
"""


@pytest.fixture(scope="module")
def hackable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("spec") / "button_or_spin.yaml"
    path.write_text(HACKABLE)
    return path


@pytest.mark.slow  # over 5 s; the suite's time budget (CI runs it with -m slow)
def test_end_to_end_a_hackable_shaping_term_and_dead_actions_are_caught(hackable: Path, tmp_path: Path) -> None:
    run = train(TrainConfig(spec=str(hackable), total_steps=60_000, num_envs=64, seed=0, out=tmp_path / "run"))
    card = assess(str(hackable), {}, load_policy(run.checkpoint), history=run.history, episodes=100,
                  out=tmp_path / "eval")
    verdicts = {c.name: c for c in card.checks}
    assert verdicts["learnability"].verdict == "ok"  # spinning earns more than random play
    assert verdicts["hacking.dominant_shaping"].verdict == "warning", verdicts["hacking.dominant_shaping"]
    assert verdicts["difficulty"].verdict == "warning" and "too hard" in verdicts["difficulty"].message
    dead = [c for c in card.checks if "two choices that do nothing" in c.message]
    assert dead, [c.message for c in card.checks]  # idle and nap both do nothing
    assert card.verdict in ("warning", "fail")
    assert (tmp_path / "eval" / "scorecard.json").exists()
    lines = (tmp_path / "eval" / "trajectories.jsonl").read_text().splitlines()
    assert '"spin"' in lines[0] and "spin_bonus" in lines[0]


@pytest.mark.slow
def test_end_to_end_without_the_bonus_the_task_is_learned_and_not_flagged(hackable: Path, tmp_path: Path) -> None:
    spec = yaml.safe_load(HACKABLE)
    spec["params"]["bonus"]["default"] = 0.0
    spec["actions"]["player"] = spec["actions"]["player"][:2]  # press and spin (now a no-op)
    path = tmp_path / "fair.yaml"
    path.write_text(yaml.safe_dump(spec))
    run = train(TrainConfig(spec=str(path), total_steps=60_000, num_envs=64, seed=0, out=tmp_path / "run"))
    card = assess(str(path), {}, load_policy(run.checkpoint), history=run.history, episodes=100)
    verdicts = {c.name: c for c in card.checks}
    assert verdicts["hacking.dominant_shaping"].verdict == "ok"
    assert verdicts["difficulty"].verdict == "warning" and "too easy" in verdicts["difficulty"].message
    assert not [c for c in card.checks if "two choices that do nothing" in c.message]


def test_cli_evaluate_prints_the_scorecard_and_writes_its_files(hackable: Path, tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from gymwright.cli import app

    train(TrainConfig(spec=str(hackable), total_steps=10_000, num_envs=32, out=tmp_path / "run"))
    result = CliRunner().invoke(app, ["evaluate", str(hackable), "--policy", str(tmp_path / "run"),
                                      "-n", "20", "--json"])
    assert result.exit_code == 0, result.output
    card = json.loads(result.stdout)
    assert card["task_metric"] == "success" and card["verdict"] in ("ok", "warning", "fail")
    assert {c["name"] for c in card["checks"]} >= {"learnability", "difficulty", "hacking.dominant_shaping"}
    assert (tmp_path / "run" / "eval" / "scorecard.json").exists()
    missing = CliRunner().invoke(app, ["evaluate", str(hackable), "--policy", str(tmp_path / "none")])
    assert missing.exit_code == 1 and "no checkpoint" in missing.output


def test_reward_terms_say_their_kind() -> None:
    """`kind: task | shaping` decides which terms the shaping check watches; without any kind a
    role's first term is its task term (issue 16 item 8)."""
    import copy

    from gymwright.evaluate.scorecard import task_terms
    from gymwright.spec.loader import load_spec, read_data

    data, _ = read_data("mapf_frozenlake")
    assert task_terms(load_spec(data)) == {"walker": {"goal"}}
    data = copy.deepcopy(data)
    for term in data["rewards"]["walker"]:
        term["kind"] = "task" if term["name"] in ("goal", "team") else "shaping"
    assert task_terms(load_spec(data)) == {"walker": {"goal", "team"}}
    role_of = {"a_0": "walker"}  # the agent of traj()
    both = dominant_shaping([traj({"goal": 1.0, "team": 3.0, "time": 0.1}, 1)] * 5, task_terms(load_spec(data)), role_of)
    assert both.verdict == "ok"
    flagged = dominant_shaping([traj({"goal": 0.1, "team": 0.1, "time": 2.0}, 0)] * 5, task_terms(load_spec(data)), role_of)
    assert "more than the task terms `goal`, `team`" in flagged.message
