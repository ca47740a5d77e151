"""What each design stage must reply: small pydantic models, whose JSON schemas go to the model.

Stages 1-3 produce a plan in plain words (roles and goals; state, actions and episode bounds;
reward terms with the reasoning about hacking and equilibria); it is carried forward into the
next stage's prompt. Stage 4 replies with a whole spec, validated against `EnvSpec` by the
verifier's schema stage. Template mode replies with a `TemplateChoice`.

The models are lenient on purpose (extra keys ignored, most fields optional): a plan is
guidance for the next prompt, not a contract, and a small model should not fail a stage over
a missing note. Only what the next stage cannot do without is required. Their schemas bound
every string and list, so that a constrained decoder must close the JSON within budget.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model

# Bounded strings and lists: a server that enforces the schema (llama.cpp's grammar) then cannot
# let a small model ramble past its token budget and cut the JSON off.
NAME_MAX, EXPR_MAX, PROSE_MAX = 40, 200, 300
Name = Annotated[str, StringConstraints(max_length=NAME_MAX)]
Expr = Annotated[str, StringConstraints(max_length=EXPR_MAX)]
Prose = Annotated[str, StringConstraints(max_length=PROSE_MAX)]
Number = int | float | bool
Mechanics = Literal["grid", "channel"]


def length_limits() -> str:
    """The plans' length limits in words, for the planning prompts (a reply over a limit is
    refused by the schema and costs a retry)."""
    return (f"Keep names (snake_case) to at most {NAME_MAX} characters, expressions to "
            f"{EXPR_MAX} and every prose field to {PROSE_MAX} (one or two short sentences).")


class _Plan(BaseModel):
    # extra keys in a reply are ignored; the schema sent to the model forbids them
    model_config = ConfigDict(extra="ignore", json_schema_extra={"additionalProperties": False})


class RolePlan(_Plan):
    name: Name = Field(description="snake_case role name, e.g. bargainer")
    count: int | Name = Field(description="agents in this role: a number or a param name")
    goal: Prose = Field("", description="what agents of this role want")


class RolesPlan(_Plan):
    """Stage 1: roles, goals, turn structure, what success means."""

    roles: list[RolePlan] = Field(min_length=1, max_length=4)
    turns: Literal["simultaneous", "turn-based"] = "simultaneous"
    success: list[Prose] = Field(default_factory=list, max_length=4, description="task metrics, in words")
    doc: Prose = Field("", description="what the environment is and what it trains, for the spec's doc")
    notes: Prose = ""


class ParamPlan(_Plan):
    name: Name
    type: Literal["int", "float", "bool"] = "float"
    default: Number = 0
    min: Number | None = None
    max: Number | None = None
    doc: Prose = ""


class ConstPlan(_Plan):
    name: Name
    value: Number | list[Number] = 0
    doc: Prose = ""


class VarPlan(_Plan):
    name: Name
    type: Literal["int", "float", "bool"] = "float"
    per_agent: bool = False
    shape: Expr = Field("", description="empty for a scalar, else e.g. [n_items] or [size, size]")
    init: Expr = ""
    min: Number | Name | None = None
    max: Number | Name | None = None
    meaning: Prose = ""


class ActionPlan(_Plan):
    role: Name = ""
    name: Name
    args: Expr = Field("", description="discrete argument values, e.g. share in linspace(0, 1, 11)")
    legal: Expr = Field("", description="when the action is legal")


class ObservationPlan(_Plan):
    role: Name
    sees: Prose = Field(description="what an agent of this role observes each step (and what it must not)")


class DynamicsPlan(_Plan):
    """Stage 2: params, state, actions, observations, how episodes start and end."""

    mechanics: list[Mechanics] = Field(default_factory=list, max_length=2,
                                       description="grid: agents move on a 2-D grid; channel: agents send discrete messages")
    params: list[ParamPlan] = Field(default_factory=list, max_length=8)
    consts: list[ConstPlan] = Field(default_factory=list, max_length=6)
    state: list[VarPlan] = Field(min_length=1, max_length=10)
    actions: list[ActionPlan] = Field(min_length=1, max_length=8)
    observations: list[ObservationPlan] = Field(min_length=1, max_length=4)
    start: Prose = ""
    end: Prose = Field(description="the terminal condition, in words or as an expression")
    max_steps: int | None = None


class RewardTermPlan(_Plan):
    role: Name
    name: Name
    kind: Literal["task", "shaping", "penalty", "efficiency"] = "task"
    expr: Expr = Field(description="the term as an expression or in words")
    weight: float = 1.0
    why: Prose = ""


class MetricPlan(_Plan):
    name: Name
    expr: Expr = ""
    reduce: Literal["last", "sum", "mean", "max", "min"] = "last"
    kind: Literal["task", "failure", "stat"] = "stat"


class BaselinePlan(_Plan):
    name: Name
    rule: Prose = Field(description="a scripted strategy to compare trained agents with, in words")


class RewardsPlan(_Plan):
    """Stage 3: reward terms, the hacking risks considered, the behaviour expected, the metrics
    (which one measures success, in which direction) and scripted baselines."""

    terms: list[RewardTermPlan] = Field(min_length=1, max_length=8)
    hacking_risks: list[Prose] = Field(default_factory=list, max_length=4)
    expected_behaviour: Prose = ""
    metrics: list[MetricPlan] = Field(min_length=1, max_length=6)
    success_metric: Name = Field(description="the metric that says whether the task is done")
    success_direction: Literal["higher", "lower"] = "higher"
    baselines: list[BaselinePlan] = Field(default_factory=list, max_length=3)


class FitCheck(_Plan):
    aspect: Literal["agents", "actions", "rewards", "observations", "ends", "metrics", "other"]
    fits: bool
    problem: Prose = Field("", description="what the spec does that the task does not ask for, or leaves out")
    fix: Prose = Field("", description="the change to the spec, naming its path")


class TaskFitReview(_Plan):
    """The review after verification: does the verified spec do what the task asks?"""

    checks: list[FitCheck] = Field(min_length=1, max_length=8)
    fits_task: bool

    def failures(self) -> list[FitCheck]:
        return [c for c in self.checks if not c.fits]

    @property
    def verdict(self) -> bool:
        """Fits only when the model says so and no check failed."""
        return self.fits_task and not self.failures()


STAGE_PLANS: dict[str, type[_Plan]] = {
    "roles": RolesPlan,
    "dynamics": DynamicsPlan,
    "rewards": RewardsPlan,
}


def template_choice_model(names: list[str]) -> type[BaseModel]:
    """`{template, same_kind, reason}` with `template` an enum of the library's names and
    `same_kind` whether it is really the task's kind of game (false: no template fits)."""
    return create_model(
        "TemplateChoice",
        __config__=ConfigDict(extra="ignore"),
        template=(Literal[tuple(names)], Field(description="the library spec that fits best")),
        same_kind=(bool, Field(True, description="whether it is the same kind of game as the task")),
        reason=(str, Field("", max_length=300, description="why this template, in one sentence")),
    )
