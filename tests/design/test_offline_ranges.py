"""The offline designer keeps a value the task states wherever it still makes a valid game (issue
42, point 3): the library's ranges span valid games instead of clamping them to a guess."""

from __future__ import annotations

import pytest

from gymwright.design.offline import offline_design


@pytest.mark.parametrize(("task", "template", "params"), [
    ("Two agents negotiate how to divide a pool of books, hats and balls they value privately, making "
     "alternating proposals for at most 60 turns; each proposal after the first shrinks the payoff by "
     "70%.", "multi_issue_negotiation", {"max_turns": 60, "discount": 0.3}),
    ("Predators hunt prey on a grid; episodes are cut off after 3 steps and every step costs the "
     "predators 0.5.", "predator_prey", {"max_steps": 3, "step_cost": 0.5}),
    ("A speaker tells a listener which of four targets is the goal over a channel; episodes are cut "
     "off after 40 steps.", "speaker_listener", {"max_steps": 40, "n_targets": 4}),
])
def test_a_stated_value_that_makes_a_valid_game_is_kept_not_clamped(task: str, template: str,
                                                                    params: dict[str, float]) -> None:
    choice = offline_design(task)
    assert choice.template == template, choice.explanation
    assert choice.params == pytest.approx(params), choice.explanation
    assert "clamped" not in choice.explanation
