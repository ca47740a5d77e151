"""A solved pool drawn from in part keeps its solved slots on disk: the next process (another arm of
a benchmark, the next evaluation of a curriculum) reads them instead of solving them again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gymwright.mapf import lazy
from gymwright.mapf.cache import load_npz, save_npz
from gymwright.mapf.pool import PoolConfig

CONFIG = PoolConfig(4, 2, 0.2, 0.5)


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GYMWRIGHT_CACHE", str(tmp_path))
    monkeypatch.setattr(lazy, "_LIVE", {})
    return tmp_path


def no_solving(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a slot was solved again")
    monkeypatch.setattr(lazy, "generate", refuse)


def same_slots(a: lazy.LazyPool, b: lazy.LazyPool, slots: list[int]) -> None:
    for name in ("holes", "starts", "goals", "optimal_soc", "needs_wait"):
        np.testing.assert_array_equal(getattr(a, name)[slots], getattr(b, name)[slots])


def test_slots_solved_in_one_process_are_read_in_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    first = lazy.LazyPool(CONFIG, 12, seed=3)
    first.take(np.array([7, 2, 7]))
    first.flush()
    assert first.ready.sum() == 2  # in part: the pool is not whole
    no_solving(monkeypatch)
    second = lazy.LazyPool(CONFIG, 12, seed=3)
    assert second.ready.tolist() == first.ready.tolist()
    got = second.take(np.array([2, 7]))
    same_slots(first, second, [2, 7])
    np.testing.assert_array_equal(got[3], first.optimal_soc[[2, 7]])
    with pytest.raises(AssertionError, match="solved again"):
        second.take(np.array([5]))  # a slot nobody solved is still solved on demand


def test_slots_are_written_after_a_while_of_solving_without_a_flush(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lazy, "SAVE_AFTER_S", 0.0)
    pool = lazy.LazyPool(CONFIG, 12, seed=4)
    pool.take(np.array([1]))
    stored = load_npz(pool._path)
    assert stored is not None and stored["ready"].tolist() == pool.ready.tolist()


def test_pools_filled_at_once_by_two_processes_merge_their_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    a = lazy.LazyPool(CONFIG, 12, seed=5)
    b = lazy.LazyPool(CONFIG, 12, seed=5)  # made before a wrote anything
    a.take(np.array([0, 9]))
    b.take(np.array([4]))
    a.flush()
    b.flush()  # merges a's slots before it writes
    no_solving(monkeypatch)
    c = lazy.LazyPool(CONFIG, 12, seed=5)
    assert np.flatnonzero(c.ready).tolist() == [0, 4, 9]
    same_slots(a, c, [0, 9])
    same_slots(b, c, [4])


def test_a_solved_slot_is_the_same_as_when_solved_afresh(own_cache: Path) -> None:
    saved = lazy.LazyPool(CONFIG, 12, seed=6)
    saved.take(np.array([3, 8]))
    saved.flush()
    for path in own_cache.rglob("lazy-*.npz"):
        path.unlink()
    fresh = lazy.LazyPool(CONFIG, 12, seed=6)
    assert not fresh.ready.any()
    fresh.take(np.array([8, 3]))
    same_slots(saved, fresh, [3, 8])


def test_a_whole_pool_written_without_ready_loads_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = lazy.LazyPool(CONFIG, 4, seed=1)
    pool.whole()
    save_npz(pool._path, {name: getattr(pool, name) for name in ("holes", "starts", "goals", "optimal_soc", "needs_wait")})
    no_solving(monkeypatch)
    again = lazy.LazyPool(CONFIG, 4, seed=1)
    assert again.ready.all()
    same_slots(pool, again, [0, 1, 2, 3])


def test_a_cache_that_cannot_be_written_only_costs_solving_again(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (own_cache / "mapf").write_text("a file where the cache folder would be")
    monkeypatch.setattr(lazy, "SAVE_AFTER_S", 0.0)
    pool = lazy.LazyPool(CONFIG, 6, seed=2)
    holes, starts, goals, cost = pool.take(np.array([5, 0]))
    pool.flush()
    assert pool.ready[[0, 5]].all() and holes.shape == (2, 4, 4) and (cost > 0).all()


def _fill_two_slots() -> None:
    lazy.solved_pool(CONFIG, 12, seed=7).take(np.array([1, 2]))  # well under SAVE_AFTER_S of solving


@pytest.mark.parametrize("start", ["spawn", "fork"])
def test_a_worker_process_leaves_its_slots_in_the_cache(start: str, own_cache: Path) -> None:
    import multiprocessing

    child = multiprocessing.get_context(start).Process(target=_fill_two_slots)
    child.start()
    child.join(120)
    assert child.exitcode == 0
    pool = lazy.LazyPool(CONFIG, 12, seed=7)  # a forked child leaves by os._exit, past atexit
    assert np.flatnonzero(pool.ready).tolist() == [1, 2]


def test_a_program_leaves_its_slots_in_the_cache_when_it_ends(own_cache: Path) -> None:
    import subprocess
    import sys

    program = ("import numpy as np; from gymwright.mapf import lazy; from gymwright.mapf.pool import PoolConfig; "
               "lazy.solved_pool(PoolConfig(4, 2, 0.2, 0.5), 12, 7).take(np.array([1, 2]))")
    subprocess.run([sys.executable, "-c", program], check=True, timeout=120)  # GYMWRIGHT_CACHE: own_cache
    pool = lazy.LazyPool(CONFIG, 12, seed=7)  # under SAVE_AFTER_S of solving: written at the exit
    assert np.flatnonzero(pool.ready).tolist() == [1, 2]
