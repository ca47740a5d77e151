"""The batch runtime's look-ups that replace a numpy computation per copy (`b_pow_int`, `b_pick`,
`b_turn_rows`, `b_agents`, `b_own`): each gives the same values, bit for
bit, as the computation it replaces, also where it must fall back. That the batch lowering uses
them is a speed matter: benchmarks/test_fast_paths_used.py."""

from __future__ import annotations

import numpy as np
import pytest

from gymwright.runtime import batch


def test_pow_int_equals_np_power_in_and_out_of_its_table() -> None:
    rng = np.random.default_rng(0)
    base = rng.uniform(0.5, 1.0, 64)
    powers = batch.BatchPowers()
    e = rng.integers(0, 51, 64)
    got = batch.b_pow_int(powers, "discount", base, e, 0, 51)
    want = np.power(base, e)
    assert got.dtype == np.float64 and got.tobytes() == want.tobytes()
    e[3] = 51  # outside the table: np.power itself
    assert batch.b_pow_int(powers, "discount", base, e, 0, 51).tobytes() == np.power(base, e).tobytes()
    shifted = rng.integers(-3, 4, 64)
    assert batch.b_pow_int(powers, "discount", base, shifted, -3, 7).tobytes() == np.power(base, shifted).tobytes()
    assert len(powers.tables) == 2


def test_pow_int_keeps_the_first_base_array_only() -> None:
    base = np.linspace(0.5, 1.0, 8)
    powers = batch.BatchPowers()
    e = np.arange(8) % 5
    batch.b_pow_int(powers, "discount", base, e, 0, 5)
    subset = base[[1, 2, 3]]  # another array (a subset's params): computed directly, not kept
    got = batch.b_pow_int(powers, "discount", subset, e[:3], 0, 5)
    assert got.tobytes() == np.power(subset, e[:3]).tobytes()
    assert powers.tables[("discount", 0, 5)][0] is base
    ints = np.arange(1, 9)  # an int param: powers in float64, as np.power(asarray(float64), e)
    assert batch.b_pow_int(powers, "n", ints, e, 0, 5).tobytes() == np.power(ints.astype(np.float64), e).tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.int64, bool])
def test_pick_equals_fancy_indexing_with_clipped_indices(dtype: type) -> None:
    rng = np.random.default_rng(1)
    x = (rng.random((50, 3)) * 10).astype(dtype)
    bi = np.arange(50)
    inside = rng.integers(0, 3, 50)
    assert np.array_equal(batch.b_pick(x, inside), x[bi, inside])
    wild = rng.integers(-6, 7, 50)  # wrapped for -3..-1, clipped beyond
    got = batch.b_pick(x, wild)
    assert got.dtype == x.dtype and np.array_equal(got, x[bi, batch.b_clip_index(wild, 3)])
    strided = np.asfortranarray(x)
    assert np.array_equal(batch.b_pick(strided, wild), x[bi, batch.b_clip_index(wild, 3)])


@pytest.mark.parametrize(("lo", "n", "total"), [(0, 2, 2), (1, 3, 5)])
def test_turn_rows_equal_mask_rows_at_the_active_agent(lo: int, n: int, total: int) -> None:
    rng = np.random.default_rng(2)
    rows = (rng.random((4, 6)) < 0.5).astype(np.int8)
    rows[0] = 0  # code 0: nothing legal
    table = batch.b_turn_table(rows, n)
    code = rng.integers(0, 4, 40).astype(np.intp)
    active = rng.integers(-2, total + 2, 40)  # some name no agent of the role
    want = np.zeros((40, total, 6), dtype=np.int8)
    want[:, lo:lo + n] = np.take(rows, batch.b_at_turn(code, active, lo, n), axis=0)
    got = np.full((40, total, 6), 7, dtype=np.int8)
    out = got if (lo, n) == (0, total) else got[:, lo:lo + n]
    batch.b_turn_rows(table, code, active, lo, n, out)
    assert np.array_equal(got[:, lo:lo + n], want[:, lo:lo + n])


@pytest.mark.parametrize("n", [1, 3, 6])
def test_agents_repeats_a_per_copy_value(n: int) -> None:
    x = np.array([True, False, True])
    got = batch.b_agents(x, n)
    assert got.dtype == x.dtype and np.array_equal(got, np.repeat(x[:, None], n, axis=1))




def test_own_keeps_a_fresh_float_array_and_copies_anything_else() -> None:
    fresh = np.multiply(np.ones((4, 1)), np.arange(8.0).reshape(4, 2))
    assert batch.b_own(fresh, (4, 2)) is fresh
    state = np.arange(8.0).reshape(4, 2)[:, 0:2]  # a view: copied
    got = batch.b_own(state, (4, 2))
    assert got is not state and got.flags.owndata and np.array_equal(got, state)
    flags = np.array([[True], [False], [True], [True]])  # bools, broadcast along the agents
    want = np.array(np.broadcast_to(flags, (4, 2)), dtype=np.float64)
    assert batch.b_own(flags, (4, 2)).tobytes() == want.tobytes()
    assert batch.b_own(0.5, (4, 2)).tobytes() == np.full((4, 2), 0.5).tobytes()


@np.errstate(divide="ignore")  # 0.0 ** -1
def test_pow_int_serves_an_array_of_the_same_bytes_and_is_skipped_by_checkpoints() -> None:
    base = np.array([0.5, 0.0, 0.75])
    powers = batch.BatchPowers()
    e = np.array([-1, -1, 2])
    batch.b_pow_int(powers, "d", base, e, -1, 4)
    restored = base.copy()  # a param array put back from a checkpoint: same values, same table
    assert batch.b_pow_int(powers, "d", restored, e, -1, 4).tobytes() == np.power(restored, e).tobytes()
    assert powers.tables[("d", -1, 4)][0] is restored
    signed = np.array([0.5, -0.0, 0.75])  # -0.0 ** -1 is -inf: not the table of 0.0
    assert batch.b_pow_int(powers, "d", signed, e, -1, 4).tobytes() == np.power(signed, e).tobytes()
    assert callable(powers)  # train/checkpoint.py leaves callables out of an env's saved state
