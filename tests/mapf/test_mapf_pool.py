"""Instances, pools with a set wait share, and the disk cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gymwright.mapf import (
    ConfigError,
    PoolConfig,
    find_conflicts,
    generate,
    make_pool,
)
from gymwright.mapf import pool as pool_module
from gymwright.mapf.cache import cache_dir
from gymwright.mapf.maps import GridMap


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GYMWRIGHT_CACHE", str(tmp_path))
    return tmp_path


# --------------------------------------------------------------------------- instances


def assert_optimal_plan(inst) -> None:
    """The solver's plan [T, N, 2] is valid (in bounds, no hole, no vertex or swap conflict, every
    walker ends parked on its goal) and its sum of arrival times is the instance's optimum."""
    plan, size = inst.plan, inst.holes.shape[0]
    assert ((plan >= 0) & (plan < size)).all() and not inst.holes[plan[..., 0], plan[..., 1]].any()
    cells = plan[:, :, 0] * size + plan[:, :, 1]
    assert not find_conflicts([tuple(col) for col in cells.T.tolist()])
    arrived = (plan == inst.goals[None]).all(axis=2)  # [T, N]
    assert arrived[-1].all()
    first = arrived.argmax(axis=0)
    assert all(arrived[t:, i].all() for i, t in enumerate(first))  # parked from its first arrival
    assert int(first.sum()) == int(inst.optimal_soc)


@pytest.mark.parametrize("wait", [True, False, None])
def test_generate_gives_solvable_instances_of_the_kind_asked(wait: bool | None) -> None:
    rng = np.random.default_rng(0)
    for size, n in [(3, 2), (5, 3), (8, 4)]:
        inst = generate(size, n, 0.2, wait, rng)
        assert inst.holes.shape == (size, size) and int(inst.holes.sum()) == round(0.2 * size * size)
        assert wait is None or inst.needs_wait == wait
        gmap = GridMap.from_holes(inst.holes)
        for s, g in zip(inst.starts.tolist(), inst.goals.tolist(), strict=True):
            assert s != g and gmap.distances(gmap.cell(g))[gmap.cell(s)] > 0
        assert len({tuple(c) for c in inst.starts.tolist()}) == n
        assert len({tuple(c) for c in inst.goals.tolist()}) == n
        assert_optimal_plan(inst)


def test_generate_is_reproducible_from_the_rng() -> None:
    a = generate(6, 3, 0.2, True, np.random.default_rng(7))
    b = generate(6, 3, 0.2, True, np.random.default_rng(7))
    assert np.array_equal(a.holes, b.holes) and np.array_equal(a.plan, b.plan)
    assert "0" in a.render() and "a" in a.render()


def test_generate_names_an_impossible_request() -> None:
    with pytest.raises(ConfigError, match="a single agent never needs to wait"):
        generate(4, 1, 0.1, True, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="too few for 5 agents"):
        generate(3, 5, 0.6, None, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="no wait-needing instance in 3 draws"):
        generate(10, 2, 0.0, True, np.random.default_rng(0), max_draws=3)


# --------------------------------------------------------------------------- pools


@pytest.mark.parametrize(("size", "n_agents", "wait_ratio"), [(3, 2, 0.5), (5, 2, 0.3), (6, 3, 0.75)])
def test_pool_hits_its_wait_ratio(size: int, n_agents: int, wait_ratio: float) -> None:
    pool = make_pool(PoolConfig(size, n_agents, 0.2, wait_ratio), 40, seed=1, cache=False)
    assert abs(pool.wait_share - wait_ratio) <= 1 / 40
    assert pool.holes.shape == (40, size, size) and pool.holes.dtype == bool
    assert pool.starts.shape == pool.goals.shape == (40, n_agents, 2)
    assert pool.optimal_soc.shape == pool.needs_wait.shape == (40,)
    assert np.array_equal(pool.needs_wait, pool.optimal_soc > pool.lower_bound)
    for k in range(0, 40, 7):
        inst = pool.instance(k)
        assert_optimal_plan(inst)
        cells = inst.plan[:, :, 0] * size + inst.plan[:, :, 1]
        assert not find_conflicts([tuple(col) for col in cells.T.tolist()])


def test_pool_is_cached_and_reloaded_identically(monkeypatch: pytest.MonkeyPatch, _cache: Path) -> None:
    config = PoolConfig(4, 2, 0.1, 0.5)
    first = make_pool(config, 20, seed=3)
    files = list(cache_dir().glob("*"))
    assert len(files) == 1 and files[0].suffix == ".npz" and str(files[0]).startswith(str(_cache))

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("regenerated instead of loading the cache")

    monkeypatch.setattr(pool_module, "_generate", boom)
    second = make_pool(config, 20, seed=3)
    for name, array in first.arrays().items():
        assert np.array_equal(array, getattr(second, name)) and array.dtype == getattr(second, name).dtype
    with pytest.raises(AssertionError, match="regenerated"):
        make_pool(config, 20, seed=4)  # another seed is another file


def test_pool_order_and_sampling_are_seeded() -> None:
    config = PoolConfig(3, 2, 0.0, 0.5)
    a, b = make_pool(config, 10, 5, cache=False), make_pool(config, 10, 5, cache=False)
    assert np.array_equal(a.starts, b.starts)
    idx = a.sample(np.random.default_rng(0), 100)
    assert idx.min() >= 0 and idx.max() < 10


def test_infeasible_pool_configs_are_refused_clearly() -> None:
    with pytest.raises(ConfigError, match="size 11 is outside 3..10"):
        PoolConfig(11, 2, 0.1, 0.5)
    with pytest.raises(ConfigError, match="n_agents 6 is outside 1..5"):
        PoolConfig(5, 6, 0.1, 0.5)
    with pytest.raises(ConfigError, match="wait_ratio 1.5 is outside 0..1"):
        PoolConfig(5, 2, 0.1, 1.5)
    with pytest.raises(ConfigError, match="hole_ratio 0.7 is outside 0..0.6"):
        PoolConfig(5, 2, 0.7, 0.5)
    with pytest.raises(ConfigError, match="single agent never needs to wait"):
        PoolConfig(5, 1, 0.1, 0.5)
    with pytest.raises(ConfigError, match=r"0/20 wait-needing and 0/0 wait-free") as err:
        make_pool(PoolConfig(10, 2, 0.0, 1.0), 20, seed=0, max_draws=20, cache=False)
    assert err.value.path == "wait_ratio" and "move wait_ratio toward" in err.value.hint


# --------------------------------------------------------------------------- mixtures
