"""The Python backend's fast paths for one env's few agents give exactly what the general runtime
gives: `resolve_moves` with tile kinds (the generated call: `passable` is the tile array, `kinds`
says which kinds can be entered) and moves as lists or arrays, against its vector form on one
copy (`resolve_moves_batch`); a few `uniforms` on Python ints, against the numpy stream; and
`rt_manhattan_rows`, against `rt_manhattan` and `rt_manhattan1`."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gymwright.mechanics.grid.runtime import resolve_moves
from gymwright.mechanics.grid.runtime_batch import resolve_moves_batch


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 8), st.integers(1, 5), st.integers(1, 5),
       st.sampled_from(["none", "block"]), st.booleans())
def test_kinds_and_list_moves_equal_resolve_moves(seed: int, n: int, h: int, w: int, rule: str, as_list: bool) -> None:
    rng = np.random.default_rng(seed)
    pos = np.stack([rng.integers(0, h, n), rng.integers(0, w, n)], axis=1)
    moves = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]])
    delta = moves[rng.integers(0, len(moves), n)]
    can = (rng.random(n) < 0.8).tolist()
    tiles = rng.integers(0, 3, (h, w))
    kinds = np.array([True, False, True])
    fast = resolve_moves(pos, [tuple(d) for d in delta.tolist()] if as_list else delta, can, tiles, rule, kinds)
    vector = resolve_moves_batch(pos[None], delta[None], np.array(can)[None], tiles[None], rule, kinds)
    for a, b in zip(fast, vector, strict=True):
        np.testing.assert_array_equal(a, b[0])
        assert a.dtype == b.dtype


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**63 - 1), st.integers(0, 50), st.integers(0, 400), st.integers(0, 2**21),
       st.integers(0, 100), st.integers(0, 8))
def test_few_uniforms_equal_the_numpy_stream(seed: int, episode: int, step: int, site: int, start: int,
                                             n: int) -> None:
    from gymwright.runtime import core

    few = core.uniforms(seed, episode, step, site, start, n)
    many = core.uniforms(seed, episode, step, site, start, n + core.FEW_VALUES + 1)[:n]  # the numpy path
    np.testing.assert_array_equal(few, many)
    assert few.dtype == np.float64 and few.shape == (n,)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 20))
def test_manhattan_rows_equal_manhattan_row_by_row(seed: int, n: int) -> None:
    from gymwright.mechanics.grid.runtime import rt_manhattan, rt_manhattan1, rt_manhattan_rows

    rng = np.random.default_rng(seed)
    a, b = rng.integers(-50, 50, (n, 2)), rng.integers(-50, 50, (n, 2))
    rows = rt_manhattan_rows(a, b)
    assert rows.dtype == np.int64 and rows.shape == (n,)
    np.testing.assert_array_equal(rows, rt_manhattan(a, b))
    assert rows.tolist() == [rt_manhattan1(p, q) for p, q in zip(a, b, strict=True)]
