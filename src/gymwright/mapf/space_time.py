"""The low level of CBS: space-time A* for one agent under constraints.

States are ``(cell, t)``; an agent moves to a free 4-neighbour or waits.  Its path ends the
first time it enters its goal, because the environment freezes an agent on its goal (see
``gymwright.mapf.cbs``); so entering the goal at time ``t`` is allowed only when no vertex
constraint names the goal at ``t`` or later.  Ties between equally short paths are broken by
the fewest conflicts with the other agents' current paths (a conflict-avoidance table), then
by the order of expansion: the search is deterministic.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

from gymwright.mapf.maps import GridMap

Path = tuple[int, ...]
_NO_LIMIT = 1 << 30


@dataclass(frozen=True)
class Constraints:
    """What one agent may not do.

    ``vertex``: be at ``(cell, t)``; ``edge``: move ``(from, to, t)`` (arriving at t);
    ``barred``: be at ``cell`` at time ``t`` or later (``(cell, t)``, from target reasoning);
    ``max_cost``: arrive at its goal after this time.
    """

    vertex: frozenset[tuple[int, int]] = field(default_factory=frozenset)
    edge: frozenset[tuple[int, int, int]] = field(default_factory=frozenset)
    barred: frozenset[tuple[int, int]] = field(default_factory=frozenset)
    max_cost: int = _NO_LIMIT

    def with_vertex(self, cell: int, t: int) -> Constraints:
        """A copy that also forbids being at ``cell`` at time ``t``."""
        return Constraints(self.vertex | {(cell, t)}, self.edge, self.barred, self.max_cost)

    def with_edge(self, here: int, there: int, t: int) -> Constraints:
        """A copy that also forbids moving ``here -> there`` arriving at time ``t``."""
        return Constraints(self.vertex, self.edge | {(here, there, t)}, self.barred, self.max_cost)

    def with_barred(self, cell: int, t: int) -> Constraints:
        """A copy that also forbids ``cell`` at every time from ``t`` on."""
        return Constraints(self.vertex, self.edge, self.barred | {(cell, t)}, self.max_cost)

    def with_max_cost(self, cost: int) -> Constraints:
        """A copy that must arrive by time ``cost``."""
        return Constraints(self.vertex, self.edge, self.barred, min(self.max_cost, cost))

    def last_time(self) -> int:
        """The latest time any vertex, edge or barred constraint names (-1 when none)."""
        times = [t for _, t in self.vertex] + [t for _, _, t in self.edge]
        return max(times + [t for _, t in self.barred], default=-1)

    def goal_last(self, goal: int) -> int:
        """The latest time the goal cell is forbidden by a vertex constraint (-1 when never)."""
        return max((t for cell, t in self.vertex if cell == goal), default=-1)

    def barred_from(self) -> dict[int, int]:
        """For each barred cell, the first time it is barred."""
        out: dict[int, int] = {}
        for cell, t in self.barred:
            out[cell] = min(out.get(cell, t), t)
        return out


class AvoidTable:
    """Where the other agents are, to count the conflicts a move would make (tie-breaking only)."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.at: dict[tuple[int, int], int] = {}
        self.moves: dict[tuple[int, int, int], int] = {}
        self.parked: dict[int, int] = {}
        for path in paths:
            self._add(path)
        self.horizon = max((len(p) for p in paths), default=0)

    def _add(self, path: Path) -> None:
        end = len(path) - 1
        for t, cell in enumerate(path[:-1]):
            self.at[(cell, t)] = self.at.get((cell, t), 0) + 1
            step = (cell, path[t + 1], t + 1)
            self.moves[step] = self.moves.get(step, 0) + 1
        goal = path[end]
        self.parked[goal] = min(self.parked.get(goal, end), end)

    def cost(self, here: int, there: int, t: int) -> int:
        """Conflicts of moving ``here -> there`` arriving at ``t`` with the stored paths."""
        hits = self.at.get((there, t), 0) + (t >= self.parked.get(there, t + 1))
        if here != there:
            hits += self.moves.get((there, here, t), 0)
        return hits


# heap entry: f, conflicts, seq, cell, t, parent, final
_Entry = tuple[int, int, int, int, int, "tuple[int, int] | None", bool]


def plan_path(
    gmap: GridMap,
    start: int,
    goal: int,
    dist: Sequence[int],
    cons: Constraints,
    avoid: AvoidTable | None = None,
) -> Path | None:
    """A shortest path ``start .. goal`` (one cell per time step) that keeps ``cons``; None if none.

    ``dist`` holds the BFS distances to ``goal`` (``GridMap.distances``), the heuristic.  After
    the last constrained time (and the end of the paths in ``avoid``) only barred cells can stop
    the agent, so a state there is finished by a static shortest path around them: the state
    space stays finite and the search always ends.
    """
    if dist[start] < 0:
        return None
    barred = cons.barred_from()
    tail = gmap.distances(goal, frozenset(barred)) if barred else dist
    horizon = max(cons.last_time(), avoid.horizon if avoid else 0) + 1
    goal_last, limit = cons.goal_last(goal), cons.max_cost
    came: dict[tuple[int, int], tuple[int, int] | None] = {}
    heap: list[_Entry] = [(dist[start], 0, 0, start, 0, None, False)]
    seq = 0
    while heap:
        f, conf, _, cell, t, prev, final = heapq.heappop(heap)
        if final:
            return _unwind(came, (cell, t)) + _descend(gmap, tail, cell)
        if (cell, t) in came:
            continue
        came[(cell, t)] = prev
        if cell == goal:
            return _unwind(came, (cell, t))
        seq += 1
        if t >= horizon:
            if tail[cell] >= 0 and t + tail[cell] <= limit:
                heapq.heappush(heap, (t + tail[cell], conf, seq, cell, t, None, True))
            continue
        for there in (*gmap.neighbours[cell], cell):
            nt = t + 1
            if (there, nt) in came or (there, nt) in cons.vertex or (cell, there, nt) in cons.edge:
                continue
            if nt >= barred.get(there, _NO_LIMIT) or (there == goal and nt <= goal_last):
                continue
            if nt + dist[there] > limit:
                continue
            seq += 1
            extra = avoid.cost(cell, there, nt) if avoid else 0
            heapq.heappush(heap, (nt + dist[there], conf + extra, seq, there, nt, (cell, t), False))
    return None


def _unwind(came: dict[tuple[int, int], tuple[int, int] | None], key: tuple[int, int]) -> Path:
    """The cells from the start to ``key`` by following parents."""
    cells: list[int] = []
    node: tuple[int, int] | None = key
    while node is not None:
        cells.append(node[0])
        node = came[node]
    return tuple(reversed(cells))


def _descend(gmap: GridMap, dist: Sequence[int], cell: int) -> Path:
    """A shortest path from ``cell`` to the goal along ``dist`` (excluding ``cell``)."""
    out: list[int] = []
    while dist[cell] > 0:
        cell = next(n for n in gmap.neighbours[cell] if dist[n] == dist[cell] - 1)
        out.append(cell)
    return tuple(out)
