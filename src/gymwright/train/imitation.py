"""Behaviour cloning: a policy that starts from demonstrations, for `TrainConfig.init_from`.

`clone` fits the shared actor of a one-role spec to (observation, action mask, action) samples by
cross-entropy on the masked logits (the same `RoleNet.logits` PPO samples from), and writes the
result as a fresh checkpoint of the spec (fresh critic and value normalizer, update 0), so a PPO
run warm-starts from it. Where the demonstrations come from (a planner replayed through the env)
is the caller's business: `Demos` only holds the samples and the env steps they cost, and
saves them as an .npz for `TrainConfig.demos` (PPO that keeps an imitation loss on them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gymwright.errors import GymwrightError
from gymwright.train import checkpoint as ck
from gymwright.train.carryover import _child_roles
from gymwright.train.normalize import ValueNorm
from gymwright.train.policy import ActorCritic


@dataclass
class Demos:
    """Per-agent samples of demonstrated play: obs (n, D) float32, masks (n, A) bool, actions (n,) int64."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    env_steps: int = 0
    """env steps spent making them (copies x steps, as `TrainConfig.total_steps` counts)"""
    episodes: int = 0

    def __post_init__(self) -> None:
        n = len(self.actions)
        if len(self.obs) != n or len(self.masks) != n:
            raise GymwrightError(f"demos: {len(self.obs)} observations, {len(self.masks)} masks, {n} actions",
                                 hint="give one observation and one mask per action")
        if n and not self.masks[np.arange(n), self.actions].all():
            bad = int(np.flatnonzero(~self.masks[np.arange(n), self.actions])[0])
            raise GymwrightError(f"demos: sample {bad} takes action {int(self.actions[bad])}, which its mask forbids",
                                 hint="record the action the env was actually given, with the mask it offered")

    def save(self, path: str | Path) -> Path:
        """Write the samples to `path` (.npz, atomically): what `TrainConfig.demos` reads."""
        from gymwright.atomic import atomic_writer

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(path) as handle:
            np.savez(handle, obs=self.obs, masks=self.masks, actions=self.actions,
                     counts=np.array([self.env_steps, self.episodes], dtype=np.int64))
        return path

    @classmethod
    def load(cls, path: str | Path) -> Demos:
        """The demonstrations `save` wrote to `path`; a clear error for a missing or foreign file."""
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                arrays = {k: data[k] for k in ("obs", "masks", "actions", "counts")}
        except (OSError, ValueError, KeyError) as e:
            raise GymwrightError(f"demos {path}: not a demonstrations file ({type(e).__name__}: {e})", path="demos",
                                 hint="give an .npz written by Demos.save (obs, masks, actions, counts)") from e
        env_steps, episodes = (int(x) for x in arrays["counts"])
        return cls(arrays["obs"].astype(np.float32), arrays["masks"].astype(bool), arrays["actions"].astype(np.int64),
                   env_steps, episodes)


@dataclass
class CloneResult:
    checkpoint: str
    losses: list[float]
    """mean cross-entropy per epoch"""
    accuracy: float
    """share of the samples whose argmax action is the demonstrated one, after cloning"""


def model_for(spec: Any, params: dict[str, Any], hidden: tuple[int, ...]) -> tuple[ActorCritic, list[Any], int, int]:
    """A fresh IPPO network of `spec` (agent index off, one shared actor), its roles, agents and state width."""
    roles, n_agents, s_dim = _child_roles(spec, params, False)
    if len(roles) != 1:
        raise GymwrightError(f"behaviour cloning needs a spec with one role; this one has {[r.name for r in roles]}",
                             hint="clone a one-role spec, or train it with PPO from scratch")
    return ActorCritic(roles, s_dim, tuple(hidden), False, "relu", False), roles, n_agents, s_dim


def loss_and_accuracy(model: ActorCritic, demos: Demos) -> tuple[float, float]:
    """Mean masked cross-entropy and argmax accuracy of `model`'s actor on `demos`."""
    net = model.nets[0]
    with torch.no_grad():
        logits = net.logits(torch.from_numpy(demos.obs), torch.from_numpy(demos.masks))
        act = torch.from_numpy(demos.actions)
        loss = torch.nn.functional.cross_entropy(logits, act).item()
        return loss, float((logits.argmax(-1) == act).float().mean())


