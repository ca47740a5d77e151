"""Baselines from unsupervised environment design, over an experiment's `ConfigSpace`.

Both use exactly the levels the engineers may use (every structural value x every knob value),
one bucket per level, in the same curriculum runner and budget:

- `DomainRandomization`: uniform over the levels, every stage (uniform domain randomization,
  Tobin et al. 2017).
- `PrioritizedReplay`: Prioritized Level Replay (Jiang, Grefenstette and Rocktaschel 2021,
  "Prioritized Level Replay", ICML) over the finite level set. A level's score is its *positive
  value loss*, the mean of max(GAE advantage, 0) over its acting steps in the stage's training
  (the last half of the stage's updates; `config{i}/positive_advantage` in the training log).
  The replay distribution is `P = (1 - rho) P_S + rho P_C`: `P_S` rank prioritization,
  `h(S_i) = 1 / rank(S_i)`, `P_S ~ h^(1/beta)`; `P_C` staleness, `(c - C_i) / sum_j (c - C_j)`
  with `c` the stage and `C_i` the last stage level i was scored. Differences from the paper:
  the distribution is updated once per stage (the paper: after every episode) from a few episodes
  per level, so the temperature is `beta = 1` (the paper's 0.1 would put nearly all of a stage on
  the one level whose noisy score ranked first; 0.3 still gave it 79% in a trial); every level keeps
  at least one env copy, so all are scored every stage and staleness is uniform; `rho = 0.1`
  as in the paper. The first stage is uniform (no level scored yet).

Neither reads per-bucket evaluations or knob effects: only the training log.

Over a space with more levels than `per_stage` (a space spanning a spec's declared ranges holds
thousands), a stage cannot give every level an env copy: domain randomization then draws
`per_stage` levels uniformly, afresh every stage; PLR keeps a buffer of the levels it has scored
and fills each stage with its replay distribution's top half of `per_stage` from the buffer
(sampled without replacement) and the other half drawn fresh and uniformly (the paper's replay
probability 0.5, decided per stage instead of per episode).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gymwright.engineer.engineers import StageProposal
from gymwright.engineer.evidence import StageEvidence
from gymwright.engineer.mixture import Bucket, Mixture
from gymwright.engineer.space import ConfigSpace


def level_mixture(space: ConfigSpace, shares: list[float] | None = None) -> Mixture:
    """Every level of the space as a bucket (named by all its levers), equal shares by default."""
    levels = space.levels()
    shares = shares or [1.0] * len(levels)
    return Mixture([Bucket(p, s, level_label(space, p)) for p, s in zip(levels, shares, strict=True)])


def level_label(space: ConfigSpace, params: dict[str, Any]) -> str:
    """A level's whole name (`ConfigSpace.level_label`: every lever, structural first)."""
    return space.level_label(params)


PER_STAGE = 64
"""levels a stage of a sampler trains on at most (every level of a smaller space)"""


def sampled(space: ConfigSpace, levels: list[dict[str, Any]], shares: list[float] | None = None) -> Mixture:
    """A mixture of the given levels, named by all their levers, equal shares by default."""
    shares = shares or [1.0] * len(levels)
    return Mixture([Bucket(dict(p), s, level_label(space, p)) for p, s in zip(levels, shares, strict=True)])


class DomainRandomization:
    name = "dr"
    evaluates_buckets = False
    reads_knob_effects = False

    def __init__(self, space: ConfigSpace, per_stage: int = PER_STAGE, seed: int = 0) -> None:
        self.space, self.per_stage = space, per_stage
        self.levels = space.levels()
        self.rng = np.random.default_rng(seed)

    def initial(self) -> Mixture:
        if len(self.levels) <= self.per_stage:
            return level_mixture(self.space)
        picked = self.rng.choice(len(self.levels), self.per_stage, replace=False)
        return sampled(self.space, [self.levels[i] for i in sorted(picked)])

    def propose_stage(self, evidence: StageEvidence) -> StageProposal:
        n = len(self.levels)
        how = f"over {n} levels" if n <= self.per_stage else f"over {n} levels, {self.per_stage} drawn for the stage"
        return StageProposal(self.initial(), f"uniform domain randomization {how}", self.name)


