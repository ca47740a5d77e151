"""What a task asks for that a library template leaves out: the offline designer's fit check.

Similarity alone passes off near misses: "three drones must cover a 5x5 grid without colliding"
shares grid, drones and collisions with MAPF-FrozenLake, but asks for coverage, which a
path-finding game does not have. `DEMANDS` lists mechanics a task text may ask for (coverage,
flags, carrying, building with tools, boards, cards, continuous control, markets, traffic,
cooking, alliances, teams, ball games, lines of sight, combat), each with the words that ask
for it. A template provides a demand when its own text (name, tags, description, roles,
actions, doc, params: the retrieval's fields) uses one of those words; a demand of the task
that the chosen template does not provide makes the offline designer refuse, naming it.

Words are compared through the retrieval's stemmer, phrases as consecutive stems (stop words
included, so "cover a grid" is not "holes covering 30% of the cells").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from gymwright.design.retrieval import spec_fields, stem
from gymwright.spec.loader import load_spec

DEMANDS: dict[str, tuple[str, ...]] = {
    "coverage": ("cover a", "cover the", "cover every", "cover all", "coverage", "explore",
                 "exploration", "visit every", "visit all", "patrol", "sweep the", "survey"),
    "flags and bases": ("flag", "home base", "their base", "its base"),
    "carrying objects": ("carry", "pick up", "transport", "fetch"),
    "building with tools": ("build", "construct", "lock", "box", "ramp", "tool", "shelter",
                            "craft"),
    "a board and pieces": ("board", "chess", "checkmate", "checkers", "three in a row",
                           "four in a row", "tic tac toe",
                           "piece"),
    "cards": ("card", "deck", "poker", "ante", "bluff", "blackjack"),
    "continuous control": ("torque", "pendulum", "velocity", "continuous control",
                           "continuous action", "acceleration", "steer", "steering"),
    "a market": ("order book", "limit order", "market maker", "quote", "inventory",
                 "stock exchange", "market price"),
    "traffic": ("traffic", "intersection", "lane", "queue"),
    "cooking": ("cook", "kitchen", "recipe", "chef", "soup", "dish"),
    "alliances": ("alliance", "coalition", "treaty", "army", "armies"),
    "teams against each other": ("two teams", "both teams", "each team", "other team",
                                 "opposing team", "rival team"),
    "ball games": ("soccer", "football", "basketball", "score a goal", "score goals", "ball"),
    "lines of sight": ("line of sight", "field of view", "visibility"),
    "combat": ("shoot", "attack", "weapon", "health point", "damage"),
}

_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Demand:
    """A mechanic the task asks for, and the task's words that ask for it."""

    name: str
    words: tuple[str, ...]


def _stem_seq(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in _WORD.findall(text.lower().replace("-", " ")))


def _contains(seq: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(seq[i:i + n] == phrase for i in range(len(seq) - n + 1))


def _found(text: str, forms: tuple[str, ...]) -> tuple[str, ...]:
    seq = _stem_seq(text)
    return tuple(f for f in forms if _contains(seq, _stem_seq(f)))


def asked(task: str) -> list[Demand]:
    """The demands of `DEMANDS` that the task text asks for."""
    return [Demand(name, words) for name, forms in DEMANDS.items()
            if (words := _found(task, forms))]


@cache
def provided(template: str) -> frozenset[str]:
    """The demands library spec `template` provides (its text uses one of their words)."""
    text = " ".join(spec_fields(load_spec(template)).values())
    return frozenset(name for name, forms in DEMANDS.items() if _found(text, forms))


def missing(task: str, template: str) -> list[Demand]:
    """What the task asks for that `template` leaves out (empty: nothing found missing)."""
    have = provided(template)
    return [d for d in asked(task) if d.name not in have]


def describe(demands: list[Demand]) -> str:
    """`coverage ('cover a'), cards ('deck', 'poker')`."""
    return ", ".join(f"{d.name} ({', '.join(repr(w) for w in d.words)})" for d in demands)
