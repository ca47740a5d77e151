"""Untrusted values are checked where they cross into gymwright (issue 39, item 7).

Non-finite rewards and observations stop `train`, `evaluate` and `play` with an error naming the
env, the step, the copy and its episode, the agent and the value, in spec mode and code mode, and
before the value reaches a checkpoint; a code-mode worker's replies of the wrong shape or type
(what a forged frame decodes to), spaces too large to batch and floods of metric names are clear
errors; the report of a log with thousands of metric names stays small.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.codemode import vector
from gymwright.codemode.checks import check_code
from gymwright.codemode.sandbox import SandboxError
from gymwright.codemode.spaces import describe
from gymwright.errors import GymwrightError
from gymwright.report import write_report
from gymwright.report.charts import MAX_SERIES
from gymwright.spec.loader import read_data
from gymwright.train import TrainConfig, train
from gymwright.train import checkpoint as ck
from gymwright.train.baselines import random_legal_policy
from gymwright.train.boundary import CODE_HINT, SPEC_HINT, EnvValueError
from gymwright.train.episodes import play_episodes
from gymwright.train.rollout import Rollout, make_env
from tests.support.paths import MEET_ON_A_LINE

GOOD = MEET_ON_A_LINE.read_text()
TINY: dict[str, Any] = {"num_envs": 4, "rollout_len": 8, "minibatches": 2, "epochs": 1, "hidden": (16,)}


def stag(reward: str = "stag_reward * (stag[me] and success)", rounds: int | None = None,
         others: str | None = None) -> dict[str, Any]:
    """The stag hunt with its stag reward (and the `others_stag` observation) replaced."""
    data = copy.deepcopy(read_data("stag_hunt")[0])
    data["rewards"]["hunter"][0]["expr"] = reward
    if rounds is not None:
        data["params"]["rounds"]["default"] = rounds
    if others is not None:
        feature = data["observe"]["hunter"][1]
        feature["expr"] = others
        del feature["low"], feature["high"]
    return data


def module(tmp_path: Path, name: str, *edits: tuple[str, str]) -> Path:
    """The good code-mode fixture with `edits` (old, new) applied, as `name`.py."""
    text = GOOD
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return path


REWARD = "reward = (1.0 if met else 0.0) - 0.05"
COUNTED = ("np.random.default_rng(0)\n", "np.random.default_rng(0)\n        self._n = 0\n")  # __init__: steps played


def bomb(after: int) -> tuple[str, str]:
    """step(): the reward turns NaN once the instance has played `after` steps (across episodes)."""
    return REWARD, f"self._n += 1\n        {REWARD}\n        reward = float('nan') if self._n > {after} else reward"


# --------------------------------------------------------------------------- spec mode
def test_a_nan_reward_stops_training_at_its_step_before_any_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(EnvValueError) as e:
        train(TrainConfig(spec=stag("stag_reward * (stag[me] and success) + log(stags * 0)"), total_steps=256,
                          out=str(tmp_path / "run"), **TINY))
    assert str(e.value) == ("stag_hunt: at env step 1 (copy 0, its episode 1): hunter_0's reward is -inf, not a "
                            f"finite number\n  hint: {SPEC_HINT}")
    assert e.value.path == "stag_hunt" and e.value.value == -np.inf
    assert not (tmp_path / "run" / ck.CHECKPOINT).exists()


def test_a_time_bomb_stops_training_and_the_checkpoints_before_it_are_finite(tmp_path: Path) -> None:
    """NaN from the 41st round on: updates 1-5 (8 rounds each) train and are saved; update 6 stops."""
    run = tmp_path / "run"
    cfg = TrainConfig(spec=stag("stag_reward * (stag[me] and success) + 0 * sqrt(40 - t)", rounds=100),
                      total_steps=4 * 8 * 10, checkpoint_every=1, out=str(run), **TINY)
    with pytest.raises(EnvValueError, match=re.escape("stag_hunt: at env step 41 (copy 0, its episode 1): "
                                                      "hunter_0's reward is nan, not a finite number")):
        train(cfg)
    saved = ck.load(run)
    assert saved["update"] == 5 and ck.nonfinite_tensors(saved) == ([], 11)
    assert [json.loads(line)["update"] for line in (run / "train.jsonl").read_text().splitlines()] == [1, 2, 3, 4, 5]


def test_evaluation_stops_at_a_nan_observation_naming_its_index() -> None:
    with pytest.raises(EnvValueError) as e:
        play_episodes(stag(others="log(stags) * 0"), None, random_legal_policy(0), episodes=3)
    assert str(e.value).startswith("stag_hunt: after reset (copy 0, its episode 1): hunter_0's observation holds "
                                   "nan at index 2, not a finite number\n")


def test_the_cli_says_where_a_nan_came_from_in_train_and_play(tmp_path: Path) -> None:
    spec = tmp_path / "stag_nan.json"
    spec.write_text(json.dumps(stag("stag_reward * (stag[me] and success) + 0 * sqrt(3 - t)")))
    runner = CliRunner()
    trained = runner.invoke(app, ["train", str(spec), "--num-envs", "4", "--rollout-len", "8", "--minibatches", "2",
                                  "--steps", "64", "--out", str(tmp_path / "run")])
    assert trained.exit_code == 1 and "Traceback" not in trained.output and "trained" not in trained.output
    assert "stag_hunt: at env step 4 (copy 0, its episode 1): hunter_0's reward is nan, not a finite number" in trained.output
    assert not (tmp_path / "run" / ck.CHECKPOINT).exists()
    played = runner.invoke(app, ["play", str(spec), "--policy", "scripted:always_stag", "--episodes", "1"])
    assert played.exit_code == 1 and "Traceback" not in played.output
    assert "stag_hunt: at step 4 of the episode: hunter_0's reward is nan, not a finite number" in played.output
    as_json = runner.invoke(app, ["play", str(spec), "--policy", "scripted:always_stag", "--json"])
    error = json.loads(as_json.stdout)
    assert as_json.exit_code == 1 and error["path"] == "stag_hunt" and error["stage"] == "EnvValueError"


def test_a_checkpoint_with_nan_weights_is_neither_written_nor_played(tmp_path: Path) -> None:
    data = {"spec_name": "stag_hunt", "update": 7, "model": {"w": torch.tensor([1.0, float("nan")]), "b": torch.zeros(2)},
            "value_norms": [{"mean": torch.tensor(float("inf")), "var": torch.ones(()), "count": torch.ones(())}]}
    with pytest.raises(ck.CheckpointError) as e:
        ck.save(tmp_path / "checkpoint.pt", data)
    assert str(e.value) == (f"{tmp_path / 'checkpoint.pt'} was not written: the policy of stag_hunt after update 7 "
                            "holds NaN or infinities in 2 of its 5 tensors (w, value_norms[0].mean)\n"
                            f"  hint: {ck.NOT_FINITE_HINT}")
    assert not (tmp_path / "checkpoint.pt").exists()
    # one written before the check (bypassing save) is refused when a policy is made of it
    good = train(TrainConfig(spec="stag_hunt", total_steps=32, out=str(tmp_path / "run"), **TINY))
    saved = ck.load(good.checkpoint)
    saved["model"] = {k: torch.full_like(v, float("nan")) for k, v in saved["model"].items()}
    with pytest.raises(ck.CheckpointError, match=r"checkpoint.pt: the policy of stag_hunt after update 1 holds NaN or "
                                                 r"infinities in 8 of its 11 tensors .*\n  hint: it was written before"):
        ck.policy_from(saved)


def test_rollout_buffers_too_large_are_refused_before_allocating() -> None:
    with pytest.raises(GymwrightError) as e:
        Rollout.allocate(16, 1024, 256, 16_384, 4096, None)
    assert str(e.value) == ("num_envs: the rollout buffers would take 272.1 GiB (16 steps x 1024 copies x 256 agents x "
                            "16384 observation values and 4096 actions); the limit is 8 GiB\n"
                            "  hint: lower --num-envs or --rollout-len, or observe fewer values per agent")


def test_a_log_with_thousands_of_metric_names_makes_a_small_report(tmp_path: Path) -> None:
    rows = [{"update": u, "env_steps": 64 * u, "charts/return/agent": 0.1 * u, "charts/episodes": 4,
             **{f"metrics/m{k:04d}": float(k + u) for k in range(3000)}} for u in (1, 2, 3)]
    (tmp_path / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = write_report(tmp_path, tmp_path / "report.html", run_verifier=False)
    page = (tmp_path / "report.html").read_text()
    assert report.bytes < 2_000_000 and "Learning curves" in report.sections
    assert f"The log has {3000 - MAX_SERIES:,} more (at most {MAX_SERIES} are drawn), e.g. m0032, m0033, m0034." in page


# --------------------------------------------------------------------------- code mode, in real workers
def test_a_time_bomb_in_a_module_stops_training_and_no_checkpoint_holds_it(tmp_path: Path) -> None:
    """Rewards turn NaN after 100 steps of each instance (a module's own count, across episodes): training stops."""
    path, run = module(tmp_path, "bomb", COUNTED, bomb(100)), tmp_path / "run"
    cfg = TrainConfig(spec=str(path), total_steps=4 * 8 * 20, checkpoint_every=5, out=str(run), **TINY)
    with pytest.raises(EnvValueError) as e:
        train(cfg)
    assert re.fullmatch(rf"{re.escape(str(path))}: at env step 101 \(copy \d, its episode \d+\): walker_\d's reward is "
                        rf"nan, not a finite number\n  hint: {re.escape(CODE_HINT)}", str(e.value)), str(e.value)
    saved = ck.load(run)
    assert saved["update"] == 10 and ck.nonfinite_tensors(saved)[0] == []


def test_a_module_s_nan_observation_stops_evaluation(tmp_path: Path) -> None:
    path = module(tmp_path, "nan_obs", ("self._t / self.max_steps]", "self._t / self.max_steps * float('nan')]"))
    with pytest.raises(EnvValueError) as e:
        play_episodes(str(path), None, random_legal_policy(0), episodes=2)
    assert str(e.value).startswith(f"{path}: after reset (copy 0, its episode 1): walker_0's observation holds nan at "
                                   "index 2, not a finite number\n")


OBS = "return np.array([self._pos[i] / (SIZE - 1), self._pos[other] / (SIZE - 1), self._t / self.max_steps],"
WRONG = {  # module edit -> the error, after the module's path
    "obs_shape": ((OBS, OBS.replace("self.max_steps]", "self.max_steps, 0.0]")),
                  "copy 0, reset(seed=0): walker_0's observation has shape (4,); its observation_space "
                  "Box(0.0, 1.0, (3,), float32) has (3,)"),
    "obs_text": (("obs = {a: self._obs(i) for i, a in enumerate(self.agents)}\n        rewards",
                  "obs = {a: 'ok' for a in self.agents}\n        rewards"),
                 "copy 0, step 1 of its episode of seed 0: walker_0's observation is a str, not an array of numbers"),
    "reward_text": (("rewards = {a: reward for a in self.agents}", "rewards = {a: 'high' for a in self.agents}"),
                    "copy 0, step 1 of its episode of seed 0: walker_0's reward is str 'high', not a number"),
    "huge_box": (("shape=(3,)", "shape=(1000, 1000)"),  # refused in the worker: its bounds never cross the pipe
                 "a Box of shape (1000, 1000): 1,000,000 elements (at most 65,536)"),
    "wide_box": (("shape=(3,)", "shape=(200, 200)"),
                 "agent walker_0 declares 40,000 observation values and 3 actions; a batch takes at most 16,384 "
                 "and 4,096 (a spec's limits)"),
    "huge_discrete": (("return spaces.Discrete(3)", "return spaces.Discrete(1_000_000)"),
                      "agent walker_0 declares 3 observation values and 1,000,000 actions; a batch takes at most "
                      "16,384 and 4,096 (a spec's limits)"),
    "metric_flood": (('infos[a]["metrics"] = {"met": float(met), "steps": float(self._t)}',
                      'infos[a]["metrics"] = {f"m{k}": 1.0 for k in range(20_000)}'),
                     "final infos' metrics holds 20,000 names; at most 64 metrics are logged"),
}


@pytest.mark.parametrize("case", list(WRONG))
def test_wrong_values_from_a_module_are_clear_errors_in_the_parent(case: str, tmp_path: Path) -> None:
    edit, message = WRONG[case]
    path = module(tmp_path, case, edit)
    with pytest.raises(GymwrightError) as e:
        with make_env(str(path), [{}], 2) as benv:
            benv.reset(seed=0)
            for _ in range(25):  # past the first episode's end (at most 20 steps)
                benv.step(np.ones((2, 2), np.int64))
    assert e.value.path == str(path) and e.value.message.endswith(message), str(e.value)


def test_check_code_reports_a_flood_of_metric_names() -> None:
    edit, _ = WRONG["metric_flood"]
    report, _ = check_code(GOOD.replace(*edit), episodes=2)
    flood = "step 6: the final infos' metrics holds 20,000 names; at most 64 metrics are logged"
    assert [d.message for d in report.diagnostics if d.severity.value == "error"] == [
        f"random legal play failed: {flood}", f"determinism failed: {flood}"]


# --------------------------------------------------------------------------- forged replies (no worker)
AGENTS = ["a0", "a1"]


class ScriptedWorker:
    """A sandbox worker's stand-in that answers as a test says: what a forged frame decodes to.
    `forge(op, reply)` edits the reply to each request (the first copy's, for many-copy requests)."""

    def __init__(self, forge: Any) -> None:
        self.forge, self.refused, self.alive, self.pending, self.made = forge, [], True, [], 0

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        if message["op"] != "make":
            return {}
        self.made += 1
        space = {"observation": describe(spaces.Box(0.0, 1.0, (3,), np.float32)), "action": describe(spaces.Discrete(3))}
        return self.forge("make", {"id": self.made, "agents": list(AGENTS), "spaces": {a: space for a in AGENTS}})

    def send(self, message: dict[str, Any]) -> None:
        self.pending.append(message)

    def receive(self, op: str) -> dict[str, Any]:
        message = self.pending.pop(0)
        results = []
        for _ in message["ids"]:
            r: dict[str, Any] = {"agents": list(AGENTS), "obs": {a: np.zeros(3, np.float32) for a in AGENTS},
                                 "infos": {a: {"action_mask": [1, 1, 1]} for a in AGENTS}}
            if op == "step_many":
                r |= {"rewards": {a: 0.5 for a in AGENTS}, "terminations": {a: False for a in AGENTS},
                      "truncations": {a: False for a in AGENTS}}
            results.append(r)
        results[0] = self.forge(op, results[0])
        return {"results": results}

    def close(self) -> None:
        self.alive = False


def forged(op: str, edit: Any) -> Any:
    def forge(at: str, reply: dict[str, Any]) -> dict[str, Any]:
        if at == op:
            edit(reply)
        return reply
    return forge


FORGED = {  # (request, edit of its reply) -> the error's message
    "id_text": (("make", lambda r: r.update(id="x")), "the worker sent an instance id str 'x'"),
    "agents_unhashable": (("make", lambda r: r.update(agents=[["a0"], "a1"])),
                          "possible_agents must be 1-256 distinct strings of 1-64 printable characters, got list "
                          "[['a0'], 'a1']"),
    "agent_escape": (("make", lambda r: r.update(agents=["\x1b[32mPASSED", "a1"])),
                     "possible_agents must be 1-256 distinct strings of 1-64 printable characters, got list "
                     "['\\x1b[32mPASSED', 'a1']"),
    "live_agents_unhashable": (("step_many", lambda r: r.update(agents=[{"a0": 1}])),
                               "after step, env.agents must be a subset of possible_agents"),
    "obs_list": (("reset_many", lambda r: r.update(obs=[1, 2, 3])),
                 "reset's observations must be a dict keyed by agent ids, got list "),
    "obs_dict": (("step_many", lambda r: r["obs"].update(a0={"x": 1})),
                 "copy 0, step 1 of its episode of seed 0: a0's observation is a dict, not an array of numbers"),
    "obs_shape": (("step_many", lambda r: r["obs"].update(a1=np.zeros((3, 1)))),
                  "copy 0, step 1 of its episode of seed 0: a1's observation has shape (3, 1); its observation_space "
                  "Box(0.0, 1.0, (3,), float32) has (3,)"),
    "reward_list": (("step_many", lambda r: r["rewards"].update(a0=[1, 2])),
                    "copy 0, step 1 of its episode of seed 0: a0's reward is list [1, 2], not a number"),
    "reward_huge_int": (("step_many", lambda r: r["rewards"].update(a0=10**400)),
                        "copy 0, step 1 of its episode of seed 0: a0's reward is an int of 401 digits, too large for "
                        "a float"),
    "reward_bool": (("step_many", lambda r: r["rewards"].update(a1=True)),
                    "copy 0, step 1 of its episode of seed 0: a1's reward is bool True, not a number"),
    "mask_short": (("reset_many", lambda r: r["infos"]["a0"].update(action_mask=[1, 1])),
                   "copy 0, reset(seed=0): a0's action_mask is list [1, 1]; it must be 3 zeros and ones, one per action"),
    "mask_values": (("step_many", lambda r: r["infos"]["a0"].update(action_mask=[2, 0, 1])),
                    "copy 0, step 1 of its episode of seed 0: a0's action_mask is list [2, 0, 1]; it must be 3 zeros "
                    "and ones, one per action"),
    "metric_names": (("step_many", lambda r: r.update(agents=[], infos={"a0": {"metrics": {f"m{k}": 1 for k in range(65)}}})),
                     "copy 0, step 1 of its episode of seed 0: a0's final infos' metrics holds 65 names; at most 64 "
                     "metrics are logged"),
    "metric_escape": (("step_many", lambda r: r.update(agents=[], infos={"a0": {"metrics": {"\x1b]8;;file:///etc/passwd\x07": 1}}})),
                      "copy 0, step 1 of its episode of seed 0: a0's final infos' metrics has a name str "
                      "'\\x1b]8;;file:///etc/passwd\\x07': names are 1-64 printable characters"),
    "metric_text": (("step_many", lambda r: r.update(agents=[], infos={"a0": {"metrics": {"met": "yes"}}})),
                    "copy 0, step 1 of its episode of seed 0: a0's final infos' metrics 'met' is str 'yes', not a number"),
}


@pytest.mark.parametrize("case", list(FORGED))
def test_forged_replies_are_clear_errors_not_crashes(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    (op, edit), message = FORGED[case]
    monkeypatch.setattr(vector, "load_module", lambda *a, **k: ScriptedWorker(forged(op, edit)))
    with pytest.raises(SandboxError) as e:
        benv = vector.SandboxedBatchEnv(GOOD, batch_size=2, name="forged.py")
        benv.reset(seed=0)
        benv.step(np.ones((2, 2), np.int64))
    assert e.value.path == "forged.py" and e.value.message.startswith(message), e.value.message


def test_the_scripted_worker_plays_when_nothing_is_forged(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in's own replies are good: each failure above is its forged value's."""
    monkeypatch.setattr(vector, "load_module", lambda *a, **k: ScriptedWorker(lambda op, reply: reply))
    benv = vector.SandboxedBatchEnv(GOOD, batch_size=2, name="forged.py")
    benv.reset(seed=0)
    obs, rewards, *_ = benv.step(np.ones((2, 2), np.int64))
    assert obs.shape == (2, 2, 3) and rewards.tolist() == [[0.5, 0.5], [0.5, 0.5]]
