"""One served episode of a gymwright text game: the agents a client plays, and the others played
by a fixed policy on the server's side. The OpenEnv environment and the verifiers environment are
both thin shells over a `Session`.

```python
session = Session("stag_hunt", role="hunter_0", opponent="scripted:always_stag")
turn = session.reset(seed=0)          # turn.prompts: {"hunter_0": "..."}; session.system("hunter_0")
turn = session.act({"hunter_0": "stag"})
turn.rewards, turn.done, turn.infos["hunter_0"]["valid"]
```

Without `role` the client plays every agent (self-play, or one model per agent): a turn asks each
agent the game prompts, and the game moves once every agent it asked has replied (replies may come
in one `act` or one agent at a time). With `role` the client plays that agent only: the others
answer through `opponent` (`random`: a uniformly random legal action; `scripted:NAME`: the spec's
scripted baseline NAME, a random legal action where no rule of it applies), and the game runs on
until the role must decide again or the episode ends. Rewards are summed over the game steps
between two turns.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gymwright.errors import GymwrightError
from gymwright.serve.opponents import Opponent, parse_opponent


@dataclass
class Turn:
    """What the client sees after a reset or an `act`.

    `prompts`: the user message of each client-played agent the game waits for (those that have
    replied already in this turn are left out); `rewards`: per agent, summed over the game steps
    since the last turn; `infos`: per agent that acted in those steps, the last text info
    (`action`, `valid`, `error`); `done`: the episode is over."""

    prompts: dict[str, str]
    rewards: dict[str, float] = field(default_factory=dict)
    infos: dict[str, dict[str, Any]] = field(default_factory=dict)
    done: bool = False


class Session:
    """A `TextGame` of `spec` served to a client that plays `role` (None: every agent)."""

    def __init__(self, spec: Any, params: dict[str, Any] | None = None, *, role: str | None = None,
                 opponent: str = "random", invalid: str = "random") -> None:
        from gymwright.runtime.textview import TV_INVALID_RULES
        from gymwright.textgame import TextGame

        if invalid not in TV_INVALID_RULES:
            raise GymwrightError(f"unknown rule {invalid!r} for invalid replies", path="invalid",
                                 hint=f"give one of {', '.join(TV_INVALID_RULES)}")
        self.game = TextGame(spec, params, invalid=invalid, seed=0)
        self.spec_name = self.game.view.name
        self.agents: list[str] = list(self.game.view.agents)
        self.role = check_role(role, self.agents)
        chosen = parse_opponent(opponent, spec)
        if role is None and opponent != "random":
            raise GymwrightError(f"opponent {opponent!r} without a role: the client plays every agent, so no "
                                 "opponent plays", path="opponent", hint="name the agent the client plays (role)")
        self.opponent: Opponent | None = chosen if role is not None else None
        self.opponent_name = opponent
        self.seed: int | None = None
        self.pending: dict[str, str] = {}
        self.decisions = {"valid": 0, "invalid": 0}  # the client-played agents' decisions
        self._rng = np.random.default_rng(0)
        self._prompts: dict[str, str] = {}

    # ------------------------------------------------------------------ the client's view
    @property
    def controlled(self) -> list[str]:
        """The agents the client plays."""
        return [self.role] if self.role is not None else list(self.agents)

    def system(self, agent: str) -> str:
        """The rules card of `agent`: the system message of its conversation."""
        return str(self.game.system(agent))

    @property
    def done(self) -> bool:
        return bool(self.game.done)

    @property
    def returns(self) -> dict[str, float]:
        return {a: float(r) for a, r in self.game.returns.items()}

    @property
    def valid_rate(self) -> float:
        """The share of the client-played agents' replies that named a legal action (1.0 before any)."""
        total = self.decisions["valid"] + self.decisions["invalid"]
        return 1.0 if total == 0 else self.decisions["valid"] / total

    # ------------------------------------------------------------------ the episode
    def reset(self, seed: int | None = None) -> Turn:
        """A new episode (`seed` None: a fresh random seed, kept in `self.seed`)."""
        self.seed = secrets.randbelow(2**31) if seed is None else int(seed)
        self._rng = np.random.default_rng([self.seed, 0x5E7E])  # the opponent's own stream
        self.pending, self.decisions = {}, {"valid": 0, "invalid": 0}
        self._prompts = dict(self.game.reset(seed=self.seed))
        turn = Turn(prompts={})
        self._run_opponents(turn)
        turn.prompts = self.waiting()
        turn.done = self.done
        return turn

    def waiting(self) -> dict[str, str]:
        """The prompts of the client-played agents the game waits for, not yet answered."""
        if self.done:
            return {}
        return {a: p for a, p in self._prompts.items() if a in self.controlled and a not in self.pending}

    def act(self, replies: dict[str, str]) -> Turn:
        """Take the client's replies; the game moves once every asked client-played agent replied."""
        self._check_replies(replies)
        self.pending.update(replies)
        turn = Turn(prompts={})
        if not self.waiting():
            self._step(dict(self.pending), turn)
            self.pending = {}
            self._run_opponents(turn)
        turn.prompts = self.waiting()
        turn.done = self.done
        return turn

    def _check_replies(self, replies: dict[str, str]) -> None:
        if self.seed is None:
            raise GymwrightError("no episode yet", path="step", hint="reset the environment first")
        if self.done:
            raise GymwrightError("the episode is over", path="step", hint="reset the environment for a new one")
        if not replies:
            raise GymwrightError("no reply given", path="step.reply", hint=f"reply for one of {sorted(self.waiting())}")
        asked = self.waiting()
        for agent in replies:
            if agent not in asked:
                who = "plays" if agent in self.controlled else "does not play"
                raise GymwrightError(
                    f"{agent!r} is not asked now (the client {who} it)", path="step.agent",
                    hint=f"the game waits for {sorted(asked)}" if asked else "the game waits for no agent of the client",
                )

    def _step(self, replies: dict[str, str], turn: Turn) -> None:
        """One game step: the client's replies and the opponent's for the other asked agents."""
        asked = list(self._prompts)
        if self.opponent is not None:
            others = [a for a in asked if a not in self.controlled]
            replies = {**replies, **self.opponent.replies(self.game, others, self._rng)}
        prompts, rewards, _term, _trunc, infos = self.game.step(replies)
        self._prompts = dict(prompts)
        for agent, r in rewards.items():
            turn.rewards[agent] = turn.rewards.get(agent, 0.0) + float(r)
        for agent in replies:
            text = dict(infos.get(agent, {}).get("text", {}))
            turn.infos[agent] = text
            if agent in self.controlled and text:
                self.decisions["valid" if text.get("valid", True) else "invalid"] += 1

    def _run_opponents(self, turn: Turn) -> None:
        """Role mode: the opponent plays on until the role must decide or the episode ends."""
        while self.opponent is not None and not self.done and self.role not in self._prompts:
            if not self._prompts:
                raise GymwrightError(f"{self.spec_name}: the game asks no agent but is not over",
                                     path="serve", hint="a bug in the text game: please report it")
            self._step({}, turn)


def check_role(role: str | None, agents: list[str]) -> str | None:
    """`role` if it names an agent of the game (None stays None: the client plays every agent)."""
    if role is None or role in agents:
        return role
    import difflib

    near = difflib.get_close_matches(role, agents, n=1)
    hint = f"did you mean {near[0]}? " if near else ""
    raise GymwrightError(f"no agent {role!r} in this game", path="role",
                         hint=f"{hint}the role is one agent's name: {', '.join(agents)}")
