"""The fixed policies that play the agents a served client does not: `random` (a uniformly random
legal action) and `scripted:NAME` (the spec's scripted baseline NAME; a random legal action where
no rule of it applies). They answer in text, with the action's name, as a model would."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gymwright.errors import GymwrightError

OPPONENT_FORMS = "`random` or `scripted:NAME` (NAME one of the spec's baselines)"


@dataclass(frozen=True)
class Opponent:
    """A fixed policy: `kind` is "random" or "scripted", `name` the baseline of a scripted one."""

    kind: str
    name: str = ""

    def action(self, game: Any, agent: str, rng: np.random.Generator) -> int | None:
        """The action index `agent` plays now (None: it has no legal action)."""
        env = game.env
        if self.kind == "scripted":
            return env.scripted_action(self.name, agent, rng=rng)
        legal = np.flatnonzero(np.asarray(game.masks[agent]))
        if legal.size == 0:
            return None
        return int(legal[min(int(rng.random() * legal.size), legal.size - 1)])

    def replies(self, game: Any, agents: list[str], rng: np.random.Generator) -> dict[str, str]:
        """Reply texts (the action's name) for `agents`, one draw of `rng` per random choice."""
        out: dict[str, str] = {}
        for agent in agents:
            action = self.action(game, agent, rng)
            if action is not None:
                out[agent] = action_name(game, agent, action)
        return out


def action_name(game: Any, agent: str, action: int) -> str:
    """The text that names action `action` of `agent`: its name, as the rules card lists it."""
    return str(game.view.action_name(agent, action))


def parse_opponent(text: str, spec: Any) -> Opponent:
    """`random` or `scripted:NAME`, checked against `spec`'s baselines."""
    from gymwright.train.baselines import baseline_names, unknown_baseline

    kind, _, name = text.partition(":")
    if text == "random":
        return Opponent("random")
    if kind == "scripted" and name:
        names = baseline_names(spec)
        if name not in names:
            err = unknown_baseline(name, names)
            raise GymwrightError(err.message, path="opponent", hint=err.hint)
        return Opponent("scripted", name)
    raise GymwrightError(f"unknown opponent {text!r}", path="opponent", hint=f"give {OPPONENT_FORMS}")
