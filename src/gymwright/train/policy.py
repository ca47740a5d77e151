"""The networks: per role, an actor and a critic (MLPs), and `Policy`, the acting half.

Each role has one actor shared by its agents (parameter sharing), fed the agent's observation
(plus, with `agent_index`, a one-hot of its index within the role). The critic sees the same
input (IPPO) or the batch env's global `state()` plus the one-hot (MAPPO, a centralized critic). Illegal actions
get the logit `MASK_VALUE` before sampling and in the loss, so they are never drawn and carry
no probability mass; an agent with no legal action plays -1 (no action).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

MASK_VALUE = -1e8


@dataclass(frozen=True)
class Role:
    """One role of the batch env (`benv.ROLES`): its agents are start .. start + count - 1."""

    name: str
    start: int
    count: int
    obs_dim: int
    n_actions: int

    @property
    def agents(self) -> slice:
        return slice(self.start, self.start + self.count)


def roles_of(benv: Any) -> list[Role]:
    return [Role(*r) for r in benv.ROLES]


def layer(n_in: int, n_out: int, std: float = float(np.sqrt(2))) -> nn.Linear:
    lin = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}


def mlp(n_in: int, hidden: tuple[int, ...], n_out: int, out_std: float, activation: str = "relu") -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [layer(n_in, h), ACTIVATIONS[activation]()]
        n_in = h
    layers.append(layer(n_in, n_out, out_std))
    return nn.Sequential(*layers)


class RoleNet(nn.Module):
    """Actor (logits) and critic (a normalized value) of one role.

    With `actor_index` (`critic_index`) the actor's (critic's) input gets a one-hot of the
    agent's index within the role appended.
    """

    def __init__(self, role: Role, critic_dim: int, hidden: tuple[int, ...], activation: str = "relu",
                 actor_index: bool = True, critic_index: bool = True) -> None:
        super().__init__()
        self.role = role
        self.actor_index, self.critic_index = actor_index, critic_index
        self.register_buffer("onehot", torch.eye(role.count), persistent=False)
        self.actor = mlp(role.obs_dim + role.count * actor_index, hidden, role.n_actions, 0.01, activation)
        self.critic = mlp(critic_dim + role.count * critic_index, hidden, 1, 1.0, activation)

    def with_index(self, x: torch.Tensor) -> torch.Tensor:
        """x (..., count, F) -> (..., count, F + count): the agent's one-hot index appended."""
        return torch.cat([x, self.onehot.expand(*x.shape[:-1], self.role.count)], dim=-1)

    def actor_input(self, obs: torch.Tensor) -> torch.Tensor:
        return self.with_index(obs) if self.actor_index else obs

    def logits(self, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """obs (..., count, obs_dim), masks bool (..., count, n_actions) -> masked logits."""
        return torch.where(masks, self.actor(self.actor_input(obs)), MASK_VALUE)

    def logits_at(self, obs: torch.Tensor, masks: torch.Tensor, at: torch.Tensor | None) -> torch.Tensor:
        """Masked logits (n, n_actions) of the (batch, count) places where `at` is true only, in
        row-major order (`at` None: every place, n = batch * count, without copying a compaction)."""
        x = self.actor_input(obs)
        if at is None:
            return torch.where(masks.reshape(-1, masks.shape[-1]), self.actor(x.reshape(-1, x.shape[-1])), MASK_VALUE)
        return torch.where(masks[at], self.actor(x[at]), MASK_VALUE)

    def value(self, critic_in: torch.Tensor) -> torch.Tensor:
        """critic_in (..., count, critic_dim) -> normalized values (..., count)."""
        return self.critic(self.with_index(critic_in) if self.critic_index else critic_in).squeeze(-1)


class ActorCritic(nn.Module):
    """One `RoleNet` per role; `centralized` critics read `state()` instead of observations.

    `agent_index` appends the agent's one-hot index within its role to the actor's input and
    to the IPPO critic's; a centralized critic always gets it (the state does not say whose
    value it is).
    """

    def __init__(self, roles: list[Role], state_dim: int, hidden: tuple[int, ...], centralized: bool,
                 activation: str = "relu", agent_index: bool = True) -> None:
        super().__init__()
        self.roles = roles
        self.centralized = centralized
        self.agent_index = agent_index
        self.nets = nn.ModuleList(
            RoleNet(r, state_dim if centralized else r.obs_dim, tuple(hidden), activation,
                    actor_index=agent_index, critic_index=agent_index or centralized)
            for r in roles
        )

    def role_obs(self, role: Role, obs: torch.Tensor) -> torch.Tensor:
        """The role's slice of a padded (..., N, D) observation."""
        return obs[..., role.agents, : role.obs_dim]

    def role_masks(self, role: Role, masks: torch.Tensor) -> torch.Tensor:
        return masks[..., role.agents, : role.n_actions]

    def critic_input(self, role: Role, obs: torch.Tensor, state: torch.Tensor | None) -> torch.Tensor:
        if not self.centralized:
            return self.role_obs(role, obs)
        assert state is not None
        return state.unsqueeze(-2).expand(*state.shape[:-1], role.count, state.shape[-1])

    def values(self, obs: torch.Tensor, state: torch.Tensor | None) -> list[torch.Tensor]:
        """Normalized values per role, each (..., count)."""
        return [net.value(self.critic_input(net.role, obs, state)) for net in self.nets]


def sample(logits: torch.Tensor, deterministic: bool = False) -> torch.Tensor:
    """Gumbel-max sampling from masked logits (argmax when deterministic)."""
    if deterministic:
        return logits.argmax(-1)
    u = torch.rand_like(logits).clamp_(1e-12, 1.0 - 1e-7)
    return (logits - torch.log(-torch.log(u))).argmax(-1)


class Policy:
    """The acting half of a trained `ActorCritic`: `act(obs, masks)` for a whole batch."""

    def __init__(self, model: ActorCritic, n_agents: int, info: dict[str, Any] | None = None) -> None:
        self.model = model
        self.n_agents = n_agents
        self.info = info or {}

    @property
    def roles(self) -> list[Role]:
        return self.model.roles

    @torch.no_grad()
    def act(self, obs: Any, masks: Any, deterministic: bool = False) -> np.ndarray:
        """obs float (B, N, D), masks (B, N, A) -> actions int64 (B, N); -1 where none is legal."""
        obs_t = torch.as_tensor(np.asarray(obs, dtype=np.float32))
        masks_t = torch.as_tensor(np.asarray(masks)).bool()
        if obs_t.ndim != 3:
            raise ValueError(f"obs must have shape (B, {self.n_agents}, D), got {tuple(obs_t.shape)}")
        if obs_t.shape[1] != self.n_agents:
            return self._act_any_count(obs_t, masks_t, deterministic)
        actions = torch.full(obs_t.shape[:2], -1, dtype=torch.int64)
        for net in self.model.nets:
            r = net.role
            m = self.model.role_masks(r, masks_t)
            a = sample(net.logits(self.model.role_obs(r, obs_t), m), deterministic)
            actions[:, r.agents] = torch.where(m.any(-1), a, -1)
        return actions.numpy()

    def _act_any_count(self, obs: torch.Tensor, masks: torch.Tensor, deterministic: bool) -> np.ndarray:
        """Another number of agents than trained with: possible for one role whose actor has no
        agent index (its agents share one policy of their own observation, e.g. MAPF-FrozenLake's
        egocentric walkers trained with 2 and run with 5)."""
        (net,) = self.model.nets if len(self.model.nets) == 1 else (None,)
        if net is None or net.actor_index:
            why = "it has several roles" if net is None else "its actor reads the agent's index (agent_index)"
            raise ValueError(f"this policy was trained with {self.n_agents} agents and cannot act for "
                             f"{obs.shape[1]}: {why}; train with one role and agent_index off to transfer")
        r = net.role
        m = masks[..., : r.n_actions]
        a = sample(torch.where(m, net.actor(obs[..., : r.obs_dim]), MASK_VALUE), deterministic)
        return torch.where(m.any(-1), a, -1).numpy()

