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

MAX_AGENTS = 256


def _agent_dict(value: Any, what: str, agents: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict) or not set(value) <= agents | {"common"}:
        raise SandboxError(f"{what} must be a dict keyed by agent ids, got "
                           f"{type(value).__name__} {sorted(value)[:5] if isinstance(value, dict) else ''}",
                           kind="code", where=what)
    return value


def encode_action(action: Any) -> Any:
    return action.tolist() if isinstance(action, np.ndarray) else action.item() if isinstance(action, np.generic) else action


class SandboxedParallelEnv(ParallelEnv):  # type: ignore[misc]
    """One instance of the model's class, living in `sandbox`."""

    metadata = {"render_modes": [], "name": "codemode", "is_parallelizable": True}

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        made = sandbox.request({"op": "make"})
        agents = made.get("agents")
        if not (isinstance(agents, list) and 0 < len(agents) <= MAX_AGENTS
                and all(isinstance(a, str) for a in agents) and len(set(agents)) == len(agents)):
            raise SandboxError(f"possible_agents must be 1-{MAX_AGENTS} distinct strings", kind="code",
                               where="__init__")
        self.id: int = int(made["id"])
        self.possible_agents: list[str] = list(agents)
        self.agents: list[str] = []
        try:
            self._spaces = {a: (rebuild(made["spaces"][a]["observation"]), rebuild(made["spaces"][a]["action"]))
                            for a in agents}
        except (WireError, KeyError, TypeError, ValueError) as e:
            raise SandboxError(f"a space cannot be used: {e}", kind="code", where="observation_space") from None
        self.closed = False

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._spaces[agent][0]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._spaces[agent][1]

    def _agents(self, reply: dict[str, Any], what: str) -> None:
        agents = reply.get("agents")
        if not (isinstance(agents, list) and set(agents) <= set(self.possible_agents)):
            raise SandboxError(f"after {what}, env.agents must be a subset of possible_agents",
                               kind="code", where=what)
        self.agents = list(agents)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        reply = self.sandbox.request({"op": "reset", "id": self.id, "seed": seed, "options": options})
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


__all__ = ["SandboxedParallelEnv", "load_module"]
