"""The batch env as the trainer uses it, the rollout buffers, and GAE.

Buffers have the layout (steps, copies, agents, ...) and are allocated once per run. An agent
with no legal action at a step (turn-based games) plays -1; GAE runs on each agent's own
timeline (its acting steps, with the rewards in between summed onto them), and the waiting steps
stay out of the policy loss.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from gymwright.codemode.source import batch_env as code_batch_env
from gymwright.codemode.source import is_code_source
from gymwright.compile.batch import compile_batch
from gymwright.compile.build import as_spec, check
from gymwright.errors import GymwrightError
from gymwright.spec.model import EnvSpec
from gymwright.train.padded import PaddedBatchEnv, agent_groups

MAX_ROLLOUT_BYTES = 8 * 2**30  # one update's trajectories (observations, masks, actions, values...)


def spread(params: list[dict[str, Any]], size: int) -> list[dict[str, Any]] | dict[str, Any]:
    """Configs over `size` copies in equal contiguous blocks (copy b gets params[b * K // size])."""
    if len(params) == 1:
        return params[0]
    if len(params) > size:
        raise GymwrightError(f"{len(params)} param configs do not fit in a batch of {size} copies",
                             hint="raise --num-envs or pass fewer configs")
    return [params[b * len(params) // size] for b in range(size)]


def config_of_copy(n_configs: int, size: int, copies: list[int] | None = None) -> np.ndarray:
    """The config index of each of `size` copies: `copies[i]` copies of config i in order, or
    equal contiguous blocks (as `spread`)."""
    if copies is None:
        return np.arange(size) * n_configs // size
    return np.repeat(np.arange(n_configs), copies)


def make_env(spec: Any, params: list[dict[str, Any]], size: int) -> Any:
    """A batch env of `size` copies; its episode results carry `final_obs` and `final_state` (the
    last observation and global state of a finished episode, for bootstrapping at truncation).
    Configs whose structural params differ (e.g. map sizes) give a `MixedBatchEnv`, which reports
    `final_state` only where its groups' states have one width. Configs with different agent
    counts give a `PaddedBatchEnv` (one batch per count, padded to the largest; IPPO only).
    A code-mode module (a path ending in .py) gives a `SandboxedBatchEnv`: its copies run in
    sandbox workers, its params are its class's keyword arguments and it has no global state (IPPO only)."""
    if is_code_source(spec):
        return code_batch_env(spec, params, size)
    per_copy = spread(params, size)
    try:
        spec = as_spec(spec)  # parsed once for every build below
        counts = _agent_counts(spec, per_copy) if isinstance(per_copy, list) else []
        if len(set(counts)) > 1:
            groups = [(c, compile_batch(spec, [per_copy[b] for b in c], batch_size=len(c)))
                      for c in agent_groups(counts).values()]
            return PaddedBatchEnv(groups)
        return compile_batch(spec, per_copy, batch_size=size)
    except ValueError as e:  # bad params, reported by the generated module
        raise GymwrightError(str(e), path="params") from e


def _agent_counts(spec: EnvSpec, per_copy: list[dict[str, Any]]) -> list[int]:
    """The number of agents of each copy's config, from the checked spec of each distinct config
    (no module is generated: a mixture of 48 levels checks 48 configs in a fraction of a second)."""
    known: dict[str, int] = {}
    for p in per_copy:
        key = repr(sorted(p.items()))
        if key not in known:
            known[key] = check(spec, dict(p)).n_agents
    return [known[repr(sorted(p.items()))] for p in per_copy]


def state_dim(benv: Any, centralized: bool) -> int:
    """The width of `benv.state()` (a reset env), the input of a centralized critic.

    A mixed batch whose groups' states differ in width has no one state: an IPPO run, which never
    reads it, gets 0; a MAPPO run gets the env's error (use IPPO, or configs of one state shape).
    """
    dims = getattr(benv, "state_dims", None)
    if dims is not None and not centralized:
        widths = dims()
        return widths[0] if len(set(widths)) == 1 else 0
    return int(benv.state().shape[1])


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
    def allocate(cls, T: int, B: int, N: int, D: int, A: int, S: int | None,
                 device: torch.device | str = "cpu") -> Rollout:
        """The buffers, refused before anything is allocated when they would pass MAX_ROLLOUT_BYTES."""
        size = T * B * (N * (4 * D + A + 8 + 4 * 4 + 1) + 4 * (S or 0))
        if size > MAX_ROLLOUT_BYTES:
            raise GymwrightError(f"the rollout buffers would take {size / 2**30:.1f} GiB ({T} steps x {B} copies x "
                                 f"{N} agents x {D} observation values and {A} actions); the limit is "
                                 f"{MAX_ROLLOUT_BYTES / 2**30:.0f} GiB", path="num_envs", value=size,
                                 hint="lower --num-envs or --rollout-len, or observe fewer values per agent")
        f = functools.partial(torch.zeros, device=device)
        return cls(
            obs=f(T, B, N, D), masks=f(T, B, N, A, dtype=torch.bool),
            state=f(T, B, S) if S is not None else None,
            actions=f(T, B, N, dtype=torch.int64), logp=f(T, B, N), values=f(T, B, N),
            rewards=f(T, B, N), dones=f(T, B, N, dtype=torch.bool), boot=f(T, B, N),
        )


def gae(rewards: torch.Tensor, values: torch.Tensor, last_value: torch.Tensor, dones: torch.Tensor,
        boot: torch.Tensor, gamma: float, lam: float,
        acted: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalized advantage estimation on each agent's own timeline; returns (advantages, returns).

    All tensors are (T, ...) (the trainer's are (T, B, N)); `acted[t]` is true where the agent
    played an action at step t (None: every agent acts every step, plain GAE). An agent's
    trajectory is its acting steps only, as in a per-agent (AEC) view of the game: the reward of
    acting step t is the discounted sum of what the agent received from t up to its next acting
    step s, `r_t + gamma r_{t+1} + ... + gamma^(s-1-t) r_{s-1}`, and it bootstraps from
    `gamma^(s-t) V(s)`: the discount is per env step elapsed, so `gamma` means the same in
    turn-based and simultaneous games. Lambda chains acting steps:
    `A_t = delta_t + gamma^(s-t) lam A_s`. The values of the steps where it waited are never
    bootstrapped from inside the rollout (only at its end, below).

    Where an episode ended at step e (`dones[e]`), the bootstrap is `boot[e]` (the value of its
    final observation if it was truncated, 0 if it terminated) one step after e, and nothing
    flows back across the boundary: the next observation belongs to the copy's next episode.
    Past the rollout's end the bootstrap is `last_value` (the value of the observation after the
    last step, whether or not the agent acts there).

    Rows where the agent waited get a value target too, the same return seen from that step
    (its rewards up to the next acting step s, then `V(s) + A_s`), so the critic can value a
    waiting agent at a rollout's end or a truncation; their advantages are not used.
    """
    T = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    if acted is None:
        acted = torch.ones_like(rewards, dtype=torch.bool)
    # the tail after step t: reward to the next acting step s (or episode end), gamma^(s - t - 1),
    # and V(s), A_s (A_s = 0 at an episode's end or past the rollout)
    acc = torch.zeros_like(last_value)
    disc = torch.ones_like(last_value)
    next_value = last_value.clone()
    next_adv = torch.zeros_like(last_value)
    for t in reversed(range(T)):
        done = dones[t]
        acc = torch.where(done, 0.0, acc)
        disc = torch.where(done, 1.0, disc)
        next_value = torch.where(done, boot[t], next_value)
        next_adv = torch.where(done, 0.0, next_adv)
        a = acted[t]
        to_next = rewards[t] + gamma * (acc + disc * next_value)
        adv[t] = to_next - values[t] + gamma * disc * torch.where(a, lam, 1.0) * next_adv
        acc = torch.where(a, 0.0, rewards[t] + gamma * acc)
        disc = torch.where(a, 1.0, gamma * disc)
        next_value = torch.where(a, values[t], next_value)
        next_adv = torch.where(a, adv[t], next_adv)
    return adv, adv + values
