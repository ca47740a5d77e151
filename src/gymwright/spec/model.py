"""The spec language as pydantic models: the one source of truth for the schema.

The building blocks (names, expressions, the strict base) are in `spec/fields.py`. Each
mechanics module of the registry (`gymwright/mechanics/registry.py`) adds its section to `EnvSpec`
(`grid:`, `channel:`) and its keys to `Choice` (`move`, `message`); their schemas live in the
modules' folders.

Every field carries a description: `EnvSpec.model_json_schema()` feeds the `schema` command,
the docs and (later) the designer's prompts. Expressions are strings in Python expression
syntax (see `gymwright.spec.expr`); YAML numbers and booleans are accepted where an
expression is expected and mean the literal.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from gymwright.mechanics.registry import MECHANICS
from gymwright.spec.fields import (  # noqa: F401 - the whole schema is reached as spec.model.X
    DOC,
    IDENT,
    ArgName,
    BaselineName,
    ChoiceName,
    ConstName,
    DType,
    Expr,
    MetricName,
    Name,
    ParamName,
    RoleName,
    TermName,
    VarName,
    _Strict,
    key_field,
)


def _finite(x: Any, fix: str) -> Any:
    """`x` unless it is a NaN or infinite float (they compare false against every range)."""
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{x!r} is not a finite number: NaN and infinities compare false against every range; {fix}")
    return x


class Param(_Strict):
    """A typed knob with a default and a range: the engineer's lever."""

    type: DType | None = Field(None, description="int, float or bool; inferred from `default` if omitted.")
    default: bool | int | float = Field(description="Value used when no assignment is given.")
    min: float | None = Field(None, description="Smallest allowed value (inclusive).")
    max: float | None = Field(None, description="Largest allowed value (inclusive). Required for params that size arrays or agent counts.")
    doc: str = Field("", description="What the knob means, for people and for the engineer.")

    @field_validator("default", "min", "max")
    @classmethod
    def _finite_number(cls, v: Any, info: ValidationInfo) -> Any:
        return _finite(v, "give a finite default" if info.field_name == "default" else f"give a number, or leave `{info.field_name}` out for no bound")

    @model_validator(mode="after")
    def _infer_type(self) -> Param:
        if self.type is None:
            d = self.default
            self.type = "bool" if isinstance(d, bool) else "int" if isinstance(d, int) else "float"
        return self


class Constraint(_Strict):
    """A condition every param assignment must meet (`n_players % 2 == 1`): checked wherever params are set."""

    expr: Expr = Field(description="Scalar bool expression over params and literals.")
    doc: str = Field("", description="What it says in words (\"the number of players is odd\"), shown when it is broken.")


class Enum(_Strict):
    """Named integer constants: `{enum: [propose, respond]}` defines propose = 0, respond = 1."""

    enum: list[Name] = Field(min_length=1, description="Names; each becomes an int constant equal to its position.")
    doc: str = Field("", description=DOC)


ConstValue = Expr | list[Any]


class Const(_Strict):
    """A named constant: a number, bool, nested list (a table) or an expression computed when the env is built."""

    value: ConstValue = Field(description="The value; an expression may read int params, agent counts and other consts.")
    doc: str = Field("", description=DOC)

    @field_validator("value")
    @classmethod
    def _no_nan(cls, v: Any) -> Any:
        stack = [v]
        while stack:  # iterative: nesting depth is bounded by the loader, not by recursion here
            x = stack.pop()
            if isinstance(x, list):
                stack.extend(x)
            elif isinstance(x, float) and math.isnan(x):
                raise ValueError("nan is not a number: it compares false with everything; give a number")
        return v


class Role(_Strict):
    """A role of agents. Agent ids are `<role>_<i>`, in role order then index."""

    count: int | str = Field(1, description="Number of agents of this role: an int or a param expression.")
    doc: str = Field("", description=DOC)


