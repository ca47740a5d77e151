"""Episodes of a text game with the model playing one agent: its decisions' tokens, one sequence
per episode (the GRPO sample), and what the episode scored.

Games run side by side: at each turn the model answers for every game where its agent must decide
in one batched `generate`, the opponent answers for the other agents, then every game steps. An
episode's `completion_ids` are the model's tokens of every turn with the template's tokens between
them (`env_mask` 0: not trained on), so a multi-turn episode is one prompt and one completion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gymwright.errors import GymwrightError
from gymwright.llm.transformers_provider import Generated, LoadedModel, generate_batch
from gymwright.lmtrain.chat import between, first_ids
from gymwright.lmtrain.opponents import Opponent, shown


@dataclass
class Episode:
    """One episode of the model's agent: its token sequence and its score."""

    seed: int
    agent: str
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    decisions: int = 0
    invalid: int = 0
    generated: int = 0
    finished: bool = True  # the last reply ended with the end-of-sequence token
    returns: dict[str, float] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    truncated: bool = False  # stopped at max_turns before the game ended

    def reward(self, invalid_penalty: float = 0.0) -> float:
        """The training reward: the agent's return less the penalty per invalid reply."""
        return self.returns.get(self.agent, 0.0) - invalid_penalty * self.invalid

    @property
    def valid_rate(self) -> float:
        return 1.0 - self.invalid / self.decisions if self.decisions else float("nan")

    def ids_now(self, lm: LoadedModel, chat: list[dict[str, str]]) -> list[int]:
        """The tokens to continue at this turn (the first turn renders the chat)."""
        if not self.prompt_ids:
            self.prompt_ids = first_ids(lm.tokenizer, chat)
        return self.prompt_ids + self.completion_ids

    def add_reply(self, g: Generated) -> None:
        self.completion_ids += g.ids
        self.env_mask += [1] * len(g.ids)
        self.logprobs += g.logprobs
        self.generated += len(g.ids)
        self.finished = g.finished

    def add_between(self, ids: list[int]) -> None:
        self.completion_ids += ids
        self.env_mask += [0] * len(ids)
        self.logprobs += [0.0] * len(ids)


@dataclass
class Table:
    """What the episodes are played with."""

    lm: LoadedModel
    opponent: Opponent
    max_new_tokens: int = 12
    temperature: float = 1.0
    max_turns: int = 64
    rules: bool = True


def learner_agent(game: Any, role: str) -> str:
    """The agent the model plays: `role` as an agent name, else the first agent of the role."""
    agents = list(game.view.agents)
    if role in agents:
        return role
    of_role = [a for a in agents if game.view.role(a) == role] if role else agents[:1]
    if not of_role:
        roles = sorted({game.view.role(a) for a in agents})
        raise GymwrightError(f"no role or agent {role!r} in {game.view.name}", path="role",
                             hint=f"roles: {', '.join(roles)}; agents: {', '.join(agents)}")
    return of_role[0]


def play(table: Table, games: Sequence[Any], seeds: Sequence[int], role: str, gen_seed: int = 0) -> list[Episode]:
    """Play one episode in each game (reset with its seed) to the end or `max_turns`."""
    for game, seed in zip(games, seeds, strict=True):
        game.reset(seed=seed)
    episodes = [Episode(seed, learner_agent(game, role)) for game, seed in zip(games, seeds, strict=True)]
    for turn in range(table.max_turns):
        live = [i for i, g in enumerate(games) if not g.done]
        if not live:
            break
        _turn(table, [games[i] for i in live], [episodes[i] for i in live], gen_seed * 100_003 + turn)
    for game, ep in zip(games, episodes, strict=True):
        ep.returns, ep.metrics, ep.truncated = dict(game.returns), dict(game.metrics), not game.done
        if not ep.decisions:
            raise GymwrightError(f"{ep.agent} never had a choice to make in an episode of {game.view.name}",
                                 path="role", hint="train a role whose agents choose between actions")
    return episodes


def _turn(table: Table, games: list[Any], episodes: list[Episode], seed: int) -> None:
    """One step of every game: the model's replies (batched), the opponent's, then the steps."""
    mine = [k for k, (g, ep) in enumerate(zip(games, episodes, strict=True)) if ep.agent in g.prompts]
    chats = {k: shown(games[k].messages(episodes[k].agent), table.rules) for k in mine}
    made = generate_batch(table.lm, [episodes[k].ids_now(table.lm, chats[k]) for k in mine],
                          max_new_tokens=table.max_new_tokens, temperature=table.temperature, seed=seed)
    replies: list[dict[str, str]] = [{} for _ in games]
    for k, g in zip(mine, made, strict=True):
        episodes[k].add_reply(g)
        replies[k][episodes[k].agent] = table.lm.tokenizer.decode(g.ids, skip_special_tokens=True)
    asks = [(k, a) for k, g in enumerate(games) for a in g.agents_to_act if a != episodes[k].agent]
    for (k, a), text in zip(asks, table.opponent.replies([(games[k], a) for k, a in asks]), strict=True):
        replies[k][a] = text
    for k, (game, ep) in enumerate(zip(games, episodes, strict=True)):
        _step(table, game, ep, replies[k], k in chats)


def _step(table: Table, game: Any, ep: Episode, replies: dict[str, str], asked: bool) -> None:
    _, _, _, _, infos = game.step(replies)
    if asked:
        ep.replies.append(replies[ep.agent])
        ep.decisions += 1
        ep.invalid += 0 if infos.get(ep.agent, {}).get("text", {}).get("valid", False) else 1
    if ep.agent in game.prompts and ep.prompt_ids:
        chat = shown(game.messages(ep.agent), table.rules)
        ep.add_between(between(table.lm.tokenizer, chat[:-2], chat[-1]["content"], ep.finished))
