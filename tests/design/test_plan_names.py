"""A reserved name is refused at the planning stages already, saying what for (issue 42, point 1)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gymwright.design.plans import (
    ActionPlan,
    ConstPlan,
    DynamicsPlan,
    ParamPlan,
    RewardTermPlan,
    VarPlan,
    length_limits,
)


def test_the_task_s_words_pass_the_plan_as_a_choice_an_argument_and_a_term() -> None:
    action = ActionPlan.model_validate({"role": "player", "name": "pass", "args": {"v": "[1, 2]"}})
    assert action.name == "pass" and list(action.args) == ["v"]
    assert ActionPlan.model_validate({"role": "forager", "name": "load"}).name == "load"
    assert RewardTermPlan.model_validate({"role": "listener", "name": "match", "expr": "1"}).name == "match"


@pytest.mark.parametrize(("model", "data", "said"), [
    (ParamPlan, {"name": "pass", "default": 1}, "`pass` is reserved for Python syntax"),
    (VarPlan, {"name": "load"}, "`load` is reserved for an attribute generated code may not use"),
    (ConstPlan, {"name": "v", "value": 1}, "`v` is reserved for the variables of generated code"),
    (ActionPlan, {"role": "a", "name": "go", "args": {"me": "[1]"}}, "`me` is reserved for the index of the agent"),
    (ConstPlan, {"name": "kinds", "enum": ["food", "if"]}, "`if` is reserved for expression syntax"),
])
def test_a_reserved_name_is_refused_at_the_plan_with_its_reason_and_a_rename(model: type, data: dict, said: str) -> None:
    with pytest.raises(ValidationError) as info:
        model.model_validate(data)
    assert said in str(info.value) and "rename the" in str(info.value)


def test_the_planning_prompts_say_which_names_are_reserved() -> None:
    assert "`pass`, `load`, `match`, `v`" in length_limits() and "`np`" in length_limits()
    DynamicsPlan.model_json_schema()  # the schema still builds with the check in place


def test_the_spec_stage_says_which_names_are_free_and_which_are_refused() -> None:
    from gymwright.design.prompts import load_prompts
    from gymwright.design.staged import render_spec_prompt
    from gymwright.spec.names import name_problem, spec_note

    user, _ = render_spec_prompt(load_prompts(), "a hot potato: players pass the potato", {
        "roles": "{}", "dynamics": "{}", "rewards": "{}"})
    assert spec_note() in user
    # what the line says is true of the checker
    assert all(name_problem(w, "choice") is None for w in ("pass", "load", "match"))
    assert all(name_problem(w, "param") for w in ("pass", "me", "t", "p", "v", "np", "rt", "load"))
