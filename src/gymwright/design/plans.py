"""What each design stage must reply: small pydantic models, whose JSON schemas go to the model.

Stages 1-3 produce a plan in plain words (roles and goals; state, actions and episode bounds;
reward terms with the reasoning about hacking and equilibria); it is carried forward into the
next stage's prompt. Stage 4 replies with a whole spec, validated against `EnvSpec` by the
verifier's schema stage. Template mode replies with a `TemplateChoice`.

Each plan item that becomes a spec section has that section's keys, defaults and required keys
(`SPEC_OF_PLAN`, compared key by key in tests/design/test_plans.py), plus the keys that place it
(a name, a role, `per_agent`): whatever the spec can say, the plan can (a const that is a formula
or a 2-D table, a private variable, a param whose default is 0), and the plan is carried forward
with every key the model set (`carried`), so nothing is dropped for equalling a default. The
models are lenient otherwise (extra keys ignored; an older plan's `goal`, `meaning`, `why`, text
shapes and argument lists, `penalty` terms are read as the spec's keys). Their schemas bound every
string and list, so that a constrained decoder must close the JSON within budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    create_model,
    field_validator,
    model_validator,
)

from gymwright.mechanics.registry import MECHANICS
from gymwright.spec import model as spec_model
from gymwright.spec.names import plan_name_problem, plan_note

# Bounded strings and lists: a server that enforces the schema (llama.cpp's grammar) then cannot
# let a small model ramble past its token budget and cut the JSON off.
NAME_MAX, EXPR_MAX, PROSE_MAX = 40, 200, 300
Name = Annotated[str, StringConstraints(max_length=NAME_MAX)]
Expr = Annotated[str, StringConstraints(max_length=EXPR_MAX)] | bool | int | float
Prose = Annotated[str, StringConstraints(max_length=PROSE_MAX)]
Number = int | float | bool
if TYPE_CHECKING:
    Mechanics = str
else:  # the registry's modules
    Mechanics = Literal[tuple(MECHANICS)]


def length_limits() -> str:
    """The plans' length limits in words, for the planning prompts (a reply over a limit is
    refused by the schema and costs a retry)."""
    return (f"Keep names (snake_case) to at most {NAME_MAX} characters, expressions to "
            f"{EXPR_MAX} and every prose field to {PROSE_MAX} (one or two short sentences). {plan_note()}")


class _Plan(BaseModel):
    # extra keys in a reply are ignored; the schema sent to the model forbids them
    model_config = ConfigDict(extra="ignore", json_schema_extra={"additionalProperties": False})

    @model_validator(mode="after")
    def _names_free(self) -> Any:
        """A reserved name is refused at the plan, with what it is reserved for and a rename."""
        problem = plan_name_problem(self)
        if problem is not None:
            raise ValueError(problem)
        return self


class RolePlan(_Plan):
    """A role (spec `agents.NAME`, a `Role`)."""

    name: Name = Field(description="snake_case role name, e.g. bargainer")
    count: int | Name = Field(1, description="agents in this role: a number or a param name")
    doc: Prose = Field("", validation_alias=AliasChoices("doc", "goal"),
                       description="what agents of this role want (the role's doc)")


class RolesPlan(_Plan):
    """Stage 1: roles, goals, turn structure, what success means."""

    roles: list[RolePlan] = Field(min_length=1, max_length=4)
    turns: Literal["simultaneous", "turn-based"] = "simultaneous"
    success: list[Prose] = Field(default_factory=list, max_length=4, description="task metrics, in words")
    doc: Prose = Field("", description="what the environment is and what it trains, for the spec's doc")
    notes: Prose = ""


class ParamPlan(_Plan):
    """A param (spec `params.NAME`, a `Param`): every number that sizes or tunes the game."""

    name: Name
    type: Literal["int", "float", "bool"] | None = Field(None, description="int, float or bool; inferred from `default` if omitted")
    default: Number = Field(description="the value the task states")
    min: Number | None = Field(None, description="the smallest value that still makes a valid game")
    max: Number | None = Field(None, description="the largest value that still makes a valid game (required for sizes and counts)")
    doc: Prose = ""


class ConstPlan(_Plan):
    """A const (spec `consts.NAME`): a number, a formula over int params and other consts, a
    table (nested lists, e.g. a 2-D payoff matrix), or an enum of names."""

    name: Name
    value: Expr | list[Any] | None = Field(None, description="a number, an expression, or a (nested) list")
    enum: list[Name] | None = Field(None, description="names that become int constants 0, 1, ... (instead of value)")
    doc: Prose = ""

    @model_validator(mode="after")
    def _value_or_enum(self) -> ConstPlan:
        if (self.value is None) == (self.enum is None):
            raise ValueError(f"const `{self.name}`: give exactly one of `value` and `enum`")
        return self


class VarPlan(_Plan):
    """A state variable (spec `state.NAME`, or `agent_state.NAME` when `per_agent`; a `Var`)."""

    name: Name
    per_agent: bool = Field(False, description="true: one per agent (agent_state)")
    type: Literal["int", "float", "bool"] | None = None
    shape: list[int | Name] = Field(default_factory=list, description="[] for a scalar, else e.g. [n_items] or [size, size]")
    init: Expr = 0
    min: Expr | None = None
    max: Expr | None = None
    private: bool = Field(False, description="per_agent only: other agents must not observe it")
    doc: Prose = Field("", validation_alias=AliasChoices("doc", "meaning"))

    @field_validator("shape", mode="before")
    @classmethod
    def _shape_text(cls, v: Any) -> Any:
        """`"[size, size]"` or `"n_items"` (an older plan's text) as a list."""
        if isinstance(v, str):
            parts = [p.strip() for p in v.strip().strip("[]()").split(",") if p.strip()]
            return [int(p) if p.isdigit() else p for p in parts]
        return v


class ActionPlan(_Plan):
    """An action choice of a role (spec `actions.ROLE[i]`, a `Choice`)."""

    role: Name = ""
    name: Name
    args: dict[Name, Expr] = Field(default_factory=dict,
                                   description="argument name -> its discrete values, e.g. {\"share\": \"linspace(0, 1, 11)\"}")
    legal: Expr = Field(True, description="when the choice is legal (per agent, may use `me`)")
    move: Literal["up", "down", "left", "right", "stay"] | list[int] | None = Field(
        None, description="grid only: the move this choice makes")
    message: Expr | None = Field(None, description="channel only: the int symbol this choice sends")
    doc: Prose = ""

    @field_validator("args", mode="before")
    @classmethod
    def _args_text(cls, v: Any) -> Any:
        """`"share in linspace(0, 1, 11)"` (an older plan's text) as `{share: linspace(0, 1, 11)}`."""
        if isinstance(v, str):
            name, sep, values = v.partition(" in ")
            return {name.strip(): values.strip()} if sep else ({} if not v.strip() else {"values": v})
        return v


class TurnsPlan(_Plan):
    """Turn-based play (spec `turns`, a `Turns`)."""

    active: Expr = Field(description="the index of the agent whose turn it is, e.g. t % 2")


class ObservationPlan(_Plan):
    role: Name
    sees: Prose = Field(description="what an agent of this role observes each step (and what it must not)")


class DynamicsPlan(_Plan):
    """Stage 2: params, state, actions, observations, how episodes start and end."""

    mechanics: list[Mechanics] = Field(default_factory=list, max_length=len(MECHANICS),
                                       description="the mechanics modules the game needs (see the prompt)")
    params: list[ParamPlan] = Field(default_factory=list, max_length=10)
    consts: list[ConstPlan] = Field(default_factory=list, max_length=6)
    state: list[VarPlan] = Field(min_length=1, max_length=10)
    actions: list[ActionPlan] = Field(min_length=1, max_length=8)
    turns: Literal["simultaneous"] | TurnsPlan = "simultaneous"
    observations: list[ObservationPlan] = Field(min_length=1, max_length=4)
    start: Prose = ""
    terminate: Expr = Field(False, description="the task's own end, as an expression (e.g. deal or t >= rounds)")
    truncate: Expr = Field(False, description="a step cap from outside the task, e.g. t >= max_steps")
    terminate_agent: Expr | None = Field(None, description="when one agent's own episode ends and it leaves "
                                         "(per agent, may use `me`; simultaneous play only)")
    constraints: list[Expr] = Field(default_factory=list, max_length=6,
                                    description="what the params must meet together (e.g. players % 2 == 1)")


class RewardTermPlan(_Plan):
    """A reward term of a role (spec `rewards.ROLE[i]`, a `RewardTerm`)."""

    role: Name
    name: Name
    expr: Expr = Field(description="the term as an expression (per agent, may use `me`)")
    weight: float = 1.0
    kind: Literal["task", "shaping"] | None = Field(None, description="task: pays for the task; shaping: a hint, penalty or efficiency term")
    doc: Prose = Field("", validation_alias=AliasChoices("doc", "why"), description="why it is there")

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, v: Any) -> Any:
        """An older plan's `penalty` and `efficiency` terms are shaping terms in a spec."""
        return "shaping" if v in ("penalty", "efficiency") else v


