"""A training stage's environment as a mixture: per map size a data ratio, a hole ratio and a
wait ratio (and an agent count). ``make_mixture`` builds one cached pool per size;
``MixtureConfig.allocate`` splits a batch of env copies between the sizes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gymwright.mapf.errors import ConfigError
from gymwright.mapf.pool import Pool, PoolConfig, make_pool


@dataclass(frozen=True)
class SizeMix:
    """One map size of a mixture."""

    size: int
    data_ratio: float
    hole_ratio: float
    wait_ratio: float
    n_agents: int = 2

    def pool_config(self) -> PoolConfig:
        return PoolConfig(self.size, self.n_agents, self.hole_ratio, self.wait_ratio)


@dataclass(frozen=True)
class MixtureConfig:
    """Sizes with their ratios; data ratios are shares of the training data and sum to 1."""

    sizes: tuple[SizeMix, ...]

    def __post_init__(self) -> None:
        if not self.sizes:
            raise ConfigError("a mixture needs at least one size", path="sizes")
        seen: set[int] = set()
        for mix in self.sizes:
            where = f"sizes[{mix.size}]"
            if mix.size in seen:
                raise ConfigError(f"size {mix.size} appears twice", path=where, value=mix.size)
            seen.add(mix.size)
            if mix.data_ratio < 0:
                raise ConfigError(f"data_ratio {mix.data_ratio} is negative", path=f"{where}.data_ratio")
            try:
                mix.pool_config()
            except ConfigError as err:
                raise ConfigError(err.message, path=f"{where}.{err.path}", value=err.value, hint=err.hint) from err
        total = sum(m.data_ratio for m in self.sizes)
        if abs(total - 1.0) > 1e-6:
            raise ConfigError(
                f"data ratios sum to {total:.6g}, not 1", path="sizes", value=total,
                hint="give each size its share of the data so that the shares add up to 1",
            )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MixtureConfig:
        """From ``{"n_agents": 2, "sizes": {4: {"data": .5, "holes": .2, "wait": .3}, ...}}``;
        a size may set its own ``agents``."""
        if not isinstance(data.get("sizes"), dict):
            raise ConfigError("a mixture dict needs 'sizes': {size: {data, holes, wait}}", path="sizes")
        default = int(data.get("n_agents", 2))
        mixes = []
        for size, row in data["sizes"].items():
            unknown = set(row) - {"data", "holes", "wait", "agents"}
            if unknown:
                raise ConfigError(f"unknown keys {sorted(unknown)}", path=f"sizes[{size}]",
                                  hint="use data, holes, wait and optionally agents")
            mixes.append(SizeMix(int(size), float(row.get("data", 0.0)), float(row.get("holes", 0.0)),
                                 float(row.get("wait", 0.0)), int(row.get("agents", default))))
        return cls(tuple(sorted(mixes, key=lambda m: m.size)))

    def to_dict(self) -> dict[str, Any]:
        """The inverse of ``from_dict`` (agents given per size)."""
        return {"sizes": {m.size: {"data": m.data_ratio, "holes": m.hole_ratio, "wait": m.wait_ratio,
                                   "agents": m.n_agents} for m in self.sizes}}

    def allocate(self, batch: int) -> dict[int, int]:
        """Env copies per size for a batch, by data ratio (largest remainders get the rest)."""
        exact = np.array([m.data_ratio * batch for m in self.sizes])
        counts = np.floor(exact).astype(int)
        order = np.argsort(-(exact - counts), kind="stable")
        counts[order[: batch - int(counts.sum())]] += 1
        return {m.size: int(c) for m, c in zip(self.sizes, counts, strict=True)}


def make_mixture(mixture: MixtureConfig, n_per_size: int, seed: int, *, cache: bool = True) -> dict[int, Pool]:
    """One pool of ``n_per_size`` instances per size with data (seeds derived from ``seed``)."""
    pools = {}
    for mix in mixture.sizes:
        if mix.data_ratio > 0:
            sub = int(np.random.SeedSequence([seed, mix.size]).generate_state(1)[0])
            pools[mix.size] = make_pool(mix.pool_config(), n_per_size, sub, cache=cache)
    return pools
