"""A PettingZoo ParallelEnv in gymwright's process whose every call runs in a sandbox worker.

`SandboxedParallelEnv` is what the checks (PettingZoo's own API tests among them), the trainer
and the evaluator drive: its spaces are rebuilt in this process from data (`spaces.rebuild`),
its replies are decoded and shape-checked here, and a failure in the worker is a
`SandboxError` naming the call and the model's line. `load_module` starts a worker and loads a
module into it; one worker holds any number of instances (`make`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from gymwright.codemode.sandbox import Layers, Limits, Sandbox, SandboxError
from gymwright.codemode.spaces import rebuild
from gymwright.codemode.wire import WireError
from gymwright.spec.limits import MAX_AGENTS, MAX_METRICS

MAX_NAME = 64  # characters of an agent's or a metric's name (errors and logs show it, the report charts it)


def _agent_dict(value: Any, what: str, agents: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict) or not set(value) <= agents | {"common"}:
        raise SandboxError(f"{what} must be a dict keyed by agent ids, got "
                           f"{type(value).__name__} {sorted(value)[:5] if isinstance(value, dict) else ''}",
                           kind="code", where=what)
    return value


# ---------------------------------------------------------------------- values of a reply, for a batch
# Each raises ValueError saying what is wrong with the value; the batch env says where (copy, step, agent).
def observation_row(value: Any, space: spaces.Space[Any]) -> np.ndarray:
    """An observation as the batch's float32 row: numbers of exactly the Box's shape."""
    try:
        with np.errstate(over="ignore"):  # a float beyond float32 becomes an infinity, which the trainer refuses
            arr = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"is a {type(value).__name__}, not an array of numbers") from None
    if arr.shape != space.shape:
        raise ValueError(f"has shape {arr.shape}; its observation_space {space} has {space.shape}")
    return arr.ravel()


def reward_value(value: Any) -> float:
    """A reward as a float: an int or a float (a NaN passes here; the trainer refuses it, naming the step)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"is {_shown(value)}, not a number")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"is an int of {len(str(value))} digits, too large for a float") from None


def mask_row(value: Any, n: int) -> np.ndarray:
    """An action mask: n zeros and ones."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        arr = np.zeros(0, object)
    if arr.shape != (n,) or arr.dtype.kind not in "biuf" or not np.isin(arr, (0, 1)).all():
        raise ValueError(f"is {_shown(value)}; it must be {n} zeros and ones, one per action")
    return arr.astype(np.int8)


def metric_values(value: Any) -> dict[str, float]:
    """The final infos' `metrics`: at most MAX_METRICS printable names of at most MAX_NAME
    characters, each a number (a flood of names would grow every log row and chart)."""
    if not isinstance(value, dict):
        raise ValueError(f"is {_shown(value)}, not a dict of name: number")
    if len(value) > MAX_METRICS:
        raise ValueError(f"holds {len(value):,} names; at most {MAX_METRICS} metrics are logged")
    out = {}
    for name, x in value.items():
        if not (isinstance(name, str) and 0 < len(name) <= MAX_NAME and name.isprintable()):
            raise ValueError(f"has a name {_shown(name)}: names are 1-{MAX_NAME} printable characters")
        if isinstance(x, bool):
            x = float(x)
        if not isinstance(x, int | float):
            raise ValueError(f"{name!r} is {_shown(x)}, not a number")
        try:
            out[name] = float(x)
        except OverflowError:
            raise ValueError(f"{name!r} is an int too large for a float") from None
    return out


def _shown(value: Any) -> str:
    """A value as an error shows it: its type and a short repr (escaped, so model text stays inert)."""
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


def encode_action(action: Any) -> Any:
    return action.tolist() if isinstance(action, np.ndarray) else action.item() if isinstance(action, np.generic) else action


class SandboxedParallelEnv(ParallelEnv):
    """One instance of the model's class, living in `sandbox`, made with `params` as keyword
    arguments (checked by the caller against the class: `codemode.params.check_params`)."""

    metadata = {"render_modes": [], "name": "codemode", "is_parallelizable": True}

    def __init__(self, sandbox: Sandbox, params: dict[str, Any] | None = None) -> None:
        self.sandbox = sandbox
        made = sandbox.request({"op": "make", "params": dict(params or {})})
        agents = made.get("agents")
        if not (isinstance(agents, list) and 0 < len(agents) <= MAX_AGENTS
                and all(isinstance(a, str) and 0 < len(a) <= MAX_NAME and a.isprintable() for a in agents)
                and len(set(agents)) == len(agents)):
            raise SandboxError(f"possible_agents must be 1-{MAX_AGENTS} distinct strings of 1-{MAX_NAME} printable "
                               f"characters, got {_shown(agents)}", kind="code", where="__init__")
        if not isinstance(made.get("id"), int) or isinstance(made.get("id"), bool):
            raise SandboxError(f"the worker sent an instance id {_shown(made.get('id'))}", kind="protocol")
        self.id: int = made["id"]
        self.possible_agents: list[str] = list(agents)
        self.agents: list[str] = []
        try:
            self._spaces = {a: (rebuild(made["spaces"][a]["observation"]), rebuild(made["spaces"][a]["action"]))
                            for a in agents}
        except (WireError, KeyError, TypeError, ValueError) as e:
            raise SandboxError(f"a space cannot be used: {e}", kind="code", where="observation_space") from None
        self.text_hook: Any = made.get("text") if isinstance(made.get("text"), dict) else None  # the class's TEXT
        self.closed = False

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._spaces[agent][0]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._spaces[agent][1]

    def _agents(self, reply: dict[str, Any], what: str) -> None:
        agents = reply.get("agents")
        if not (isinstance(agents, list) and all(isinstance(a, str) for a in agents)
                and set(agents) <= set(self.possible_agents)):
            raise SandboxError(f"after {what}, env.agents must be a subset of possible_agents",
                               kind="code", where=what)
        self.agents = list(agents)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.read_reset(self.sandbox.request({"op": "reset", "id": self.id, "seed": seed, "options": options}))

    def read_reset(self, reply: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        self._agents(reply, "reset")
        known = set(self.possible_agents)
        return _agent_dict(reply.get("obs"), "reset's observations", known), \
            _agent_dict(reply.get("infos"), "reset's infos", known)

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        reply = self.sandbox.request({"op": "step", "id": self.id,
                                      "actions": {a: encode_action(x) for a, x in actions.items()}})
        return self.read_step(reply)

    def read_step(self, reply: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        self._agents(reply, "step")
        known = set(self.possible_agents)
        return tuple(_agent_dict(reply.get(k), f"step's {k}", known)
                     for k in ("obs", "rewards", "terminations", "truncations", "infos"))

    def close(self) -> None:
        if not self.closed and self.sandbox.alive:
            self.closed = True
            try:
                self.sandbox.request({"op": "close", "id": self.id})
            except SandboxError:
                pass

    def state(self) -> np.ndarray:
        raise NotImplementedError("a code-mode env has no global state() over the pipe")


def load_module(code: str, env_class: str | None = None, *, limits: Limits | None = None,
                layers: Layers | None = None) -> Sandbox:
    """A worker with `code` loaded (the caller closes it). Raises SandboxError."""
    sandbox = Sandbox(limits, layers)
    try:
        sandbox.request({"op": "load", "code": code, "class": env_class})
    except SandboxError:
        sandbox.close()
        raise
    return sandbox


__all__ = ["MAX_NAME", "SandboxedParallelEnv", "load_module", "mask_row", "metric_values", "observation_row",
           "reward_value"]
