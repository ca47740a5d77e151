"""Pools of solved instances, generated once per config and cached on disk.

``make_pool(config, n, seed)`` draws candidates from one seeded stream and keeps them so that
exactly ``round(wait_ratio * n)`` need a wait; the pool is then shuffled. Rejection sampling
stops after ``max_draws`` candidates with a ``ConfigError`` that gives the natural share of
wait-needing instances seen, so an infeasible ratio is named rather than looped on.

A pool exports as arrays (``Pool.arrays``): ``holes [K, H, W] bool``, ``starts`` and
``goals [K, N, 2] int64``, ``optimal_soc``, ``lower_bound``, ``makespan [K] int64``,
``needs_wait [K] bool`` and ``plans [K, T, N, 2] int64`` (an optimal plan per instance,
padded with the goals, where the agents stay).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from gymwright.mapf.cache import cache_dir, cache_key, load_npz, save_npz
from gymwright.mapf.errors import ConfigError
from gymwright.mapf.instances import GENERATE_NODE_LIMIT, Instance, check_shape, draw_instance

ARRAYS = ("holes", "starts", "goals", "optimal_soc", "lower_bound", "makespan", "needs_wait", "plans")


@dataclass(frozen=True)
class PoolConfig:
    """One bucket of instances: map side, agents, share of holes, share needing a wait."""

    size: int
    n_agents: int
    hole_ratio: float
    wait_ratio: float

    def __post_init__(self) -> None:
        check_shape(self.size, self.n_agents, self.hole_ratio)
        if not 0.0 <= self.wait_ratio <= 1.0:
            raise ConfigError(f"wait_ratio {self.wait_ratio} is outside 0..1", path="wait_ratio",
                              value=self.wait_ratio)
        if self.n_agents == 1 and self.wait_ratio > 0:
            raise ConfigError("a single agent never needs to wait", path="wait_ratio",
                              value=self.wait_ratio, hint="use wait_ratio 0 or n_agents >= 2")


@dataclass(frozen=True, eq=False)
class Pool:
    """K solved instances of one config, as arrays (see the module docstring)."""

    config: PoolConfig
    seed: int
    holes: np.ndarray
    starts: np.ndarray
    goals: np.ndarray
    optimal_soc: np.ndarray
    lower_bound: np.ndarray
    makespan: np.ndarray
    needs_wait: np.ndarray
    plans: np.ndarray

    def __len__(self) -> int:
        return int(self.holes.shape[0])

    @property
    def wait_share(self) -> float:
        return float(self.needs_wait.mean()) if len(self) else 0.0

    def instance(self, k: int) -> Instance:
        """Instance ``k`` (its plan cut at its makespan)."""
        plan = self.plans[k, : int(self.makespan[k]) + 1]
        return Instance(self.holes[k], self.starts[k], self.goals[k], int(self.optimal_soc[k]),
                        int(self.lower_bound[k]), plan)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` instance indices drawn uniformly with replacement."""
        return rng.integers(0, len(self), size=n)

    def arrays(self) -> dict[str, np.ndarray]:
        """The pool as a dict of arrays (what the cache stores, what an env can load)."""
        return {name: getattr(self, name) for name in ARRAYS}


def make_pool(
    config: PoolConfig,
    n: int,
    seed: int,
    *,
    cache: bool = True,
    max_draws: int | None = None,
    node_limit: int = GENERATE_NODE_LIMIT,
) -> Pool:
    """``n`` instances of ``config`` (loaded from the cache when there); see the module docstring.

    ``max_draws`` defaults to ``50 * n + 500`` candidates.
    """
    if n < 1:
        raise ConfigError(f"a pool needs n >= 1 instances, got {n}", path="n", value=n)
    fields = {"config": asdict(config), "n": n, "seed": seed, "node_limit": node_limit}
    path = cache_dir() / f"{cache_key(fields)}.npz"
    stored = load_npz(path) if cache else None
    if stored is not None and set(ARRAYS) <= set(stored):
        return Pool(config, seed, **{name: stored[name] for name in ARRAYS})
    pool = _generate(config, n, seed, max_draws or 50 * n + 500, node_limit)
    if cache:
        save_npz(path, pool.arrays())
    return pool


def _generate(config: PoolConfig, n: int, seed: int, max_draws: int, node_limit: int) -> Pool:
    """Rejection-sample the wait and no-wait quotas, then shuffle."""
    rng = np.random.default_rng(seed)
    want = {True: round(config.wait_ratio * n), False: n - round(config.wait_ratio * n)}
    kept: dict[bool, list[Instance]] = {True: [], False: []}
    draws = solved = 0
    while any(len(kept[k]) < want[k] for k in kept):
        if draws >= max_draws:
            raise _quota_error(config, want, kept, draws, solved)
        draws += 1
        inst = draw_instance(config.size, config.n_agents, config.hole_ratio, rng, node_limit)
        if inst is not None:
            solved += 1
            if len(kept[inst.needs_wait]) < want[inst.needs_wait]:
                kept[inst.needs_wait].append(inst)
    chosen = kept[True] + kept[False]
    order = rng.permutation(len(chosen))
    return _stack(config, seed, [chosen[i] for i in order])


def _quota_error(
    config: PoolConfig, want: dict[bool, int], kept: dict[bool, list[Instance]], draws: int,
    solved: int,
) -> ConfigError:
    seen = sum(len(v) for v in kept.values())
    share = len(kept[True]) / seen if seen else 0.0
    return ConfigError(
        f"after {draws} draws for size {config.size}, {config.n_agents} agents, hole_ratio "
        f"{config.hole_ratio}: {len(kept[True])}/{want[True]} wait-needing and "
        f"{len(kept[False])}/{want[False]} wait-free instances ({solved} solvable draws; "
        f"wait_ratio {config.wait_ratio} asked, the kept share so far is {share:.2f})",
        path="wait_ratio", value=config.wait_ratio,
        hint="move wait_ratio toward what this size and agent count give naturally, "
        "add agents (more conflicts) or lower hole_ratio, or raise max_draws",
    )


def _stack(config: PoolConfig, seed: int, items: list[Instance]) -> Pool:
    """Stack instances into a pool; plans are padded to the longest with the final positions."""
    steps = max(len(inst.plan) for inst in items)
    plans = np.stack([np.concatenate([i.plan, np.repeat(i.plan[-1:], steps - len(i.plan), 0)]) for i in items])
    return Pool(
        config, seed,
        holes=np.stack([i.holes for i in items]).astype(bool),
        starts=np.stack([i.starts for i in items]).astype(np.int64),
        goals=np.stack([i.goals for i in items]).astype(np.int64),
        optimal_soc=np.array([i.optimal_soc for i in items], dtype=np.int64),
        lower_bound=np.array([i.lower_bound for i in items], dtype=np.int64),
        makespan=np.array([len(i.plan) - 1 for i in items], dtype=np.int64),
        needs_wait=np.array([i.needs_wait for i in items], dtype=bool),
        plans=plans.astype(np.int64),
    )
