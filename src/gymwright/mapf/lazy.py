"""Solved pools filled on demand: what a compiled env with `grid.solve` draws its layouts from.

A ``LazyPool`` of ``n`` slots holds instance ``k`` as soon as some reset first draws it, and keeps
it for the life of the process. Instance ``k`` comes from its own random stream
``(seed, k)`` and is wait-needing exactly when ``k < round(wait_ratio * n)``, so the pool's
content never depends on the order of the draws, the wait share over the pool is exact, and
every env of one config in a process (and both backends) sees the same instances. A pool whose
slots are all filled is written to the disk cache and loaded whole next time.

This is the same pool as ``make_pool`` describes (solvable instances, optimal sum of costs,
a set share that needs a wait) but paid for per drawn instance: verifying a spec at a crowded
config costs a few CBS solves, not a thousand.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from gymwright.mapf.cache import cache_dir, cache_key, load_npz, save_npz
from gymwright.mapf.instances import GENERATE_NODE_LIMIT, generate
from gymwright.mapf.pool import PoolConfig

MAX_DRAWS = 2_000
"""Candidates drawn for one slot before its config is reported as unable to give that kind."""
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
        stored = load_npz(self._path)
        if stored is not None and stored.get("holes", np.zeros(0)).shape == self.holes.shape:
            for name in ("holes", "starts", "goals", "optimal_soc", "needs_wait"):
                getattr(self, name)[...] = stored[name]
            self.ready[:] = True

    def take(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(holes [K, S, S], starts [K, N, 2], goals [K, N, 2], optimal_soc [K])`` of the slots."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        missing = np.unique(idx[~self.ready[idx]])
        for k in missing.tolist():
            self._fill(k)
        if missing.size and self.ready.all():
            save_npz(self._path, {name: getattr(self, name) for name in
                                  ("holes", "starts", "goals", "optimal_soc", "needs_wait")})
        return self.holes[idx], self.starts[idx], self.goals[idx], self.optimal_soc[idx]

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


def solved_pool(config: PoolConfig, n: int, seed: int = 0) -> LazyPool:
    """The process's pool of ``config`` with ``n`` slots (created on first use)."""
    key = (config, n, seed)
    pool = _LIVE.get(key)
    if pool is None:
        pool = _LIVE[key] = LazyPool(config, n, seed)
    return pool
