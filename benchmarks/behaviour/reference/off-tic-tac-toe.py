"""A code-mode design of the off-library task `off-tic-tac-toe`, written by hand to show that its
scenarios (../off-tic-tac-toe.yaml, with the file's `code_actions` layout: action k marks cell k)
can be met by a module (tests/design/test_design_quality_code.py checks that it passes them). Both
players act every step; only the player whose turn it is marks, the other's action is ignored."""

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class TicTacToe(ParallelEnv):
    metadata = {"render_modes": [], "name": "tic_tac_toe"}

    def __init__(self, render_mode=None):
        self.possible_agents = ["player_0", "player_1"]
        self.agents = []
        self.render_mode = render_mode
        self._board = np.zeros(9, dtype=np.int64)  # 0 empty, 1 player_0, 2 player_1
        self._turn = 0
        self._t = 0
        self._observation_space = spaces.Box(low=-1.0, high=1.0, shape=(10,), dtype=np.float32)
        self._action_space = spaces.Discrete(9)

    def observation_space(self, agent):
        return self._observation_space

    def action_space(self, agent):
        return self._action_space

    def _obs(self, i):
        mine = (self._board == i + 1).astype(np.float32)
        theirs = (self._board == 2 - i).astype(np.float32)
        return np.concatenate([mine - theirs, [float(self._turn == i)]]).astype(np.float32)

    def _infos(self):
        free = (self._board == 0).astype(np.int8)
        return {a: {"action_mask": free.copy()} for a in self.agents}

    def _won(self, mark):
        return any(all(self._board[c] == mark for c in line) for line in LINES)

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self._board[:] = 0
        self._turn, self._t = 0, 0
        return {a: self._obs(i) for i, a in enumerate(self.agents)}, self._infos()

    def step(self, actions):
        mover = self.possible_agents[self._turn]
        cell = int(actions[mover])
        self._board[cell] = self._turn + 1
        self._t += 1
        won = self._won(self._turn + 1)
        full = bool((self._board != 0).all())
        rewards = {a: 0.0 for a in self.agents}
        if won:
            rewards[mover] = 1.0
            rewards[self.possible_agents[1 - self._turn]] = -1.0
        done = won or full
        winner = self._turn if won else -1
        self._turn = 1 - self._turn
        obs = {a: self._obs(i) for i, a in enumerate(self.agents)}
        infos = self._infos()
        if done:
            metrics = {"won_by_first": float(winner == 0), "won_by_second": float(winner == 1),
                       "draw": float(winner == -1), "moves": float(self._t)}
            for a in self.agents:
                infos[a]["metrics"] = dict(metrics)
                infos[a]["action_mask"] = np.ones(9, dtype=np.int8)
        terms = {a: done for a in self.agents}
        truncs = {a: False for a in self.agents}
        if done:
            self.agents = []
        return obs, rewards, terms, truncs, infos
