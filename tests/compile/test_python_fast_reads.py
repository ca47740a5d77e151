"""The Python backend's cheap reads: solved layouts drawn from a pool kept whole once it is
complete (`mechanics/grid/runtime_solved.py`), and the generated step reading per-agent flags and move choices
from lists. Trajectories against the batch backend: tests/compile/test_batch_differential.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.mapf import PoolConfig, lazy
from gymwright.mapf.bake import pack_pool
from gymwright.mechanics.grid import runtime_solved as solved
from gymwright.mechanics.grid.runtime_solved import solved_key, solved_layouts

CONFIG = (6, 4, 4, 2, [0.0, 0.3], [False, True], 0.0, 0)  # pool size, height, width, agents, densities, blocked, wait, seed


def baked_pool() -> tuple[dict[str, str], tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(5)
    size, h, w, n = CONFIG[:4]
    holes = rng.random((size, h, w)) < 0.3
    starts, goals = rng.integers(0, 4, (size, n, 2)), rng.integers(0, 4, (size, n, 2))
    cost = rng.integers(2, 9, size)
    return {solved_key(*CONFIG): pack_pool(holes, starts, goals, cost)}, (holes, starts, goals, cost)


def test_a_baked_draw_is_its_layout_and_a_copy() -> None:
    baked, (holes, starts, goals, cost) = baked_pool()
    for k in (3, 0, 3, 5):
        tiles, s, g, c = solved_layouts(*CONFIG, [k], baked)
        assert tiles.dtype == s.dtype == g.dtype == c.dtype == np.int64
        np.testing.assert_array_equal(tiles, np.where(holes[k:k + 1], 1, 0))  # kind 1 is the blocked one
        np.testing.assert_array_equal(s, starts[k:k + 1])
        np.testing.assert_array_equal(g, goals[k:k + 1])
        np.testing.assert_array_equal(c, cost[k:k + 1])
        tiles[...], s[...], c[...] = 7, -1, 0  # the caller owns what it got: the next draw is intact
    many = solved_layouts(*CONFIG, np.array([5, 3]), baked)
    for got, one in zip(many, solved_layouts(*CONFIG, [5], baked), strict=True):
        np.testing.assert_array_equal(got[:1], one)
        assert got.shape[0] == 2


def test_a_solver_pool_gives_the_same_layouts_before_and_after_it_is_complete(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GYMWRIGHT_CACHE", str(tmp_path))  # no pool on disk: slots are solved as drawn
    monkeypatch.setattr(lazy, "_LIVE", {})  # nor in this process
    monkeypatch.setattr(solved, "_WHOLE", {})
    config = (5, 4, 4, 2, [0.0, 0.15], [False, True], 0.0, 0)
    pool = lazy.solved_pool(PoolConfig(4, 2, 0.15, 0.0), 5)
    first = [solved_layouts(*config, [k]) for k in (2, 0)]  # drawn while some slots are empty
    assert not pool.ready.all()
    for k in range(5):
        solved_layouts(*config, [k])
    assert pool.ready.all()
    for k, drawn in zip((2, 0), first, strict=True):
        again = solved_layouts(*config, [k])  # now from the whole pool
        for a, b in zip(drawn, again, strict=True):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype
        np.testing.assert_array_equal(again[1][0], pool.starts[k])


def test_a_step_where_everyone_waits_costs_the_time_only() -> None:
    """The step that reads flags and move choices from lists (benchmarks/test_fast_paths_used.py
    checks it is the one written) moves no one when all wait."""
    env = compile_spec("mapf_frozenlake", {"size": 8, "n_agents": 4}).parallel_env()
    env.reset(seed=1)
    _, rewards, *_ = env.step({a: 4 for a in env.agents})  # everyone waits: no move, no conflict
    assert not env.v.moved.any() and set(rewards.values()) == {-env.p.step_cost}  # the time cost only
