"""Baseline policies, played by the same `play_episodes` as trained ones.

`random_legal_policy(seed)` plays a uniformly random legal action. `scripted_policy(name)` plays
a scripted baseline the spec declares in its `baselines:` section: per agent, the action of the
first rule of its role whose `when` holds and whose action is legal (the compiled env's
`scripted_actions(name)`), else a random legal one (drawn here, by `fill_random_legal`: the env
draws only from its seeded stream). A script reads the env's state, so `play_episodes` binds it to
the batch env before play (`bind`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gymwright.compile.mixed import fill_random_legal
from gymwright.errors import GymwrightError


class RandomLegalPolicy:
    """Uniformly random legal actions (per the masks); -1 for agents with none."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, obs: Any, masks: Any, deterministic: bool = False) -> np.ndarray:
        m = np.asarray(masks) != 0
        u = np.where(m, self.rng.random(m.shape), -1.0)
        return np.where(m.any(-1), u.argmax(-1), -1).astype(np.int64)


def random_legal_policy(seed: int = 0) -> RandomLegalPolicy:
    """A policy that plays a uniformly random legal action for every agent."""
    return RandomLegalPolicy(seed)


class ScriptedPolicy:
    """The spec's scripted baseline `name`, played on the batch env it is bound to.

    `seed` seeds the random legal actions of agents no rule applies to. `deterministic` does
    not change a script (its rules are deterministic).
    """

    def __init__(self, name: str, seed: int = 0) -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.benv: Any = None

    def bind(self, benv: Any) -> None:
        """Play on `benv`: a compiled batch env, or a PettingZoo parallel env of the Python backend
        (which has `scripted_action(name, agent)`); an error lists the spec's baselines if it has no
        `name`."""
        env = getattr(benv, "unwrapped", benv)
        if not callable(getattr(benv, "scripted_actions", None)) and not callable(getattr(env, "scripted_action", None)):
            raise GymwrightError(f"this env cannot play scripted baseline `{self.name}`: it has neither "
                                 "`scripted_actions` (a batch env) nor `scripted_action` (a Python-backend env)",
                                 hint="evaluate a scripted baseline on an env compiled from the spec")
        names = list(getattr(benv, "BASELINES", None) or declared_baselines(env))
        if self.name not in names:
            raise unknown_baseline(self.name, names)
        self.benv = benv

    def act(self, obs: Any, masks: Any, deterministic: bool = False) -> np.ndarray:
        if self.benv is None:
            raise GymwrightError(f"scripted baseline `{self.name}` is not bound to an env",
                                 hint="play it with gymwright.train.play_episodes, or call bind(env) first")
        if callable(getattr(self.benv, "scripted_actions", None)):
            acts = self.benv.scripted_actions(self.name)
            if acts.shape[:2] != np.shape(masks)[:2]:  # bound to another env than the one it is asked to play
                raise GymwrightError(f"scripted baseline `{self.name}` is bound to a batch of {acts.shape[0]} copies "
                                     f"but asked to act for {np.shape(masks)[0]}",
                                     hint="bind it (or the Team holding it) to the env it plays: policy.bind(env)")
            return fill_random_legal(acts, masks, self.rng)
        env = getattr(self.benv, "unwrapped", self.benv)  # one PettingZoo env: a batch of one copy
        live = set(env.agents)
        acts = [env.scripted_action(self.name, a) if a in live else None for a in env.possible_agents]
        return fill_random_legal([[-1 if a is None else a for a in acts]], masks, self.rng)


def declared_baselines(env: Any) -> list[str]:
    """The baselines a Python-backend env declares: its module's `BASELINES` (the generated
    module need not be importable by name, so it is read from `scripted_action`'s globals)."""
    method = getattr(type(env), "scripted_action", None)
    return list(getattr(method, "__globals__", {}).get("BASELINES", []))


def scripted_policy(name: str, seed: int = 0) -> ScriptedPolicy:
    """A policy that plays the spec's scripted baseline `name` (bound to the env by `play_episodes`)."""
    return ScriptedPolicy(name, seed)


def baseline_names(spec: Any) -> list[str]:
    """The names of the scripted baselines `spec` (a name, file, text, dict or EnvSpec) declares."""
    from gymwright.compile.build import as_spec

    return list(as_spec(spec).baselines)


def unknown_baseline(name: str, names: list[str]) -> GymwrightError:
    """The error for a baseline the spec does not declare, listing those it does."""
    declared = ", ".join(names) if names else "none (add a `baselines:` section to the spec)"
    return GymwrightError(f"the spec has no scripted baseline `{name}`", path="baselines",
                          hint=f"its baselines: {declared}")