class Var(_Strict):
    """A state variable: global in `state`, one per agent in `agent_state`."""

    type: DType | None = Field(None, description="int, float or bool; inferred from `init` if omitted.")
    shape: list[int | str] = Field(default_factory=list, description="Extra axes (ints or param expressions); [] is a scalar. In agent_state the agent axis comes first and is implicit.")
    init: Expr = Field(0, description="Initial value at reset (may use params, consts, random functions and earlier variables; in agent_state also `me`).")
    min: Expr | None = Field(None, description="Declared lower bound (checked by the verifier, used for observation bounds).")
    max: Expr | None = Field(None, description="Declared upper bound.")
    private: bool = Field(False, description="agent_state only: other agents should not observe it.")
    doc: str = Field("", description=DOC)


def _with_mechanics(base: type[_Strict], fields: dict[str, tuple[str, tuple[Any, FieldInfo]]]) -> type[_Strict]:
    """`base` with the mechanics modules' keys after its own (key -> (module, (type, Field))), in a
    model of the same name (the schema, the reference and error messages show one), each key
    marked with its module (`json_schema_extra`: the reference leaves out what a task does not use)."""
    keys: dict[str, Any] = {}
    for key, (module, (annotation, info)) in fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        keys[key] = (annotation, FieldInfo.merge_field_infos(info, json_schema_extra={**extra, "mechanics": module}))
    return create_model(base.__name__, __base__=base, __module__=__name__, **keys)


class _ChoiceHead(_Strict):
    name: ChoiceName = Field(description="Choice name; in expressions it is a per-agent bool array (`accept[me]`).")
    args: dict[ArgName, Expr] = Field(default_factory=dict, description="Argument name -> expression giving the 1-D list of values (e.g. `linspace(0, 1, 11)`). In expressions an argument is a per-agent numeric array (`share[proposer]`).")
    legal: Expr = Field(True, description="Per-agent bool expression: when the choice may be taken. May use `me` and the argument names (then it is evaluated for every value).")


# A type checker sees the keys every spec has; the mechanics modules' keys are added from the
# registry (their modules read them, typed there).
if TYPE_CHECKING:
    _ChoiceKeys = _ChoiceHead
else:
    _ChoiceKeys = _with_mechanics(
        _ChoiceHead, {key: (m.name, field) for m in MECHANICS.values() for key, field in m.choice_fields.items()})


class Choice(_ChoiceKeys):
    """One named action choice, optionally with discrete arguments (a cartesian product)."""

    doc: str = Field("", description=DOC)

    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any: ...  # a mechanics module's key (`move`, `message`)


class Turns(_Strict):
    """Turn-based play: only the agent `active` (a global agent index) acts each step."""

    active: Expr = Field(description="Scalar int expression: the index of the agent whose turn it is.")


