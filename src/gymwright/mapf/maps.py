"""Maps as flat cell lists: cell ``r * width + c``, neighbours and BFS distances.

The planners work on plain Python ints and lists (numpy element access is slow for a
cell-by-cell search); numpy arrays appear only at the package's edges.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np

# Same order as gymwright.mechanics.grid.runtime._NEIGHBOURS: up, down, left, right.
MOVES: tuple[tuple[int, int], ...] = ((-1, 0), (1, 0), (0, -1), (0, 1))


@dataclass(frozen=True)
class GridMap:
    """A ``height x width`` lake: ``free[cell]`` is False for holes, ``neighbours[cell]`` lists the
    free 4-neighbours of a cell in ``MOVES`` order (waiting is not listed)."""

    height: int
    width: int
    free: tuple[bool, ...]
    neighbours: tuple[tuple[int, ...], ...]

    @classmethod
    def from_holes(cls, holes: np.ndarray) -> GridMap:
        """Build the map of a (H, W) bool hole mask."""
        holes = np.asarray(holes, dtype=bool)
        if holes.ndim != 2 or 0 in holes.shape:
            raise ValueError(f"holes must be a non-empty (H, W) bool array, got shape {holes.shape}")
        height, width = holes.shape
        free = tuple(not h for h in holes.ravel().tolist())
        return cls(height, width, free, tuple(_free_neighbours(free, height, width)))

    def cell(self, rc: tuple[int, int] | np.ndarray | list[int]) -> int:
        """Flat index of a (row, col) pair."""
        return int(rc[0]) * self.width + int(rc[1])

    def rc(self, cell: int) -> tuple[int, int]:
        """(row, col) of a flat index."""
        return divmod(cell, self.width)

    def inside(self, rc: tuple[int, int] | np.ndarray | list[int]) -> bool:
        """Whether a (row, col) pair lies on the map."""
        return 0 <= int(rc[0]) < self.height and 0 <= int(rc[1]) < self.width

    def distances(self, goal: int, avoid: frozenset[int] = frozenset()) -> list[int]:
        """BFS distance from every cell to ``goal`` over free cells not in ``avoid`` (-1 = cut off)."""
        dist = [-1] * len(self.free)
        dist[goal] = 0
        queue = collections.deque([goal])
        while queue:
            here = queue.popleft()
            for there in self.neighbours[here]:
                if dist[there] < 0 and there not in avoid:
                    dist[there] = dist[here] + 1
                    queue.append(there)
        return dist


def _free_neighbours(free: tuple[bool, ...], height: int, width: int) -> list[tuple[int, ...]]:
    """Free 4-neighbours of every cell, in ``MOVES`` order."""
    out: list[tuple[int, ...]] = []
    for cell in range(height * width):
        r, c = divmod(cell, width)
        near = []
        for dr, dc in MOVES:
            rr, cc = r + dr, c + dc
            if 0 <= rr < height and 0 <= cc < width and free[rr * width + cc]:
                near.append(rr * width + cc)
        out.append(tuple(near))
    return out
