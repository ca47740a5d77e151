"""What the planning and spec prompts tell the model (issue 42): every number that sizes or tunes
the game is a param with a range that does not fence the user in (point 3), and what each
mechanics module does, generated from the registry (point 9)."""

from __future__ import annotations

from pathlib import Path

from gymwright.mechanics.registry import MECHANICS
from tests.design.test_plans import designed_requests


def prompts_seen(tmp_path: Path) -> list[str]:
    return [r.messages[-1].content for r in designed_requests(tmp_path)]


def flat(text: str) -> str:
    return " ".join(text.split())


def test_stage_two_says_what_each_mechanics_module_does_from_its_own_description(tmp_path: Path) -> None:
    dynamics = flat(prompts_seen(tmp_path)[1])
    for mech in MECHANICS.values():
        assert f"`{mech.name}`: {flat(mech.section.__doc__ or mech.doc)}" in dynamics, mech.name
        for key, (_, info) in mech.choice_fields.items():
            assert f"A choice's `{key}`: {flat(info.description or '')}" in dynamics


def test_the_prompts_make_stated_numbers_params_with_ranges_that_span_valid_games(tmp_path: Path) -> None:
    roles, dynamics, _, spec = (flat(p) for p in prompts_seen(tmp_path)[:4])
    assert "A count the task states (\"3 bidders\", \"5 players\") is the name of an int param" in roles
    assert ("every number that sizes or tunes the game (how many players, bidders, items or rounds, a pie "
            "of 10, a grid size, a cost, a probability, a step limit) is a param, with the value the task "
            "states as its default, unless the task says that number is fixed") in dynamics
    assert "range (min, max) spans every value that still makes a valid game, not a guess around the default" in dynamics
    assert "Every param of the plan stays a param, its range spanning every valid game" in spec
    for prompt in (roles, dynamics, spec):
        assert len(prompt.encode()) < 30_000
