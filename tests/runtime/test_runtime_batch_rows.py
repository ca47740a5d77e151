"""The batch runtime's whole-copy helpers and `b_is_me`, and the Python runtime's kept value grids:
each equals the plain numpy (or per-call) computation it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from gymwright.mechanics.grid import runtime as grid
from gymwright.runtime import batch
from gymwright.runtime.namespace import Namespace

SHAPES = [(7,), (7, 3), (7, 2, 5), (7, 0, 2)]
DTYPES = [np.int64, np.int8, np.float32, bool]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_gather_and_scatter_like_fancy_indexing(shape: tuple[int, ...], dtype: type) -> None:
    rng = np.random.default_rng(0)
    src = (rng.random(shape) * 50).astype(dtype)
    idx = np.array([5, 0, 3])
    taken = batch.b_take_rows(src, idx)
    assert taken.dtype == src.dtype and np.array_equal(taken, src[idx])
    before = src.copy()
    taken[...] = 1  # a copy: the source is untouched
    assert np.array_equal(src, before)

    dst, want = np.zeros(shape, dtype), np.zeros(shape, dtype)
    batch.b_put_rows(dst, idx, src[idx])
    want[idx] = src[idx]
    assert np.array_equal(dst, want)

    dst = np.ones(shape, dtype)
    batch.b_copy_rows(dst, src, idx)
    want = np.ones(shape, dtype)
    want[idx] = src[idx]
    assert np.array_equal(dst, want)


def test_rows_fall_back_for_other_dtypes_layouts_and_broadcasts() -> None:
    dst = np.zeros((6, 3), dtype=np.float64)
    batch.b_put_rows(dst, np.array([1, 4]), np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64))  # cast
    assert dst[1].tolist() == [1.0, 2.0, 3.0] and dst[4].tolist() == [4.0, 5.0, 6.0]
    batch.b_put_rows(dst, np.array([0, 2]), np.array([7.0, 8.0, 9.0]))  # one row for every index
    assert dst[0].tolist() == dst[2].tolist() == [7.0, 8.0, 9.0]
    wide = np.arange(24).reshape(6, 4)
    view = wide[:, ::2]  # not contiguous
    assert np.array_equal(batch.b_take_rows(view, np.array([3, 1])), view[[3, 1]])
    batch.b_put_rows(view, np.array([5]), np.array([[-1, -2]]))
    assert wide[5].tolist() == [-1, 21, -2, 23]


@pytest.mark.parametrize(("lo", "n"), [(0, 2), (3, 4)])
def test_is_me_equals_the_broadcast_comparison(lo: int, n: int) -> None:
    x = np.array([-1, 0, 1, 2, 3, 4, 5, 6, 7, 100])
    want = np.arange(lo, lo + n)[None, :] == x[:, None]
    got = batch.b_is_me(x, lo, n)
    assert got.dtype == bool and got.shape == (len(x), n) and np.array_equal(got, want)
    assert np.array_equal(batch.b_is_me(x.reshape(2, 5), lo, n), want.reshape(2, 5, n))


def _grid_vars(pos: list[list[int]]) -> Namespace:
    v = Namespace()
    v._set("tiles", np.zeros((4, 5), dtype=np.int64))
    v._set("pos", np.array(pos, dtype=np.int64))
    return v


def _loop_view_of(v: Namespace, p: np.ndarray, r: int, x: np.ndarray) -> np.ndarray:
    """The window sum computed agent by agent (what rt_agents_view_of returns)."""
    side = 2 * r + 1
    out = np.zeros((side, side), dtype=np.float64 if x.dtype.kind == "f" else np.int64)
    for (row, col), value in zip(v.pos.tolist(), x.tolist(), strict=True):
        dr, dc = row - int(p[0]) + r, col - int(p[1]) + r
        if 0 <= dr < side and 0 <= dc < side:
            out[dr, dc] += value
    return out


@pytest.mark.parametrize("r", [1, 2])
def test_agents_view_of_kept_grid_matches_the_loop_and_follows_changes(r: int) -> None:
    v = _grid_vars([[0, 0], [0, 1], [3, 4], [1, 1]])
    x = np.array([1, -1, 1, 0])
    for center in ([0, 0], [1, 1], [3, 4], [2, 2], [-1, 0], [5, 9]):
        p = np.array(center)
        for values in (x, x.astype(bool), x * 0.5):
            got = grid.rt_agents_view_of(v, p, r, values)
            assert got.dtype == _loop_view_of(v, p, r, values).dtype
            assert np.array_equal(got, _loop_view_of(v, p, r, values)), (center, values)
    x[1] = 5  # the same object, changed in place: never a stale grid
    assert np.array_equal(grid.rt_agents_view_of(v, np.array([0, 0]), r, x), _loop_view_of(v, np.array([0, 0]), r, x))
    v._set("pos", np.array([[3, 3], [3, 3], [0, 4], [2, 0]]))  # replaced, as every step does
    assert np.array_equal(grid.rt_agents_view_of(v, np.array([3, 3]), r, x), _loop_view_of(v, np.array([3, 3]), r, x))
