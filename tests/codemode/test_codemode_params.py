"""A code-mode module's params (issue 42, point 11e): the keyword arguments of its class's
`__init__` with literal defaults, passed by `--param` (or a config's `params:`) through the
sandbox worker to the class; an unknown name or a value of the wrong kind is refused, naming
the params there are."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gymwright.codemode.params import check_params, declared_params
from gymwright.codemode.source import batch_env, parallel_env
from gymwright.errors import GymwrightError
from tests.support.paths import ROOT

STAG = (ROOT / "benchmarks" / "data" / "stag_hunt_code.py").read_text()
# the stag hunt with its rounds and the hare's reward as params of the class
TUNABLE = (STAG.replace("    def __init__(self, render_mode=None):",
                        "    def __init__(self, rounds=20, hare_reward=3.0, cooperative=False, render_mode=None):\n"
                        "        self.rounds, self.hare_reward = rounds, hare_reward")
           .replace("done = self._t >= ROUNDS", "done = self._t >= self.rounds")
           .replace("+ HARE_REWARD * float(chosen[i] == HARE)", "+ self.hare_reward * float(chosen[i] == HARE)"))


def test_the_params_are_the_keyword_arguments_with_literal_defaults() -> None:
    assert declared_params(TUNABLE) == {"rounds": 20, "hare_reward": 3.0, "cooperative": False}
    assert declared_params(STAG) == {}  # render_mode is not a param
    with pytest.raises(GymwrightError, match=r"stag.py is a code-mode module, which takes no params \(given: rounds\)"):
        check_params("stag.py", {}, {"rounds": 3})
    assert check_params("m", declared_params(TUNABLE), {"rounds": 3.0, "hare_reward": 2}) == \
        {"rounds": 3, "hare_reward": 2.0}
    with pytest.raises(GymwrightError) as e:
        check_params("stag.py", declared_params(TUNABLE), {"round": 3})
    assert e.value.path == "params.round" and "has no param `round`" in e.value.message
    assert "rounds=20, hare_reward=3.0, cooperative=False" in e.value.message
    with pytest.raises(GymwrightError, match="param `rounds` must be a whole number"):
        check_params("stag.py", declared_params(TUNABLE), {"rounds": 2.5})
    with pytest.raises(GymwrightError, match="param `cooperative` must be true or false"):
        check_params("stag.py", declared_params(TUNABLE), {"cooperative": 1})


def test_params_reach_the_class_through_the_sandbox(tmp_path: Path) -> None:
    path = tmp_path / "stag.py"
    path.write_text(TUNABLE)
    env = parallel_env(path, {"rounds": 3, "hare_reward": 2.0})
    try:
        env.reset(seed=0)
        steps, rewards = 0, []
        while env.agents:
            _, rew, *_ = env.step({a: 1 for a in env.agents})  # both hunt hares
            rewards.append(rew["hunter_0"])
            steps += 1
    finally:
        env.close()
    assert steps == 3 and rewards == [2.0, 2.0, 2.0]
    with pytest.raises(GymwrightError, match="has no param `stag`"):
        parallel_env(path, {"stag": 5.0})


def test_the_trainers_batch_env_takes_the_params(tmp_path: Path) -> None:
    path = tmp_path / "stag.py"
    path.write_text(TUNABLE)
    env = batch_env(path, [{"rounds": 2}], 2, workers=1)
    try:
        env.reset(0)
        _, _, _, _, info = env.step(np.ones((2, 2), np.int64))
        assert len(info.get("done_idx", [])) == 0
        _, _, _, _, info = env.step(np.ones((2, 2), np.int64))
        assert sorted(info["done_idx"]) == [0, 1] and list(info["episode_length"]) == [2, 2]
    finally:
        env.close()
    with pytest.raises(GymwrightError, match="one config of params"):
        batch_env(path, [{"rounds": 2}, {"rounds": 3}], 2)
