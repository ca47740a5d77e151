"""A language model measured on held-out episodes: `evaluate_lm`.

Episodes start at `seed`, `seed + 1`, ... (train-lm keeps its training seeds apart: config.py),
played in batches of `batch` games side by side. Figures: the model's valid-action rate (its
replies that named a legal action), its mean return and every role's, the task metrics' means,
decisions per second and tokens, with the per-episode values so a caller can draw intervals.
"""

from __future__ import annotations

import math
import time
from typing import Any

from gymwright.llm.transformers_provider import LoadedModel, load_model
from gymwright.lmtrain.opponents import make_opponent
from gymwright.lmtrain.rollout import Episode, Table, learner_agent, play


def new_games(spec: Any, params: dict[str, Any] | None, count: int) -> list[Any]:
    from gymwright.textgame import TextGame

    return [TextGame(spec, params or None) for _ in range(count)]


def evaluate_lm(
    spec: Any, model: LoadedModel | str, episodes: int = 32, seed: int = 0, *, role: str = "",
    opponent: str = "random", params: dict[str, Any] | None = None, temperature: float = 0.0,
    max_new_tokens: int = 12, rules: bool = True, batch: int = 16, max_turns: int = 64, device: str = "auto",
) -> dict[str, Any]:
    """Play `episodes` episodes of `spec` with `model` (a loaded model or an `hf:` name) as `role`'s
    first agent against `opponent`; greedy replies unless `temperature` > 0 (then seeded)."""
    games = new_games(spec, params, min(batch, episodes))  # the spec and params, before a model loads
    learner_agent(games[0], role)
    lm = model if isinstance(model, LoadedModel) else load_model(model.removeprefix("hf:"), device)
    table = Table(lm, make_opponent(opponent, lm, max_new_tokens=max_new_tokens, seed=seed, rules=rules,
                                    device=device), max_new_tokens, max(temperature, 0.0), max_turns, rules)
    check_opponent(table, games[0])
    played: list[Episode] = []
    start = time.perf_counter()
    for first in range(0, episodes, batch):
        seeds = list(range(seed + first, seed + min(first + batch, episodes)))
        played += play(table, games[: len(seeds)], seeds, role, gen_seed=seed + first)
    return summary(played, games[0], time.perf_counter() - start)


def check_opponent(table: Table, game: Any) -> None:
    check = getattr(table.opponent, "check", None)
    if callable(check):
        check(game)


def summary(played: list[Episode], game: Any, seconds: float) -> dict[str, Any]:
    """The figures of `evaluate_lm` from its episodes."""
    decisions = sum(e.decisions for e in played)
    invalid = sum(e.invalid for e in played)
    own = [e.returns.get(e.agent, 0.0) for e in played]
    by_role: dict[str, list[float]] = {}
    for e in played:
        for agent, value in e.returns.items():
            by_role.setdefault(game.view.role(agent), []).append(value)
    metrics = sorted({k for e in played for k in e.metrics})
    return {
        "episodes": len(played), "decisions": decisions, "invalid": invalid,
        "valid_rate": 1.0 - invalid / decisions if decisions else math.nan,
        "mean_return": mean(own), "return_per_role": {r: mean(v) for r, v in sorted(by_role.items())},
        "metrics": {k: mean([e.metrics[k] for e in played if k in e.metrics]) for k in metrics},
        "decisions_per_s": decisions / seconds if seconds > 0 else math.nan,
        "tokens": sum(e.generated for e in played), "seconds": seconds,
        "episode_returns": own, "episode_valid": [e.decisions - e.invalid for e in played],
        "episode_decisions": [e.decisions for e in played], "truncated": sum(e.truncated for e in played),
    }


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan
