"""The library's stag_hunt (n_hunters 2, threshold 2, stag 4, hare 3, 20 rounds) written as a
code-mode module, for benchmarks/codemode_throughput.py: the same game on both paths (the
benchmark checks that both give the same observations and rewards before it times them)."""

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

HUNTERS = 2
THRESHOLD = 2
STAG_REWARD = 4.0
HARE_REWARD = 3.0
ROUNDS = 20
STAG, HARE = 0, 1


class StagHunt(ParallelEnv):
    metadata = {"render_modes": [], "name": "stag_hunt_code"}

    def __init__(self, render_mode=None):
        self.possible_agents = [f"hunter_{i}" for i in range(HUNTERS)]
        self.agents = []
        self.render_mode = render_mode
        self._last = np.full(HUNTERS, -1, dtype=np.int64)
        self._stags = 0
        self._success = False
        self._t = 0
        self._sums = {}
        self._observation_space = spaces.Box(low=-1.0, high=1.0, shape=(6,), dtype=np.float32)
        self._action_space = spaces.Discrete(2)

    def observation_space(self, agent):
        return self._observation_space

    def action_space(self, agent):
        return self._action_space

    def _obs(self, i):
        mine = self._last[i]
        others = (self._stags - (1 if mine == STAG else 0)) / (HUNTERS - 1)
        return np.array([mine == STAG, mine == HARE, others, self._success, self._t == 0, 0.0], dtype=np.float32)

    def _infos(self):
        return {a: {"action_mask": np.ones(2, dtype=np.int8)} for a in self.agents}

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self._last[:] = -1
        self._stags, self._success, self._t = 0, False, 0
        self._sums = {"stag_success_rate": 0.0, "stag_share": 0.0, "coordination": 0.0, "welfare": 0.0}
        return {a: self._obs(i) for i, a in enumerate(self.agents)}, self._infos()

    def step(self, actions):
        chosen = np.array([int(actions.get(a, -1)) for a in self.possible_agents])
        self._stags = int((chosen == STAG).sum())
        self._success = self._stags >= min(THRESHOLD, HUNTERS)
        self._last = np.where(chosen == STAG, 0, np.where(chosen == HARE, 1, -1))
        self._t += 1
        rewards = {a: STAG_REWARD * float(chosen[i] == STAG and self._success) + HARE_REWARD * float(chosen[i] == HARE)
                   for i, a in enumerate(self.agents)}
        hares = int((chosen == HARE).sum())
        self._sums["stag_success_rate"] += float(self._success)
        self._sums["stag_share"] += self._stags / HUNTERS
        self._sums["coordination"] += float(self._success or self._stags == 0)
        self._sums["welfare"] += (STAG_REWARD * self._stags * self._success + HARE_REWARD * hares) / HUNTERS
        done = self._t >= ROUNDS
        obs = {a: self._obs(i) for i, a in enumerate(self.agents)}
        infos = self._infos()
        if done:
            metrics = {k: v / self._t for k, v in self._sums.items()}
            metrics["all_stag_last"] = float(self._stags == HUNTERS)
            for a in self.agents:
                infos[a]["metrics"] = metrics
        terms = {a: done for a in self.agents}
        truncs = {a: False for a in self.agents}
        if done:
            self.agents = []
        return obs, rewards, terms, truncs, infos
