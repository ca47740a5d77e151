"""Many copies of a code-mode env in sandbox workers, behind the batch backend's interface.

`SandboxedBatchEnv(code, batch_size=B, workers=W)` vets the module, starts W workers and
makes B instances spread over them; `reset(seed)` gives `(obs [B, N, D] float32, masks
[B, N, A] int8)` with copy b seeded `seed + b`, and `step(actions [B, N])` (-1: no action)
gives `(obs, rewards, terminated, truncated, infos)` with the batch backend's auto-reset:
a finished copy starts its next episode in the same call, seeded its last seed + B (so copy b
plays the seeds seed + b, seed + b + B, ...), and `infos` carries `done_idx`, `final_obs`,
`episode_length`, `episode_return` and `metrics` (from the final infos) for the copies that
finished. All W workers step at once (each its share of copies per frame).

A worker whose audit hook refused anything (a file, a socket, a process), even where the
module caught the refusal, stops the env: a `SandboxError` (kind `refused`) naming the module.

Checkpoints: the copies' state lives in the workers and cannot be copied out, so
`checkpoint_state()` holds each copy's seed and the actions of its current episode, and
`restore_checkpoint_state()` replays them in the workers (reset with that seed, then those
actions) and checks that the replay gives the saved observations and masks: a resumed run goes
on bit-for-bit, as the checks' determinism test promises; an env that replays differently is an
error, not a silent divergence.

It needs flat `Box` observations and `Discrete` actions (padded to the widest, as the batch
backend pads roles). It is much slower than the batch backend, one frame per worker per step
(see benchmarks/codemode_throughput.py); it has no `state()` (no centralized critic: IPPO only).
"""

from __future__ import annotations

import contextlib
import dataclasses
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
from gymnasium import spaces

from gymwright.codemode.proxy import (
    SandboxedParallelEnv,
    encode_action,
    load_module,
    mask_row,
    metric_values,
    observation_row,
    reward_value,
)
from gymwright.codemode.sandbox import Limits, Sandbox, SandboxError
from gymwright.codemode.vet import vet_source
from gymwright.diagnostic import Diagnostic
from gymwright.errors import GymwrightError
from gymwright.spec.limits import MAX_ACTIONS, MAX_OBS_DIM

NO_STATE = "MAPPO needs state(); code-mode envs have none (no global state crosses the sandbox's pipe): use IPPO"


def vetting_error(name: str, diagnostics: list[Diagnostic]) -> GymwrightError:
    """The error for a module that fails vetting: its first findings, at NAME:LINE."""
    named = [dataclasses.replace(d, path=d.path.replace("code", name, 1)) for d in diagnostics[:5]]
    return GymwrightError("the module did not pass vetting:\n" + "\n".join(d.format() for d in named), path=name,
                          hint="fix the findings, or design it again with `gymwright design --mode code`")


def _widths(env: SandboxedParallelEnv, name: str) -> tuple[int, int]:
    """The batch's observation width and action count: the widest agent's, within the limits of a
    spec's (checked before the batch's buffers are allocated)."""
    d, a = 0, 0
    for agent in env.possible_agents:
        obs, act = env.observation_space(agent), env.action_space(agent)
        if not (isinstance(obs, spaces.Box) and isinstance(act, spaces.Discrete)):
            raise GymwrightError(f"agent {agent}: batch copies need a flat Box observation and Discrete "
                                 f"actions, not {obs} and {act}", path=name, hint="use spaces.Box vectors and spaces.Discrete")
        size, n = int(np.prod(obs.shape)), int(act.n)
        if size > MAX_OBS_DIM or n > MAX_ACTIONS:
            raise GymwrightError(f"agent {agent} declares {size:,} observation values and {n:,} actions; a batch "
                                 f"takes at most {MAX_OBS_DIM:,} and {MAX_ACTIONS:,} (a spec's limits)",
                                 path=name, value=(size, n), hint="observe a compact summary (positions, counts, a local "
                                 "window) and decode actions from a few choices")
        d, a = max(d, size), max(a, n)
    return d, a


def _columns(rows: list[dict[str, float]]) -> dict[str, np.ndarray]:
    """Per-copy metrics dicts as one array per metric (NaN where a copy did not report it)."""
    names = sorted({k for row in rows for k in row})
    return {k: np.array([row.get(k, np.nan) for row in rows]) for k in names}


