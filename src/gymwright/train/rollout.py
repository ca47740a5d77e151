"""The batch env as the trainer uses it, the rollout buffers, and GAE.

Buffers have the layout (steps, copies, agents, ...) and are allocated once per run. An agent
with no legal action at a step (turn-based games) plays -1; that step stays in its
trajectory (its value is a bootstrap target of the step before) but not in the policy loss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from gymwright.compile.batch import compile_batch
from gymwright.errors import GymwrightError


def spread(params: list[dict[str, Any]], size: int) -> list[dict[str, Any]] | dict[str, Any]:
    """Configs over `size` copies in equal contiguous blocks (copy b gets params[b * K // size])."""
    if len(params) == 1:
        return params[0]
    if len(params) > size:
        raise GymwrightError(f"{len(params)} param configs do not fit in a batch of {size} copies",
                             hint="raise --num-envs or pass fewer configs")
    return [params[b * len(params) // size] for b in range(size)]


def config_of_copy(n_configs: int, size: int) -> np.ndarray:
    return np.arange(size) * n_configs // size


def make_env(spec: Any, params: list[dict[str, Any]], size: int) -> Any:
    """A batch env of `size` copies whose episode results also carry `final_state` (for MAPPO).

    The batch backend reports the last observation of a finished episode (`final_obs`) but not
    its global state; the env's `_finish` (called before a copy auto-resets) is wrapped on this
    instance to add it, so a centralized critic can bootstrap at truncation.
    """
    try:
        benv = compile_batch(spec, spread(params, size), batch_size=size)
    except ValueError as e:  # bad params, reported by the generated module
        raise GymwrightError(str(e), path="params") from e
    finish = getattr(benv, "_finish", None)
    if finish is not None:
        def finish_with_state(idx: np.ndarray) -> dict[str, Any]:
            out = finish(idx)
            out.setdefault("final_state", benv.state()[idx])
            return out

        benv._finish = finish_with_state
    return benv


@dataclass
class Rollout:
    """One update's trajectories: (T, B, N, ...) tensors, written step by step in place."""

    obs: torch.Tensor  # float (T, B, N, D)
    masks: torch.Tensor  # bool (T, B, N, A)
    state: torch.Tensor | None  # float (T, B, S), for centralized critics
    actions: torch.Tensor  # int64 (T, B, N), -1 = no legal action
    logp: torch.Tensor  # float (T, B, N)
    values: torch.Tensor  # float (T, B, N), denormalized
    rewards: torch.Tensor  # float (T, B, N)
    dones: torch.Tensor  # bool (T, B, N): the episode ended at this step
    boot: torch.Tensor  # float (T, B, N): value of the final obs where the episode was truncated

    @classmethod
    def allocate(cls, T: int, B: int, N: int, D: int, A: int, S: int | None) -> Rollout:
        f = torch.zeros
        return cls(
            obs=f(T, B, N, D), masks=f(T, B, N, A, dtype=torch.bool),
            state=f(T, B, S) if S is not None else None,
            actions=f(T, B, N, dtype=torch.int64), logp=f(T, B, N), values=f(T, B, N),
            rewards=f(T, B, N), dones=f(T, B, N, dtype=torch.bool), boot=f(T, B, N),
        )


def gae(rewards: torch.Tensor, values: torch.Tensor, last_value: torch.Tensor, dones: torch.Tensor,
        boot: torch.Tensor, gamma: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalized advantage estimation over (T, ...) tensors; returns (advantages, returns).

    Where an episode ended at step t (`dones[t]`), the bootstrap value is `boot[t]` (the value
    of its final observation if it was truncated, 0 if it terminated) instead of the value of the
    next observation, which belongs to the copy's next episode; the advantage does not flow back
    across the boundary.
    """
    T = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    running = torch.zeros_like(last_value)
    for t in reversed(range(T)):
        next_value = last_value if t == T - 1 else values[t + 1]
        next_value = torch.where(dones[t], boot[t], next_value)
        delta = rewards[t] + gamma * next_value - values[t]
        running = delta + gamma * lam * (~dones[t]) * running
        adv[t] = running
    return adv, adv + values
