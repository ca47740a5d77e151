"""An OpenEnv (openenv-core) `Environment` for any gymwright spec, played as text.

One `GymwrightEnvironment` is one WebSocket session of the server (`openenv_server.py`): a
`Session` (`session.py`) of the spec's `TextGame`. Its action carries reply text, its observation
the prompts, the rules cards (on reset), the rewards and the per-agent reply checks:

- `GameAction(reply="stag")`: the reply of the one agent the game asks now (the served role, or
  the only agent asked); `GameAction(reply=..., agent="hunter_1")` names the agent;
  `GameAction(replies={"hunter_0": "stag", "hunter_1": "hare"})` answers for several at once.
- `GameObservation`: `prompt` and `agent` (the first agent asked and its user message), `prompts`
  (every client-played agent asked and not yet answered), `rules` (each client-played agent's
  system message, on reset), `rewards` (per agent, since the last observation), `returns` (the
  episode so far), `infos` (per agent that acted: `action`, `valid`, `error`), `invalid` and
  `valid_rate` (the client-played agents' replies), `metrics` (the episode's, once done), `seed`;
  `reward` is the sum of `rewards` over the client-played agents, `done` the episode's end.

Who plays the other agents: with `role=None` the client plays every agent (each agent's reply is
sent; a simultaneous game moves once all asked agents replied); with `role="AGENT"` the client
plays that agent and a fixed policy on the server plays the rest (`opponent="random"` or
`"scripted:NAME"`), so a single-agent client (one model, one conversation) can play one role.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gymwright.errors import GymwrightError
from gymwright.serve.extras import missing_extra
from gymwright.serve.session import Session, Turn

try:
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
except ImportError as e:  # pragma: no cover - the `openenv` extra is missing
    raise missing_extra("openenv-core", "openenv") from e


class GameAction(Action):
    """Reply text for one agent (`reply`, `agent`) or several (`replies`)."""

    reply: str = Field(default="", description="The reply text of the agent the game asks now.")
    agent: str = Field(default="", description="Which agent `reply` is for; empty: the served role, or the one agent asked.")
    replies: dict[str, str] = Field(default_factory=dict, description="Replies of several agents at once: agent -> text.")


class GameObservation(Observation):
    """The prompts of the client-played agents asked now, the rewards and the reply checks."""

    agent: str = Field(default="", description="The first client-played agent asked now ('' when none).")
    prompt: str = Field(default="", description="Its user message for this turn.")
    prompts: dict[str, str] = Field(default_factory=dict, description="Every client-played agent asked and not yet answered -> its user message.")
    rules: dict[str, str] = Field(default_factory=dict, description="On reset: each client-played agent's rules card (system message).")
    rewards: dict[str, float] = Field(default_factory=dict, description="Per agent, summed over the game steps since the last observation.")
    returns: dict[str, float] = Field(default_factory=dict, description="Per agent, the episode's return so far.")
    infos: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Per agent that acted: the reply check (action, valid, error).")
    invalid: int = Field(default=0, description="Invalid replies of the client-played agents this episode.")
    valid_rate: float = Field(default=1.0, description="Share of the client-played agents' replies that named a legal action.")
    metrics: dict[str, float] = Field(default_factory=dict, description="The episode's metrics, once done.")
    seed: int = Field(default=0, description="The episode's seed (replay it with reset(seed=...)).")


class GameState(State):
    """The session: which spec, who the client plays, the episode's seed and progress."""

    spec: str = ""
    role: str | None = None
    opponent: str = "random"
    agents: list[str] = Field(default_factory=list)
    seed: int | None = None
    done: bool = False
    returns: dict[str, float] = Field(default_factory=dict)
    invalid: int = 0
    valid_rate: float = 1.0


class GymwrightEnvironment(Environment[GameAction, GameObservation, GameState]):
    """A gymwright spec as an OpenEnv environment (see the module docstring)."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # one Session per instance, nothing shared

    def __init__(self, spec: Any = "stag_hunt", params: dict[str, Any] | None = None, *,
                 role: str | None = None, opponent: str = "random", invalid: str = "random") -> None:
        super().__init__()
        self.session = Session(spec, params, role=role, opponent=opponent, invalid=invalid)
        self._episode_id: str | None = None
        self._steps = 0

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> GameObservation:
        self._episode_id, self._steps = episode_id, 0
        turn = self.session.reset(seed)
        rules = {a: self.session.system(a) for a in self.session.controlled}
        return self._observation(turn, rules)

    def step(self, action: GameAction, timeout_s: float | None = None, **kwargs: Any) -> GameObservation:
        turn = self.session.act(self._replies(action))
        self._steps += 1
        return self._observation(turn, {})

    @property
    def state(self) -> GameState:
        s = self.session
        return GameState(episode_id=self._episode_id, step_count=self._steps, spec=s.spec_name, role=s.role,
                         opponent=s.opponent_name, agents=list(s.agents), seed=s.seed, done=s.done,
                         returns=s.returns if s.seed is not None else {}, invalid=s.decisions["invalid"],
                         valid_rate=s.valid_rate)

    def get_metadata(self) -> EnvironmentMetadata:
        s = self.session
        who = f"the client plays {s.role}, {s.opponent_name} plays the others" if s.role else "the client plays every agent"
        return EnvironmentMetadata(name=f"gymwright:{s.spec_name}", version="1.0.0",
                                   description=f"gymwright spec {s.spec_name} as a text game ({who})")

    # ------------------------------------------------------------------ helpers
    def _replies(self, action: GameAction) -> dict[str, str]:
        """The replies `action` gives, by agent."""
        replies = dict(action.replies)
        if action.reply or action.agent or not replies:
            replies[action.agent or self._asked_agent()] = action.reply
        return replies

    def _asked_agent(self) -> str:
        asked = sorted(self.session.waiting())
        if self.session.role is not None:
            return self.session.role
        if len(asked) == 1:
            return asked[0]
        raise GymwrightError(
            f"the game asks {len(asked)} agents now ({', '.join(asked) or 'none'}); which one does the reply answer?",
            path="step.agent", hint="name it: GameAction(reply=..., agent=AGENT), or send replies={AGENT: TEXT, ...}",
        )

    def _observation(self, turn: Turn, rules: dict[str, str]) -> GameObservation:
        s = self.session
        first = next(iter(turn.prompts), "")
        controlled = s.controlled
        metrics = {k: float(v) for k, v in s.game.metrics.items()} if turn.done else {}
        return GameObservation(
            agent=first, prompt=turn.prompts.get(first, ""), prompts=turn.prompts, rules=rules,
            rewards=turn.rewards, returns=s.returns, infos=turn.infos, invalid=s.decisions["invalid"],
            valid_rate=s.valid_rate, metrics=metrics, seed=int(s.seed or 0), done=turn.done,
            reward=float(sum(turn.rewards.get(a, 0.0) for a in controlled)),
        )
