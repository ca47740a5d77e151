"""MAPF-FrozenLake instances: a lake with holes, starts and goals, solved optimally by CBS.

``generate`` draws one solvable instance: exactly ``round(hole_ratio * size**2)`` holes at
random cells, distinct random starts, and for each agent a distinct goal in its start's
component (never its own start). Candidates that CBS cannot solve within its node limit, or
that have no plan at all, are drawn again; ``wait`` asks for an instance that needs a wait
(``True``), one that does not (``False``) or either (``None``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gymwright.mapf.cbs import DEFAULT_NODE_LIMIT, Plan, solve
from gymwright.mapf.errors import ConfigError, SearchLimitError, UnsolvableError
from gymwright.mapf.maps import GridMap

GENERATE_NODE_LIMIT = 2_000
"""CBS nodes spent on one candidate before it is rejected as too hard."""
SIZES = (3, 10)
AGENTS = (1, 5)
MAX_HOLE_RATIO = 0.6


@dataclass(frozen=True, eq=False)
class Instance:
    """One solved instance. ``plan`` is an optimal plan as (T + 1, N, 2) positions."""

    holes: np.ndarray
    starts: np.ndarray
    goals: np.ndarray
    optimal_soc: int
    lower_bound: int
    plan: np.ndarray

    @property
    def size(self) -> int:
        return int(self.holes.shape[0])

    @property
    def n_agents(self) -> int:
        return int(self.starts.shape[0])

    @property
    def needs_wait(self) -> bool:
        """Optimal SoC above the sum of individual shortest paths (see ``gymwright.mapf.cbs``)."""
        return self.optimal_soc > self.lower_bound

    @property
    def delay(self) -> int:
        """Steps the optimum loses to conflicts: ``optimal_soc - lower_bound``."""
        return self.optimal_soc - self.lower_bound

    def render(self) -> str:
        """Text picture: ``H`` holes, ``.`` ice, agent i's start as a digit, its goal as a letter."""
        grid = [["H" if h else "." for h in row] for row in self.holes.tolist()]
        for i, ((sr, sc), (gr, gc)) in enumerate(zip(self.starts.tolist(), self.goals.tolist(), strict=True)):
            grid[gr][gc] = "abcdefghij"[i]
            grid[sr][sc] = str(i)
        return "\n".join("".join(row) for row in grid)


def check_shape(size: int, n_agents: int, hole_ratio: float, path: str = "") -> None:
    """Raise ``ConfigError`` unless the numbers describe instances that can exist."""
    where = f"{path}." if path else ""
    if not SIZES[0] <= size <= SIZES[1]:
        raise ConfigError(f"size {size} is outside {SIZES[0]}..{SIZES[1]}", path=f"{where}size", value=size)
    if not AGENTS[0] <= n_agents <= AGENTS[1]:
        raise ConfigError(
            f"n_agents {n_agents} is outside {AGENTS[0]}..{AGENTS[1]}", path=f"{where}n_agents", value=n_agents
        )
    if not 0.0 <= hole_ratio <= MAX_HOLE_RATIO:
        raise ConfigError(
            f"hole_ratio {hole_ratio} is outside 0..{MAX_HOLE_RATIO}", path=f"{where}hole_ratio", value=hole_ratio
        )
    free = size * size - round(hole_ratio * size * size)
    if free < n_agents + 1:
        raise ConfigError(
            f"a {size}x{size} lake with hole_ratio {hole_ratio} has {free} free cells, too few for "
            f"{n_agents} agents", path=f"{where}hole_ratio", value=hole_ratio,
            hint="lower hole_ratio or n_agents, or use a larger size",
        )


def draw_layout(
    size: int, n_agents: int, hole_ratio: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Random ``(holes, starts, goals)`` with every goal reachable, or None if this draw failed."""
    cells = size * size
    holes = np.zeros(cells, dtype=bool)
    holes[rng.permutation(cells)[: round(hole_ratio * cells)]] = True
    holes = holes.reshape(size, size)
    gmap = GridMap.from_holes(holes)
    free = np.flatnonzero(~holes.ravel())
    if free.size < n_agents + 1:
        return None
    starts = free[rng.permutation(free.size)[:n_agents]].tolist()
    goals = _pick_goals(gmap, starts, free[rng.permutation(free.size)].tolist())
    if goals is None:
        return None
    to_rc = np.array([gmap.rc(c) for c in starts + goals], dtype=np.int64)
    return holes, to_rc[:n_agents], to_rc[n_agents:]


def _pick_goals(gmap: GridMap, starts: list[int], order: list[int]) -> list[int] | None:
    """For each start the first unused cell in ``order`` reachable from it (not the start)."""
    used: set[int] = set()
    goals = []
    for s in starts:
        reach = gmap.distances(s)
        goal = next((c for c in order if c != s and c not in used and reach[c] > 0), None)
        if goal is None:
            return None
        used.add(goal)
        goals.append(goal)
    return goals


def solve_instance(
    holes: np.ndarray, starts: np.ndarray, goals: np.ndarray, node_limit: int = DEFAULT_NODE_LIMIT
) -> Instance:
    """Solve a layout and wrap it as an ``Instance`` (raises what ``solve`` raises)."""
    plan: Plan = solve(holes, starts, goals, node_limit=node_limit)
    return Instance(
        np.asarray(holes, dtype=bool), np.asarray(starts, dtype=np.int64),
        np.asarray(goals, dtype=np.int64), plan.soc, plan.lower_bound, plan.positions(),
    )


def generate(
    size: int,
    n_agents: int,
    hole_ratio: float,
    wait: bool | None,
    rng: np.random.Generator,
    *,
    max_draws: int = 500,
    node_limit: int = GENERATE_NODE_LIMIT,
) -> Instance:
    """A random solvable instance; ``wait`` picks whether its optimum must need a wait.

    Raises ``ConfigError`` when ``max_draws`` candidates gave none of the kind asked for.
    """
    check_shape(size, n_agents, hole_ratio)
    if wait and n_agents < 2:
        raise ConfigError("a single agent never needs to wait", path="wait", value=wait)
    for _ in range(max_draws):
        inst = draw_instance(size, n_agents, hole_ratio, rng, node_limit)
        if inst is not None and (wait is None or inst.needs_wait == wait):
            return inst
    kind = {None: "solvable", True: "wait-needing", False: "wait-free"}[wait]
    raise ConfigError(
        f"no {kind} instance in {max_draws} draws for size {size}, {n_agents} agents, "
        f"hole_ratio {hole_ratio}", hint="change hole_ratio or n_agents, or raise max_draws",
    )


def draw_instance(
    size: int, n_agents: int, hole_ratio: float, rng: np.random.Generator, node_limit: int
) -> Instance | None:
    """One candidate, solved; None when the draw failed, has no plan, or is too hard."""
    layout = draw_layout(size, n_agents, hole_ratio, rng)
    if layout is None:
        return None
    try:
        return solve_instance(*layout, node_limit=node_limit)
    except (SearchLimitError, UnsolvableError):
        return None
