"""The Python backend's fast paths agree with the general runtime functions."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gymwright.runtime.core import resolve_moves_small, rt_agents_view, rt_tile, rt_tile1, rt_view
from gymwright.runtime.grid import agents_view, resolve_moves, view


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 6), st.integers(1, 6), st.integers(1, 6),
       st.sampled_from(["none", "block"]))
def test_resolve_moves_small_equals_resolve_moves(seed: int, n: int, h: int, w: int, rule: str) -> None:
    rng = np.random.default_rng(seed)
    pos = np.stack([rng.integers(0, h, n), rng.integers(0, w, n)], axis=1)
    moves = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1], [2, 0]])
    delta = moves[rng.integers(0, len(moves), n)]
    can = rng.random(n) < 0.8
    passable = rng.random((h, w)) < 0.8
    fast = resolve_moves_small(pos, delta, can, passable, rule)
    slow = resolve_moves(pos, delta, can, passable, rule)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 7), st.integers(1, 7), st.integers(1, 3))
def test_views_and_tiles_equal_the_grid_runtime(seed: int, h: int, w: int, r: int) -> None:
    rng = np.random.default_rng(seed)

    class V:
        tiles = rng.integers(0, 3, (h, w))

    p = np.array([rng.integers(-1, h + 1), rng.integers(-1, w + 1)])
    pos = np.stack([rng.integers(0, h, 4), rng.integers(0, w, 4)], axis=1)
    if 0 <= p[0] < h and 0 <= p[1] < w:
        np.testing.assert_array_equal(rt_view(V, p, r), view(V.tiles, p, r, -1))
        np.testing.assert_array_equal(rt_agents_view(pos, p, r), agents_view(pos, p, r))
    assert rt_tile1(V.tiles, p) == rt_tile(V.tiles, p)
