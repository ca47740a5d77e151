"""The batch runtime's column-wise and row-wise helpers give exactly what plain numpy gives:
`b_is_me`, `b_at_turn`, `b_set_obs`, `BatchObsWriter`, `b_groups`, `b_start_rows` / `b_restart_rows`,
`b_roll` by per-agent shifts."""

from __future__ import annotations

import numpy as np
import pytest

from gymwright.runtime import batch


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8])
def test_is_me_and_at_turn_put_the_value_in_the_active_agents_column(n: int) -> None:
    rng = np.random.default_rng(n)
    active = rng.integers(-2, n + 3, 50)  # some not one of the role's agents 1 .. n
    code = rng.integers(0, 9, 50)
    column = active[:, None] == np.arange(1, n + 1)[None, :]
    got = batch.b_at_turn(code, active, 1, n)
    assert got.dtype == np.intp and np.array_equal(got, np.where(column, code[:, None], 0))
    assert np.array_equal(batch.b_at_turn(3, active, 1, n), np.where(column, 3, 0))
    me = batch.b_is_me(active, 1, n)
    assert me.dtype == bool and np.array_equal(me, column)
    assert batch.b_is_me(active.reshape(5, 10), 1, n).shape == (5, 10, n)


@pytest.mark.parametrize("agents", [1, 2, 4, 8])
def test_set_obs_writes_what_a_plain_assignment_writes(agents: int) -> None:
    rng = np.random.default_rng(agents)
    values = [rng.random((6, 1)), rng.integers(-3, 3, (6, agents)), rng.random((6, agents)) < 0.5,
              rng.random((6, agents)) * 1e6, rng.random((6, agents, 5)) < 0.5,
              rng.integers(-9, 9, (6, agents, 5)), 2.5]
    for x in values:
        want, got = np.zeros((6, agents, 12), np.float32), np.zeros((6, agents, 12), np.float32)
        run = np.ndim(x) == 3
        view = (slice(None), slice(None), slice(3, 8) if run else 4)
        want[view] = x
        batch.b_set_obs(got[view], x)
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("copies", [1, 7, 300])
@pytest.mark.parametrize("held", [0, 1 << 10, 1 << 22])
def test_obs_writer_writes_what_plain_assignments_write(copies: int, held: int, monkeypatch) -> None:
    """BatchObsWriter: chunks of a few copies (the chunk size made small here), values held up to
    a limit (none, a few, all) and broadcast ones ((B, 1), (1, n), a scalar) give the buffer plain
    assignments give, in a view of some agents of a wider buffer."""
    monkeypatch.setattr(batch, "OBS_CHUNK_BYTES", 4 * 12 * 3 * 4)  # 4 copies of 3 agents a chunk
    monkeypatch.setattr(batch, "OBS_HELD_BYTES", held)
    rng = np.random.default_rng(copies)
    parts = [(0, 5, rng.random((copies, 3, 5)) < 0.5), (5, None, rng.integers(-3, 3, (copies, 3))),
             (6, None, rng.random((copies, 1))), (7, None, np.arange(3)[None, :]), (8, None, 2.5),
             (9, 12, rng.integers(-9, 9, (copies, 3, 3)))]
    want = rng.random((copies, 5, 15)).astype(np.float32)  # the buffer as the last step left it
    got = want.copy()
    for lo, hi, x in parts:
        want[:, 1:4, lo if hi is None else slice(lo, hi)] = x
    # add_at: entries 12:15 zero but for values added at (copy, agent, entry), some places twice
    copy, agent, entry = rng.integers(0, copies, 50), rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    values = rng.integers(-4, 5, 50)
    want[:, 1:4, 12:15] = 0
    np.add.at(want, (copy, agent + 1, entry + 12), values)
    writer = batch.BatchObsWriter(got, 1, 3)
    for lo, hi, x in parts[:3]:
        writer.add(lo, hi, x)
    writer.add_at(12, 15, copy, agent, entry, values)
    for lo, hi, x in parts[3:]:
        writer.add(lo, hi, x)
    writer.flush()
    assert got.tobytes() == want.tobytes()
    assert not writer.parts and not writer.later and not writer.held


def test_groups_of_configs_are_np_uniques() -> None:
    """b_groups: the copies of each distinct config row, in np.unique's order, one shared row found
    without np.unique; every copy in exactly one group."""
    rng = np.random.default_rng(0)
    for configs in (np.tile([[0.0, 0.2, 1000.0]], (9, 1)), rng.integers(0, 3, (40, 2)).astype(float),
                    np.zeros((0, 3)), np.array([[1.0, 2.0]])):
        groups = batch.b_groups(configs)
        uniques = np.unique(configs, axis=0)
        assert [c.tolist() for c, _ in groups] == uniques.tolist()
        for c, at in groups:
            assert at.tolist() == np.flatnonzero((configs == c).all(axis=1)).tolist()
        assert sorted(i for _, at in groups for i in at.tolist()) == list(range(len(configs)))


def test_restart_rows_copy_a_shared_start_or_each_copys_own() -> None:
    idx = np.array([0, 2, 3])
    for x in (np.zeros((5, 0)), np.arange(5), np.ones((5, 2, 3), np.int8), np.arange(10.0).reshape(5, 2),
              np.array([0.0, -0.0, 0.0, 0.0, 0.0])):
        start = batch.b_start_rows(x)
        shared = len(x) > 1 and x.size and all(r.tobytes() == x[0].tobytes() for r in x)
        assert len(start) == (1 if shared else len(x))
        got, want = np.full_like(x, 7), np.full_like(x, 7)
        batch.b_restart_rows(got, start, idx)
        want[idx] = x[idx]
        assert got.tobytes() == want.tobytes()  # -0.0 is not 0.0: kept per copy


def test_roll_by_a_shift_per_agent_is_numpys_roll() -> None:
    rng = np.random.default_rng(0)
    cases = [((5, 1, 8), -np.arange(8)[None, :]), ((5, 3, 4), np.array([[1, -2, 7]])),
             ((5, 3, 4, 2), np.array([[1, -2, 7]])), ((5, 3, 4), rng.integers(-5, 5, (5, 3)))]
    for shape, k in cases:
        x = rng.random(shape)
        got = batch.b_roll(x, k, 2)
        prefix = np.broadcast_shapes(x.shape[:2], k.shape)
        xb, kb = np.broadcast_to(x, prefix + x.shape[2:]), np.broadcast_to(k, prefix)
        want = np.stack([np.stack([np.roll(xb[b, j], kb[b, j], axis=0) for j in range(prefix[1])])
                         for b in range(prefix[0])])
        assert np.array_equal(got, want)


@pytest.mark.parametrize("agents", [2, 3, 4, 5])
def test_wide_combines_with_the_agent_axis_as_the_broadcast_does(agents: int) -> None:
    rng = np.random.default_rng(agents)
    other = rng.random((7, agents))
    for x in (rng.random(7), rng.integers(-3, 3, 7), rng.random(7) < 0.5, np.float64(2.5), np.int64(3)):
        wide = batch.b_wide(x, agents)
        for op in (np.add, np.multiply, np.less):
            want = op(np.asarray(x)[..., None] if np.ndim(x) else x, other)
            assert op(wide, other).tobytes() == want.tobytes()
        cond = other < 0.5
        assert np.where(cond, wide, other).tobytes() == np.where(cond, np.asarray(x)[..., None], other).tobytes()
