"""Many copies of a code-mode env in sandbox workers, behind the batch backend's interface.

`SandboxedBatchEnv(code, batch_size=B, workers=W)` vets the module, starts W workers and
makes B instances spread over them; `reset(seed)` gives `(obs [B, N, D] float32, masks
[B, N, A] int8)` with copy b seeded `seed + b`, and `step(actions [B, N])` (-1: no action)
gives `(obs, rewards, terminated, truncated, infos)` with the batch backend's auto-reset:
a finished copy starts its next episode in the same call, and `infos` carries `done_idx`,
`final_obs`, `episode_length`, `episode_return` and `metrics` (from the final infos) for the
copies that finished. All W workers step at once (each its share of copies per frame).

It needs flat `Box` observations and `Discrete` actions (padded to the widest, as the batch
backend pads roles). It is much slower than the batch backend, one frame per worker per step
(see benchmarks/codemode_throughput.py); it has no `state()` (no centralized critic).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from gymwright.codemode.proxy import SandboxedParallelEnv, encode_action, load_module
from gymwright.codemode.sandbox import Limits, Sandbox, SandboxError
from gymwright.codemode.vet import vet_source
from gymwright.errors import GymwrightError


def _widths(env: SandboxedParallelEnv) -> tuple[int, int]:
    d, a = 0, 0
    for agent in env.possible_agents:
        obs, act = env.observation_space(agent), env.action_space(agent)
        if not (isinstance(obs, spaces.Box) and isinstance(act, spaces.Discrete)):
            raise GymwrightError(f"agent {agent}: batch copies need a flat Box observation and Discrete "
                                 f"actions, not {obs} and {act}", hint="use spaces.Box vectors and spaces.Discrete")
        d, a = max(d, int(np.prod(obs.shape))), max(a, int(act.n))
    return d, a


def _columns(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Per-copy metrics dicts as one array per metric (NaN where a copy did not report it)."""
    names = sorted({str(k) for row in rows for k in row})
    return {k: np.array([float(row.get(k, np.nan)) for row in rows]) for k in names}


