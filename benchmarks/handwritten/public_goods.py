"""Repeated linear public goods game, written by hand (same game as `public_goods.yaml`).

Every round each citizen contributes a share (0, 1/(levels-1), ..., 1) of its endowment to a
pot; the pot is multiplied by `multiplier` and split equally among all players. Observation
(n + 4 floats): own endowment / mean endowment, last round's shares rotated so that one's own
comes first, the others' mean share last round, whether no round was played yet, and the share
of rounds played (0 unless `observe_time`).
"""

from __future__ import annotations

import functools

import numpy as np
from gymnasium.spaces import Box, Discrete
from pettingzoo import ParallelEnv


class PublicGoodsEnv(ParallelEnv):
    metadata = {"name": "public_goods_hand", "render_modes": []}

    def __init__(
        self,
        n_players: int = 8,
        multiplier: float = 3.0,
        endowment: float = 1.0,
        endowment_spread: float = 0.0,
        levels: int = 5,
        rounds: int = 25,
        observe_time: bool = False,
    ) -> None:
        self.n = n_players
        self.multiplier = multiplier
        self.endowment = endowment
        self.spread = endowment_spread
        self.shares = np.linspace(0.0, 1.0, levels)
        self.rounds = rounds
        self.observe_time = observe_time
        self.possible_agents = [f"citizen_{i}" for i in range(n_players)]
        self.agents: list[str] = []
        self.rng = np.random.default_rng()

    @functools.cache  # noqa: B019 - the PettingZoo idiom (one space object per agent)
    def observation_space(self, agent: str) -> Box:
        high = np.ones(self.n + 4, dtype=np.float32)
        high[0] = 2.0
        return Box(np.zeros(self.n + 4, dtype=np.float32), high, dtype=np.float32)

    @functools.cache  # noqa: B019 - the PettingZoo idiom (one space object per agent)
    def action_space(self, agent: str) -> Discrete:
        return Discrete(len(self.shares))

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.agents = self.possible_agents[:]
        self.t = 0
        self.endow = self.endowment * self.rng.uniform(1 - self.spread, 1 + self.spread, self.n)
        self.last_share = np.zeros(self.n)
        return self._observations(), self._infos()

    def step(self, actions: dict):
        share = np.zeros(self.n)
        for i, agent in enumerate(self.possible_agents):
            if actions.get(agent) is not None:
                share[i] = self.shares[actions[agent]]
        pot = float(np.sum(share * self.endow))
        public = self.multiplier * pot / self.n
        kept = self.endow * (1 - share)
        rewards = {a: float(kept[i]) + public for i, a in enumerate(self.agents)}
        self.last_share = share
        self.t += 1

        done = self.t >= self.rounds
        terminations = {a: done for a in self.agents}
        truncations = {a: False for a in self.agents}
        observations = self._observations()
        infos = self._infos()
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _observations(self) -> dict[str, np.ndarray]:
        total = self.last_share.sum()
        progress = min(self.t / self.rounds, 1.0) if self.observe_time else 0.0
        obs = {}
        for i, agent in enumerate(self.possible_agents):
            others = min(max((total - self.last_share[i]) / (self.n - 1), 0.0), 1.0)
            obs[agent] = np.concatenate(
                [
                    [self.endow[i] / self.endowment],
                    np.roll(self.last_share, -i),
                    [others, self.t == 0, progress],
                ]
            ).astype(np.float32)
        return obs

    def _infos(self) -> dict[str, dict]:
        return {a: {"action_mask": np.ones(len(self.shares), dtype=np.int8)} for a in self.agents}


def parallel_env(**kwargs) -> PublicGoodsEnv:
    return PublicGoodsEnv(**kwargs)
