"""What each design stage must reply: small pydantic models, whose JSON schemas go to the model.

Stages 1-3 produce a plan in plain words (roles and goals; state, actions and episode bounds;
reward terms with the reasoning about hacking and equilibria); it is carried forward into the
next stage's prompt. Stage 4 replies with a whole spec, validated against `EnvSpec` by the
verifier's schema stage. Template mode replies with a `TemplateChoice`.

The models are lenient on purpose (extra keys allowed, most fields optional): a plan is
guidance for the next prompt, not a contract, and a small model should not fail a stage over
a missing note. Only what the next stage cannot do without is required.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model


class _Plan(BaseModel):
    model_config = ConfigDict(extra="allow")


class RolePlan(_Plan):
    name: str = Field(description="snake_case role name, e.g. bargainer")
    count: int | str = Field(description="agents in this role: a number or a param name")
    goal: str = Field("", description="what agents of this role want")


class RolesPlan(_Plan):
    """Stage 1: roles, goals, turn structure, what success means."""

    roles: list[RolePlan] = Field(min_length=1)
    turns: Literal["simultaneous", "turn-based"] = "simultaneous"
    success: list[str] = Field(default_factory=list, description="task metrics, in words")
    notes: str = ""


class DynamicsPlan(_Plan):
    """Stage 2: params, state, actions, how episodes start and end."""

    params: list[dict[str, Any]] = Field(default_factory=list)
    state: list[dict[str, Any]] = Field(min_length=1)
    actions: list[dict[str, Any]] = Field(min_length=1)
    start: str = ""
    end: str = Field(description="the terminal condition, in words or as an expression")
    max_steps: int | None = None


class RewardTermPlan(_Plan):
    role: str
    name: str
    kind: str = Field("task", description="task, shaping, penalty or efficiency")
    expr: str = Field(description="the term as an expression or in words")
    weight: float = 1.0
    why: str = ""


class RewardsPlan(_Plan):
    """Stage 3: reward terms, the hacking risks considered, the behaviour expected."""

    terms: list[RewardTermPlan] = Field(min_length=1)
    hacking_risks: list[str] = Field(default_factory=list)
    expected_behaviour: str = ""
    metrics: list[dict[str, Any]] = Field(default_factory=list)


STAGE_PLANS: dict[str, type[_Plan]] = {
    "roles": RolesPlan,
    "dynamics": DynamicsPlan,
    "rewards": RewardsPlan,
}


def template_choice_model(names: list[str]) -> type[BaseModel]:
    """`{template, reason}` with `template` an enum of the library's names."""
    return create_model(
        "TemplateChoice",
        __config__=ConfigDict(extra="ignore"),
        template=(Literal[tuple(names)], Field(description="the library spec that fits best")),  # type: ignore[valid-type]
        reason=(str, Field("", max_length=300, description="why this template, in one sentence")),
    )