def _results(reply: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """A worker's per-copy replies, checked: one object per copy asked for."""
    results = reply.get("results")
    if not (isinstance(results, list) and len(results) == n and all(isinstance(r, dict) for r in results)):
        raise SandboxError(f"the worker sent {type(results).__name__} for {n} copies", kind="protocol")
    return results


class SandboxedBatchEnv:
    """B copies of the module's env in sandbox workers (see the module docstring)."""

    def __init__(self, code: str, env_class: str | None = None, *, batch_size: int = 8, workers: int = 1,
                 limits: Limits | None = None) -> None:
        vetted = vet_source(code, env_class)
        if not vetted.passed:
            raise GymwrightError("the module did not pass vetting:\n" + "\n".join(d.format() for d in vetted.diagnostics[:5]),
                                 hint="check it with `gymwright export` or design it again")
        self.B, workers = batch_size, max(1, min(workers, batch_size))
        self.sandboxes: list[Sandbox] = []
        try:
            self.sandboxes = [load_module(code, vetted.env_class, limits=limits) for _ in range(workers)]
            self.copies = [SandboxedParallelEnv(self.sandboxes[b * workers // batch_size]) for b in range(batch_size)]
        except BaseException:
            self.close()
            raise
        self.agents = list(self.copies[0].possible_agents)
        self.N_AGENTS = len(self.agents)
        self.possible_agents = self.agents
        self.D, self.A = _widths(self.copies[0])
        # the batch backend's role table: one role holding every agent (one shared policy)
        self.ROLES = (("agent", 0, self.N_AGENTS, self.D, self.A),)
        self.obs_buf = np.zeros((self.B, self.N_AGENTS, self.D), np.float32)
        self.masks = np.zeros((self.B, self.N_AGENTS, self.A), np.int8)
        self.returns = np.zeros((self.B, self.N_AGENTS), np.float64)
        self.lengths = np.zeros(self.B, np.int64)

    def _groups(self) -> list[tuple[Sandbox, list[int]]]:
        return [(sb, [b for b, c in enumerate(self.copies) if c.sandbox is sb]) for sb in self.sandboxes]

    def _fill(self, b: int, obs: dict[str, Any], infos: dict[str, Any]) -> None:
        self.obs_buf[b] = 0
        self.masks[b] = 0
        for i, agent in enumerate(self.agents):
            if agent in obs:
                flat = np.asarray(obs[agent], np.float32).ravel()
                self.obs_buf[b, i, :flat.size] = flat
            if agent in self.copies[b].agents:
                n = self.copies[b].action_space(agent).n
                mask = (infos.get(agent) or {}).get("action_mask") if isinstance(infos.get(agent), dict) else None
                self.masks[b, i, :n] = np.asarray(mask, np.int8)[:n] if mask is not None else 1

    def _reset_copies(self, copies: list[int], seeds: list[int | None]) -> None:
        seed_of = dict(zip(copies, seeds, strict=True))
        groups = [(sb, [b for b in ids if b in seed_of]) for sb, ids in self._groups()]
        for sb, ids in groups:
            if ids:
                sb.send({"op": "reset_many", "ids": [self.copies[b].id for b in ids], "seeds": [seed_of[b] for b in ids]})
        for sb, ids in groups:
            if ids:
                for b, r in zip(ids, _results(sb.receive("reset_many"), len(ids)), strict=True):
                    self.copies[b]._agents(r, "reset")
                    self._fill(b, r.get("obs") or {}, r.get("infos") or {})
                    self.returns[b], self.lengths[b] = 0.0, 0

    def reset(self, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        self._reset_copies(list(range(self.B)), [seed + b for b in range(self.B)])
        return self.obs_buf.copy(), self.masks.copy()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        acts = np.asarray(actions, dtype=np.int64).reshape(self.B, self.N_AGENTS)
        rewards = np.zeros((self.B, self.N_AGENTS), np.float32)
        term = np.zeros((self.B, self.N_AGENTS), bool)
        trunc = np.zeros((self.B, self.N_AGENTS), bool)
        groups = self._groups()
        for sb, ids in groups:
            sb.send({"op": "step_many", "ids": [self.copies[b].id for b in ids],
                     "actions": [{a: encode_action(acts[b, i]) for i, a in enumerate(self.agents)
                                  if a in self.copies[b].agents and acts[b, i] >= 0} for b in ids]})
        done: list[int] = []
        metrics: list[dict[str, float]] = []
        for sb, ids in groups:
            for b, r in zip(ids, _results(sb.receive("step_many"), len(ids)), strict=True):
                obs, rew, te, tr, infos = self.copies[b].read_step(r)
                for i, a in enumerate(self.agents):
                    rewards[b, i] = float(rew.get(a, 0.0))
                    term[b, i], trunc[b, i] = bool(te.get(a, False)), bool(tr.get(a, False))
                self._fill(b, obs, infos)
                self.returns[b] += rewards[b]
                self.lengths[b] += 1
                if not self.copies[b].agents:
                    done.append(b)
                    metrics.append(next((i["metrics"] for i in infos.values()
                                         if isinstance(i, dict) and isinstance(i.get("metrics"), dict)), {}))
        # the batch backend's per-term rewards: a code-mode env has one term, its reward
        infos_out: dict[str, Any] = {"reward_terms": {"agent": {"reward": rewards.copy()}}}
        if done:
            infos_out |= {"done_idx": np.array(done), "final_obs": self.obs_buf[done].copy(),
                         "episode_length": self.lengths[done].copy(), "episode_return": self.returns[done].copy(),
                         "metrics": _columns(metrics)}
            self._reset_copies(done, [None] * len(done))
        return self.obs_buf.copy(), rewards, term, trunc, infos_out

    def state_dims(self) -> list[int]:
        """No global state crosses the pipe: 0 (IPPO trains on it; MAPPO needs `state()`)."""
        return [0]

    def state(self) -> np.ndarray:
        raise GymwrightError("a code-mode env has no global state() for a centralized critic",
                             hint="train it with IPPO (--algo ippo)")

    def close(self) -> None:
        for sb in self.sandboxes:
            sb.close()

    def __enter__(self) -> SandboxedBatchEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["SandboxedBatchEnv"]
