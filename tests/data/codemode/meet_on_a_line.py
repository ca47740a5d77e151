"""Two walkers on a line must meet; each step costs a little. (A code-mode module, as a model
would write it: a good one.)"""

from functools import lru_cache

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

SIZE = 7
MOVES = (-1, 0, 1)


class MeetOnALine(ParallelEnv):
    metadata = {"render_modes": [], "name": "meet_on_a_line"}

    def __init__(self, render_mode=None, max_steps=20):
        self.possible_agents = ["walker_0", "walker_1"]
        self.agents = []
        self.max_steps = max_steps
        self.render_mode = render_mode
        self._rng = np.random.default_rng(0)
        self._pos = np.zeros(2, dtype=np.int64)
        self._t = 0

    @lru_cache(maxsize=None)
    def observation_space(self, agent):
        return spaces.Box(low=0.0, high=1.0, shape=(3,), dtype=np.float32)

    @lru_cache(maxsize=None)
    def action_space(self, agent):
        return spaces.Discrete(3)

    def _obs(self, i):
        other = 1 - i
        return np.array([self._pos[i] / (SIZE - 1), self._pos[other] / (SIZE - 1), self._t / self.max_steps],
                        dtype=np.float32)

    def _mask(self, i):
        return np.array([self._pos[i] > 0, True, self._pos[i] < SIZE - 1], dtype=np.int8)

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self._pos = self._rng.integers(0, SIZE, size=2)
        while self._pos[0] == self._pos[1]:
            self._pos = self._rng.integers(0, SIZE, size=2)
        self._t = 0
        obs = {a: self._obs(i) for i, a in enumerate(self.agents)}
        infos = {a: {"action_mask": self._mask(i)} for i, a in enumerate(self.agents)}
        return obs, infos

    def step(self, actions):
        for i, a in enumerate(self.possible_agents):
            move = MOVES[int(actions.get(a, 1))]
            self._pos[i] = int(np.clip(self._pos[i] + move, 0, SIZE - 1))
        self._t += 1
        met = bool(self._pos[0] == self._pos[1])
        out_of_time = self._t >= self.max_steps
        reward = (1.0 if met else 0.0) - 0.05
        obs = {a: self._obs(i) for i, a in enumerate(self.agents)}
        rewards = {a: reward for a in self.agents}
        terms = {a: met for a in self.agents}
        truncs = {a: out_of_time and not met for a in self.agents}
        infos = {a: {"action_mask": self._mask(i)} for i, a in enumerate(self.agents)}
        if met or out_of_time:
            for a in self.agents:
                infos[a]["metrics"] = {"met": float(met), "steps": float(self._t)}
            self.agents = []
        return obs, rewards, terms, truncs, infos
