"""Conflict-Based Search (Sharon et al. 2015) for MAPF-FrozenLake, optimal in sum of costs.

**The environment's semantics, which this solver matches** (``spec/library/mapf_frozenlake.yaml``
and ``mechanics/grid/runtime.py::resolve_moves``, collision rule ``block``):

- Each step every walker moves to a 4-neighbour or waits, all at once. A move off the lake
  leaves the walker in place (the same as waiting). Holes can be entered; a walker that enters
  one has fallen and stays there, so a valid plan never enters a hole.
- A walker that enters its goal is ``reached``: from then on it cannot move (``can_move`` and
  every move's ``legal`` are ``not (reached or fell)``) and it keeps occupying the goal cell.
  So an agent's path ends the *first* time it enters its goal (it cannot pass through its own
  goal earlier), and its cost is that arrival time, which is also the time it last arrives
  and stays. A start equal to its goal is refused: the env only marks arrival after a step.
- Two walkers may not end a step in the same cell (a *vertex* conflict; a walker standing
  still, or parked on its goal, counts) nor swap cells (a *swap* conflict). The env cancels
  such moves and reports ``conflict``; a valid plan has none. Following a walker that leaves
  its cell in the same step, and rotating a cycle of three or more, are allowed.

The sum of costs (SoC) is the sum of the agents' arrival times.

**needs_wait.** Let ``d_i`` be agent i's shortest distance to its goal around the holes,
ignoring the others; ``lower_bound = sum(d_i)``. An instance *needs a wait* when its optimal
SoC exceeds that bound: no conflict-free plan lets every agent walk a shortest path, so at
least one agent must wait or detour because of another (another's parked goal included).
This is a property of the instance, not of which optimal plan the search returns.

The search: constraint-tree nodes ordered by (SoC, number of conflicts, creation order); the
earliest conflict (lowest agent pair on ties) is split; the low level breaks ties by the fewest
conflicts with the other paths; a child that keeps the cost and has fewer conflicts is adopted
by its parent instead of branching (the bypass of Boyarski et al. 2015). Everything is
deterministic. ``node_limit`` bounds the constraint-tree nodes generated; ``time_limit_s``
the wall time; either raises ``SearchLimitError``. CBS cannot prove that no plan exists, so
``solve(method="auto")`` hands small instances (at most ``JOINT_LIMIT`` joint states) to a complete joint-state
A* once CBS has spent a few nodes (``gymwright.mapf.joint``).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gymwright.mapf.errors import MapfError, SearchLimitError, UnsolvableError
from gymwright.mapf.joint import joint_search, joint_size
from gymwright.mapf.maps import GridMap
from gymwright.mapf.mdd import Levels, build_mdd, singleton
from gymwright.mapf.space_time import AvoidTable, Constraints, Path, plan_path

DEFAULT_NODE_LIMIT = 20_000
JOINT_LIMIT = 20_000
"""``auto`` falls back to the complete joint search when ``joint_size`` is at most this."""
JOINT_FIRST_NODES = (20, 300)
"""``auto`` gives CBS ``joint_size / 50`` nodes, within these bounds, before it falls back on
a small instance (where the joint search is cheap, CBS gets little)."""
METHODS: tuple[str, ...] = ("auto", "cbs", "joint")


@dataclass(frozen=True)
class Conflict:
    """Agents ``a`` and ``b`` meet at time ``t``: both in ``cell`` (vertex), or ``a`` moves
    ``cell -> other`` while ``b`` moves ``other -> cell`` (swap)."""

    kind: str
    a: int
    b: int
    t: int
    cell: int
    other: int = -1


@dataclass(frozen=True)
class Plan:
    """An optimal conflict-free plan: ``paths[i][t]`` is agent i's cell at time t until it parks."""

    paths: tuple[Path, ...]
    width: int
    lower_bound: int
    nodes: int
    method: str = "cbs"

    @property
    def costs(self) -> tuple[int, ...]:
        """Each agent's arrival time at its goal."""
        return tuple(len(p) - 1 for p in self.paths)

    @property
    def soc(self) -> int:
        """Sum of costs."""
        return sum(self.costs)

    @property
    def makespan(self) -> int:
        """The last arrival time."""
        return max(self.costs)

    @property
    def needs_wait(self) -> bool:
        """Whether the optimum exceeds the sum of individual shortest paths (module docstring)."""
        return self.soc > self.lower_bound

    def positions(self, length: int | None = None) -> np.ndarray:
        """(T + 1, N, 2) int64 (row, col) per time; parked agents repeat their goal.

        ``length`` pads (or must equal) T + 1; default ``makespan + 1``.
        """
        steps = self.makespan + 1 if length is None else length
        if steps < self.makespan + 1:
            raise ValueError(f"length {steps} is shorter than the plan ({self.makespan + 1})")
        cells = np.array([[p[min(t, len(p) - 1)] for p in self.paths] for t in range(steps)])
        return np.stack([cells // self.width, cells % self.width], axis=-1).astype(np.int64)


@dataclass
class _Node:
    constraints: tuple[Constraints, ...]
    paths: tuple[Path, ...]
    cost: int
    conflicts: list[Conflict]


# --------------------------------------------------------------------------- conflicts


def _at(path: Path, t: int) -> int:
    return path[t] if t < len(path) else path[-1]


def find_conflicts(paths: Sequence[Path]) -> list[Conflict]:
    """Every vertex, target and swap conflict between the paths, by time then agent pair.

    A *target* conflict is a vertex conflict with an agent parked on its goal: ``b`` is the
    parked agent and ``a`` the one that walks onto it.
    """
    out: list[Conflict] = []
    n = len(paths)
    for t in range(1, max(len(p) for p in paths)):
        here = [_at(p, t) for p in paths]
        before = [_at(p, t - 1) for p in paths]
        for a in range(n):
            for b in range(a + 1, n):
                if here[a] == here[b]:
                    out.append(_vertex(paths, a, b, t, here[a]))
                elif here[a] == before[b] and here[b] == before[a]:
                    out.append(Conflict("swap", a, b, t, before[a], here[a]))
    return out


def _vertex(paths: Sequence[Path], a: int, b: int, t: int, cell: int) -> Conflict:
    """A vertex conflict, or a target conflict when one of the two is parked there."""
    if t >= len(paths[b]) - 1:
        return Conflict("target", a, b, t, cell)
    if t >= len(paths[a]) - 1:
        return Conflict("target", b, a, t, cell)
    return Conflict("vertex", a, b, t, cell)


Branch = tuple[tuple[int, str, tuple[int, ...]], ...]


def _split(conflict: Conflict) -> tuple[Branch, Branch]:
    """The two branches that resolve a conflict, each a few (agent, kind, args) constraints.

    A target conflict (``a`` walks onto ``b`` parked since before ``t``) splits into "``b``
    arrives after ``t``" and "``b`` arrives by ``t``, so ``a`` keeps off that cell from ``t``
    on" (target reasoning, Li et al. 2021); both are sound for parked agents and together
    they cover every plan.
    """
    c = conflict
    if c.kind == "vertex":
        return ((c.a, "vertex", (c.cell, c.t)),), ((c.b, "vertex", (c.cell, c.t)),)
    if c.kind == "target":
        later = ((c.b, "vertex", (c.cell, c.t)),)
        return later, ((c.b, "max_cost", (c.t,)), (c.a, "barred", (c.cell, c.t)))
    return ((c.a, "edge", (c.cell, c.other, c.t)),), ((c.b, "edge", (c.other, c.cell, c.t)),)


def _constrain(cons: Constraints, kind: str, args: tuple[int, ...]) -> Constraints:
    if kind == "vertex":
        return cons.with_vertex(*args)
    if kind == "edge":
        return cons.with_edge(*args)
    if kind == "barred":
        return cons.with_barred(*args)
    return cons.with_max_cost(*args)


def _breaks(path: Path, kind: str, args: tuple[int, ...]) -> bool:
    """Whether ``path`` breaks the constraint (so its agent must be replanned)."""
    if kind == "vertex":
        return _at(path, args[1]) == args[0]
    if kind == "edge":
        return _at(path, args[2] - 1) == args[0] and _at(path, args[2]) == args[1]
    if kind == "barred":
        return path[-1] == args[0] or args[0] in path[args[1] :]
    return len(path) - 1 > args[0]


# --------------------------------------------------------------------------- search


class _Search:
    """One CBS run over a fixed instance."""

    def __init__(
        self, gmap: GridMap, starts: list[int], goals: list[int], node_limit: int,
        time_limit_s: float | None,
    ) -> None:
        self.gmap, self.starts, self.goals = gmap, starts, goals
        self.dists = [gmap.distances(g) for g in goals]
        self.node_limit, self.time_limit_s = node_limit, time_limit_s
        self.deadline = None if time_limit_s is None else time.perf_counter() + time_limit_s
        self.nodes = 0
        self.heap: list[tuple[int, int, int, _Node]] = []
        self.mdds: dict[tuple[int, Constraints], Levels] = {}

    def replan(self, agent: int, cons: Constraints, paths: Sequence[Path]) -> Path | None:
        others = [p for i, p in enumerate(paths) if i != agent]
        return plan_path(
            self.gmap, self.starts[agent], self.goals[agent], self.dists[agent], cons,
            AvoidTable(others),
        )

    def push(self, node: _Node) -> None:
        self.nodes += 1
        if self.nodes > self.node_limit:
            raise SearchLimitError(
                f"CBS generated more than {self.node_limit} nodes without proving an optimum",
                hint="the instance may be unsolvable (frozen goals can make it so) or hard: "
                "raise node_limit, or draw another instance",
                value=self.nodes,
            )
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise SearchLimitError(
                f"CBS ran past its time limit of {self.time_limit_s} s",
                hint="raise time_limit_s, or draw another instance", value=self.nodes,
            )
        heapq.heappush(self.heap, (node.cost, len(node.conflicts), self.nodes, node))

    def root(self) -> _Node:
        cons = tuple(Constraints() for _ in self.starts)
        paths: list[Path] = []
        for agent in range(len(self.starts)):
            path = self.replan(agent, cons[agent], paths)
            assert path is not None  # reachability was checked
            paths.append(path)
        return _node(cons, tuple(paths))

    def child(self, node: _Node, branch: Branch) -> _Node | None:
        constraints, paths = list(node.constraints), list(node.paths)
        for agent, kind, args in branch:
            constraints[agent] = _constrain(constraints[agent], kind, args)
        for agent in dict.fromkeys(a for a, _, _ in branch):
            if any(_breaks(paths[agent], k, args) for a, k, args in branch if a == agent):
                path = self.replan(agent, constraints[agent], paths)
                if path is None:
                    return None
                paths[agent] = path
        return _node(tuple(constraints), tuple(paths))

    def mdd(self, node: _Node, agent: int) -> Levels:
        key = (agent, node.constraints[agent])
        if key not in self.mdds:
            self.mdds[key] = build_mdd(
                self.gmap, self.starts[agent], self.goals[agent], self.dists[agent],
                node.constraints[agent], len(node.paths[agent]) - 1,
            )
        return self.mdds[key]

    def sides(self, node: _Node, c: Conflict) -> int:
        """How many of the two branches surely raise the cost (2 = a cardinal conflict)."""
        a, b = self.mdd(node, c.a), self.mdd(node, c.b)
        if c.kind == "vertex":
            return singleton(a, c.t, c.cell) + singleton(b, c.t, c.cell)
        if c.kind == "target":
            return 1 + singleton(a, c.t, c.cell)
        a_stuck = singleton(a, c.t - 1, c.cell) and singleton(a, c.t, c.other)
        return a_stuck + (singleton(b, c.t - 1, c.other) and singleton(b, c.t, c.cell))

    def choose(self, node: _Node) -> Conflict:
        """The first cardinal conflict, else the first semi-cardinal one, else the first."""
        best, best_sides = node.conflicts[0], -1
        for c in node.conflicts:
            sides = self.sides(node, c)
            if sides == 2:
                return c
            if sides > best_sides:
                best, best_sides = c, sides
        return best

    def expand(self, node: _Node) -> None:
        children = [self.child(node, branch) for branch in _split(self.choose(node))]
        for kid in children:
            if kid and kid.cost == node.cost and len(kid.conflicts) < len(node.conflicts):
                self.push(_Node(node.constraints, kid.paths, kid.cost, kid.conflicts))
                return
        for kid in children:
            if kid is not None:
                self.push(kid)

    def run(self) -> tuple[Path, ...]:
        self.push(self.root())
        while self.heap:
            node = heapq.heappop(self.heap)[3]
            if not node.conflicts:
                return node.paths
            self.expand(node)
        raise UnsolvableError(
            "CBS exhausted the constraint tree: no conflict-free plan exists",
            hint="draw another instance",
        )


def _node(constraints: tuple[Constraints, ...], paths: tuple[Path, ...]) -> _Node:
    return _Node(constraints, paths, sum(len(p) - 1 for p in paths), find_conflicts(paths))


# --------------------------------------------------------------------------- entry point


def solve(
    holes: np.ndarray,
    starts: np.ndarray | Sequence[Sequence[int]],
    goals: np.ndarray | Sequence[Sequence[int]],
    *,
    node_limit: int = DEFAULT_NODE_LIMIT,
    time_limit_s: float | None = None,
    method: str = "auto",
) -> Plan:
    """An optimal (minimum sum-of-costs) conflict-free plan for the walkers.

    ``holes`` is (H, W) bool, ``starts`` and ``goals`` are (N, 2) (row, col). ``method``:
    ``cbs``; ``joint`` (the complete joint-state A*, for small instances); ``auto`` (CBS, and
    on a small instance the joint search once CBS has spent ``JOINT_FIRST_NODES`` nodes, so
    that an instance without a plan is proven so). Raises ``MapfError`` for a malformed
    instance, ``UnsolvableError`` when no plan exists (a goal cut off, or proven by the joint
    search), ``SearchLimitError`` when a limit is hit first.
    """
    if method not in METHODS:
        raise MapfError(f"unknown method {method!r}", path="method", hint=f"one of {list(METHODS)}")
    gmap = GridMap.from_holes(holes)
    search = _prepare(gmap, starts, goals, node_limit, time_limit_s)
    bound = sum(search.dists[i][s] for i, s in enumerate(search.starts))
    joint = joint_size(gmap, len(search.starts))
    small = joint <= JOINT_LIMIT
    if method == "auto" and small:
        low, high = JOINT_FIRST_NODES
        search.node_limit = min(node_limit, max(low, min(high, joint // 50)))
    if method != "joint":
        try:
            return Plan(search.run(), gmap.width, bound, search.nodes, "cbs")
        except SearchLimitError:
            if method == "cbs" or not small:
                raise
    paths = joint_search(gmap, search.starts, search.goals, search.dists)
    if paths is None:
        raise UnsolvableError(
            "no conflict-free plan exists (the joint search covered every state)",
            hint="draw another instance",
        )
    return Plan(paths, gmap.width, bound, search.nodes, "joint")


def _prepare(
    gmap: GridMap, starts: np.ndarray | Sequence[Sequence[int]],
    goals: np.ndarray | Sequence[Sequence[int]], node_limit: int, time_limit_s: float | None,
) -> _Search:
    """Check the instance and set up the search (distances to every goal)."""
    s_cells, g_cells = _checked_cells(gmap, starts, "starts"), _checked_cells(gmap, goals, "goals")
    if len(s_cells) != len(g_cells):
        raise MapfError(f"{len(s_cells)} starts but {len(g_cells)} goals", path="goals")
    _check_pairs(gmap, s_cells, g_cells)
    search = _Search(gmap, s_cells, g_cells, node_limit, time_limit_s)
    for i, s in enumerate(s_cells):
        if search.dists[i][s] < 0:
            raise UnsolvableError(
                f"agent {i}: goal {gmap.rc(g_cells[i])} is cut off from start {gmap.rc(s)} by holes",
                path=f"goals[{i}]", hint="every goal must be reachable from its start",
            )
    return search


def _checked_cells(gmap: GridMap, cells: np.ndarray | Sequence[Sequence[int]], name: str) -> list[int]:
    """Flat cells of an (N, 2) array, each on the lake and not a hole, all distinct."""
    arr = np.asarray(cells, dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2 or len(arr) == 0:
        raise MapfError(f"{name} must have shape (N, 2) with N >= 1, got {arr.shape}", path=name)
    out: list[int] = []
    for i, rc in enumerate(arr.tolist()):
        if not gmap.inside(rc):
            raise MapfError(f"{name}[{i}] = {rc} is off the {gmap.height}x{gmap.width} lake", path=f"{name}[{i}]")
        if not gmap.free[gmap.cell(rc)]:
            raise UnsolvableError(f"{name}[{i}] = {rc} is a hole", path=f"{name}[{i}]")
        out.append(gmap.cell(rc))
    if len(set(out)) != len(out):
        raise MapfError(f"{name} must be distinct cells, got {arr.tolist()}", path=name)
    return out


def _check_pairs(gmap: GridMap, starts: list[int], goals: list[int]) -> None:
    """Refuse a start equal to its goal (the env marks arrival only after a step)."""
    for i, (s, g) in enumerate(zip(starts, goals, strict=True)):
        if s == g:
            raise MapfError(
                f"agent {i} starts on its goal {gmap.rc(g)}", path=f"goals[{i}]",
                hint="the env marks an arrival only after a step; draw a different goal",
            )
