"""`PaddedBatchEnv`: one training batch whose copies have different agent counts.

A generated `BatchEnv` (and a `MixedBatchEnv`, which mixes map sizes) has one agent count, so a
curriculum that mixes 2-, 3- and 4-walker lakes cannot step them as one batch. This env holds one
batch per agent count (a *group*; each may itself mix map sizes) and pads every copy to the
largest count: the missing agents observe zeros, have no legal action (the trainer's policy
plays -1 for them and leaves them out of the policy loss), receive no reward and end their
episode with their copy's. Copy b is the copy `params[b]` describes, whatever its group, and
`reset(seed)` seeds copy b with `seed + b`, exactly as one batch would.

It is what lets agent count be a curriculum lever: a shared-role policy (one role, no agent
index) acts on each agent's own observation, so it is the same network at any count. Only IPPO
trains on it (a centralized critic would need one `state()` width).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gymwright.compile.mixed import MixedBatchEnv
from gymwright.errors import GymwrightError


class PaddedBatchEnv:
    """Groups `(copies, env)` of different agent counts, padded to the largest (see the module doc)."""

    def __init__(self, groups: list[tuple[np.ndarray, Any]]) -> None:
        self.copies = [np.asarray(c, dtype=np.int64) for c, _ in groups]
        self.groups = [env for _, env in groups]
        self.size = int(sum(len(c) for c in self.copies))
        widest = max(self.groups, key=lambda env: int(env.N_AGENTS))
        _check_one_role(self.groups)
        self.N_AGENTS = int(widest.N_AGENTS)
        self.possible_agents = list(widest.possible_agents)
        self.ROLES = [tuple(r) for r in widest.ROLES]
        self.counts = [int(env.N_AGENTS) for env in self.groups]
        self.obs_buf = np.zeros((self.size, self.N_AGENTS) + widest.obs_buf.shape[2:], dtype=widest.obs_buf.dtype)
        self.masks = np.zeros((self.size, self.N_AGENTS) + widest.masks.shape[2:], dtype=widest.masks.dtype)

    def state_dims(self) -> list[int]:
        """The groups' state widths (they differ with the agent count: IPPO only)."""
        return [int(w) for env in self.groups for w in (env.state_dims() if hasattr(env, "state_dims")
                                                         else [env.state().shape[1]])]

    def state(self) -> np.ndarray:
        raise GymwrightError("a batch of several agent counts has no one global state",
                             path="algo", hint="train it with IPPO (algo='ippo'), or one agent count per run")

    @property
    def BASELINES(self) -> Any:  # noqa: N802 - the generated BatchEnv's name
        return getattr(self.groups[0], "BASELINES", ())

    def scripted_actions(self, name: str, rng: np.random.Generator | None = None) -> np.ndarray:
        """The spec's scripted baseline `name` on every copy (B, N): -1 for the padding agents
        (with `rng`, a random legal action where no rule applies, as `fill_random_legal` draws it)."""
        out = np.full((self.size, self.N_AGENTS), -1, dtype=np.int64)
        for c, n, env in zip(self.copies, self.counts, self.groups, strict=True):
            out[c, :n] = env.scripted_actions(name)
        if rng is not None:
            from gymwright.train.baselines import fill_random_legal

            out = fill_random_legal(out, self.masks, rng)
        return out

    # the same as a mixed batch's: they read only `size`, `groups`, `copies` and `_gather`
    obs_bounds = MixedBatchEnv.obs_bounds
    reset = MixedBatchEnv.reset

    def _gather(self, gi: int) -> None:
        c, n, env = self.copies[gi], self.counts[gi], self.groups[gi]
        self.obs_buf[c] = 0
        self.masks[c] = 0
        self.obs_buf[c, :n] = env.obs_buf
        self.masks[c, :n] = env.masks

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """actions (B, N) -> obs, rewards, terminated, truncated (B, N, padded) and merged infos."""
        actions = np.asarray(actions, dtype=np.int64)
        N = self.N_AGENTS
        rewards = np.zeros((self.size, N))
        terminated = np.zeros((self.size, N), dtype=bool)
        truncated = np.zeros((self.size, N), dtype=bool)
        parts: list[tuple[int, dict[str, Any]]] = []
        for gi, env in enumerate(self.groups):
            c, n = self.copies[gi], self.counts[gi]
            _, r, te, tr, info = env.step(actions[c, :n])
            rewards[c, :n] = r
            terminated[c], truncated[c] = te[:, :1], tr[:, :1]  # the padding ends with its copy
            terminated[c, :n], truncated[c, :n] = te, tr
            self._gather(gi)
            parts.append((gi, info))
        return self.obs_buf, rewards, terminated, truncated, self._merge(parts)

    def _merge(self, parts: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
        """The groups' infos as one batch's: global copy indices, agents padded."""
        N = self.N_AGENTS
        infos: dict[str, Any] = {"done": np.zeros(self.size, dtype=bool)}
        terms: dict[str, dict[str, np.ndarray]] = {}
        done_rows: list[tuple[np.ndarray, dict[str, Any], int]] = []
        for gi, info in parts:
            c, n = self.copies[gi], self.counts[gi]
            infos["done"][c] = info["done"]
            for role, named in info["reward_terms"].items():  # per copy: the mean over its agents
                for name, x in named.items():
                    col = terms.setdefault(role, {}).setdefault(name, np.zeros((self.size, 1)))
                    x = np.asarray(x, dtype=float)
                    col[c, 0] = x.reshape(len(c), -1).mean(axis=1) if x.size else 0.0
            if "done_idx" in info:
                done_rows.append((c[info["done_idx"]], info, n))
        infos["reward_terms"] = terms
        if done_rows:
            idx = np.concatenate([g for g, _, _ in done_rows])
            order = np.argsort(idx, kind="stable")
            infos["done_idx"] = idx[order]
            infos["final_obs"] = np.concatenate([_pad(i["final_obs"], N, 0.0) for _, i, _ in done_rows])[order]
            infos["episode_length"] = np.concatenate([i["episode_length"] for _, i, _ in done_rows])[order]
            # a padded agent's return is its copy's mean, so role means are means over episodes
            infos["episode_return"] = np.concatenate([_pad_mean(i["episode_return"], N) for _, i, _ in done_rows])[order]
            names = done_rows[0][1]["metrics"]
            infos["metrics"] = {k: np.concatenate([i["metrics"][k] for _, i, _ in done_rows])[order] for k in names}
        return infos


def _pad(x: np.ndarray, n: int, fill: float) -> np.ndarray:
    x = np.asarray(x)
    if x.shape[1] == n:
        return x
    out = np.full((x.shape[0], n) + x.shape[2:], fill, dtype=x.dtype)
    out[:, : x.shape[1]] = x
    return out


def _pad_mean(x: np.ndarray, n: int) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    out = np.repeat(x.mean(axis=1, keepdims=True), n, axis=1)
    out[:, : x.shape[1]] = x
    return out


def _check_one_role(groups: list[Any]) -> None:
    """Every group must have one role of the same observation width and action count."""
    shapes = {(tuple(r[0] for r in env.ROLES), env.obs_buf.shape[2:], env.masks.shape[2:]) for env in groups}
    if len(shapes) > 1 or len(groups[0].ROLES) != 1:
        raise GymwrightError(
            f"configs with different agent counts can share a batch only with one role and one observation and "
            f"action shape; got {sorted(map(str, shapes))}",
            path="params", hint="give every config the same view radius (observation width), or one agent count")


def agent_groups(agent_counts: list[int]) -> dict[int, np.ndarray]:
    """Copy indices per agent count, in order of first appearance."""
    out: dict[int, list[int]] = {}
    for b, n in enumerate(agent_counts):
        out.setdefault(int(n), []).append(b)
    return {n: np.asarray(c, dtype=np.int64) for n, c in out.items()}
