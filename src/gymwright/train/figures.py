"""The figures of one PPO update, as `train.jsonl` logs them: throughput and time, the episodes
that ended (returns per role, metrics, per config of a mixed batch), reward terms, losses and the
value function's explained variance. `Episodes` gathers them during the rollout; `Copies` says
which config of the run each env copy plays."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from gymwright.train.rollout import config_of_copy


@dataclass(frozen=True)
class Copies:
    """Which config of the run's params each env copy plays (`TrainConfig.copies`, or equal blocks)."""

    of_copy: np.ndarray  # (B,): the config index of each copy
    n_configs: int

    @classmethod
    def of(cls, params: list[dict[str, Any]], num_envs: int, copies: list[int] | None) -> Copies:
        return cls(config_of_copy(len(params), num_envs, copies), len(params))

    def positive_advantage(self, advantages: torch.Tensor, acted: torch.Tensor) -> dict[str, float]:
        """Per config of a list, the mean positive advantage over its acting steps: the *positive
        value loss* that Prioritized Level Replay (Jiang et al. 2021) scores a level by."""
        if self.n_configs <= 1:
            return {}
        pos = (advantages.clamp(min=0.0) * acted).sum(dim=(0, 2)).cpu().numpy()  # per copy
        n = acted.sum(dim=(0, 2)).cpu().numpy()
        sums, counts = np.bincount(self.of_copy, pos, self.n_configs), np.bincount(self.of_copy, n, self.n_configs)
        return {f"config{c}/positive_advantage": float(sums[c] / counts[c]) for c in range(self.n_configs) if counts[c] > 0}


@dataclass
class Episodes:
    """What a rollout's steps reported: the reward terms of every step (summed) and the episodes
    that ended (returns, lengths, configs, metrics)."""

    returns: list[np.ndarray] = field(default_factory=list)  # (E, N) per step with ended episodes
    lengths: list[np.ndarray] = field(default_factory=list)
    configs: list[np.ndarray] = field(default_factory=list)
    metrics: dict[str, list[np.ndarray]] = field(default_factory=dict)
    terms: dict[str, dict[str, float]] = field(default_factory=dict)  # role -> term -> sum of step means

    def add(self, infos: dict[str, Any], copies: Copies) -> None:
        """One step's reward terms and its ended episodes."""
        for role, terms in infos["reward_terms"].items():
            sums = self.terms.setdefault(role, {})
            for name, x in terms.items():
                sums[name] = sums.get(name, 0.0) + float(np.mean(x))
        if "done_idx" in infos:
            self.returns.append(infos["episode_return"])
            self.lengths.append(infos["episode_length"])
            self.configs.append(copies.of_copy[infos["done_idx"]])
            for name, x in infos["metrics"].items():
                self.metrics.setdefault(name, []).append(x)

    def stats(self, roles: list[Any], n_configs: int, fixed: np.ndarray | None = None) -> dict[str, float]:
        """Means over the episodes that ended in this rollout (nothing if none did). With NPCs
        (`fixed`: bool per agent) also `trained/return/{role}` and `npc/return/{role}`, the means over
        the role's trained and fixed agents (`charts/return/{role}` stays the mean over all of them)."""
        if not self.returns:
            return {"charts/episodes": 0}
        ret = np.concatenate(self.returns)  # (E, N)
        row: dict[str, float] = {"charts/episodes": int(len(ret)),
                                 "charts/episode_length": float(np.concatenate(self.lengths).mean())}
        for r in roles:
            row[f"charts/return/{r.name}"] = float(ret[:, r.agents].mean())
            if fixed is not None:
                for side, cols in (("trained", ~fixed[r.agents]), ("npc", fixed[r.agents])):
                    if cols.any():
                        row[f"{side}/return/{r.name}"] = float(ret[:, r.agents][:, cols].mean())
        per_episode = {name: np.concatenate(xs) for name, xs in self.metrics.items()}
        for name, x in per_episode.items():
            row[f"metrics/{name}"] = float(x.mean())
        if n_configs > 1:
            row.update(_per_config(ret, np.concatenate(self.configs), per_episode, roles, n_configs))
        return row

    def term_means(self, steps: int) -> dict[str, float]:
        """Each reward term's mean per step of the rollout (`steps` long)."""
        return {f"reward_terms/{role}/{name}": total / steps for role, sums in self.terms.items()
                for name, total in sums.items()}


def _per_config(ret: np.ndarray, config: np.ndarray, per_episode: dict[str, np.ndarray], roles: list[Any],
                n_configs: int) -> dict[str, float]:
    """Returns and metrics per config of the list (`config`: each episode's config index, by global copy)."""
    row = {}
    for c in range(n_configs):
        mine = config == c
        if mine.any():
            for r in roles:
                row[f"config{c}/return/{r.name}"] = float(ret[mine][:, r.agents].mean())
            for name, x in per_episode.items():
                row[f"config{c}/metrics/{name}"] = float(x[mine].mean())
    return row


def loss_means(stats: dict[str, list[float]]) -> dict[str, float]:
    """`losses/{name}`: the mean over the update's minibatches and roles (0 where none had one)."""
    return {f"losses/{name}": float(np.mean(xs)) if xs else 0.0 for name, xs in stats.items()}


def explained_variance(returns: torch.Tensor, values: torch.Tensor, fixed: torch.Tensor) -> float:
    """1 - Var(returns - values) / Var(returns) over the trained agents (0 where returns do not vary)."""
    y, v = returns[..., ~fixed], values[..., ~fixed]
    var_y = y.var()
    return float(1 - (y - v).var() / var_y) if var_y > 0 else 0.0