def clone(spec: Any, params: dict[str, Any], demos: Demos, out: str | Path, *, hidden: tuple[int, ...] = (64, 64),
          epochs: int = 20, lr: float = 1e-3, batch: int = 512, seed: int = 0) -> CloneResult:
    """Fit a fresh actor of `spec` to `demos` and write it as a checkpoint at `out` (for `init_from`)."""
    torch.manual_seed(seed)
    model, roles, n_agents, s_dim = model_for(spec, params, hidden)
    net = model.nets[0]
    obs, masks, acts = (torch.from_numpy(x) for x in (demos.obs, demos.masks, demos.actions))
    optimizer = torch.optim.Adam(net.actor.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(epochs):
        order, total = torch.randperm(len(acts), generator=gen), 0.0
        for idx in order.split(batch):
            loss = torch.nn.functional.cross_entropy(net.logits(obs[idx], masks[idx]), acts[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        losses.append(total / max(1, len(acts)))
    sha, name = ck.spec_identity(spec)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    path = ck.save(Path(out), {
        "spec_hash": sha, "spec_name": name, "params": [dict(params)],
        "roles": [tuple(vars(r).values()) for r in roles], "n_agents": n_agents, "state_dim": s_dim,
        "algo": "ippo", "hidden": list(hidden), "activation": "relu", "agent_index": False, "config": {},
        "update": 0, "env_steps": 0, "model": model.state_dict(), "value_norms": [ValueNorm().state_dict()],
        "cloned_from": {"samples": len(acts), "episodes": demos.episodes, "env_steps": demos.env_steps}})
    return CloneResult(str(path), losses, loss_and_accuracy(model, demos)[1])


# ---------------------------------------------------------------------------- PPO's imitation loss
class ImitationLoss:
    """PPO's imitation loss (`TrainConfig.demos`, weighted by `imitation_coef`): the cross-entropy
    of the shared actor's masked logits on a random minibatch of the demonstrated samples."""

    def __init__(self, obs: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor, coef: float) -> None:
        self.obs, self.masks, self.actions, self.coef = obs, masks, actions, coef

    @classmethod
    def of(cls, cfg: Any, roles: list[Any], obs_dim: int, n_actions: int, device: torch.device) -> ImitationLoss | NoImitation:
        """`cfg.demos` as tensors, checked against the spec's one role; `NoImitation` without demos."""
        if cfg.demos is None:
            return NoImitation()
        demos = Demos.load(cfg.demos)
        if len(roles) != 1:
            raise GymwrightError(f"demos: an imitation loss needs a spec with one role; this one has {[r.name for r in roles]}",
                                 path="demos", hint="train a one-role spec with demos, or drop demos")
        if demos.obs.shape[1:] != (obs_dim,) or demos.masks.shape[1:] != (n_actions,) or not len(demos.actions):
            raise GymwrightError(f"demos {cfg.demos}: {len(demos.actions)} samples of {demos.obs.shape[1:]} observations and "
                                 f"{demos.masks.shape[1:]} masks; this spec's are ({obs_dim},) and ({n_actions},)",
                                 path="demos", hint="record the demonstrations with the same spec and params (the view radius "
                                                    "sets the observation width)")
        return cls(torch.from_numpy(demos.obs).to(device), torch.from_numpy(demos.masks).to(device),
                   torch.from_numpy(demos.actions).to(device), cfg.imitation_coef)

    def added(self, loss: torch.Tensor, net: Any, valid: torch.Tensor, stats: dict[str, list[float]]) -> torch.Tensor:
        """`loss` plus the weighted imitation loss on as many samples as the role's minibatch has
        valid places (at least 64); the loss goes to `stats["imitation"]`."""
        size = max(64, int(valid.sum()))
        idx = torch.randint(len(self.actions), (min(size, len(self.actions)),), device=self.actions.device)
        bc = torch.nn.functional.cross_entropy(net.logits(self.obs[idx], self.masks[idx]), self.actions[idx])
        stats.setdefault("imitation", []).append(bc.item())
        return loss + self.coef * bc


class NoImitation:
    """A run without demonstrations: the loss stays PPO's own."""

    def added(self, loss: torch.Tensor, net: Any, valid: torch.Tensor, stats: dict[str, list[float]]) -> torch.Tensor:
        return loss
