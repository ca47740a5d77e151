"""`TextGame`: one PettingZoo env played as text, reply by reply.

Each agent that must decide gets the rules card once (`system`) and, each turn, a message with its
observation and legal actions (`reset`, `step`); its reply is parsed (`TextView.parse`). A reply
that names no legal action follows the declared rule (`invalid`: a random legal action, or the
first) and is counted. An agent with one legal action plays it without being asked (a turn that is
not its own, a forced move); an agent with none is not asked. The chat of each agent is kept
(`messages`), so an LLM trainer or server sends exactly what the agent saw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gymwright.compile import compile_spec
from gymwright.compile.textlayout import INVALID_DEFAULT
from gymwright.errors import GymwrightError
from gymwright.textgame.view import Parsed, TextView

Step = tuple[dict[str, str], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]


class TextGame:
    """A spec's env (or any ParallelEnv, `env=`) as a text game; see the module docstring."""

    def __init__(self, spec: Any = None, params: dict[str, Any] | None = None, invalid: str = INVALID_DEFAULT,
                 seed: int = 0, env: Any = None) -> None:
        if env is None:
            if spec is None:
                raise GymwrightError("a TextGame needs a spec or an env", path="spec")
            compiled = compile_spec(spec, params)
            env = compiled.parallel_env()
            self.view = TextView.of_checked(compiled.checked, invalid)
        else:
            self.view = TextView.of_env(env, invalid)
        self.env = env
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self._clear()

    def _clear(self) -> None:
        self.obs: dict[str, Any] = {}
        self.masks: dict[str, np.ndarray] = {}
        self.prompts: dict[str, str] = {}
        self.returns: dict[str, float] = {a: 0.0 for a in self.env.possible_agents}
        self.metrics: dict[str, float] = {}
        self.decisions = 0
        self.invalid = 0
        self.turns = 0
        self.chats: dict[str, list[dict[str, str]]] = {a: [] for a in self.env.possible_agents}
        self.done = False

    # ------------------------------------------------------------------ play
    def reset(self, seed: int | None = None) -> dict[str, str]:
        """Start an episode: the first messages of the agents that must decide."""
        seed = self.seed if seed is None else seed
        self.rng = np.random.default_rng(seed)
        self._clear()
        obs, infos = self.env.reset(seed=seed)
        return self._observe(obs, infos)

    def step(self, replies: dict[str, str]) -> Step:
        """Play one step from the replies of the agents asked (`agents_to_act`)."""
        if self.done:
            raise GymwrightError("the episode is over", path="step", hint="call reset() to start another")
        missing = [a for a in self.prompts if a not in replies]
        if missing:
            raise GymwrightError(f"no reply for {', '.join(missing)}", path="replies",
                                 hint=f"reply for every agent asked: {', '.join(self.prompts)}")
        actions, text = self._actions(replies)
        obs, rewards, terms, truncs, infos = self.env.step(actions)
        self.turns += 1
        for a, r in rewards.items():
            self.returns[a] = self.returns.get(a, 0.0) + float(r)
        self.metrics = next((dict(i["metrics"]) for i in infos.values() if "metrics" in i), self.metrics)
        for a, t in text.items():
            infos.setdefault(a, {})["text"] = t
        prompts = self._observe(obs, infos)
        return prompts, {a: float(r) for a, r in rewards.items()}, dict(terms), dict(truncs), infos

    def _actions(self, replies: dict[str, str]) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
        actions: dict[str, int] = {}
        text: dict[str, dict[str, Any]] = {}
        for agent, mask in self.masks.items():
            legal = self.view.legal(agent, mask)
            if agent in self.prompts:
                parsed = self.view.parse(agent, str(replies[agent]), mask)
                actions[agent] = self._decided(agent, parsed, mask)
                text[agent] = {"action": actions[agent], "valid": parsed.valid, "how": parsed.how, "error": parsed.error}
                self.chats[agent].append({"role": "assistant", "content": str(replies[agent])})
            elif len(legal) == 1:
                actions[agent] = legal[0][0]
        return actions, text

    def _decided(self, agent: str, parsed: Parsed, mask: np.ndarray) -> int:
        self.decisions += 1
        if parsed.action is not None:
            return parsed.action
        self.invalid += 1
        return self.view.fallback(agent, mask, self.rng)

    def _observe(self, obs: dict[str, Any], infos: dict[str, Any]) -> dict[str, str]:
        self.obs = dict(obs)
        self.masks = {a: self._mask(a, infos) for a in self.env.agents}
        self.done = not self.env.agents
        self.prompts = {}
        for a, mask in self.masks.items():
            if len(self.view.legal(a, mask)) > 1:
                self.prompts[a] = self.view.prompt(a, self.obs[a], mask)
                if not self.chats[a]:
                    self.chats[a].append({"role": "system", "content": self.view.rules(a)})
                self.chats[a].append({"role": "user", "content": self.prompts[a]})
        return dict(self.prompts)

    def _mask(self, agent: str, infos: dict[str, Any]) -> np.ndarray:
        mask = (infos.get(agent) or {}).get("action_mask")
        return np.asarray(mask) if mask is not None else np.ones(int(self.env.action_space(agent).n), dtype=np.int8)

    # ------------------------------------------------------------------ reading
    @property
    def agents_to_act(self) -> list[str]:
        return list(self.prompts)

    def system(self, agent: str) -> str:
        return self.view.rules(agent)

    def messages(self, agent: str) -> list[dict[str, str]]:
        """The chat of `agent` so far: the rules card, then its turns and replies."""
        return [dict(m) for m in self.chats.get(agent, [])]

    @property
    def stats(self) -> dict[str, Any]:
        rate = 1.0 - self.invalid / self.decisions if self.decisions else float("nan")
        return {"decisions": self.decisions, "invalid": self.invalid, "valid_rate": rate, "turns": self.turns}
