"""Baseline policies, evaluated by the same `evaluate` as trained ones.

Only the random-legal baseline exists: a scripted baseline needs the spec to say how its
script plays, and the spec language has no such section yet.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class RandomLegalPolicy:
    """Uniformly random legal actions (per the masks); -1 for agents with none."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, obs: Any, masks: Any, deterministic: bool = False) -> np.ndarray:
        m = np.asarray(masks) != 0
        u = np.where(m, self.rng.random(m.shape), -1.0)
        return np.where(m.any(-1), u.argmax(-1), -1).astype(np.int64)


def random_legal_policy(seed: int = 0) -> RandomLegalPolicy:
    """A policy that plays a uniformly random legal action for every agent."""
    return RandomLegalPolicy(seed)
