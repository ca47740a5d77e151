"""Tests for the standalone AEC runtime (``gymwright.runtime.aec``)."""

import importlib.util
import sys
import warnings
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.test import api_test, seed_test

from tests.support.paths import SRC

# The module is standalone (it is inlined into exported env files), so load it straight
# from its file: this also proves that it needs nothing from the gymwright package.
AEC_PATH = SRC / "runtime" / "aec.py"
_spec = importlib.util.spec_from_file_location("_gymwright_runtime_aec_under_test", AEC_PATH)
assert _spec is not None and _spec.loader is not None
aec = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = aec
_spec.loader.exec_module(aec)
AECFromParallel = aec.AECFromParallel
wrap_aec = aec.wrap_aec


# ---------------------------------------------------------------------- toy parallel envs


class CounterPar(ParallelEnv):
    """Turn-based toy: two players alternately add 0 or 1 to a counter; 6 moves in all.

    The mover gets +1 for adding 1, the other player -0.5. At the end the player whose
    parity matches the counter (player_0: even, player_1: odd) gets +10, the other -10.
    Once the counter reaches 4 only "add 0" is legal. The start counter is random (0..2).
    """

    metadata = {"render_modes": [], "name": "counter_par_v0"}
    MOVES = 6

    def __init__(self, render_mode: str | None = None) -> None:
        self.render_mode = render_mode
        self.possible_agents = ["player_0", "player_1"]
        self.agents: list[str] = []
        self._obs_space = spaces.Box(0.0, 20.0, shape=(4,), dtype=np.float32)
        self._act_space = spaces.Discrete(2)
        self.state_space = spaces.Box(0.0, 20.0, shape=(2,), dtype=np.float32)
        self.counter = 0
        self.moves = 0
        self.step_calls: list[dict[str, Any]] = []
        self.closed = False

    def observation_space(self, agent: str) -> spaces.Box:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_space

    def turn_agent(self) -> str | None:
        if not self.agents:
            return None
        return self.possible_agents[self.moves % 2]

    def observe(self, agent: str) -> np.ndarray:
        mine = 1.0 if agent == self.turn_agent() else 0.0
        return np.array([self.counter, self.moves, mine, 1.0], dtype=np.float32)

    def state(self) -> np.ndarray:
        return np.array([self.counter, self.moves], dtype=np.float32)

    def render(self) -> str:
        return f"counter={self.counter} moves={self.moves}"

    def close(self) -> None:
        self.closed = True

    def _mask(self, agent: str) -> np.ndarray:
        if agent != self.turn_agent() or self.counter >= 4:
            return np.array([1, 0], dtype=np.int8)
        return np.array([1, 1], dtype=np.int8)

    def _infos(self, agents: list[str]) -> dict[str, dict[str, Any]]:
        return {a: {"action_mask": self._mask(a)} for a in agents}

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple:
        rng = np.random.default_rng(seed)
        self.counter = int(rng.integers(0, 3))
        self.moves = 0
        self.agents = list(self.possible_agents)
        return {a: self.observe(a) for a in self.agents}, self._infos(self.agents)

    def step(self, actions: dict[str, Any]) -> tuple:
        self.step_calls.append(dict(actions))
        mover = self.turn_agent()
        other = [a for a in self.agents if a != mover][0]
        action = actions.get(mover)
        add = 0 if action is None else int(action)
        self.counter += add
        self.moves += 1
        rewards = {mover: 1.0 * add, other: -0.5 * add}
        done = self.moves >= self.MOVES
        if done:
            winner = "player_0" if self.counter % 2 == 0 else "player_1"
            for a in self.agents:
                rewards[a] += 10.0 if a == winner else -10.0
        live = list(self.agents)
        if done:
            self.agents = []
        obs = {a: self.observe(a) for a in live}
        terms = {a: done for a in live}
        truncs = {a: False for a in live}
        return obs, rewards, terms, truncs, self._infos(live)


