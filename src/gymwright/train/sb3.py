"""Stable-Baselines3 and sb3-contrib's MaskablePPO on a gymwright environment, through SuperSuit.

`sb3_vec_env(parallel_env, copies)` turns a PettingZoo ParallelEnv (compiled by gymwright, or
imported from an exported module) into one SB3 `VecEnv` over all agents of `copies` copies
(parameter sharing: SuperSuit pads the roles' observation and action spaces to one). The
result, `MaskedVecEnv`, does what SuperSuit's own `concat_vec_envs_v1(...,
base_class="stable_baselines3")` does, and three things more:

* **Masks.** `action_masks()` returns the legal actions of every sub-env (one row per agent
  and copy, read from the env's `infos[agent]["action_mask"]`, padded with illegal entries up
  to the padded action space): sb3-contrib's `MaskablePPO` finds it through
  `env_method("action_masks")` and never samples an illegal action. Plain `PPO` ignores it.
* **Illegal actions counted.** `illegal_actions` counts the actions the env flagged
  (`infos[agent]["illegal_action"]`, which the env treats as no action), so a run can show
  how many of its picks were silent no-ops. An agent without any legal action (in a
  turn-based spec, the one whose turn it is not) takes no action instead (`NoActionWhenNoneLegal`).
* **Seeds.** `PPO(..., seed=S)` calls `env.seed(S)`, which SuperSuit's wrapper passes to its
  vector env, which has no `seed` (an AttributeError in SuperSuit 3.11 with Gymnasium 1.x),
  and its `reset` drops the seed anyway. Here `seed(S)` is kept for the next `reset`, where
  copy c starts from seed S + c, so a seeded run is repeatable.

Truncated episodes are marked `TimeLimit.truncated` in the infos (SB3 then bootstraps from
`terminal_observation`, which SuperSuit adds). Needs the `sb3` extra (SB3 and SuperSuit);
`MaskablePPO` needs `sb3-contrib` as well.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper

from gymwright.errors import GymwrightError

INSTALL_HINT = "pip install 'gymwright[sb3]' (and sb3-contrib for MaskablePPO)"


def _sb3() -> tuple[Any, Any]:
    """(supersuit, stable_baselines3.common.vec_env.VecEnv), or a GymwrightError saying what to install."""
    try:
        import supersuit
        from stable_baselines3.common.vec_env import VecEnv
    except ImportError as e:
        raise GymwrightError(f"Stable-Baselines3 or SuperSuit is not installed ({e.name or e})",
                             hint=INSTALL_HINT) from e
    return supersuit, VecEnv


class NoActionWhenNoneLegal(BaseParallelWrapper):
    """Drops the action of every agent whose mask has no legal action (it takes no action, as
    the env's `None` means), so that a learner that must act for every agent at every step
    does not pick an illegal action for an agent whose turn it is not."""

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, infos = self.env.reset(seed=seed, options=options)
        self._infos = infos
        return obs, infos

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        acting = {a: x for a, x in actions.items() if _has_legal(self._infos, a)}
        out = self.env.step(acting)
        self._infos = out[4]
        return out


def _has_legal(infos: dict, agent: str) -> bool:
    """Whether `agent` has a legal action now (True for an env without masks)."""
    mask = infos.get(agent, {}).get("action_mask")
    return mask is None or bool(np.any(mask))


def sb3_vec_env(parallel_env: ParallelEnv, copies: int = 1) -> Any:
    """One SB3 VecEnv (`MaskedVecEnv`) over every agent of `copies` copies of `parallel_env`:
    SuperSuit pads the roles' spaces, turns the agents into sub-envs and concatenates copies."""
    if not isinstance(copies, int) or copies < 1:
        raise GymwrightError(f"copies must be an int >= 1, got {copies!r}", path="copies", value=copies,
                             hint="give the number of env copies to run side by side, e.g. 4")
    if getattr(parallel_env.unwrapped, "AGENT_ENDS", False):
        raise GymwrightError("this env ends agents one by one (`terminate_agent`), and SuperSuit's vector env needs "
                             "every agent at every step", path="terminate_agent",
                             hint="train it with gymwright's own trainer, or end the whole episode with `terminate`")
    ss, _ = _sb3()
    env = ss.pad_observations_v0(NoActionWhenNoneLegal(parallel_env))
    env = ss.pad_action_space_v0(env)
    vec = ss.pettingzoo_env_to_vec_env_v1(env)
    return _masked_vec_env_class()(ss.concat_vec_envs_v1(vec, copies, num_cpus=0, base_class="gymnasium"))


class _MaskedVecEnv:
    """An SB3 VecEnv over SuperSuit's concatenated vector env, with `action_masks()`, the
    illegal actions counted and `seed()` applied at the next reset (see the module doc): the
    methods of `MaskedVecEnv`, which puts SB3's `VecEnv` after them (`_masked_vec_env_class`)."""

    num_envs: int  # these four are VecEnv's
    action_space: Any
    _seeds: list[Any]
    _reset_seeds: Callable[[], None]

    def __init__(self, venv: Any) -> None:
        self.venv = venv
        self.render_mode = venv.render_mode
        super().__init__(venv.num_envs, venv.observation_space, venv.action_space)
        self.illegal_actions = 0
        self._masks = np.ones((self.num_envs, int(self.action_space.n)), dtype=bool)
        self._actions: np.ndarray | None = None

    # ---------------------------------------------------------- stepping
    def reset(self) -> np.ndarray:
        seed = self._seeds[0]
        obs, infos = self.venv.reset(seed=seed)
        self._reset_seeds()
        self.reset_infos = list(infos)
        self._read_masks(infos)
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions
        self.venv.step_async(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        obs, rewards, terms, truncs, infos = self.venv.step_wait()
        dones = np.logical_or(terms, truncs)
        infos = list(infos)
        for i, info in enumerate(infos):
            info["TimeLimit.truncated"] = bool(truncs[i] and not terms[i])
            self.illegal_actions += bool(info.get("illegal_action"))
        self._read_masks(infos)
        return obs, np.asarray(rewards, dtype=np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, n) bool: the legal actions of every sub-env now (MaskablePPO reads it)."""
        return self._masks.copy()

    def _read_masks(self, infos: Sequence[dict]) -> None:
        self._masks[:] = True
        for i, info in enumerate(infos):
            mask = info.get("action_mask")
            if mask is not None:
                self._masks[i] = False
                self._masks[i, : len(mask)] = np.asarray(mask, dtype=bool)

    # ---------------------------------------------------------- VecEnv plumbing
    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        if attr_name == "render_mode":
            return [self.render_mode] * len(self._indices(indices))
        raise AttributeError(f"{attr_name} is not an attribute of the sub-envs (agents of a "
                             "PettingZoo env) that this VecEnv exposes")

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"cannot set {attr_name} on the agents of a PettingZoo env")

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in self._indices(indices)]
        raise AttributeError(f"{method_name} is not a method this VecEnv exposes (only action_masks)")

    def has_attr(self, attr_name: str) -> bool:
        return attr_name in ("action_masks", "render_mode")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def render(self, mode: str | None = None) -> Any:
        return self.venv.render()

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)


@functools.cache
def _masked_vec_env_class() -> type:
    """The class MaskedVecEnv, made on first use: `_MaskedVecEnv`'s methods on SB3's VecEnv."""
    _, VecEnv = _sb3()
    return type("MaskedVecEnv", (_MaskedVecEnv, VecEnv), {"__doc__": _MaskedVecEnv.__doc__, "__module__": __name__})


def __getattr__(name: str) -> Any:
    """`MaskedVecEnv` is built when first asked for (importing this module needs no SB3)."""
    if name == "MaskedVecEnv":
        return _masked_vec_env_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
