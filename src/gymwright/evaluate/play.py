"""A batch-trained policy acting in one PettingZoo parallel env (the Python backend).

The batch backend pads every role's observations and actions to the largest role's, in agent
order; `act_parallel` builds the same padded `[1, N, D]` / `[1, N, A]` arrays from one env's
dicts, so a policy trained on the batch backend plays the exported env unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from gymwright.codemode.proxy import mask_row, observation_row
from gymwright.errors import GymwrightError


class Actor(Protocol):
    def act(self, obs: Any, masks: Any, deterministic: bool = False) -> np.ndarray: ...


def act_parallel(env: Any, policy: Actor, obs: dict[str, Any], infos: dict[str, Any],
                 deterministic: bool = False) -> dict[str, int]:
    """The policy's actions for the live agents of a PettingZoo parallel env (one copy)."""
    if callable(getattr(policy, "bind", None)):  # a team with scripted agents reads this env's state
        policy.bind(env)
    agents = env.possible_agents
    n_actions = max(env.action_space(a).n for a in agents)
    dim = max(env.observation_space(a).shape[0] for a in agents)
    o = np.zeros((1, len(agents), dim), dtype=np.float32)
    m = np.zeros((1, len(agents), n_actions), dtype=np.int8)
    for i, a in enumerate(agents):
        if a in obs:
            x = _read(env, a, "observation", observation_row, obs[a], env.observation_space(a))
            o[0, i, : x.size] = x
        mask = infos.get(a, {}).get("action_mask")
        if mask is not None:
            m[0, i, : env.action_space(a).n] = _read(env, a, "action_mask", mask_row, mask, env.action_space(a).n)
        elif a in env.agents:
            m[0, i, : env.action_space(a).n] = 1
    acts = policy.act(o, m, deterministic=deterministic)[0]
    return {a: int(acts[i]) for i, a in enumerate(agents) if a in env.agents and acts[i] >= 0}


def _read(env: Any, agent: str, what: str, decode: Callable[..., np.ndarray], *args: Any) -> np.ndarray:
    """`decode(*args)` (an observation or a mask as the policy reads it), or an error naming the env and the agent."""
    try:
        return decode(*args)
    except ValueError as e:
        raise GymwrightError(f"{agent}'s {what} {e}", path=str(env.metadata.get("name", "the env")),
                             hint="an env hands the policy what its spaces declare: observations of the Box's "
                                  "shape, action masks of one 0/1 per action") from None
