"""Alternating-offers cake split, written by hand (same game as `cake_negotiation.yaml`).

The proposer offers a share of the cake for itself (0, 0.1, ..., 1); the responder accepts
(deal) or rejects (roles swap, the round advances and the cake shrinks by `discount`).
Turn-based inside a ParallelEnv: only the active agent's action counts, the other agent's
action mask is all zeros. Illegal or missing actions count as no action; a proposer that
does not propose offers 0.
"""

from __future__ import annotations

import functools

import numpy as np
from gymnasium.spaces import Box, Discrete
from pettingzoo import ParallelEnv

SHARES = np.linspace(0.0, 1.0, 11).tolist()
N_SHARES = len(SHARES)
ACCEPT = N_SHARES  # action 11
REJECT = N_SHARES + 1  # action 12
N_ACTIONS = N_SHARES + 2


class CakeNegotiationEnv(ParallelEnv):
    """Two bargainers; actions 0..10 propose share i/10, 11 accepts, 12 rejects."""

    metadata = {"name": "cake_negotiation_hand", "render_modes": []}

    def __init__(self, discount: float = 0.9, max_rounds: int = 10) -> None:
        self.discount = discount
        self.max_rounds = max_rounds
        self.possible_agents = ["bargainer_0", "bargainer_1"]
        self.agents: list[str] = []

    @functools.cache  # noqa: B019 - the PettingZoo idiom (one space object per agent)
    def observation_space(self, agent: str) -> Box:
        # phase, am I the proposer, offer on the table, round / max_rounds
        return Box(0.0, 1.0, (4,), np.float32)

    @functools.cache  # noqa: B019 - the PettingZoo idiom (one space object per agent)
    def action_space(self, agent: str) -> Discrete:
        return Discrete(N_ACTIONS)

    def reset(self, seed: int | None = None, options: dict | None = None):
        self.agents = self.possible_agents[:]
        self.round = 0
        self.proposer = 0
        self.phase = 0  # 0 = propose, 1 = respond
        self.offer = 0.0
        self.deal = False
        return self._observations(), self._infos()

    def step(self, actions: dict):
        active = self._active()
        action = actions.get(self.possible_agents[active])
        if action is not None and not self._mask(active)[action]:
            action = None  # illegal: ignored
        if self.phase == 0:
            self.offer = SHARES[action] if action is not None else 0.0
            self.phase = 1
        elif action == ACCEPT:
            self.deal = True
        elif action == REJECT:
            self.proposer = 1 - self.proposer
            self.phase = 0
            self.round += 1

        rewards = {a: 0.0 for a in self.agents}
        if self.deal:
            cake = self.discount**self.round
            for i, a in enumerate(self.agents):
                mine = self.offer if i == self.proposer else 1.0 - self.offer
                rewards[a] = cake * mine
        done = self.deal or self.round >= self.max_rounds
        terminations = {a: done for a in self.agents}
        truncations = {a: False for a in self.agents}
        observations = self._observations()
        infos = self._infos()
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _active(self) -> int:
        return self.proposer if self.phase == 0 else 1 - self.proposer

    def _mask(self, i: int) -> np.ndarray:
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        if i == self._active():
            if self.phase == 0:
                mask[:N_SHARES] = 1
            else:
                mask[ACCEPT] = 1
                mask[REJECT] = 1
        return mask

    def _observations(self) -> dict[str, np.ndarray]:
        return {
            a: np.array(
                [self.phase, i == self.proposer, self.offer, self.round / self.max_rounds],
                dtype=np.float32,
            )
            for i, a in enumerate(self.possible_agents)
        }

    def _infos(self) -> dict[str, dict]:
        return {a: {"action_mask": self._mask(i)} for i, a in enumerate(self.possible_agents)}


def parallel_env(**kwargs) -> CakeNegotiationEnv:
    return CakeNegotiationEnv(**kwargs)
