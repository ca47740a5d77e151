"""Helpers the tests share for playing a live PettingZoo parallel env (imported as `playing`)."""

from __future__ import annotations

from typing import Any

import numpy as np


def random_legal_actions(env: Any, infos: dict[str, Any], rng: np.random.Generator) -> dict[str, int]:
    """A uniformly random legal action (per `infos[agent]["action_mask"]`) for every live agent that has one."""
    actions = {}
    for a in env.agents:
        legal = np.flatnonzero(infos[a]["action_mask"])
        if len(legal):
            actions[a] = int(rng.choice(legal))
    return actions


def text_game_played(spec: str, params: dict[str, Any], seed: int, reply_of: Any) -> Any:
    """`spec` played through `TextGame` alone, each asked agent replying `reply_of(agent, turn)`."""
    from gymwright.textgame import TextGame

    game = TextGame(spec, params)
    prompts, turn = game.reset(seed=seed), 0
    while not game.done:
        prompts = game.step({a: reply_of(a, turn) for a in prompts})[0]
        turn += 1
    return game