class PrioritizedReplay:
    name = "plr"
    evaluates_buckets = False
    reads_knob_effects = False

    def __init__(self, space: ConfigSpace, beta: float = 1.0, rho: float = 0.1, per_stage: int = PER_STAGE,
                 seed: int = 0) -> None:
        self.space, self.beta, self.rho = space, beta, rho
        self.last_scored: dict[str, int] = {}
        self.fresh = DomainRandomization(space, per_stage, seed)
        self.buffer: dict[str, tuple[dict[str, Any], float]] = {}  # a large space's scored levels: params, score

    def initial(self) -> Mixture:
        return self.fresh.initial()

    def propose_stage(self, evidence: StageEvidence) -> StageProposal:
        if len(self.fresh.levels) > self.fresh.per_stage:
            return self._propose_from_buffer(evidence)
        labels = [b.label for b, _ in evidence.buckets]
        scores = np.array([e.train_stats.get("positive_advantage", np.nan) for _, e in evidence.buckets])
        for label, s in zip(labels, scores, strict=True):
            if np.isfinite(s):
                self.last_scored[label] = evidence.stage
        scores = np.where(np.isfinite(scores), scores, np.nanmax(scores) if np.isfinite(scores).any() else 0.0)
        p = replay_distribution(scores, [self.last_scored.get(x, -1) for x in labels], evidence.stage,
                                self.beta, self.rho)
        by_label = dict(zip(labels, p, strict=True))
        shares = [by_label.get(level_label(self.space, lv), 0.0) for lv in self.space.levels()]
        top = np.argsort(-p)[:3]
        why = (f"PLR (positive value loss, rank prioritization beta {self.beta:.2g}, staleness rho {self.rho:.2g}): most data to "
                + ", ".join(f"{labels[i]} {p[i]:.2f} (score {scores[i]:.4f})" for i in top))
        return StageProposal(level_mixture(self.space, shares), why, self.name)


    def _propose_from_buffer(self, evidence: StageEvidence) -> StageProposal:
        """Half the stage replayed from the scored levels by the replay distribution, half fresh."""
        for b, e in evidence.buckets:
            score = e.train_stats.get("positive_advantage", np.nan)
            if np.isfinite(score):
                self.buffer[b.label] = (dict(b.params), float(score))
                self.last_scored[b.label] = evidence.stage
        labels = list(self.buffer)
        scores = np.array([self.buffer[x][1] for x in labels])
        p = replay_distribution(scores, [self.last_scored.get(x, -1) for x in labels], evidence.stage, self.beta,
                                self.rho)
        half = min(len(labels), self.fresh.per_stage // 2)
        replayed = list(self.fresh.rng.choice(len(labels), half, replace=False, p=p)) if half else []
        chosen = {labels[i]: self.buffer[labels[i]][0] for i in replayed}
        for lv in self.fresh.rng.permutation(len(self.fresh.levels)):
            if len(chosen) >= self.fresh.per_stage:
                break
            chosen.setdefault(level_label(self.space, self.fresh.levels[lv]), self.fresh.levels[lv])
        why = (f"PLR over {len(self.fresh.levels)} levels: {half} replayed from {len(labels)} scored (positive value loss, "
               f"beta {self.beta:.2g}, rho {self.rho:.2g}), {len(chosen) - half} fresh")
        return StageProposal(sampled(self.space, list(chosen.values())), why, self.name)


def replay_distribution(scores: np.ndarray, last_seen: list[int], now: int, beta: float, rho: float) -> np.ndarray:
    """PLR's replay distribution `(1 - rho) P_S + rho P_C` (see the module doc)."""
    ranks = np.empty(len(scores))
    ranks[np.argsort(-scores, kind="stable")] = np.arange(1, len(scores) + 1)
    h = (1.0 / ranks) ** (1.0 / beta)
    p_s = h / h.sum()
    stale = now - np.asarray(last_seen, dtype=float)
    p_c = stale / stale.sum() if stale.sum() > 0 else np.full(len(scores), 1.0 / len(scores))
    return (1 - rho) * p_s + rho * p_c