class MetricPlan(_Plan):
    """A metric (spec `metrics.NAME`, a `Metric`); the success metric (kind task) is read as
    higher = better."""

    name: Name
    expr: Expr = Field(description="a scalar expression evaluated after every step")
    reduce: Literal["last", "sum", "mean", "max", "min"] = "last"
    kind: Literal["task", "failure", "stat"] = "stat"
    per_agent: bool = Field(False, description="one value per agent (expr may use `me`); a stat")
    doc: Prose = ""


class BaselineRulePlan(_Plan):
    """One rule of a scripted baseline (a `BaselineRule`)."""

    when: Expr = Field(True, description="when the rule applies (per agent, like `legal`)")
    action: Expr = Field(description="the choice to play: `choice` or `choice(arg=value)`")
    doc: Prose = ""


class BaselinePlan(_Plan):
    """A scripted baseline for one role (spec `baselines.NAME.ROLE`)."""

    name: Name
    role: Name
    rules: list[BaselineRulePlan] = Field(min_length=1, max_length=6,
                                          description="first matching legal rule wins; the last usually has no `when`")


class RewardsPlan(_Plan):
    """Stage 3: reward terms, the hacking risks considered, the behaviour expected, the metrics
    (which one measures success) and scripted baselines."""

    terms: list[RewardTermPlan] = Field(min_length=1, max_length=8)
    hacking_risks: list[Prose] = Field(default_factory=list, max_length=4)
    expected_behaviour: Prose = ""
    metrics: list[MetricPlan] = Field(min_length=1, max_length=6)
    success_metric: Name = Field(description="the metric (kind task) that says whether the task is done; higher is better")
    baselines: list[BaselinePlan] = Field(default_factory=list, max_length=6)