class SimulPar(ParallelEnv):
    """Simultaneous toy: 3 agents pick 0..2; truncated after 5 steps.

    Reward of agent i = action_i + 0.1 * (sum of all actions). With ``early_exit`` the
    agent ``agent_2`` terminates after step 2 while the others keep playing.
    """

    metadata = {"render_modes": [], "name": "simul_par_v0"}
    STEPS = 5

    def __init__(self, render_mode: str | None = None, early_exit: bool = False) -> None:
        self.render_mode = render_mode
        self.early_exit = early_exit
        self.possible_agents = ["agent_0", "agent_1", "agent_2"]
        self.agents: list[str] = []
        self._obs_space = spaces.Box(0.0, 10.0, shape=(4,), dtype=np.float32)
        self._act_space = spaces.Discrete(3)
        self.state_space = spaces.Box(0.0, 10.0, shape=(4,), dtype=np.float32)
        self.t = 0
        self.last_actions = np.zeros(3, dtype=np.float32)
        self.noise = 0.0
        self.step_calls: list[dict[str, Any]] = []

    def observation_space(self, agent: str) -> spaces.Box:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_space

    def turn_agent(self) -> str | None:
        return None

    def observe(self, agent: str) -> np.ndarray:
        return np.array([self.t + self.noise, *self.last_actions], dtype=np.float32)

    def state(self) -> np.ndarray:
        return self.observe(self.possible_agents[0])

    def render(self) -> str:
        return f"t={self.t}"

    def _infos(self, agents: list[str]) -> dict[str, dict[str, Any]]:
        return {a: {"action_mask": np.array([1, 1, 1], dtype=np.int8)} for a in agents}

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple:
        self.noise = float(np.random.default_rng(seed).uniform(0.0, 1.0))
        self.t = 0
        self.last_actions = np.zeros(3, dtype=np.float32)
        self.agents = list(self.possible_agents)
        return {a: self.observe(a) for a in self.agents}, self._infos(self.agents)

    def step(self, actions: dict[str, Any]) -> tuple:
        self.step_calls.append(dict(actions))
        acts = {a: int(actions.get(a, 0) or 0) for a in self.agents}
        total = sum(acts.values())
        self.last_actions = np.array(
            [acts.get(a, 0) for a in self.possible_agents], dtype=np.float32
        )
        self.t += 1
        live = list(self.agents)
        rewards = {a: acts[a] + 0.1 * total for a in live}
        truncated = self.t >= self.STEPS
        terms = {a: self.early_exit and self.t == 2 and a == "agent_2" for a in live}
        truncs = {a: truncated for a in live}
        self.agents = [a for a in live if not (terms[a] or truncs[a])]
        obs = {a: self.observe(a) for a in live}
        return obs, rewards, terms, truncs, self._infos(live)


class CounterAEC(AECFromParallel):
    parallel_class = CounterPar
    metadata = {"render_modes": [], "name": "counter_aec_v0", "is_parallelizable": False}


class SimulAEC(AECFromParallel):
    parallel_class = SimulPar
    metadata = {"render_modes": [], "name": "simul_aec_v0", "is_parallelizable": True}


def make_env(cls: type[AECFromParallel], **params: Any) -> AECEnv:
    return wrap_aec(cls(**params))


ENV_CASES = [
    pytest.param(CounterAEC, {}, id="turn_based"),
    pytest.param(SimulAEC, {}, id="simultaneous"),
    pytest.param(SimulAEC, {"early_exit": True}, id="simultaneous_early_exit"),
]


# ---------------------------------------------------------------------- standalone-ness


# ---------------------------------------------------------------------- pettingzoo checks


