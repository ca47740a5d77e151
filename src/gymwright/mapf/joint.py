"""Exact A* over joint states, for instances small enough to search whole.

CBS cannot prove that an instance has no plan (with frozen goals some have none: two walkers
that must swap in a corridor), and a few tiny crowded instances take it thousands of nodes.
When the joint space is small (``joint_size``), ``gymwright.mapf.cbs.solve`` falls back to
this search, which is complete: it returns an optimal plan or proves there is none. Same rules
as CBS: an agent on its goal is parked; a joint step has no vertex and no swap conflict; a step
costs one per agent not yet parked.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Sequence

from gymwright.mapf.maps import GridMap
from gymwright.mapf.space_time import Path

State = tuple[int, ...]


def joint_size(gmap: GridMap, n_agents: int) -> int:
    """The number of joint states: ordered placements of the agents on distinct free cells."""
    return math.perm(sum(gmap.free), n_agents)


def joint_search(
    gmap: GridMap, starts: Sequence[int], goals: Sequence[int], dists: Sequence[Sequence[int]]
) -> tuple[Path, ...] | None:
    """Optimal paths (ending at first arrival), or None when no conflict-free plan exists."""
    start, goal = tuple(starts), tuple(goals)
    best: dict[State, int] = {start: 0}
    parent: dict[State, State | None] = {start: None}
    heap = [(_h(start, dists), 0, 0, start)]
    seq = 0
    while heap:
        _, g, _, state = heapq.heappop(heap)
        if g > best[state]:
            continue
        if state == goal:
            return _paths(parent, state)
        step = sum(s != e for s, e in zip(state, goal, strict=True))
        for after in _successors(gmap, state, goal):
            if g + step < best.get(after, 1 << 30):
                best[after], parent[after] = g + step, state
                seq += 1
                heapq.heappush(heap, (g + step + _h(after, dists), g + step, seq, after))
    return None


def _h(state: State, dists: Sequence[Sequence[int]]) -> int:
    return sum(d[s] for s, d in zip(state, dists, strict=True))


def _successors(gmap: GridMap, state: State, goal: State) -> Iterator[State]:
    """Conflict-free joint steps, built agent by agent so that clashes prune early."""

    def extend(i: int, chosen: list[int]) -> Iterator[State]:
        if i == len(state):
            yield tuple(chosen)
            return
        here = state[i]
        options = (here,) if here == goal[i] else (*gmap.neighbours[here], here)
        for there in options:
            if there in chosen:
                continue
            if any(state[j] == there and chosen[j] == here for j in range(i)):
                continue
            chosen.append(there)
            yield from extend(i + 1, chosen)
            chosen.pop()

    yield from extend(0, [])


def _paths(parent: dict[State, State | None], state: State) -> tuple[Path, ...]:
    """Per-agent paths from the joint chain, each cut at its first arrival."""
    chain: list[State] = []
    node: State | None = state
    while node is not None:
        chain.append(node)
        node = parent[node]
    chain.reverse()
    out = []
    for i, goal in enumerate(state):
        cells = [s[i] for s in chain]
        out.append(tuple(cells[: cells.index(goal) + 1]))
    return tuple(out)