# Each plan item and the spec section it is carried into: the same keys, defaults and required
# keys, plus the keys that place it in the spec (tests/design/test_plans.py compares them key by
# key, so a key added to the spec language cannot be left out of the plan).
SPEC_OF_PLAN: dict[type[_Plan], tuple[tuple[type[BaseModel], ...], frozenset[str]]] = {
    RolePlan: ((spec_model.Role,), frozenset({"name"})),
    ParamPlan: ((spec_model.Param,), frozenset({"name"})),
    ConstPlan: ((spec_model.Const, spec_model.Enum), frozenset({"name"})),
    VarPlan: ((spec_model.Var,), frozenset({"name", "per_agent"})),
    ActionPlan: ((spec_model.Choice,), frozenset({"role"})),
    TurnsPlan: ((spec_model.Turns,), frozenset()),
    RewardTermPlan: ((spec_model.RewardTerm,), frozenset({"role"})),
    MetricPlan: ((spec_model.Metric,), frozenset({"name"})),
    BaselineRulePlan: ((spec_model.BaselineRule,), frozenset()),
}


def carried(plan: BaseModel) -> dict[str, Any]:
    """A plan as the next stages see it: every key the model set, also one equal to its default
    (a param's `default: 0`, `type: float`), since the spec's defaults may differ from a plan's."""
    return plan.model_dump(mode="json", exclude_unset=True, by_alias=True)


class FitCheck(_Plan):
    aspect: Literal["agents", "actions", "params", "rewards", "observations", "ends", "metrics", "other"]
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
        """Follows the checks: fits when no check failed (a `fits_task` of true with a failed
        check is decided by the check; design.review refuses false with none failed). The one
        home of the rule: `DesignSession.reviewed_fits` reads it."""
        return not self.failures()

    @property
    def disagrees(self) -> bool:
        """The model's overall `fits_task` says otherwise than its checks."""
        return self.fits_task != self.verdict


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
