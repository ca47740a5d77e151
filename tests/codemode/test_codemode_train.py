"""Training, resuming, evaluating and playing a code-mode design (issue 20, item 6): the built-in
trainer drives copies of the module in real sandbox workers; nothing of it is imported here."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.codemode.sandbox import SandboxError
from gymwright.errors import GymwrightError
from gymwright.evaluate import assess
from gymwright.evaluate.scorecard import NO_SPEC, SPEC_ONLY
from gymwright.train import TrainConfig, train
from gymwright.train import checkpoint as ck
from gymwright.train.baselines import random_legal_policy
from gymwright.train.episodes import play_episodes
from gymwright.train.ppo import TIME_KEYS
from gymwright.train.rollout import make_env
from tests.support.paths import MEET_ON_A_LINE, ROOT

FIXTURE = MEET_ON_A_LINE
GOOD = FIXTURE.read_text()
STEP_LINE = GOOD.splitlines().index("    def step(self, actions):") + 2  # a payload's first line
TINY = ["--num-envs", "4", "--rollout-len", "8", "--minibatches", "2", "--epochs", "1", "--hidden", "16"]


def design(tmp_path: Path, step_payload: str = "", name: str = "meet_on_a_line") -> Path:
    """The fixture as a design file, with `step_payload` as the first statement of `step`."""
    head = "    def step(self, actions):\n"
    body = "".join(f"        {line}\n" for line in step_payload.splitlines())
    path = tmp_path / f"{name}.py"
    path.write_text(GOOD.replace(head, head + body))
    return path


def invoke(*args: object) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


class MaskWatcher:
    """A trained policy, with a count of its actions, of those where the env forbade some action,
    and of those the masks forbade."""

    def __init__(self, policy: Any) -> None:
        self.policy, self.illegal, self.acted, self.forbidden = policy, 0, 0, 0

    def act(self, obs: np.ndarray, masks: np.ndarray, deterministic: bool = False) -> np.ndarray:
        acts = self.policy.act(obs, masks, deterministic)
        for (b, i), a in np.ndenumerate(acts):
            if a >= 0:
                self.acted += 1
                self.illegal += int(masks[b, i, a] == 0)
                self.forbidden += int((masks[b, i] == 0).any())
        return acts


@pytest.mark.slow  # over 5 s (train, evaluate and play through the sandbox); the default suite keeps assess and the copies
def test_train_evaluate_and_play_a_code_mode_design(tmp_path: Path) -> None:
    """The smoke test: `gymwright train design.py`, its log and checkpoint, then evaluation and play."""
    path, run = design(tmp_path), tmp_path / "run"
    result = invoke("train", path, *TINY, "--steps", "64", "--out", run, "--json")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (run / "train.jsonl").read_text().splitlines()]
    assert [r["update"] for r in rows] == [1, 2] and all(r["charts/agent_sps"] > 0 for r in rows)
    saved = ck.load(run / ck.CHECKPOINT)
    assert saved["spec_name"] == "meet_on_a_line" and saved["update"] == 2 and saved["state_dim"] == 0
    policy = ck.load_policy(run, path)
    watcher = MaskWatcher(policy)
    ev = play_episodes(str(path), None, watcher, episodes=6, seed=100)
    assert ev.episodes == 6 and set(ev.metrics) == {"met", "steps"} and 1 <= ev.length <= 20
    # every action the policy played was legal, also where the env forbade some (walker at an end)
    assert watcher.acted > 0 and watcher.forbidden > 0 and watcher.illegal == 0
    played = invoke("play", path, "--policy", run, "--episodes", "2", "--json")
    assert played.exit_code == 0, played.output
    episodes = json.loads(played.stdout)
    assert [e["seed"] for e in episodes] == [0, 1] and all(e["ended"] for e in episodes)
    assert all(set(e["metrics"]) == {"met", "steps"} for e in episodes)
    render = invoke("play", path, "--policy", run, "--render")
    assert render.exit_code == 1 and "frames are not drawn" in render.output
    # evaluation through the sandbox: the checks that need only episodes, the spec's n/a
    evaluated = invoke("evaluate", path, "--policy", run, "--episodes", "8", "--json")
    assert evaluated.exit_code == 0, evaluated.output
    card = json.loads(evaluated.stdout)
    assert card["spec"] == "meet_on_a_line" and card["task_metric"] == "met" and card["trained"]["episodes"] == 8
    checks = {c["name"]: c for c in card["checks"]}
    assert checks["learnability"]["verdict"] in ("ok", "fail")
    assert set(checks["learnability"]["evidence"]["returns"]) == {"agent"}
    assert checks["learnability"]["evidence"]["task_metric"]["random"] == card["random"]["metrics"]["met"]
    assert checks["learning_curve"]["verdict"] == "n/a"  # 2 logged updates: too few for a slope
    assert checks["difficulty"]["evidence"]["metric"] == "met"
    assert {n for n, c in checks.items() if c["message"].startswith(NO_SPEC)} == set(SPEC_ONLY)
    assert all(checks[n]["verdict"] == "n/a" for n in SPEC_ONLY)
    assert json.loads((run / "eval" / "scorecard.json").read_text())["checks"] == card["checks"]
    assert not (run / "eval" / "trajectories.jsonl").exists()  # no steps are recorded over the pipe
    # nothing of the module was imported into this process
    assert not [m for m in list(sys.modules.values()) if str(getattr(m, "__file__", "")).startswith(str(tmp_path))]


def test_assess_judges_a_code_mode_design_by_its_episodes_and_its_log(tmp_path: Path) -> None:
    """Random-legal play judged against itself (same seeds) learns nothing; a log whose return
    rises gives a rising curve; `task_metric` names the metric the difficulty is judged by."""
    path = str(design(tmp_path))
    log = [{"env_steps": 1000 * k, "charts/return/agent": 0.1 * k, "metrics/steps": 20.0} for k in range(1, 6)]
    card = assess(path, None, random_legal_policy(7), history=log, task_metric="steps", band=(0.0, 30.0),
                  episodes=6, seed=7, out=tmp_path / "eval")
    checks = {c.name: c for c in card.checks}
    assert card.trained.returns == card.random.returns and checks["learnability"].verdict == "fail"
    assert checks["learning_curve"].verdict == "ok" and checks["learning_curve"].evidence["points"] == 5
    assert checks["difficulty"].verdict == "ok" and checks["difficulty"].evidence["metric"] == "steps"
    # the return rose while `steps` stayed flat
    assert checks["hacking.return_without_task"].verdict == "warning"
    assert checks["hacking.reward_in_failures"].verdict == "n/a"  # every episode has steps > 0: no failures
    assert card.scripted == {} and card.legend == [] and set(card.files) == {"scorecard"}
    with pytest.raises(GymwrightError, match="has no param `size` .its params, the keyword arguments"):
        assess(path, {"size": 5}, random_legal_policy(0), episodes=2)


@pytest.mark.slow
def test_a_policy_trained_in_the_sandbox_is_judged_learnable(tmp_path: Path) -> None:
    """8,192 env steps on the fixture: trained play beats random legal play, the curve rises."""
    path = str(design(tmp_path))
    cfg = TrainConfig(spec=path, num_envs=8, rollout_len=32, total_steps=8192, hidden=(32,), out=str(tmp_path / "run"))
    result = train(cfg)
    card = assess(path, None, ck.load_policy(tmp_path / "run", path), history=result.history, episodes=100)
    checks = {c.name: c for c in card.checks}
    assert checks["learnability"].verdict == "ok", checks["learnability"]
    assert checks["learning_curve"].verdict == "ok", checks["learning_curve"]
    assert card.trained.metrics["met"] > card.random.metrics["met"]


def test_options_that_need_a_spec_are_refused_on_a_code_mode_design(tmp_path: Path) -> None:
    path, run = design(tmp_path), tmp_path / "run"
    cases = {
        ("train", path, "--backend", "rllib", "--out", run): "--backend rllib: ",
        ("train", path, "--npc", "agent=random", "--out", run): "--npc: ",
        ("evolve", path, "--engineer", "fixed", "--out", run): "no param ranges for the engineer to move",
        ("evolve", tmp_path / "missing.py", "--out", run): "missing.py is a code-mode module",  # not taken for a task
        ("play", path, "--policy", run, "--gif", tmp_path / "a.gif"): "--gif ",
        ("validate", path): "this is a code-mode module (Python), not a spec",
        ("verify", path): "this is a code-mode module (Python), not a spec",
    }
    for args, message in cases.items():
        result = invoke(*args)
        assert result.exit_code == 1 and message in result.output, (args, result.output)
        assert "code-mode module" in result.output and "YAML" not in result.output and "Traceback" not in result.output
    assert not run.exists()


def test_a_code_mode_design_refuses_a_param_its_class_does_not_declare(tmp_path: Path) -> None:
    path = design(tmp_path)
    with pytest.raises(GymwrightError, match="has no param `size` .its params, .*: max_steps=20"):
        make_env(str(path), [{"size": 5}], 2)
    result = invoke("train", path, "--param", "size=5", *TINY, "--steps", "32", "--out", tmp_path / "r")
    assert result.exit_code == 1 and "has no param `size`" in result.output and "Traceback" not in result.output


def test_mappo_is_refused_clearly(tmp_path: Path) -> None:
    cfg = TrainConfig(spec=str(design(tmp_path)), algo="mappo", num_envs=2, rollout_len=4, total_steps=8,
                      minibatches=1, out=str(tmp_path / "run"))
    with pytest.raises(GymwrightError, match=r"MAPPO needs state\(\); code-mode envs have none.*use IPPO"):
        train(cfg)


@pytest.mark.slow
def test_resume_replays_the_copies_and_goes_on_bit_for_bit(tmp_path: Path) -> None:
    """Stop after 2 updates (episodes are 20 steps long, updates 8: copies are mid-episode),
    resume to 5: the same log as a run of 5 updates straight."""
    path = str(design(tmp_path))
    base = {"spec": path, "num_envs": 3, "rollout_len": 8, "minibatches": 2, "epochs": 1, "hidden": (16,), "seed": 3,
            "anneal_lr": False}  # the learning rate then does not depend on the planned number of updates
    straight = train(TrainConfig(**base, total_steps=120, out=str(tmp_path / "a")))
    train(TrainConfig(**base, total_steps=48, out=str(tmp_path / "b")))
    saved = ck.load(tmp_path / "b" / ck.CHECKPOINT)
    assert any(len(p) for p in saved["env"]["sandboxed"][1]["played"])  # some copy was mid-episode
    resumed = train(TrainConfig(**base, total_steps=120, out=str(tmp_path / "b"), resume=True))

    def figures(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k not in (*TIME_KEYS, "updates_total")} for r in rows]
    assert resumed.updates == 5 and figures(resumed.history) == figures(straight.history)


def test_a_module_that_replays_differently_is_not_resumed_silently(tmp_path: Path) -> None:
    path = design(tmp_path)
    with make_env(str(path), [{}], 2) as benv:
        benv.reset(seed=0)
        benv.step(np.ones((2, 2), np.int64))
        state = benv.checkpoint_state()
        state["seeds"] = state["seeds"] + 1  # the replay starts from other positions
        with pytest.raises(GymwrightError, match="not deterministic under reset"):
            benv.restore_checkpoint_state(state)


@pytest.mark.slow
def test_a_hostile_module_is_refused_or_contained_when_the_trainer_drives_it(tmp_path: Path) -> None:
    sentinel, secret = tmp_path / "pwned", tmp_path / "secret"
    secret.write_text("gymwright-test-secret")
    # opening a file in step: refused by vetting, before any worker starts
    static = design(tmp_path, f"open({str(sentinel)!r}, 'w').write('x')", "opens_a_file")
    result = invoke("train", static, *TINY, "--steps", "32", "--out", tmp_path / "r1")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"{static}:{STEP_LINE}" in result.output and "did not pass vetting" in result.output
    # reaching another module by getattr is refused by vetting now (issue 39), before any worker starts
    reach = design(tmp_path, "import dataclasses\nself._x = getattr(dataclasses, 'inspect')", "reaches_inspect")
    result = invoke("train", reach, *TINY, "--steps", "32", "--out", tmp_path / "r2")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "`dataclasses.inspect` is the module `inspect`" in result.output
    # past vetting: the audit hook refuses what numpy.testing imports and the module swallows the
    # error: the env stops all the same
    caught = design(tmp_path, "try:\n    self._x = np.testing.tempdir()\nexcept Exception:\n    self._x = None",
                    "swallows_a_refusal")
    result = invoke("train", caught, *TINY, "--steps", "32", "--out", tmp_path / "r3")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"{caught}: the module tried" in result.output and "which the sandbox refused" in result.output
    # past vetting, not caught: the refusal raises in step, at its line
    raises = design(tmp_path, "self._x = np.testing.tempdir()", "raises_a_refusal")
    with pytest.raises(SandboxError) as info, make_env(str(raises), [{}], 2) as benv:
        benv.reset(seed=0)
        benv.step(np.ones((2, 2), np.int64))
    assert info.value.path == f"{raises}:{STEP_LINE}"
    assert not sentinel.exists()


@pytest.mark.slow
def test_the_benchmarks_code_mode_stag_hunt_is_the_spec_s_game() -> None:
    """benchmarks/codemode_throughput.py times the trainer on stag_hunt both ways; its check that
    the code-mode module plays like the spec (it exits where a step differs) passes."""
    path = ROOT / "benchmarks" / "codemode_throughput.py"
    spec = importlib.util.spec_from_file_location("codemode_throughput", path)
    bench = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(bench)  # type: ignore[union-attr]
    bench.same_game(steps=45)
