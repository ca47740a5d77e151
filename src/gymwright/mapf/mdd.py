"""Multi-valued decision diagrams (Sharon et al. 2013): the cells an agent can be in at each
time on *some* optimal path under its constraints. CBS uses them to pick *cardinal* conflicts
(splitting them raises the cost of both children) first, as improved CBS does (Boyarski et
al. 2015)."""

from __future__ import annotations

from collections.abc import Sequence

from gymwright.mapf.maps import GridMap
from gymwright.mapf.space_time import Constraints

Levels = tuple[frozenset[int], ...]


def build_mdd(
    gmap: GridMap, start: int, goal: int, dist: Sequence[int], cons: Constraints, cost: int
) -> Levels:
    """``levels[t]`` = cells at time ``t`` on some path of exactly ``cost`` steps keeping ``cons``.

    A path ends the first time it enters the goal, so the goal appears only at ``t = cost``.
    """
    forward = _forward(gmap, start, goal, dist, cons, cost)
    levels = [frozenset({goal})] if goal in forward[cost] else [frozenset()]
    for t in range(cost - 1, -1, -1):
        after = levels[-1]
        keep = {
            cell for cell in forward[t]
            if any(_allowed(cons, cell, n, t + 1) and n in after for n in (*gmap.neighbours[cell], cell))
        }
        levels.append(frozenset(keep))
    return tuple(reversed(levels))


def _forward(
    gmap: GridMap, start: int, goal: int, dist: Sequence[int], cons: Constraints, cost: int
) -> list[set[int]]:
    """Cells reachable at each time that can still reach the goal exactly at ``cost``."""
    barred, goal_last = cons.barred_from(), cons.goal_last(goal)
    layers = [{start}]
    for t in range(1, cost + 1):
        layer: set[int] = set()
        for cell in layers[-1]:
            for n in (*gmap.neighbours[cell], cell):
                if t + dist[n] > cost or not _allowed(cons, cell, n, t):
                    continue
                if t >= barred.get(n, cost + 1) or (n == goal and (t < cost or t <= goal_last)):
                    continue
                layer.add(n)
        layers.append(layer)
    return layers


def _allowed(cons: Constraints, here: int, there: int, t: int) -> bool:
    return (there, t) not in cons.vertex and (here, there, t) not in cons.edge


def singleton(levels: Levels, t: int, cell: int) -> bool:
    """Whether every optimal path is at ``cell`` at time ``t`` (parked agents stay on the goal)."""
    level = levels[min(t, len(levels) - 1)]
    return level == frozenset({cell})
