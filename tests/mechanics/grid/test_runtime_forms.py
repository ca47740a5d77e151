"""The grid runtime's forms agree: the scalar one of one env (`runtime.py`, the Python backend's)
and the vector one over copies (`runtime_batch.py`, the batch backend's and, beyond 16 agents, the
Python backend's moves), and each view with a plain loop over the cells."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gymwright.mechanics.grid.runtime import (
    _agents_view_loop,
    resolve_moves,
    rt_agents_view,
    rt_tile,
    rt_tile1,
    rt_view,
)
from gymwright.mechanics.grid.runtime_batch import agents_view_batch, resolve_moves_batch


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 6), st.integers(1, 6), st.integers(1, 6),
       st.sampled_from(["none", "block", "vertex", "occupied"]))
def test_resolve_moves_equals_its_vector_form_on_one_copy(seed: int, n: int, h: int, w: int, rule: str) -> None:
    rng = np.random.default_rng(seed)
    pos = np.stack([rng.integers(0, h, n), rng.integers(0, w, n)], axis=1)
    moves = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1], [2, 0]])
    delta = moves[rng.integers(0, len(moves), n)]
    can = rng.random(n) < 0.8
    passable = rng.random((h, w)) < 0.8
    scalar = resolve_moves(pos, delta, can, passable, rule)
    vector = resolve_moves_batch(pos[None], delta[None], can[None], passable[None], rule)
    for a, b in zip(scalar, vector, strict=True):
        np.testing.assert_array_equal(a, b[0])


def _window(grid: np.ndarray, p: np.ndarray, r: int, fill: int) -> np.ndarray:
    """The (2r+1)x(2r+1) window of `grid` around p, cell by cell (`fill` outside)."""
    out = np.full((2 * r + 1, 2 * r + 1), fill, dtype=np.int64)
    for i in range(2 * r + 1):
        for j in range(2 * r + 1):
            a, b = int(p[0]) - r + i, int(p[1]) - r + j
            if 0 <= a < grid.shape[0] and 0 <= b < grid.shape[1]:
                out[i, j] = grid[a, b]
    return out


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 7), st.integers(1, 7), st.integers(1, 3))
def test_views_and_tiles_equal_a_loop_over_the_cells(seed: int, h: int, w: int, r: int) -> None:
    rng = np.random.default_rng(seed)

    class V:
        tiles = rng.integers(0, 3, (h, w))
        pos = np.stack([rng.integers(0, h, 4), rng.integers(0, w, 4)], axis=1)

    p = np.array([rng.integers(-r - 2, h + r + 2), rng.integers(-r - 2, w + r + 2)])
    counts = np.zeros((h, w), dtype=np.int64)
    np.add.at(counts, (V.pos[:, 0], V.pos[:, 1]), 1)
    want = _window(counts, p, r, 0)
    np.testing.assert_array_equal(rt_agents_view(V, p, r), want)
    np.testing.assert_array_equal(_agents_view_loop(V.pos, p, r), want)
    np.testing.assert_array_equal(agents_view_batch(V.pos[None], p[None, None], r)[0, 0], want)
    if 0 <= p[0] < h and 0 <= p[1] < w:
        np.testing.assert_array_equal(rt_view(V, p, r), _window(V.tiles, p, r, -1))
    assert rt_tile1(V.tiles, p) == rt_tile(V.tiles, p) == (V.tiles[p[0], p[1]] if 0 <= p[0] < h and 0 <= p[1] < w else -1)