class Rule(_Strict):
    """A step rule: when `when` holds, assign `set` (evaluated against the state before this rule)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)  # dumps `else`
    when: Expr = Field(True, description="Condition. Scalar for rules over `state`; per agent (may use `me`) for rules over `agent_state`.")
    set: dict[Name, Expr] = Field(min_length=1, description="Variable -> new value. All targets of a rule are either global state or agent_state.")
    else_: dict[Name, Expr] | None = Field(None, alias="else", description="Assigned instead of `set` where `when` fails.")
    doc: str = Field("", description=DOC)


class First(_Strict):
    """Exclusive rules: only the first whose `when` holds fires (per agent over agent_state)."""

    first: list[Rule] = Field(min_length=1, description="Rules, all over state or all over agent_state.")
    doc: str = Field("", description=DOC)


def _step_kind(v: Any) -> str:
    return "First" if isinstance(v, First) or isinstance(v, dict) and "first" in v else "Rule"


StepEntry = Annotated[Annotated[Rule, Tag("Rule")] | Annotated[First, Tag("First")], Discriminator(_step_kind)]


class RewardTerm(_Strict):
    """One named term; an agent's reward is sum(weight * expr) over its role's terms."""

    name: TermName = Field(description="Term name, logged in infos[agent]['reward_terms'].")
    expr: Expr = Field(description="Per-agent numeric expression (may use `me`).")
    weight: float = Field(1.0, description="Multiplier of the term.")
    kind: Literal["task", "shaping"] | None = Field(None, description="`task` (pays for the task) or `shaping` (a hint on the way); unset in all of a role's terms: the first is the task term.")
    doc: str = Field("", description=DOC)

    @field_validator("weight")
    @classmethod
    def _finite_weight(cls, v: float) -> float:
        return _finite(v, "give a finite weight")


class Metric(_Strict):
    """A task measure independent of reward, reduced over the episode."""

    expr: Expr = Field(description="Scalar expression evaluated after every step.")
    reduce: Literal["last", "sum", "mean", "max", "min"] = Field("last", description="How per-step values reduce to one per episode.")
    kind: Literal["task", "failure", "stat"] = Field("stat", description="`task`: the success measure (at most one; default: the first metric); `failure`: nonzero names why an episode failed; `stat`: any other.")
    per_agent: bool = Field(False, description="`expr` per agent (uses `me`), reported as `NAME.AGENT_ID` (`chips.player_0`); a `stat`.")
    doc: str = Field("", description=DOC)


class Feature(_Strict):
    """One observation feature (any shape, flattened into the agent's Box)."""

    expr: Expr = Field(description="Per-agent numeric/bool expression (may use `me`).")
    name: str = Field("", description="For `obs.AGENT.NAME` in probes.")
    low: Expr | None = Field(None, description="Override the inferred lower bound (a const expression).")
    high: Expr | None = Field(None, description="Override the inferred upper bound.")
    doc: str = Field("", description=DOC)

    @field_validator("low", "high")
    @classmethod
    def _no_nan(cls, v: Any, info: ValidationInfo) -> Any:
        if isinstance(v, float) and math.isnan(v):
            raise ValueError(f"nan is not a bound: it compares false with everything; give a number "
                             f"(-.inf / .inf for none), or leave `{info.field_name}` out")
        return v


class Text(_Strict):
    """Text templates with `{expr}` or `{expr:fmt}` placeholders."""

    render: str | None = Field(None, description="Global template for render('ansi').")
    observe: dict[RoleName, str] = Field(default_factory=dict, description="Per role template of a text observation (may use `me`).")


def _leaves(x: Any) -> list[Any]:
    """The scalars of a nested list (iteratively: start values may be large tables)."""
    out, stack = [], [x]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack += item
        else:
            out.append(item)
    return out


class Probe(_Strict):
    """A scenario test: scripted actions from reset, then expected relations."""

    name: str = Field(description="What the scenario shows.")
    params: dict[Name, bool | int | float] = Field(default_factory=dict, description="Param values the probe is written for (unset: the defaults); at another structure (agent counts, sizes) it is skipped with a warning.")
    seed: int = Field(0, ge=0, lt=2**63, description="Reset seed: an int in [0, 2**63).")
    start: dict[Name, bool | int | float | list[Any]] = Field(default_factory=dict, description="Start values of variables (agent_state: one per agent), instead of `init`'s; checked like their declarations; the inits that read them run again.")
    actions: list[dict[str, str]] = Field(default_factory=list, description="One dict per step: agent id -> `choice` or `choice(arg=value)`.")
    illegal: bool = Field(False, description="Play actions the mask forbids (they count as no action); else such an action fails the probe.")
    expect: list[str] = Field(min_length=1, description="Bool expressions checked after the last step: state, `metric.NAME`, `reward.AGENT` (last step), `ret.AGENT` (return), `obs.AGENT[i]` or `.FEATURE`, `mask.AGENT[a]` or `.CHOICE` (now), `terminated`, `truncated`; floats compare allowing for rounding (obs: float32).")
    doc: str = Field("", description=DOC)

    @field_validator("start")
    @classmethod
    def _finite_start(cls, v: dict[str, Any]) -> dict[str, Any]:
        for name, x in v.items():
            for item in _leaves(x):
                if not isinstance(item, bool | int | float):
                    raise ValueError(f"start value of `{name}` must be numbers or bools (nested lists), got {item!r}")
                _finite(item, f"give `{name}` finite start values")
        return v

    @field_validator("params")
    @classmethod
    def _finite_params(cls, v: dict[str, Any]) -> dict[str, Any]:
        for name, x in v.items():
            _finite(x, f"give param `{name}` a finite value")
        return v


class BaselineRule(_Strict):
    """One rule of a scripted baseline. An agent plays the action of the first rule of its role whose
    `when` holds and whose action is legal; else a random legal action (none if it has none)."""

    when: Expr = Field(True, description="Per-agent bool expression, like a choice's `legal`: may use `me`, state, agent_state, params and consts, not this step's actions or random draws. Omit it for a rule that always applies (a default, usually last).")
    action: str = Field(description="The choice to play: `choice`, or `choice(arg=value)` with every argument of the choice; a value is a per-agent number expression (like `when`), played as the nearest of the argument's values.")
    doc: str = Field("", description=DOC)


class _SpecHead(_Strict):
    gymwright: Literal[1] = Field(1, description="Spec language version.")
    name: Name = Field(description="Identifier of the environment.")
    description: str = Field("", description="The task text this spec answers.")
    doc: str = Field("", description="Short documentation (the environment card).")
    tags: list[str] = Field(default_factory=list, description="Keywords for retrieval and the library listing.")
    params: dict[ParamName, Param] = Field(default_factory=dict, description="Typed knobs; a spec plus a param assignment is one environment (a config).")
    constraints: list[Constraint | Expr] = Field(default_factory=list, description="Bool expressions over params every assignment must meet (`n % 2 == 1`), or `{expr, doc}`: checked wherever params are set.")
    consts: dict[ConstName, Const | Enum | ConstValue] = Field(default_factory=dict, description="Named constants: numbers, tables, expressions, enums.")
    agents: dict[RoleName, Role] = Field(min_length=1, description="Roles and their counts; agent ids are `<role>_<i>`.")


# The mechanics modules' sections follow `agents` (as the choice keys above: see there).
if TYPE_CHECKING:
    _SpecSections = _SpecHead
else:
    _SpecSections = _with_mechanics(
        _SpecHead, {m.name: (m.name, (m.section | None, key_field(None, description=m.doc))) for m in MECHANICS.values()})


class EnvSpec(_SpecSections):
    """A multi-agent environment, as data."""

    state: dict[VarName, Var] = Field(default_factory=dict, description="Global variables, initialized in order at reset.")
    agent_state: dict[VarName, Var] = Field(default_factory=dict, description="Per-agent variables (leading agent axis; `x[me]` is mine).")
    actions: dict[RoleName, list[Choice]] = Field(description="Per role, its choices. Action space = Discrete(total), with a mask from `legal`.")
    turns: Literal["simultaneous"] | Turns = Field("simultaneous", description="`simultaneous`, or `{active: expr}` for turn-based play.")
    step: list[StepEntry] = Field(default_factory=list, description="Ordered rules (or `first:` groups); later rules see earlier updates.")
    rewards: dict[RoleName, list[RewardTerm]] = Field(default_factory=dict, description="Per role, named reward terms; each is logged on its own.")
    metrics: dict[MetricName, Metric] = Field(default_factory=dict, description="Task measures independent of reward, reported at episode end.")
    terminate: Expr = Field(False, description="Scalar bool: the task's own end (a deal, all rounds played). `t` counts steps.")
    truncate: Expr = Field(False, description="Scalar bool: a step cap from outside the task, e.g. `t >= max_steps` (both may hold).")
    terminate_agent: Expr | None = Field(None, description="Per-agent bool (uses `me`): that agent's own episode ends (terminated, out of `agents`); simultaneous play only.")
    observe: dict[RoleName, list[Feature | Expr]] = Field(description="Per role, its features, flattened into a float32 Box.")
    text: Text | None = Field(None, description="Text templates for render('ansi') and text observations.")
    probes: list[Probe] = Field(default_factory=list, description="Scenario tests run by the verifier.")
    baselines: dict[BaselineName, dict[RoleName, Annotated[list[BaselineRule], Field(min_length=1)]]] = Field(
        default_factory=dict, description="Scripted policies: name -> role -> ordered rules (see BaselineRule); roles left out play random legal actions.")

    @field_validator("constraints")
    @classmethod
    def _constraints(cls, v: list[Any]) -> list[Constraint]:
        return [c if isinstance(c, Constraint) else Constraint(expr=c) for c in v]

    @field_validator("observe")
    @classmethod
    def _features(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        return {role: [f if isinstance(f, Feature) else Feature(expr=f) for f in fs] for role, fs in v.items()}

    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any: ...  # a mechanics module's section (`grid`, `channel`)
