"""A language model as a policy: `llm:MODEL` wherever a policy acts (evaluate, play, report, a
fixed partner or opponent in training).

`LLMPolicy.act(obs, masks)` has the shape of every gymwright policy: observations (B, N, D) and
masks (B, N, A) in, actions (B, N) out. For each copy and each of its agents with a choice it
writes the agent's rules card and this turn's message (the agent's own observation, nothing
more: what a trained policy sees) from the text view, asks the model for all of them at once
(one batch in-process, or concurrent calls to a server; replies cached by content), and parses
each reply. A reply that names no legal action follows the view's declared rule and is counted.
An agent with one legal action plays it unasked. Every decision is kept (`decisions`): the
reply (the model's reasoning, where it wrote any), the action it led to, whether it was valid.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gymwright.errors import GymwrightError
from gymwright.llm.base import Message, Request
from gymwright.llm.client import LLM, Budget
from gymwright.textgame.view import TextView

MAX_DECISIONS_KEPT = 20_000


@dataclass
class Decision:
    """One reply of the model and what became of it."""

    copy: int
    agent: str
    reply: str
    action: int
    action_name: str
    valid: bool
    error: str = ""
    tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"copy": self.copy, "agent": self.agent, "reply": self.reply, "action": self.action,
                "action_name": self.action_name, "valid": self.valid, "error": self.error, "tokens": self.tokens}


@dataclass
class Tally:
    """What the model did so far: decisions, invalid replies, tokens, seconds spent waiting."""

    decisions: int = 0
    invalid: int = 0
    tokens: int = 0
    seconds: float = 0.0
    cached: int = 0
    first: int = 0  # valid replies that named the first legal action listed (a position bias shows here)
    kept: list[Decision] = field(default_factory=list)

    @property
    def valid_rate(self) -> float:
        return 1.0 - self.invalid / self.decisions if self.decisions else float("nan")

    def to_dict(self) -> dict[str, Any]:
        asked = self.decisions - self.cached  # replies the model wrote (a cache hit costs nothing)
        rate = asked / self.seconds if self.seconds > 0 and asked else float("nan")
        return {"decisions": self.decisions, "invalid": self.invalid, "valid_rate": self.valid_rate,
                "tokens": self.tokens, "seconds": round(self.seconds, 3), "decisions_per_s": rate,
                "cached": self.cached, "first_listed": self.first / valid if (valid := self.decisions - self.invalid) else float("nan")}


class LLMPolicy:
    """A model (an `LLM` client) playing the agents of a spec from their text view."""

    kind = "llm"

    def __init__(self, llm: LLM, spec: Any, params: dict[str, Any] | None = None, *, temperature: float = 0.0,
                 max_tokens: int = 48, seed: int = 0, max_seconds: float | None = None,
                 progress: Callable[[Tally], None] | None = None, invalid: str = "random",
                 agents: set[int] | None = None) -> None:
        self.llm, self.spec, self.invalid = llm, spec, invalid
        self.agents = agents  # the agent indices it plays (None: every agent); the others get -1
        self.temperature, self.max_tokens, self.max_seconds = temperature, max_tokens, max_seconds
        self.progress = progress
        self.base_params = dict(params or {})
        self.copy_params: list[dict[str, Any]] = [self.base_params]
        self.views: dict[str, TextView] = {}
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.turn = 0
        self.tally = Tally()
        self.last: dict[tuple[int, int], Decision] = {}

    @property
    def label(self) -> str:
        return f"llm:{self.llm.label}"

    # ------------------------------------------------------------------ the env's params
    def bind(self, env: Any) -> None:
        """Read each copy's params from the env (a batch env or one PettingZoo env), so every copy's
        rules card states its own settings."""
        p = getattr(env, "p", None)
        names = [k for k, _, _ in self.view_for(self.base_params).layout["params"]]
        if p is None or not names:
            return
        size = int(getattr(env, "size", 1))
        self.copy_params = [{**self.base_params, **{k: _item(getattr(p, k), b) for k in names if hasattr(p, k)}}
                            for b in range(size)]

    def view_for(self, params: dict[str, Any]) -> TextView:
        key = repr(sorted(params.items()))
        if key not in self.views:
            self.views[key] = TextView.of(self.spec, params, self.invalid)
        return self.views[key]

    def view_of_copy(self, b: int) -> TextView:
        return self.view_for(self.copy_params[b] if b < len(self.copy_params) else self.copy_params[-1])

    # ------------------------------------------------------------------ acting
    def act(self, obs: Any, masks: Any, deterministic: bool = False) -> np.ndarray:
        obs, masks = np.asarray(obs), np.asarray(masks)
        acts = np.full(masks.shape[:2], -1, dtype=np.int64)
        asks: list[tuple[int, int, TextView, str, int]] = []  # copy, agent index, view, agent, its first legal action
        for b in range(masks.shape[0]):
            view = self.view_of_copy(b)
            for i, agent in enumerate(view.agents):
                if self.agents is not None and i not in self.agents:
                    continue
                legal = view.legal(agent, masks[b, i])
                if len(legal) == 1:
                    acts[b, i] = legal[0][0]
                elif legal:
                    asks.append((b, i, view, agent, legal[0][0]))
        if asks:
            self._ask(asks, obs, masks, acts, deterministic)
        self.turn += 1
        return acts

    def _ask(self, asks: list[tuple[int, int, TextView, str, int]], obs: np.ndarray, masks: np.ndarray,
             acts: np.ndarray, deterministic: bool) -> None:
        self._check_time()
        requests = [self._request(view, agent, obs[b, i], masks[b, i], b, deterministic) for b, i, view, agent, _ in asks]
        start = time.perf_counter()
        replies = self.llm.complete_many(requests)
        self.tally.seconds += time.perf_counter() - start
        for (b, i, view, agent, first), reply in zip(asks, replies, strict=True):
            acts[b, i] = self._decide(b, i, view, agent, reply, masks[b, i], first)
        if self.progress is not None:
            self.progress(self.tally)

    def _request(self, view: TextView, agent: str, obs: np.ndarray, mask: np.ndarray, b: int,
                 deterministic: bool) -> Request:
        messages = (Message("system", view.rules(agent)), Message("user", view.prompt(agent, obs, mask)))
        sampled = not deterministic and self.temperature > 0
        return Request(messages=messages, temperature=self.temperature if sampled else 0.0,
                       max_tokens=self.max_tokens, seed=hash((self.seed, self.turn, b, agent)) % 2**31 if sampled else 0)

    def _decide(self, b: int, i: int, view: TextView, agent: str, reply: Any, mask: np.ndarray, first: int) -> int:
        parsed = view.parse(agent, reply.text, mask)
        action = parsed.action if parsed.action is not None else view.fallback(agent, mask, self.rng)
        tokens = reply.usage.total
        self.tally.decisions += 1
        self.tally.invalid += 0 if parsed.valid else 1
        self.tally.tokens += tokens
        self.tally.cached += int(reply.cached)
        self.tally.first += int(parsed.valid and action == first)
        d = Decision(b, agent, reply.text, int(action), view.action_name(agent, int(action)), parsed.valid, parsed.error, tokens)
        self.last[(b, i)] = d
        if len(self.tally.kept) < MAX_DECISIONS_KEPT:
            self.tally.kept.append(d)
        return int(action)

    def _check_time(self) -> None:
        if self.max_seconds is not None and self.tally.seconds > self.max_seconds:
            raise GymwrightError(f"{self.label}: its time budget of {self.max_seconds:g} s is spent "
                                 f"({self.tally.decisions} decisions made)", path="max_seconds",
                                 hint="raise --llm-seconds, or play fewer episodes")


def _item(values: Any, b: int) -> Any:
    """Copy b's value of a param (an array over copies, or one value for all)."""
    arr = np.asarray(values)
    x = arr.reshape(-1)[min(b, arr.size - 1)] if arr.ndim else arr
    return x.item() if hasattr(x, "item") else x


def make_llm_policy(model: str, spec: Any, params: dict[str, Any] | None = None, *, max_calls: int = 100_000,
                    max_tokens_total: int = 50_000_000, cache: Any = None, **options: Any) -> LLMPolicy:
    """`llm:MODEL` as a policy: the provider of `MODEL` (any `--model` name: `openai:...`,
    `anthropic:...`, `ollama:...`, `local:...`, `hf:...`, `scripted:FILE`) with a budget and a cache."""
    from gymwright.llm.resolve import provider_from_name

    llm = LLM(provider_from_name(model), budget=Budget(max_calls=max_calls, max_tokens=max_tokens_total), cache=cache)
    return LLMPolicy(llm, spec, params, **options)
