"""Demonstrations of a stage's mixture, for a curriculum whose learner imitates as it trains.

A demonstrator (`Demonstrator`: for MAPF, a planner's joint plans replayed through the env, as
`gymwright.curriculum.mapf_demos` makes them) plays the stage's configs; its episodes are spread over
the mixture's buckets by share, like the env copies. The curriculum clones them into the first
stage's policy (a BC init) and, with `CurriculumOptions.imitation_coef`, keeps an imitation loss
on each stage's own demonstrations during PPO. Every env step of the replays is charged to the
stage's budget, so a learner that imitates trains on as many env steps as one that does not.

With a relabeller (`Relabeller`: DAgger, Ross et al. 2011) the stages after the first imitate the
previous stage's policy's own play of their mixture, labelled by the expert at every state it
visited (for MAPF: CBS from the walkers' current cells), added to the demonstrations the policy
was trained on so far (the aggregate of its lineage's stages). Only the new episodes' env steps
are charged to the stage.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gymwright.engineer.mixture import Mixture
from gymwright.errors import GymwrightError
from gymwright.train.imitation import Demos

DEMO_SEED = 5_000_000
"""First reset seed of demonstrations (training draws from 0, validation from 700,000, held-out
from 900,000): the curriculum's stage k of seed s starts at DEMO_SEED + 10,000 (s + k)"""

Demonstrator = Callable[[Any, dict[str, Any], int, int], Demos]
"""(spec, one config's params, episodes, first reset seed) -> demonstrations of that config"""
Relabeller = Callable[[Any, dict[str, Any], int, int, str], Demos]
"""(spec, one config's params, episodes, first reset seed, checkpoint) -> that checkpoint's policy's
play of the config, labelled with the expert's actions (DAgger)"""


def demonstrate(spec: Any, mixture: Mixture, demonstrator: Demonstrator, episodes: int, seed: int,
                path: Path) -> Demos:
    """`episodes` demonstrations of `mixture` (per bucket by share, at least one each), saved to `path`."""
    demos = joined([demonstrator(spec, dict(params), n, s) for params, n, s in _per_bucket(mixture, episodes, seed)])
    demos.save(path)
    return demos


def relabel(spec: Any, mixture: Mixture, relabeller: Relabeller, episodes: int, seed: int, checkpoint: str,
            earlier: Demos | None, path: Path) -> tuple[Demos, int]:
    """`episodes` episodes of `mixture` played by `checkpoint`'s policy and labelled by the expert
    (per bucket by share), joined to `earlier` and saved to `path`: (the aggregate, the new env steps)."""
    new = joined([relabeller(spec, dict(params), n, s, checkpoint) for params, n, s in _per_bucket(mixture, episodes, seed)])
    demos = joined([earlier, new]) if earlier is not None else new
    demos.save(path)
    return demos, new.env_steps


def _per_bucket(mixture: Mixture, episodes: int, seed: int) -> list[tuple[dict[str, Any], int, int]]:
    """(params, episodes, first reset seed) of each bucket: episodes by share, at least one each."""
    if episodes < len(mixture.buckets):
        raise GymwrightError(f"{episodes} demonstration episodes for a mixture of {len(mixture.buckets)} buckets",
                             path="demo_episodes", hint="give at least one episode per bucket")
    return [(dict(b.params), int(n), seed + 100_000 * i)
            for i, (b, n) in enumerate(zip(mixture.buckets, mixture.counts(episodes), strict=True))]


def joined(parts: list[Demos]) -> Demos:
    """One set of demonstrations holding every part's samples, env steps and episodes."""
    return Demos(np.concatenate([d.obs for d in parts]), np.concatenate([d.masks for d in parts]),
                 np.concatenate([d.actions for d in parts]), sum(d.env_steps for d in parts),
                 sum(d.episodes for d in parts))
