"""The `grid` section's checked form (`CGrid`): sizes, tile kinds and the checked expressions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gymwright.spec.expr.check import Checked


@dataclass
class CGrid:
    height: int
    width: int
    kinds: list[str]
    chars: list[str]
    colors: list[tuple[int, int, int]]
    densities: list[Checked | None]  # None: the floor, or a density that did not check
    blocked: list[bool]
    passable: list[bool]
    fixed_map: np.ndarray | None
    starts: np.ndarray | None
    goals: np.ndarray | None
    slip: Checked | None
    collision: str
    can_move: Checked | None  # checked after the actions (`GridChecks.after_actions`)
    n_agents: int
    has_goals: bool = True
    pool: Checked | None = None
    wait_ratio: Checked | None = None  # grid.solve: layouts from the MAPF solver's pools
    solve_seed: Checked | None = None  # grid.solve.seed: which family of pools (None: no grid.solve)
    start_avoid: Checked | None = None  # grid.start_avoid: cells (k, 2) / (2,) int, or an (h, w) bool mask
    start_avoid_kinds: list[bool] | None = None  # grid.start_avoid_tiles: per tile kind (None: none avoided)
    can_move_sees_actions: bool = False  # grid.can_move_sees_actions: can_move reads this step's actions
