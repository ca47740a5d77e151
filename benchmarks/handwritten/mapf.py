"""Multi-agent path finding on a frozen lake, written by hand (same game as `mapf_frozenlake.yaml`).

Every walker has its own goal on a square lake with holes. Layouts are random holes with every
goal reachable from its start (drawn again until a BFS check passes). Walkers move at the same
time; moves off the lake leave a walker in place, moves into the same cell (also a cell whose
occupant stays) and swaps are cancelled (repeated until no conflict is left) and count as a
conflict. Walking into a hole is possible: the walker falls in and stays there; a walker on its
goal stays there too (only `wait` is legal for both).

Observation (59 floats for radius 1): the 3x3 window around the walker of holes, of cells off
the lake and of agent counts (capped at 2, the walker itself included); per window cell, summed
over the walkers there, the sign of their goal's row offset, of their goal's column offset, and
whether they are parked (on their goal or in a hole); then the sign of the goal direction
(row, col), min(manhattan distance, 10) / 10, reached, fell.
"""

from __future__ import annotations

import functools
from collections import deque

import numpy as np
from gymnasium.spaces import Box, Discrete
from pettingzoo import ParallelEnv

# left, down, right, up, wait (row, col)
MOVES = [(0, -1), (1, 0), (0, 1), (-1, 0), (0, 0)]
WAIT = 4


def reachable(holes: np.ndarray, start: tuple[int, int]) -> set[tuple[int, int]]:
    """Cells reachable from `start` without stepping into a hole (4-neighbour BFS)."""
    size = holes.shape[0]
    seen = {start}
    queue = deque([start])
    while queue:
        r, c = queue.popleft()
        for dr, dc in MOVES[:4]:
            nxt = (r + dr, c + dc)
            if 0 <= nxt[0] < size and 0 <= nxt[1] < size and not holes[nxt] and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen


class MapfFrozenLakeEnv(ParallelEnv):
    metadata = {"name": "mapf_frozenlake_hand", "render_modes": []}

    def __init__(
        self,
        size: int = 8,
        n_agents: int = 4,
        hole_density: float = 0.2,
        slip: float = 0.0,
        max_steps: int = 30,
        view_radius: int = 1,
        step_cost: float = 0.01,
        conflict_cost: float = 1.0,
    ) -> None:
        self.size = size
        self.n = n_agents
        self.hole_density = hole_density
        self.slip = slip
        self.max_steps = max_steps
        self.radius = view_radius
        self.step_cost = step_cost
        self.conflict_cost = conflict_cost
        self.possible_agents = [f"walker_{i}" for i in range(n_agents)]
        self.agents: list[str] = []
        self.rng = np.random.default_rng()
        side = 2 * view_radius + 1
        self.obs_size = 6 * side * side + 5

    @functools.cache  # noqa: B019 - the PettingZoo idiom (one space object per agent)
    def observation_space(self, agent: str) -> Box:
        win = (2 * self.radius + 1) ** 2
        low = np.zeros(self.obs_size, dtype=np.float32)
        high = np.ones(self.obs_size, dtype=np.float32)
        high[2 * win : 3 * win] = 2.0  # agent counts
        low[3 * win : 5 * win] = -self.n  # headings of the walkers in a cell, summed
        high[3 * win : 6 * win] = self.n  # headings; parked walkers in a cell
        low[6 * win : 6 * win + 2] = -1.0  # goal direction
        return Box(low, high, dtype=np.float32)

    @functools.cache  # noqa: B019 - the PettingZoo idiom (one space object per agent)
    def action_space(self, agent: str) -> Discrete:
        return Discrete(5)

    # ------------------------------------------------------------------ layout

    def _new_layout(self) -> None:
        cells = [(r, c) for r in range(self.size) for c in range(self.size)]
        while True:
            holes = self.rng.random((self.size, self.size)) < self.hole_density
            free = [cell for cell in cells if not holes[cell]]
            if len(free) < max(self.n, 2):
                continue
            starts = [free[i] for i in self.rng.choice(len(free), self.n, replace=False)]
            goals = [free[i] for i in self.rng.choice(len(free), self.n, replace=False)]
            if all(g != s and g in reachable(holes, s) for s, g in zip(starts, goals, strict=True)):
                break
        self.set_layout(holes, starts, goals)

    def set_layout(self, holes: np.ndarray, starts: list, goals: list) -> None:
        self.holes = holes
        self.pos = [tuple(s) for s in starts]
        self.goals = [tuple(g) for g in goals]
        # the hole map with a border of -1 (off the lake), for the observation windows
        self.padded = np.pad(holes.astype(np.int8), self.radius, constant_values=-1)

    # ------------------------------------------------------------------ API

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self._new_layout()
        self.t = 0
        self.reached = [False] * self.n
        self.fell = [False] * self.n
        self.agents = self.possible_agents[:]
        infos = {a: {"action_mask": self._mask(i)} for i, a in enumerate(self.agents)}
        return self._observations(), infos

    def step(self, actions: dict):
        moves = []
        for i, agent in enumerate(self.possible_agents):
            a = actions.get(agent)
            if a is None or (a != WAIT and (self.reached[i] or self.fell[i])):
                a = WAIT  # missing or illegal: no move
            moves.append(self._slipped(MOVES[a]))
        self.pos, conflict = self._resolve(moves)

        arrived = [False] * self.n
        fell_now = [False] * self.n
        for i, p in enumerate(self.pos):
            if not (self.reached[i] or self.fell[i]):
                fell_now[i] = bool(self.holes[p])
                arrived[i] = not fell_now[i] and p == self.goals[i]
                self.reached[i] = arrived[i]
                self.fell[i] = fell_now[i]
        self.t += 1

        team = 0.5 if all(self.reached) and any(arrived) else 0.0
        rewards = {}
        for i, agent in enumerate(self.possible_agents):
            on_the_way = not (self.reached[i] or self.fell[i])
            rewards[agent] = (
                arrived[i] - fell_now[i] - self.conflict_cost * conflict[i] - self.step_cost * on_the_way + team
            )

        terminated = all(r or f for r, f in zip(self.reached, self.fell, strict=True))
        truncated = self.t >= self.max_steps
        terminations = {a: terminated for a in self.agents}
        truncations = {a: truncated for a in self.agents}
        infos = {a: {"action_mask": self._mask(i)} for i, a in enumerate(self.agents)}
        observations = self._observations()
        if terminated or truncated:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    # ------------------------------------------------------------------ rules

    def _slipped(self, move: tuple[int, int]) -> tuple[int, int]:
        """With probability `slip` a move turns left or right (waiting never slips)."""
        if self.slip > 0 and move != (0, 0) and self.rng.random() < self.slip:
            dr, dc = move
            return (-dc, dr) if self.rng.random() < 0.5 else (dc, -dr)
        return move

    def _resolve(self, moves: list[tuple[int, int]]) -> tuple[list, list[bool]]:
        """Simultaneous moves with vertex and swap conflicts cancelled until none is left."""
        targets = []
        attempt = []
        for (r, c), (dr, dc) in zip(self.pos, moves, strict=True):
            target = (r + dr, c + dc)
            targets.append(target)
            inside = 0 <= target[0] < self.size and 0 <= target[1] < self.size
            attempt.append(inside and (dr, dc) != (0, 0))
        conflict = [False] * self.n
        while True:
            final = [targets[i] if attempt[i] else self.pos[i] for i in range(self.n)]
            cancel = []
            for i in range(self.n):
                if not attempt[i]:
                    continue
                for j in range(self.n):
                    if j == i:
                        continue
                    swap = attempt[j] and targets[i] == self.pos[j] and targets[j] == self.pos[i]
                    if final[i] == final[j] or swap:
                        cancel.append(i)
                        break
            if not cancel:
                return final, conflict
            for i in cancel:
                attempt[i] = False
                conflict[i] = True

    # ------------------------------------------------------------------ views

    def _mask(self, i: int) -> np.ndarray:
        if self.reached[i] or self.fell[i]:
            return np.array([0, 0, 0, 0, 1], dtype=np.int8)
        return np.ones(5, dtype=np.int8)

    def _observations(self) -> dict[str, np.ndarray]:
        k = 2 * self.radius + 1
        shape = (self.size + 2 * self.radius,) * 2
        counts = np.zeros(shape, dtype=np.int8)
        rows = np.zeros(shape, dtype=np.int8)  # sign of the goal's row offset, summed per cell
        cols = np.zeros(shape, dtype=np.int8)
        parked = np.zeros(shape, dtype=np.int8)
        for i, (r, c) in enumerate(self.pos):
            gr, gc = self.goals[i]
            cell = (r + self.radius, c + self.radius)
            counts[cell] += 1
            rows[cell] += (gr > r) - (gr < r)
            cols[cell] += (gc > c) - (gc < c)
            parked[cell] += self.reached[i] or self.fell[i]
        obs = {}
        for i, agent in enumerate(self.possible_agents):
            r, c = self.pos[i]
            gr, gc = self.goals[i]
            window = self.padded[r : r + k, c : c + k]
            near = (slice(r, r + k), slice(c, c + k))
            distance = min(abs(gr - r) + abs(gc - c), 10) / 10
            obs[agent] = np.concatenate(
                [
                    (window == 1).ravel(),
                    (window == -1).ravel(),
                    np.minimum(counts[near], 2).ravel(),
                    rows[near].ravel(),
                    cols[near].ravel(),
                    parked[near].ravel(),
                    [np.sign(gr - r), np.sign(gc - c), distance, self.reached[i], self.fell[i]],
                ]
            ).astype(np.float32)
        return obs


def parallel_env(**kwargs) -> MapfFrozenLakeEnv:
    return MapfFrozenLakeEnv(**kwargs)