def _results(reply: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """A worker's per-copy replies, checked: one object per copy asked for."""
    results = reply.get("results")
    if not (isinstance(results, list) and len(results) == n and all(isinstance(r, dict) for r in results)):
        raise SandboxError(f"the worker sent {type(results).__name__} for {n} copies", kind="protocol")
    return results


def _close_all(sandboxes: list[Sandbox]) -> None:
    for sb in sandboxes:
        sb.close()


class SandboxedBatchEnv:
    """B copies of the module's env in sandbox workers (see the module docstring); `name` (the
    module's path) is where its errors say they are."""

    def __init__(self, code: str, env_class: str | None = None, *, batch_size: int = 8, workers: int = 1,
                 limits: Limits | None = None, name: str = "code", params: dict[str, Any] | None = None) -> None:
        self.name = name
        vetted = vet_source(code, env_class)
        if not vetted.passed:
            raise vetting_error(name, vetted.diagnostics)
        self.B, workers = batch_size, max(1, min(workers, batch_size))
        self.sandboxes: list[Sandbox] = []
        self._closer = weakref.finalize(self, _close_all, self.sandboxes)  # workers stop with the env
        try:
            with self._named():
                self.sandboxes += [load_module(code, vetted.env_class, limits=limits) for _ in range(workers)]
                self.copies = [SandboxedParallelEnv(self.sandboxes[0], params)]
                self.D, self.A = _widths(self.copies[0], name)  # before the other copies and any buffer
                self.copies += [SandboxedParallelEnv(self.sandboxes[b * workers // batch_size], params)
                                for b in range(1, batch_size)]
                self._refusals = [0] * workers
                self._check_refusals()  # anything refused while the module loaded
        except BaseException:
            self.close()
            raise
        self.agents = list(self.copies[0].possible_agents)
        self.N_AGENTS = len(self.agents)
        self.possible_agents = self.agents
        # the batch backend's role table: one role holding every agent (one shared policy)
        self.ROLES = (("agent", 0, self.N_AGENTS, self.D, self.A),)
        self.obs_buf = np.zeros((self.B, self.N_AGENTS, self.D), np.float32)
        self.masks = np.zeros((self.B, self.N_AGENTS, self.A), np.int8)
        self.returns = np.zeros((self.B, self.N_AGENTS), np.float64)
        self.lengths = np.zeros(self.B, np.int64)
        self.seeds = np.arange(self.B, dtype=np.int64)  # the seed of each copy's current episode
        self.played: list[list[np.ndarray]] = [[] for _ in range(self.B)]  # its actions so far (replayed on restore)

    # ------------------------------------------------------------------ talking to the workers
    @contextlib.contextmanager
    def _named(self) -> Iterator[None]:
        """Put the module's name on a SandboxError raised inside (NAME:LINE)."""
        try:
            yield
        except SandboxError as e:
            if not e.path.startswith(self.name):
                e.path = f"{self.name}:{e.line}" if e.line else self.name
            raise

    def _exchange(self, op: str, field: str, values: dict[int, Any]) -> dict[int, dict[str, Any]]:
        """Send `op` with `field` = values[b] for the copies b given, all workers at once; the
        replies by copy. Raises SandboxError where the code failed or the sandbox refused something."""
        groups = [(sb, [b for b, c in enumerate(self.copies) if c.sandbox is sb and b in values]) for sb in self.sandboxes]
        replies: dict[int, dict[str, Any]] = {}
        with self._named():
            for sb, ids in groups:
                if ids:
                    sb.send({"op": op, "ids": [self.copies[b].id for b in ids], field: [values[b] for b in ids]})
            for sb, ids in groups:
                if ids:
                    replies.update(zip(ids, _results(sb.receive(op), len(ids)), strict=True))
            self._check_refusals()
        return replies

    def _check_refusals(self) -> None:
        for w, sb in enumerate(self.sandboxes):
            if len(sb.refused) > self._refusals[w]:
                new = sb.refused[self._refusals[w]:]
                self._refusals[w] = len(sb.refused)
                raise SandboxError(f"the module tried {new[0]}, which the sandbox refused; the env stops",
                                   kind="refused", refused=new,
                                   hint="a design's code may not touch files, sockets or processes: design it again")

    def _read(self, b: int, what: str, agent: str, decode: Any, *args: Any) -> Any:
        """`decode(*args)` of copy b's reply, or a SandboxError saying where: the copy, its episode
        (by seed) and step, the agent and what is wrong (the module's name is put on it by `_named`)."""
        try:
            return decode(*args)
        except ValueError as e:
            step = len(self.played[b])  # the actions of its episode so far, this step's included
            when = f"step {step} of its episode of seed {self.seeds[b]}" if step else f"reset(seed={self.seeds[b]})"
            raise SandboxError(f"copy {b}, {when}: {agent}'s {what} {e}", kind="code", where=f"{what} of {agent}",
                               hint="return what the spaces declare: float arrays of the Box's shape, number "
                                    "rewards, action masks of one 0/1 per action, a short dict of number metrics") from None

    def _fill(self, b: int, obs: dict[str, Any], infos: dict[str, Any]) -> None:
        self.obs_buf[b] = 0
        self.masks[b] = 0
        copy = self.copies[b]
        for i, agent in enumerate(self.agents):
            if agent in obs:
                row = self._read(b, "observation", agent, observation_row, obs[agent], copy.observation_space(agent))
                self.obs_buf[b, i, :row.size] = row
            if agent in copy.agents:
                n = copy.action_space(agent).n
                mask = infos[agent].get("action_mask") if isinstance(infos.get(agent), dict) else None
                self.masks[b, i, :n] = self._read(b, "action_mask", agent, mask_row, mask, n) if mask is not None else 1

    def _reset_copies(self, seeds: dict[int, int]) -> None:
        for b, r in self._exchange("reset_many", "seeds", seeds).items():
            with self._named():
                obs, infos = self.copies[b].read_reset(r)
                self.returns[b], self.lengths[b], self.seeds[b] = 0.0, 0, seeds[b]
                self.played[b] = []
                self._fill(b, obs, infos)

    def _step_copies(self, acts: dict[int, np.ndarray]) -> dict[int, tuple[dict[str, Any], ...]]:
        """Step the copies given (b -> its N actions), fill their buffers; their decoded replies."""
        wire = {b: {a: encode_action(x[i]) for i, a in enumerate(self.agents) if a in self.copies[b].agents and x[i] >= 0}
                for b, x in acts.items()}
        out = {}
        for b, r in self._exchange("step_many", "actions", wire).items():
            with self._named():
                out[b] = self.copies[b].read_step(r)
                self.played[b].append(acts[b].copy())
                self._fill(b, out[b][0], out[b][4])
        return out

    # ------------------------------------------------------------------ the batch interface
    def reset(self, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        self._reset_copies({b: seed + b for b in range(self.B)})
        return self.obs_buf.copy(), self.masks.copy()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        acts = np.asarray(actions, dtype=np.int64).reshape(self.B, self.N_AGENTS)
        rewards = np.zeros((self.B, self.N_AGENTS), np.float32)
        term = np.zeros((self.B, self.N_AGENTS), bool)
        trunc = np.zeros((self.B, self.N_AGENTS), bool)
        done: list[int] = []
        metrics: list[dict[str, float]] = []
        for b, (_, rew, te, tr, infos) in sorted(self._step_copies(dict(enumerate(acts))).items()):
            with self._named():
                for i, a in enumerate(self.agents):
                    rewards[b, i] = self._read(b, "reward", a, reward_value, rew.get(a, 0.0))
                    term[b, i], trunc[b, i] = bool(te.get(a, False)), bool(tr.get(a, False))
                if not self.copies[b].agents:
                    found = next((a for a, i in infos.items() if isinstance(i, dict) and "metrics" in i), None)
                    metrics.append(self._read(b, "final infos' metrics", found or "", metric_values,
                                              infos[found]["metrics"]) if found else {})
                    done.append(b)
            self.returns[b] += rewards[b]
            self.lengths[b] += 1
        # the batch backend's per-term rewards: a code-mode env has one term, its reward
        infos_out: dict[str, Any] = {"reward_terms": {"agent": {"reward": rewards.copy()}}}
        if done:
            infos_out |= {"done_idx": np.array(done), "final_obs": self.obs_buf[done].copy(),
                          "episode_length": self.lengths[done].copy(), "episode_return": self.returns[done].copy(),
                          "metrics": _columns(metrics)}
            self._reset_copies({b: int(self.seeds[b]) + self.B for b in done})
        return self.obs_buf.copy(), rewards, term, trunc, infos_out

    def state_dims(self) -> list[int]:
        """No global state crosses the pipe: 0 (IPPO trains on it; MAPPO needs `state()`)."""
        return [0]

    def state(self) -> np.ndarray:
        raise GymwrightError(NO_STATE, path=self.name, hint="train it with --algo ippo")

    # ------------------------------------------------------------------ checkpoints
    def checkpoint_state(self) -> dict[str, Any]:
        """Plain data (numpy arrays, lists) from which `restore_checkpoint_state` rebuilds this
        env in fresh workers: each copy's seed and the actions of its current episode, and the
        buffers and running returns and lengths."""
        return {"seeds": self.seeds.copy(), "played": [np.array(p, np.int64).reshape(-1, self.N_AGENTS) for p in self.played],
                "obs_buf": self.obs_buf.copy(), "masks": self.masks.copy(),
                "returns": self.returns.copy(), "lengths": self.lengths.copy()}

    def restore_checkpoint_state(self, state: dict[str, Any]) -> None:
        """Replay a `checkpoint_state()` in the workers (see the module docstring)."""
        played = list(state["played"])
        if len(played) != self.B or state["obs_buf"].shape != self.obs_buf.shape:
            raise GymwrightError(f"the saved env has {len(played)} copies of obs {state['obs_buf'].shape[1:]}, "
                                 f"this one {self.B} of {self.obs_buf.shape[1:]}", path=self.name,
                                 hint="resume with the same module and --num-envs")
        self._reset_copies({b: int(s) for b, s in enumerate(state["seeds"])})
        for t in range(max((len(p) for p in played), default=0)):
            self._step_copies({b: p[t] for b, p in enumerate(played) if t < len(p)})
        if not (np.array_equal(self.obs_buf, state["obs_buf"]) and np.array_equal(self.masks, state["masks"])
                and all(len(c.agents) for c in self.copies)):
            raise GymwrightError("replaying the saved episodes did not give the saved observations: the module "
                                 "is not deterministic under reset(seed)", path=self.name,
                                 hint="train it again from the start (without --resume), or make reset(seed) seed all its randomness")
        self.returns[...], self.lengths[...] = state["returns"], state["lengths"]

    def close(self) -> None:
        self._closer()

    def __enter__(self) -> SandboxedBatchEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["NO_STATE", "SandboxedBatchEnv", "vetting_error"]