@pytest.mark.parametrize(("cls", "params"), ENV_CASES)
def test_api_test_passes(cls: type[AECFromParallel], params: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(make_env(cls, **params), num_cycles=200)


@pytest.mark.parametrize(("cls", "params"), ENV_CASES)
def test_seed_test_passes(cls: type[AECFromParallel], params: dict) -> None:
    seed_test(lambda: make_env(cls, **params), num_cycles=50)


@pytest.mark.parametrize(("cls", "params"), ENV_CASES)
def test_api_test_full_episode_removes_all_agents(cls: type, params: dict) -> None:
    env = make_env(cls, **params)
    env.reset(seed=3)
    steps = 0
    for agent in env.agent_iter(1000):
        _, _, term, trunc, info = env.last()
        action = None if term or trunc else env.action_space(agent).sample(info["action_mask"])
        env.step(action)
        steps += 1
    assert env.agents == []
    assert steps < 1000


def test_seeded_reset_is_reproducible_and_seed_matters() -> None:
    env = make_env(SimulAEC)
    env.reset(seed=7)
    first = env.observe("agent_0").copy()
    env.reset(seed=7)
    np.testing.assert_array_equal(env.observe("agent_0"), first)
    env.reset(seed=8)
    assert not np.array_equal(env.observe("agent_0"), first)


# ---------------------------------------------------------------------- delegation


def test_spaces_observe_state_render_close_delegate() -> None:
    raw = CounterAEC()
    env = wrap_aec(raw)
    env.reset(seed=0)
    par = raw._par
    assert isinstance(par, CounterPar)
    assert env.possible_agents == ["player_0", "player_1"]
    assert env.max_num_agents == 2
    assert env.num_agents == 2
    for a in env.possible_agents:
        assert env.observation_space(a) is par.observation_space(a)
        assert env.action_space(a) is par.action_space(a)
        np.testing.assert_array_equal(env.observe(a), par.observe(a))
    assert env.unwrapped.state_space is par.state_space
    np.testing.assert_array_equal(env.state(), par.state())
    assert env.render() == par.render()
    assert env.unwrapped is raw
    env.close()
    assert par.closed


def test_params_and_render_mode_reach_parallel_env() -> None:
    raw = SimulAEC(render_mode=None, early_exit=True)
    assert raw._par.early_exit is True
    assert raw.render_mode is None


def test_infos_carry_action_mask() -> None:
    env = make_env(CounterAEC)
    env.reset(seed=0)
    start = env.unwrapped._par.counter
    _, _, _, _, info = env.last()
    assert info["action_mask"].dtype == np.int8
    np.testing.assert_array_equal(info["action_mask"], [1, 1])
    np.testing.assert_array_equal(env.infos["player_1"]["action_mask"], [1, 0])
    # push the counter up to 4: then "add 1" is masked out for the mover
    while env.unwrapped._par.counter < 4:
        env.step(1)
    assert env.unwrapped._par.counter == 4
    assert env.unwrapped._par.moves == 4 - start
    np.testing.assert_array_equal(env.infos[env.agent_selection]["action_mask"], [1, 0])


# ---------------------------------------------------------------------- turn-based


def test_turn_based_selection_follows_turn_agent() -> None:
    raw = CounterAEC()
    env = wrap_aec(raw)
    env.reset(seed=1)
    seen = []
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        assert env.agent_selection == raw._par.turn_agent()
        seen.append(env.agent_selection)
        env.step(0)
    assert seen == ["player_0", "player_1"] * 3


def test_turn_based_steps_parallel_env_immediately_with_one_action() -> None:
    raw = CounterAEC()
    env = wrap_aec(raw)
    env.reset(seed=1)
    env.step(1)
    assert raw._par.step_calls == [{"player_0": 1}]
    env.step(0)
    assert raw._par.step_calls == [{"player_0": 1}, {"player_1": 0}]


def test_turn_based_scripted_rewards_accumulate() -> None:
    raw = CounterAEC()
    env = wrap_aec(raw)
    env.reset(seed=1)
    counter0 = raw._par.counter
    assert counter0 == 1
    assert env.last()[1] == 0.0
    assert env._cumulative_rewards == {"player_0": 0.0, "player_1": 0.0}

    env.step(1)  # p0 adds 1: p0 +1, p1 -0.5
    assert env.rewards == {"player_0": 1.0, "player_1": -0.5}
    assert env._cumulative_rewards == {"player_0": 1.0, "player_1": -0.5}
    assert env.agent_selection == "player_1"
    assert env.last()[1] == -0.5

    env.step(1)  # p1 adds 1: p1 +1 (its cumulative was reset), p0 -0.5
    assert env.rewards == {"player_0": -0.5, "player_1": 1.0}
    assert env._cumulative_rewards == {"player_0": 0.5, "player_1": 1.0}
    assert env.last()[1] == 0.5

    env.step(0)  # p0 adds 0: nothing, p0's cumulative reset
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}
    assert env._cumulative_rewards == {"player_0": 0.0, "player_1": 1.0}
    assert env.last()[1] == 1.0

    env.step(0)  # p1 adds 0
    assert env._cumulative_rewards == {"player_0": 0.0, "player_1": 0.0}
    env.step(1)  # p0 adds 1 -> counter 4
    assert env._cumulative_rewards == {"player_0": 1.0, "player_1": -0.5}
    env.step(0)  # p1 adds 0, last move: counter 4 even -> p0 +10, p1 -10
    assert raw._par.counter == counter0 + 3
    assert env.rewards == {"player_0": 10.0, "player_1": -10.0}
    assert env._cumulative_rewards == {"player_0": 11.0, "player_1": -10.0}
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.truncations == {"player_0": False, "player_1": False}

    # dead agents are stepped with None, in agents order, and removed one by one
    assert env.agent_selection == "player_0"
    obs, rew, term, trunc, info = env.last()
    assert (rew, term, trunc) == (11.0, True, False)
    np.testing.assert_array_equal(obs, raw._par.observe("player_0"))
    assert "action_mask" in info
    env.step(None)
    assert env.agents == ["player_1"]
    assert env.agent_selection == "player_1"
    assert env.rewards == {"player_1": 0.0}
    assert env.last()[1:4] == (-10.0, True, False)
    env.step(None)
    assert env.agents == []
    assert env.rewards == {} and env._cumulative_rewards == {}
    assert env.terminations == {} and env.truncations == {} and env.infos == {}
    assert len(raw._par.step_calls) == 6


