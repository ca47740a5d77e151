"""A training stage's environment as a mixture: buckets of params, each with its share of the data.

MAPF-FrozenLake's stages (as in "From Trainee to Trainer") are mixtures over map sizes, each size
with its own hole ratio and wait ratio; a one-config stage is a mixture of one bucket. The
built-in trainer takes a mixture as its buckets' params and the env copies of each (`counts`:
`TrainConfig.copies`), so buckets may differ in structural params such as the map size and the
training log has each bucket's figures; RLlib takes one param dict per env copy (`per_copy`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gymwright.errors import GymwrightError

MIN_SHARE = 0.05
"""The smallest share an engineer leaves a bucket (so no bucket's evidence goes unmeasured)."""


@dataclass
class Bucket:
    """One config of a mixture and its share of the env copies."""

    params: dict[str, Any]
    share: float
    label: str = ""


@dataclass
class Mixture:
    buckets: list[Bucket] = field(default_factory=list)
    levers: dict[str, float] = field(default_factory=dict)
    """the designer levers' strengths the stage trains with (`gymwright.engineer.levers`; absent or
    off: the game as designed): training scaffolding, part of the stage's environment"""

    def __post_init__(self) -> None:
        if not self.buckets:
            raise GymwrightError("a mixture needs at least one bucket", path="mixture")
        total = sum(b.share for b in self.buckets)
        if total <= 0 or any(b.share < 0 for b in self.buckets):
            raise GymwrightError(f"bucket shares must be >= 0 with a positive sum, got "
                                 f"{[b.share for b in self.buckets]}", path="mixture")
        labels = [b.label for b in self.buckets]
        if len(set(labels)) != len(labels):
            raise GymwrightError(f"bucket labels must be distinct, got {labels}", path="mixture")
        for b in self.buckets:
            b.share /= total

    @classmethod
    def single(cls, params: dict[str, Any]) -> Mixture:
        return cls([Bucket(dict(params), 1.0, "config")])

    @classmethod
    def over(cls, name: str, values: list[Any], base: dict[str, Any]) -> Mixture:
        """Equal shares over the values of one param (e.g. map sizes), the rest from `base`."""
        return cls([Bucket({**base, name: v}, 1.0, f"{name}={v}") for v in values])

    @property
    def is_single(self) -> bool:
        return len(self.buckets) == 1

    def per_copy(self, num_envs: int) -> list[dict[str, Any]]:
        """One param dict per env copy, by share (largest remainders; every bucket gets a copy)."""
        return [dict(b.params) for b, c in zip(self.buckets, self.counts(num_envs), strict=True) for _ in range(int(c))]

    def counts(self, num_envs: int) -> np.ndarray:
        """Env copies per bucket, by share (largest remainders; every bucket gets a copy)."""
        if num_envs < len(self.buckets):
            raise GymwrightError(f"{len(self.buckets)} buckets do not fit in {num_envs} env copies",
                                 path="num_envs", hint="raise num_envs or use fewer buckets")
        exact = np.array([b.share for b in self.buckets]) * num_envs
        counts = np.maximum(np.floor(exact).astype(int), 1)
        while counts.sum() > num_envs:
            counts[int(np.argmax(counts))] -= 1
        order = np.argsort(-(exact - counts), kind="stable")
        for i in order[: num_envs - int(counts.sum())]:
            counts[i] += 1
        return counts

    def same_as(self, other: Mixture, tol: float = 0.01) -> bool:
        """The same buckets with the same params, and shares within `tol`: no change."""
        mine = {b.label: b for b in self.buckets}
        theirs = {b.label: b for b in other.buckets}
        return mine.keys() == theirs.keys() and self.levers == other.levers and all(
            mine[k].params == theirs[k].params and abs(mine[k].share - theirs[k].share) <= tol for k in mine)

    def to_list(self) -> list[dict[str, Any]]:
        return [{"label": b.label, "params": dict(b.params), "share": round(b.share, 6)} for b in self.buckets]

    def with_changes(self, params: dict[str, dict[str, Any]], shares: dict[str, float] | None = None) -> Mixture:
        """A new mixture: each bucket's params updated from `params[label]`, shares from `shares`."""
        shares = shares or {}
        return Mixture([Bucket({**b.params, **params.get(b.label, {})}, shares.get(b.label, b.share), b.label)
                        for b in self.buckets], dict(self.levers))

    def with_levers(self, levers: dict[str, float]) -> Mixture:
        """The same buckets trained with the lever strengths `levers`."""
        return Mixture([Bucket(dict(b.params), b.share, b.label) for b in self.buckets], dict(levers))


def floor_shares(shares: dict[str, float], floor: float = MIN_SHARE) -> dict[str, float]:
    """Normalize shares to sum 1 with none below `floor`."""
    total = sum(shares.values()) or 1.0
    out = {k: max(v / total, floor) for k, v in shares.items()}
    total = sum(out.values())
    return {k: v / total for k, v in out.items()}
