"""Gymnasium `VectorEnv` views of a batch env, one per role (single policy per role).

`RoleVectorEnv(batch, role)` presents every agent of `role` in every copy as one sub-env:
`num_envs = B * n_role`, observations `(num_envs, D)`, `Discrete` actions, and the action
masks in `infos["action_mask"]`. The other roles are driven by `others` (default: uniformly
random legal actions), so any single-agent vector trainer can train one role against them.
Autoreset happens in the same step (`AutoresetMode.SAME_STEP`); the final observation of an
ended episode is in `infos["final_obs"]` and `infos["_final_obs"]` marks which rows have one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

OthersPolicy = Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]


def random_legal(obs: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Uniformly random legal actions for masks (..., A); -1 where nothing is legal."""
    score = rng.random(masks.shape) * masks
    out = score.argmax(axis=-1)
    out[masks.sum(axis=-1) == 0] = -1
    return out


class RoleVectorEnv(VectorEnv):
    """One role of a `BatchEnv` as a Gymnasium vector env."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, batch: Any, role: str, others: OthersPolicy = random_legal) -> None:
        roles = {name: (start, count, dim, nact) for name, start, count, dim, nact in batch.ROLES}
        if role not in roles:
            raise ValueError(f"unknown role {role!r}; roles: {sorted(roles)}")
        if getattr(batch, "AGENT_ENDS", False):
            raise ValueError("this env ends agents one by one (`terminate_agent`), which a Gymnasium vector env of one "
                             "role cannot show (a sub-env that ended would have to wait for its copy); train it with "
                             "gymwright's own trainer, or end the whole episode with `terminate`")
        self.batch = batch
        self.role = role
        self.start, self.count, self.dim, self.n_actions = roles[role]
        self.others = others
        self.num_envs = batch.size * self.count
        low, high = batch.obs_bounds(role)
        self.single_observation_space = gymnasium.spaces.Box(low, high, (self.dim,), np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(self.n_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._rng = np.random.default_rng()

    @property
    def _sl(self) -> slice:
        return slice(self.start, self.start + self.count)

    def _mine(self, x: np.ndarray, last: int | None = None) -> np.ndarray:
        part = x[:, self._sl]
        part = part[..., :last] if last is not None else part
        return np.array(part.reshape((self.num_envs,) + part.shape[2:]))  # a copy: x is a live buffer

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        obs, masks = self.batch.reset(seed=0 if seed is None else seed)
        return self._mine(obs, self.dim), {"action_mask": self._mine(masks, self.n_actions)}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        b = self.batch
        full = self.others(b.obs_buf, b.masks, self._rng)
        full = np.array(full, dtype=np.int64)
        full[:, self._sl] = np.asarray(actions, dtype=np.int64).reshape(b.size, self.count)
        obs, rew, term, trunc, info = b.step(full)
        infos: dict[str, Any] = {"action_mask": self._mine(b.masks, self.n_actions)}
        if "done_idx" in info:
            rows = np.zeros(b.size, dtype=bool)
            rows[info["done_idx"]] = True
            final = np.zeros((b.size, b.N_AGENTS, obs.shape[2]), dtype=np.float32)
            final[info["done_idx"]] = info["final_obs"]
            infos["final_obs"] = self._mine(final, self.dim)
            infos["_final_obs"] = np.repeat(rows, self.count)
            infos["episode_metrics"] = info["metrics"]
        return (self._mine(obs, self.dim), self._mine(rew).astype(np.float64),
                self._mine(term), self._mine(trunc), infos)