def test_dead_agent_must_step_with_none() -> None:
    raw = CounterAEC()
    env = wrap_aec(raw)
    env.reset(seed=1)
    for _ in range(6):
        env.step(0)
    assert env.terminations[env.agent_selection]
    with pytest.raises(ValueError, match="only valid action is None"):
        env.step(0)
    assert env.agents == ["player_0", "player_1"]  # the refused step removed nobody
    env.step(None)
    env.step(None)
    assert env.agents == []
    assert len(raw._par.step_calls) == 6


def test_reset_after_episode_restores_everything() -> None:
    raw = CounterAEC()
    env = wrap_aec(raw)
    env.reset(seed=1)
    for _ in range(6):
        env.step(1 if env.infos[env.agent_selection]["action_mask"][1] else 0)
    env.step(None)  # leave one dead agent un-stepped
    env.reset(seed=2)
    assert env.agents == ["player_0", "player_1"]
    assert env.agent_selection == "player_0"
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}
    assert env._cumulative_rewards == {"player_0": 0.0, "player_1": 0.0}
    assert not any(env.terminations.values()) and not any(env.truncations.values())
    env.step(1)
    assert env.agent_selection == "player_1"


# ---------------------------------------------------------------------- simultaneous


def test_simultaneous_one_parallel_step_per_cycle_with_all_actions() -> None:
    raw = SimulAEC()
    env = wrap_aec(raw)
    env.reset(seed=0)
    calls = raw._par.step_calls
    script = [(2, 0, 1), (1, 1, 1), (0, 2, 2), (2, 2, 2), (0, 0, 1)]
    for cycle, acts in enumerate(script):
        for i, agent in enumerate(["agent_0", "agent_1", "agent_2"]):
            assert env.agent_selection == agent
            assert len(calls) == cycle
            env.step(acts[i])
        assert len(calls) == cycle + 1
        assert calls[-1] == {"agent_0": acts[0], "agent_1": acts[1], "agent_2": acts[2]}
    assert all(env.truncations.values()) and not any(env.terminations.values())
    for agent in ["agent_0", "agent_1", "agent_2"]:
        assert env.agent_selection == agent
        env.step(None)
    assert env.agents == []
    assert len(calls) == len(script)


