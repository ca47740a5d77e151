"""Solved pools filled on demand: what a compiled env with `grid.solve` draws its layouts from.

A ``LazyPool`` of ``n`` slots holds instance ``k`` as soon as some reset first draws it, and keeps
it for the life of the process. Instance ``k`` comes from its own random stream
``(seed, k)`` and is wait-needing exactly when ``k < round(wait_ratio * n)``, so the pool's
content never depends on the order of the draws, the wait share over the pool is exact, and
every env of one config in a process (and both backends) sees the same instances. The filled
slots go to the disk cache (with which slots they are: a pool is often drawn from in part, e.g.
by the evaluations of a curriculum) and are loaded next time; processes that fill one pool at
once merge their slots there (a slot's instance is the same whoever solves it).

This is the same pool as ``make_pool`` describes (solvable instances, optimal sum of costs,
a set share that needs a wait) but paid for per drawn instance: verifying a spec at a crowded
config costs a few CBS solves, not a thousand.
"""

from __future__ import annotations

import multiprocessing.util
import os
import time
from dataclasses import asdict

import numpy as np

from gymwright.mapf.cache import cache_dir, cache_key, load_npz, save_npz
from gymwright.mapf.instances import GENERATE_NODE_LIMIT, generate
from gymwright.mapf.pool import PoolConfig

MAX_DRAWS = 2_000
"""Candidates drawn for one slot before its config is reported as unable to give that kind."""
SAVE_AFTER_S = 0.5
"""Solving time after which newly filled slots are written to the disk cache (and always when the
pool is complete): a crash loses at most this much work, and a write costs about a millisecond."""
_ARRAYS = ("holes", "starts", "goals", "optimal_soc", "needs_wait")
_LIVE: dict[tuple, LazyPool] = {}


class LazyPool:
    """``n`` slots of one config; ``take(indices)`` returns their instances, solving new ones."""

    def __init__(self, config: PoolConfig, n: int, seed: int) -> None:
        self.config, self.n, self.seed = config, n, seed
        s, a = config.size, config.n_agents
        self.n_wait = round(config.wait_ratio * n)
        self.holes = np.zeros((n, s, s), dtype=bool)
        self.starts = np.zeros((n, a, 2), dtype=np.int64)
        self.goals = np.zeros((n, a, 2), dtype=np.int64)
        self.optimal_soc = np.zeros(n, dtype=np.int64)
        self.needs_wait = np.zeros(n, dtype=bool)
        self.ready = np.zeros(n, dtype=bool)
        self._path = cache_dir() / f"lazy-{cache_key({'config': asdict(config), 'n': n, 'seed': seed})}.npz"
        self._seen: float | None = None  # the cache file's mtime when last read or written
        self._unsaved = 0.0  # seconds of solving not yet in the cache
        self._merge_stored()

    def _merge_stored(self) -> None:
        """Take the slots the cache file holds that this pool lacks (another process may have
        filled them since). A file without `ready` holds a whole pool (the format before slots
        were saved)."""
        try:
            mtime = self._path.stat().st_mtime
        except OSError:
            return
        if mtime == self._seen:
            return
        stored = load_npz(self._path)
        self._seen = mtime
        if stored is None or stored.get("holes", np.zeros(0)).shape != self.holes.shape:
            return
        ready = stored.get("ready", np.ones(self.n, dtype=bool)).astype(bool)
        if ready.shape != self.ready.shape:
            return
        new = ready & ~self.ready
        for name in _ARRAYS:
            getattr(self, name)[new] = stored[name][new]
        self.ready |= new

    def _save(self) -> None:
        """Write the filled slots, merged with what the file holds now. A cache that cannot be
        written (a read-only home) only costs the solving again next time: the pool in memory is
        whole either way, so the error is not raised."""
        self._unsaved = 0.0
        try:
            self._merge_stored()
            save_npz(self._path, {**{name: getattr(self, name) for name in _ARRAYS}, "ready": self.ready})
            self._seen = self._path.stat().st_mtime
        except OSError:
            pass

    def take(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(holes [K, S, S], starts [K, N, 2], goals [K, N, 2], optimal_soc [K])`` of the slots."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        if not self.ready[idx].all():
            self._merge_stored()
            missing = np.unique(idx[~self.ready[idx]])
            start = time.perf_counter()
            for k in missing.tolist():
                self._fill(k)
            self._unsaved += time.perf_counter() - start
            if missing.size and (self._unsaved >= SAVE_AFTER_S or self.ready.all()):
                self._save()
        return self.holes[idx], self.starts[idx], self.goals[idx], self.optimal_soc[idx]

    def flush(self) -> None:
        """Write slots filled since the last write (`take` writes after SAVE_AFTER_S of solving)."""
        if self._unsaved:
            self._save()

    def whole(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``take`` of every slot: the whole pool, solved (and so cached on disk)."""
        return self.take(np.arange(self.n))

    def _fill(self, k: int) -> None:
        c = self.config
        wait = k < self.n_wait
        rng = np.random.default_rng([self.seed, k])
        inst = generate(c.size, c.n_agents, c.hole_ratio, wait, rng, max_draws=MAX_DRAWS,
                        node_limit=GENERATE_NODE_LIMIT)
        self.holes[k], self.starts[k], self.goals[k] = inst.holes, inst.starts, inst.goals
        self.optimal_soc[k], self.needs_wait[k], self.ready[k] = inst.optimal_soc, inst.needs_wait, True


def flush_pools() -> None:
    """Write every live pool's unsaved slots to the disk cache (at the process's exit too)."""
    for pool in _LIVE.values():
        pool.flush()


_FLUSHED_BY: int | None = None  # the process whose multiprocessing finalizer flushes the pools


def _flush_at_exit() -> None:
    """Flush the pools when this process exits: a multiprocessing finalizer runs at a normal exit
    (multiprocessing's own atexit hook) and in a worker, where a forked child leaves by os._exit,
    past atexit. A forked child drops the finalizers it inherited, so each process that makes a
    pool registers its own."""
    global _FLUSHED_BY
    if _FLUSHED_BY != os.getpid():
        multiprocessing.util.Finalize(None, flush_pools, exitpriority=0)
        _FLUSHED_BY = os.getpid()


def solved_pool(config: PoolConfig, n: int, seed: int = 0) -> LazyPool:
    """The process's pool of ``config`` with ``n`` slots (created on first use)."""
    key = (config, n, seed)
    pool = _LIVE.get(key)
    if pool is None:
        _flush_at_exit()
        pool = _LIVE[key] = LazyPool(config, n, seed)
    return pool
