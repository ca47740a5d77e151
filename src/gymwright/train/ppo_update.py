"""PPO's update: the clipped policy loss, the value loss on normalized targets and the entropy
bonus, per role, over `epochs` passes of `minibatches` minibatches of the rollout; a feature of
the loss (the imitation loss) is an object the minibatch calls (`gymwright.train.imitation`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from gymwright.train.config import TrainConfig
from gymwright.train.imitation import ImitationLoss, NoImitation
from gymwright.train.normalize import ValueNorm
from gymwright.train.partners import PARTNER
from gymwright.train.policy import ActorCritic
from gymwright.train.rollout import Rollout

STATS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")


@dataclass(frozen=True)
class Batch:
    """The rollout flattened over steps and copies: (T*B, N, ...) per sample."""

    obs: torch.Tensor
    masks: torch.Tensor
    state: torch.Tensor | None
    actions: torch.Tensor
    logp: torch.Tensor
    advantages: torch.Tensor
    targets: torch.Tensor  # normalized returns (the value targets)


def update(model: ActorCritic, optimizer: torch.optim.Optimizer, norms: list[ValueNorm], trained: list[torch.Tensor],
           buf: Rollout, advantages: torch.Tensor, returns: torch.Tensor, cfg: TrainConfig,
           imitation: ImitationLoss | NoImitation) -> dict[str, list[float]]:
    """One PPO update on the rollout `buf` (`trained`: per role, its agents the run trains); the
    losses of every minibatch and role, by name."""
    batch = _flattened(buf, advantages, returns, norms, trained, model)
    flat = len(batch.obs)
    stats: dict[str, list[float]] = {name: [] for name in STATS}
    mb_size = flat // cfg.minibatches
    for _epoch in range(cfg.epochs):
        perm = torch.randperm(flat, device=batch.obs.device)
        for k in range(cfg.minibatches):
            mb = perm[k * mb_size:(k + 1) * mb_size]
            obs_mb, masks_mb = batch.obs[mb], batch.masks[mb]  # gathered once for every role, actor and critic
            loss = torch.zeros((), device=batch.obs.device)
            for net, mine in zip(model.nets, trained, strict=True):
                if mine.any():  # else an NPC role: no loss, no gradient
                    loss = _role_loss(loss, model, net, mine, batch, mb, obs_mb, masks_mb, cfg, imitation, stats)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
    return stats


def _flattened(buf: Rollout, advantages: torch.Tensor, returns: torch.Tensor, norms: list[ValueNorm],
               trained: list[torch.Tensor], model: ActorCritic) -> Batch:
    """The rollout as one batch, the value normalizers updated on the trained agents' returns first."""
    T, B, N, D = buf.obs.shape
    A, flat = buf.masks.shape[-1], T * B
    b_returns = returns.reshape(flat, N)
    roles = model.roles
    for norm, r, mine in zip(norms, roles, trained, strict=True):
        if mine.any():
            norm.update(b_returns[:, r.agents][:, mine])
    targets = torch.cat([norm.normalize(b_returns[:, r.agents]) for norm, r in zip(norms, roles, strict=True)], dim=-1)
    return Batch(buf.obs.reshape(flat, N, D), buf.masks.reshape(flat, N, A),
                 buf.state.reshape(flat, buf.state.shape[-1]) if buf.state is not None else None,
                 buf.actions.reshape(flat, N), buf.logp.reshape(flat, N), advantages.reshape(flat, N), targets)


def _role_loss(loss: torch.Tensor, model: ActorCritic, net: Any, mine: torch.Tensor, batch: Batch, mb: torch.Tensor,
               obs_mb: torch.Tensor, masks_mb: torch.Tensor, cfg: TrainConfig, imitation: ImitationLoss | NoImitation,
               stats: dict[str, list[float]]) -> torch.Tensor:
    """`loss` plus one role's PPO loss on minibatch `mb` (and its imitation loss); its figures go to `stats`."""
    r, device = net.role, loss.device
    actions = batch.actions[mb, r.agents]
    valid = (actions >= 0) & mine  # trained agents that had a legal action (the others sent -1)
    at = None if bool(valid.all()) else valid  # None: every place (no compaction to copy)
    logits = net.logits_at(model.role_obs(r, obs_mb), model.role_masks(r, masks_mb), at)
    logp_all = F.log_softmax(logits, -1)
    new_logp = logp_all.gather(-1, _places(actions, at).unsqueeze(-1)).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    log_ratio = new_logp - _places(batch.logp[mb, r.agents], at)
    ratio = log_ratio.exp()
    adv = _places(batch.advantages[mb, r.agents], at)
    if adv.numel() > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip, 1 + cfg.clip))
    pg_loss = pg.mean() if adv.numel() else torch.zeros((), device=device)
    ent = entropy.mean() if adv.numel() else torch.zeros((), device=device)
    critic_in = model.critic_input(r, obs_mb, batch.state[mb] if batch.state is not None else None)
    err = net.value(critic_in) - batch.targets[mb, r.agents]
    partner = actions == PARTNER  # a partner's steps are not the policy's (`gymwright.train.partners`)
    v_loss = 0.5 * ((err[mine & ~partner] if bool(partner.any()) else err[..., mine]) ** 2).mean()
    loss = imitation.added(loss + pg_loss - cfg.ent_coef * ent + cfg.vf_coef * v_loss, net, valid, stats)
    with torch.no_grad():
        stats["policy_loss"].append(pg_loss.item())
        stats["value_loss"].append(v_loss.item())
        stats["entropy"].append(ent.item())
        if adv.numel():
            stats["approx_kl"].append(((ratio - 1) - log_ratio).mean().item())
            stats["clipfrac"].append(((ratio - 1).abs() > cfg.clip).float().mean().item())
    return loss


def _places(x: torch.Tensor, at: torch.Tensor | None) -> torch.Tensor:
    """x (..., count[, F]) at the places `at` marks, flattened in row-major order (all of them: None)."""
    return x.reshape(-1, *x.shape[2:]) if at is None else x[at]
