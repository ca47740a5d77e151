"""The Python backend's window helpers over a role's agents (`rt_*_rows`, kept on `v` between
calls) give exactly what the per-agent helpers and a brute-force count give, also after the
state changes under them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gymwright.mechanics.grid import runtime as grid_runtime
from gymwright.mechanics.grid.runtime import (
    rt_agents_view,
    rt_agents_view_of,
    rt_agents_view_of_rows,
    rt_agents_view_rows,
    rt_agents_windows_rows,
    rt_view_rows,
)


class V:
    """The env state the helpers read (`tiles`, `pos`) and keep their grids on."""


def brute_window(pos: np.ndarray, values: np.ndarray, centre: np.ndarray, r: int) -> np.ndarray:
    side = 2 * r + 1
    out = np.zeros((side, side), dtype=np.float64 if values.dtype.kind == "f" else np.int64)
    for (row, col), x in zip(pos.tolist(), values.tolist(), strict=True):
        dr, dc = row - int(centre[0]) + r, col - int(centre[1]) + r
        if 0 <= dr < side and 0 <= dc < side:
            out[dr, dc] += x
    return out


def brute_tiles(tiles: np.ndarray, centre: np.ndarray, r: int) -> np.ndarray:
    h, w = tiles.shape
    return np.array([[tiles[a, b] if 0 <= a < h and 0 <= b < w else -1
                      for b in range(int(centre[1]) - r, int(centre[1]) + r + 1)]
                     for a in range(int(centre[0]) - r, int(centre[0]) + r + 1)])


def values_of(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    if kind == "bool":
        return rng.random(n) < 0.5
    if kind == "int":
        return rng.integers(-3, 4, n)
    if kind == "bigint":  # beyond float64's exact integers: summed in int64 instead
        return rng.integers(-2**60, 2**60, n)
    return rng.normal(size=n) * 10.0 ** rng.integers(-3, 4, n)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 6), st.integers(1, 6), st.integers(1, 7), st.integers(1, 2),
       st.sampled_from(["bool", "int", "bigint", "float"]), st.booleans())
def test_rows_equal_per_agent_and_brute_force(seed: int, h: int, w: int, n: int, r: int, kind: str,
                                              off_grid: bool) -> None:
    rng = np.random.default_rng(seed)
    v = V()
    v.tiles = rng.integers(0, 3, (h, w))
    lo = -2 if off_grid else 0
    for _ in range(3):  # new positions each round: nothing kept on v may go stale
        v.pos = np.stack([rng.integers(lo, h - lo, n), rng.integers(lo, w - lo, n)], axis=1)
        centres = v.pos if rng.random() < 0.5 else np.stack([rng.integers(lo, h - lo, n), rng.integers(lo, w - lo, n)], axis=1)
        x = values_of(rng, kind, n)
        on_grid = all(0 <= a < h and 0 <= b < w for a, b in centres.tolist())
        views = rt_view_rows(v, centres, r) if on_grid else None  # (rt_view takes centres on the grid)
        counts = rt_agents_view_rows(v, centres, r)
        sums = rt_agents_view_of_rows(v, centres, r, x)
        for i, c in enumerate(centres):
            if views is not None:
                np.testing.assert_array_equal(views[i], brute_tiles(v.tiles, c, r))
            np.testing.assert_array_equal(counts[i], brute_window(v.pos, np.ones(n, dtype=np.int64), c, r))
            np.testing.assert_array_equal(counts[i], rt_agents_view(v, c, r))
            np.testing.assert_array_equal(sums[i], brute_window(v.pos, x, c, r))
            np.testing.assert_array_equal(sums[i], rt_agents_view_of(v, c, r, x))
        assert counts.dtype == np.int64
        assert sums.dtype == (np.float64 if kind == "float" else np.int64)
        together = rt_agents_windows_rows(v, centres, r, x, None, x > 0)  # one call, several windows
        for got, alone in zip(together, (sums, counts, rt_agents_view_of_rows(v, centres, r, x > 0)), strict=True):
            np.testing.assert_array_equal(got, alone)
            assert got.dtype == alone.dtype


def test_values_changed_in_place_are_not_served_stale() -> None:
    v = V()
    v.tiles = np.zeros((4, 4), dtype=np.int64)
    v.pos = np.array([[0, 0], [0, 1], [3, 3]])
    x = np.array([1, 2, 3])
    first = rt_agents_view_of_rows(v, v.pos, 1, x).copy()
    x[1] = 5
    again = rt_agents_view_of_rows(v, v.pos, 1, x)
    assert first[0, 1, 2] == 2 and again[0, 1, 2] == 5
    v.pos = np.array([[0, 0], [1, 1], [3, 3]])  # agent 1 moves: its value follows it
    moved = rt_agents_view_of_rows(v, v.pos, 1, x)
    assert moved[0, 1, 2] == 0 and moved[0, 2, 2] == 5


@pytest.mark.parametrize("kept_max", [grid_runtime.TILE_WINDOWS_MAX, 0])  # every cell's windows kept, or gathered
def test_tile_windows_follow_replaced_tiles(monkeypatch: pytest.MonkeyPatch, kept_max: int) -> None:
    monkeypatch.setattr(grid_runtime, "TILE_WINDOWS_MAX", kept_max)
    rng = np.random.default_rng(4)
    v = V()
    for h, w in ((5, 7), (5, 7), (3, 2)):  # a reset replaces the tiles, of the same shape or not
        v.tiles = rng.integers(0, 4, (h, w))
        for r in (1, 2, 1):
            v.pos = np.stack([rng.integers(0, h, 6), rng.integers(0, w, 6)], axis=1)
            views = rt_view_rows(v, v.pos, r)
            for i, c in enumerate(v.pos):
                np.testing.assert_array_equal(views[i], brute_tiles(v.tiles, c, r))
            assert views.dtype == v.tiles.dtype
