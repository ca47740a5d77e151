"""Who plays the agents the trained model does not: `self`, `random`, `scripted:NAME` or a model.

An opponent answers a list of asks (a game and one of its agents that must decide) with one reply
text each, written as the action's name, so every reply goes through the game's own parser. A
scripted baseline reads the game's env (`scripted_action`); where its rule gives no legal action a
random legal one is played. A model opponent answers from the agent's chat, in one batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from gymwright.errors import GymwrightError
from gymwright.llm.transformers_provider import LoadedModel, generate_batch
from gymwright.lmtrain.chat import first_ids
from gymwright.train.baselines import declared_baselines, unknown_baseline

Ask = tuple[Any, str]  # (TextGame, agent)
SYNTAX = "self, random, scripted:NAME (a baseline of the spec) or a model (hf:PATH, openai:MODEL, ...)"


class Opponent(Protocol):
    name: str

    def replies(self, asks: Sequence[Ask]) -> list[str]: ...


def legal(game: Any, agent: str) -> list[tuple[int, str]]:
    return list(game.view.legal(agent, game.masks[agent]))


class RandomOpponent:
    """A uniformly random legal action, drawn from the game's seed, turn and agent: the episodes
    of a group (one seed) meet the same draws wherever their histories agree."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def replies(self, asks: Sequence[Ask]) -> list[str]:
        out = []
        for game, agent in asks:
            options = legal(game, agent)
            rng = np.random.default_rng([self.seed, game.seed, game.turns, game.view.index[agent]])
            out.append(options[int(rng.integers(len(options)))][1])
        return out


class ScriptedOpponent:
    """The spec's scripted baseline `name` (its first rule that holds and is legal)."""

    def __init__(self, baseline: str, seed: int = 0) -> None:
        self.baseline = baseline
        self.name = f"scripted:{baseline}"
        self.fallback = RandomOpponent(seed)

    def check(self, game: Any) -> None:
        env = getattr(game.env, "unwrapped", game.env)
        names = declared_baselines(env)
        if self.baseline not in names:
            raise unknown_baseline(self.baseline, names)

    def replies(self, asks: Sequence[Ask]) -> list[str]:
        out = []
        for game, agent in asks:
            env = getattr(game.env, "unwrapped", game.env)
            action = env.scripted_action(self.baseline, agent)
            names = dict(legal(game, agent))
            out.append(names[action] if action in names else self.fallback.replies([(game, agent)])[0])
        return out


class ModelOpponent:
    """A language model (`hf:` in this process, batched) answering from the agent's chat."""

    def __init__(self, lm: LoadedModel, name: str, *, max_new_tokens: int, temperature: float = 1.0,
                 seed: int = 0, rules: bool = True) -> None:
        self.lm, self.name, self.rules = lm, name, rules
        self.max_new_tokens, self.temperature, self.seed = max_new_tokens, temperature, seed

    def replies(self, asks: Sequence[Ask]) -> list[str]:
        if not asks:
            return []
        prompts = [first_ids(self.lm.tokenizer, shown(game.messages(agent), self.rules)) for game, agent in asks]
        self.seed += 1
        made = generate_batch(self.lm, prompts, max_new_tokens=self.max_new_tokens,
                              temperature=self.temperature, seed=self.seed)
        return [self.lm.tokenizer.decode(g.ids, skip_special_tokens=True) for g in made]


class ProviderOpponent:
    """Any other provider (`openai:`, `local:`, ...), one request per ask."""

    def __init__(self, provider: Any, name: str, *, max_new_tokens: int, rules: bool = True) -> None:
        self.provider, self.name, self.max_new_tokens, self.rules = provider, name, max_new_tokens, rules

    def replies(self, asks: Sequence[Ask]) -> list[str]:
        from gymwright.llm.base import Message, Request

        out = []
        for game, agent in asks:
            chat = tuple(Message(m["role"], m["content"])  # type: ignore[arg-type]  # a chat's roles are system/user/assistant, as Role says
                         for m in shown(game.messages(agent), self.rules))
            out.append(self.provider.complete(Request(chat, max_tokens=self.max_new_tokens)).text)
        return out


def shown(messages: list[dict[str, str]], rules: bool) -> list[dict[str, str]]:
    """The chat as the model sees it: without the rules card (the system message) unless `rules`."""
    return messages if rules else [m for m in messages if m["role"] != "system"]


def make_opponent(name: str, learner: LoadedModel, *, max_new_tokens: int, seed: int = 0,
                  rules: bool = True, device: str = "auto") -> Opponent:
    """The opponent `name` (see SYNTAX); `self` plays the learner's own (current) model."""
    text = name.strip()
    if text == "self":
        return ModelOpponent(learner, "self", max_new_tokens=max_new_tokens, seed=seed, rules=rules)
    if text == "random":
        return RandomOpponent(seed)
    if text.startswith("scripted:") and text.removeprefix("scripted:"):
        return ScriptedOpponent(text.removeprefix("scripted:"), seed)
    if text.startswith("hf:") and text.removeprefix("hf:"):
        from gymwright.llm.transformers_provider import load_model

        return ModelOpponent(load_model(text.removeprefix("hf:"), device), text,
                             max_new_tokens=max_new_tokens, seed=seed, rules=rules)
    if ":" in text:
        from gymwright.llm.resolve import provider_from_name

        return ProviderOpponent(provider_from_name(text), text, max_new_tokens=max_new_tokens, rules=rules)
    raise GymwrightError(f"unknown opponent {name!r}", path="opponent", hint=f"use {SYNTAX}")