def test_simultaneous_scripted_rewards_accumulate() -> None:
    raw = SimulAEC()
    env = wrap_aec(raw)
    env.reset(seed=0)
    zero = {"agent_0": 0.0, "agent_1": 0.0, "agent_2": 0.0}

    env.step(2)  # agent_0 acts: nothing happens yet
    assert env.rewards == zero and env._cumulative_rewards == zero
    env.step(0)
    assert env.rewards == zero and env._cumulative_rewards == zero
    env.step(1)  # last agent: parallel step, total 3
    expected = {"agent_0": 2.3, "agent_1": 0.3, "agent_2": 1.3}
    assert env.rewards == pytest.approx(expected)
    assert env._cumulative_rewards == pytest.approx(expected)
    assert env.agent_selection == "agent_0"
    assert env.last()[1] == pytest.approx(2.3)

    env.step(1)  # agent_0 acts: its cumulative reset, the others keep theirs
    assert env.rewards == zero
    assert env._cumulative_rewards == pytest.approx({**expected, "agent_0": 0.0})
    assert env.last()[1] == pytest.approx(0.3)  # agent_1's view
    env.step(1)
    assert env._cumulative_rewards == pytest.approx(
        {"agent_0": 0.0, "agent_1": 0.0, "agent_2": 1.3}
    )
    assert env.last()[1] == pytest.approx(1.3)
    env.step(1)  # total 3 -> each 1.3
    assert env._cumulative_rewards == pytest.approx(
        {"agent_0": 1.3, "agent_1": 1.3, "agent_2": 1.3}
    )
    assert not any(env.truncations.values())


def test_simultaneous_truncation_then_dead_steps() -> None:
    raw = SimulAEC()
    env = wrap_aec(raw)
    env.reset(seed=0)
    for _ in range(SimulPar.STEPS * 3 - 1):
        env.step(0)
    assert not any(env.truncations.values())
    env.step(2)  # agent_2 closes the 5th cycle: total 2
    assert env.truncations == {"agent_0": True, "agent_1": True, "agent_2": True}
    assert env.terminations == {"agent_0": False, "agent_1": False, "agent_2": False}
    assert env._cumulative_rewards == pytest.approx(
        {"agent_0": 0.2, "agent_1": 0.2, "agent_2": 2.2}
    )
    assert raw._par.agents == []
    removed = []
    while env.agents:
        agent = env.agent_selection
        obs, rew, term, trunc, _ = env.last()
        assert trunc and not term
        np.testing.assert_array_equal(obs, raw._par.observe(agent))
        env.step(None)
        removed.append(agent)
        assert agent not in env.agents
    assert removed == ["agent_0", "agent_1", "agent_2"]
    assert len(raw._par.step_calls) == SimulPar.STEPS


def test_simultaneous_early_exit_removes_agent_and_shrinks_cycle() -> None:
    raw = SimulAEC(early_exit=True)
    env = wrap_aec(raw)
    env.reset(seed=0)
    for _ in range(6):  # two full cycles
        env.step(1)
    assert env.terminations == {"agent_0": False, "agent_1": False, "agent_2": True}
    assert env.agent_selection == "agent_2"  # dead agent goes first
    assert env.last()[1] == pytest.approx(1.3)
    env.step(None)
    assert env.agents == ["agent_0", "agent_1"]
    assert env.agent_selection == "agent_0"
    env.step(2)
    assert len(raw._par.step_calls) == 2
    env.step(0)  # cycle now closes after agent_1
    assert len(raw._par.step_calls) == 3
    assert raw._par.step_calls[-1] == {"agent_0": 2, "agent_1": 0}
    assert env.agent_selection == "agent_0"
