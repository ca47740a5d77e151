"""Which library specs the spec prompt offers as examples (issue 42, point 10): of the task's kind
of game, from the task text and the plan's mechanics; a spec the task names is introduced as the
library's own version of that game; no irrelevant spec passes for an example of the task."""

from __future__ import annotations

import json

import pytest

from gymwright.design.prompts import load_prompts
from gymwright.design.staged import render_spec_prompt

INTERSECTION = ("Two cars approach an intersection from different roads. Each step each car either "
                "goes or waits. If both go at once they crash; if both wait, time passes. Each car "
                "wants to cross quickly without crashing.")
BOX = ("Two agents on a 6x6 grid must push a heavy 2x2 box together to a goal area: the box moves "
       "only when both agents push it in the same direction on the same step.")
RPSLS = ("Two players play rock-paper-scissors-lizard-Spock repeatedly for 10 rounds; each round "
         "both choose a hand at the same time; the winner gets +1, the loser -1, a tie 0. Each sees "
         "the hands of the last round.")
COVERAGE = ("Three robots must cover every cell of a 5x5 grid as fast as possible, sharing a visited "
            "map; the episode ends when all cells are visited.")
LANGUAGE_ONLY = "shows the language only"


def plans(mechanics: list[str]) -> dict[str, str]:
    return {"roles": "{}", "dynamics": json.dumps({"mechanics": mechanics}), "rewards": "{}"}


def offered(task: str, mechanics: list[str]) -> tuple[list[str], str]:
    user, examples = render_spec_prompt(load_prompts(), task, plans(mechanics))
    return examples, user


@pytest.mark.parametrize(("task", "mechanics", "wrong", "right"), [
    (INTERSECTION, [], {"commons_harvest", "sealed_bid_auction"}, None),
    (BOX, [], {"commons_harvest", "cake_negotiation", "sealed_bid_auction"}, None),
    (BOX, ["grid"], {"commons_harvest"}, {"mapf_frozenlake", "predator_prey"}),
    (RPSLS, [], {"sealed_bid_auction"}, {"iterated_prisoners_dilemma", "stag_hunt"}),
    (COVERAGE, [], {"multi_issue_negotiation", "commons_harvest"}, None),
    (COVERAGE, ["grid"], {"multi_issue_negotiation", "commons_harvest"}, {"mapf_frozenlake", "predator_prey"}),
], ids=["intersection", "box", "box-grid", "rpsls", "coverage", "coverage-grid"])
def test_no_irrelevant_spec_is_offered_as_an_example_of_the_task(
        task: str, mechanics: list[str], wrong: set[str], right: set[str] | None) -> None:
    examples, user = offered(task, mechanics)
    if right is not None:  # a spec of the task's kind, nearest first
        assert examples and set(examples) <= right, examples
        assert LANGUAGE_ONLY not in user
    else:  # no library spec is this kind of game: at most one, introduced as such
        assert len(examples) <= 1, examples
        assert not examples or f"`{examples[0]}` {LANGUAGE_ONLY}" in user
        assert not set(examples) & wrong or LANGUAGE_ONLY in user


def test_a_library_spec_the_task_names_is_introduced_as_that_game() -> None:
    examples, user = offered("A sealed-bid auction where five bidders with private values bid at once.", [])
    assert examples[0] == "sealed_bid_auction"
    assert "`sealed_bid_auction`: the library's own version of the game the task names" in user
