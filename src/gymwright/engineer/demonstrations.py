"""Demonstrations of a stage's mixture, for a curriculum whose learner imitates as it trains.

A demonstrator (`Demonstrator`: for MAPF, a planner's joint plans replayed through the env, as
`benchmarks/mapf_demos.py` makes them) plays the stage's configs; its episodes are spread over
the mixture's buckets by share, like the env copies. The curriculum clones them into the first
stage's policy (a BC init) and, with `CurriculumOptions.imitation_coef`, keeps an imitation loss
on each stage's own demonstrations during PPO. Every env step of the replays is charged to the
stage's budget, so a learner that imitates trains on as many env steps as one that does not.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gymwright.engineer.mixture import Mixture
from gymwright.errors import GymwrightError
from gymwright.train.imitation import Demos

Demonstrator = Callable[[Any, dict[str, Any], int, int], Demos]
"""(spec, one config's params, episodes, first reset seed) -> demonstrations of that config"""


def demonstrate(spec: Any, mixture: Mixture, demonstrator: Demonstrator, episodes: int, seed: int,
                path: Path) -> Demos:
    """`episodes` demonstrations of `mixture` (per bucket by share, at least one each), saved to `path`."""
    if episodes < len(mixture.buckets):
        raise GymwrightError(f"{episodes} demonstration episodes for a mixture of {len(mixture.buckets)} buckets",
                             path="demo_episodes", hint="give at least one episode per bucket")
    parts = [demonstrator(spec, dict(b.params), int(n), seed + 100_000 * i)
             for i, (b, n) in enumerate(zip(mixture.buckets, mixture.counts(episodes), strict=True))]
    demos = Demos(np.concatenate([d.obs for d in parts]), np.concatenate([d.masks for d in parts]),
                  np.concatenate([d.actions for d in parts]), sum(d.env_steps for d in parts),
                  sum(d.episodes for d in parts))
    demos.save(path)
    return demos
