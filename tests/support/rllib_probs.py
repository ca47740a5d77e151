"""Helpers of the RLlib tests: observations as RLlib sees them, and the action probabilities of
an RLlib module and of the built-in policy exported from it, side by side."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from gymwright.compile import compile_spec
from gymwright.train.policy import Policy
from gymwright.train.rllib import ActingAgentsEnv


def observations(spec: str, params: dict[str, Any], episodes: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Per agent, the `obs ++ mask` rows `ActingAgentsEnv` handed out in random legal play."""
    env = ActingAgentsEnv(compile_spec(spec, params).parallel_env())
    rng = np.random.default_rng(seed)
    rows: dict[str, list[np.ndarray]] = {}
    for e in range(episodes):
        obs, _ = env.reset(seed=seed + e)
        while obs:
            for agent, o in obs.items():
                rows.setdefault(agent, []).append(o)
            actions = {}
            for agent, o in obs.items():
                legal = np.flatnonzero(o[-env.action_space(agent).n:] > 0.5)
                actions[agent] = int(rng.choice(legal))
            if not env.agents:
                break
            obs, _, terms, truncs, _ = env.step(actions)
            if all(terms.values()) or all(truncs.values()):
                break
    return {a: np.stack(x) for a, x in rows.items()}


def rllib_probabilities(module: Any, rows: np.ndarray) -> np.ndarray:
    """The action probabilities of an RLlib module for `obs ++ mask` rows."""
    from ray.rllib.core.columns import Columns

    with torch.no_grad():
        out = module.forward_inference({Columns.OBS: torch.as_tensor(rows)})
    return torch.softmax(out[Columns.ACTION_DIST_INPUTS], -1).numpy()


def builtin_probabilities(policy: Policy, agent_index: int, rows: np.ndarray) -> np.ndarray:
    """The built-in policy's action probabilities for agent `agent_index`, from the padded batch
    arrays `Policy.act` reads (as `evaluate` and `play` build them)."""
    roles = policy.roles
    role = next(r for r in roles if r.start <= agent_index < r.start + r.count)
    net = policy.model.nets[roles.index(role)]
    width = max(r.obs_dim for r in roles)
    n_actions = max(r.n_actions for r in roles)
    obs = np.zeros((len(rows), policy.n_agents, width), np.float32)
    masks = np.zeros((len(rows), policy.n_agents, n_actions), bool)
    obs[:, agent_index, : role.obs_dim] = rows[:, : role.obs_dim]
    masks[:, agent_index, : role.n_actions] = rows[:, role.obs_dim:] > 0.5
    with torch.no_grad():
        logits = net.logits(policy.model.role_obs(role, torch.as_tensor(obs)),
                            policy.model.role_masks(role, torch.as_tensor(masks)))
    return torch.softmax(logits[:, agent_index - role.start], -1).numpy()


def assert_same_probabilities(policy: Policy, modules: dict[str, Any], rows: dict[str, np.ndarray]) -> int:
    """Every agent's probabilities agree (float tolerance) and illegal actions get none in both;
    returns how many (row, action) pairs were illegal (the masks tested)."""
    masked = 0
    agents = [a for r in policy.roles for a in (f"{r.name}_{i}" for i in range(r.count))]
    for agent, x in rows.items():
        n = policy.roles[[r.name for r in policy.roles].index(agent.rsplit("_", 1)[0])].n_actions
        theirs = rllib_probabilities(modules[agent.rsplit("_", 1)[0]], x)
        ours = builtin_probabilities(policy, agents.index(agent), x)
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
        illegal = x[:, -n:] < 0.5
        assert (ours[illegal] == 0).all() and (theirs[illegal] == 0).all()
        masked += int(illegal.sum())
        assert (theirs.max(-1) < 1 - 1e-3).any()  # not a one-hot everywhere: probabilities were compared
    return masked
