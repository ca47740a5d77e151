"""The checked form of a spec: every expression parsed and typed, every shape concrete.

This is what backends compile. It is built by `gymwright.spec.checker.check_spec` for one
assignment of the *structural* params (those that size arrays or count agents).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from gymwright.spec.expr.check import Checked, Symbol

if TYPE_CHECKING:
    from gymwright.spec.model import EnvSpec


@dataclass
class CVar:
    name: str
    dtype: str
    shape: tuple[int, ...]  # without the agent axis
    init: Checked | None
    lo: float
    hi: float
    per_agent: bool
    private: bool = False
    doc: str = ""
    path: str = ""
    builtin: bool = False  # kept by a mechanics module (`gymwright/mechanics/`)
    min_expr: Checked | None = None  # the declared bounds, for run-time checks at actual params
    max_expr: Checked | None = None


@dataclass
class CArg:
    name: str
    values: np.ndarray
    dtype: str


@dataclass
class CChoice:
    role: str
    name: str
    offset: int  # first flat action index of this choice within its role
    args: list[CArg]
    legal: Checked | None
    path: str = ""
    doc: str = ""
    fields: dict[str, Any] = field(default_factory=dict)  # the checked keys of mechanics modules (`move`, `message`)

    @property
    def n(self) -> int:
        n = 1
        for a in self.args:
            n *= len(a.values)
        return n

    def combos(self) -> list[dict[str, Any]]:
        """Argument values of each flat index of this choice (row-major over args)."""
        out: list[dict[str, Any]] = [{}]
        for a in self.args:
            out = [{**c, a.name: v.item()} for c in out for v in a.values]
        return out


@dataclass
class CTerm:
    name: str
    expr: Checked
    weight: float
    path: str


@dataclass
class CFeature:
    name: str
    expr: Checked
    size: int
    low: np.ndarray
    high: np.ndarray
    path: str


@dataclass
class CRole:
    name: str
    count: int
    start: int
    choices: list[CChoice] = field(default_factory=list)
    terms: list[CTerm] = field(default_factory=list)
    features: list[CFeature] = field(default_factory=list)
    text_observe: list[Any] | None = None

    @property
    def agent_ids(self) -> list[str]:
        return [f"{self.name}_{i}" for i in range(self.count)]

    @property
    def indices(self) -> range:
        return range(self.start, self.start + self.count)

    @property
    def n_actions(self) -> int:
        return sum(c.n for c in self.choices)

    @property
    def obs_dim(self) -> int:
        return sum(f.size for f in self.features)


@dataclass
class CRule:
    index: int
    when: Checked
    sets: list[tuple[str, Checked]]
    per_agent: bool
    path: str
    doc: str = ""
    group: int = -1  # exclusive group (the `step` entry of a `first:` or an `else`): only its first holding rule fires


@dataclass
class CMetric:
    name: str
    expr: Checked
    reduce: str
    path: str
    spec_name: str = ""  # the metric of the spec it comes from (`chips` for `chips.player_0`); '' = name


@dataclass
class CConstraint:
    """A condition between params (`constraints[i]`), checked wherever params are set."""

    expr: Checked
    path: str
    doc: str = ""

    def describe(self) -> str:
        return f"`{self.expr.source}`" + (f" ({self.doc})" if self.doc else "")


@dataclass
class CProbe:
    name: str
    params: dict[str, Any]
    seed: int
    actions: list[dict[str, tuple[str, dict[str, Any]]]]
    expect: list[Checked]
    path: str
    sources: list[str] = field(default_factory=list)  # expectations as written (before rewriting)
    start: dict[str, Any] = field(default_factory=dict)  # start values (checked), for reset(options=)
    illegal: bool = False  # play actions the mask forbids


@dataclass
class CBaselineRule:
    """One rule of a scripted baseline: its condition, the choice and the argument values."""

    when: Checked | None  # None: always
    choice: CChoice
    args: list[tuple[CArg, Checked]]  # one per argument of the choice, in its order
    path: str
    doc: str = ""


@dataclass
class CBaseline:
    """A scripted baseline policy: per role, its ordered rules (roles left out play randomly)."""

    name: str
    rules: dict[str, list[CBaselineRule]]


@dataclass
class CheckedSpec:
    spec: EnvSpec
    params: dict[str, Any]  # the assignment checked (defaults + overrides)
    param_types: dict[str, str]
    structural: set[str]  # params that fix shapes/counts
    consts: dict[str, Any]
    roles: list[CRole]
    state: list[CVar]
    agent_state: list[CVar]
    rules: list[CRule]
    metrics: list[CMetric]
    terminate: Checked
    truncate: Checked
    active: Checked | None
    mechanics: dict[str, Any]  # mechanics module -> its checked form (only the modules the spec uses)
    builtin_values: dict[str, Any]  # the constants the mechanics modules declare (`p.<name>`)
    text_render: list[Any] | None
    probes: list[CProbe]
    symbols: dict[str, Symbol]
    n_sites: int
    arg_names: dict[str, str]  # arg name -> dtype
    choice_names: list[str]
    used: set[str] = field(default_factory=set)  # names read by any expression
    baselines: list[CBaseline] = field(default_factory=list)  # scripted baseline policies
    constraints: list[CConstraint] = field(default_factory=list)  # conditions between params
    agent_end: Checked | None = None  # `terminate_agent`: per agent, its own episode ends (None: none)

    @property
    def n_agents(self) -> int:
        return sum(r.count for r in self.roles)

    @property
    def agent_ids(self) -> list[str]:
        return [a for r in self.roles for a in r.agent_ids]

    @property
    def turn_based(self) -> bool:
        return self.active is not None

    def section(self, name: str) -> Any:
        """The checked form of mechanics module `name` (None when the spec does not use it)."""
        return self.mechanics.get(name)

    def role_of(self, index: int) -> CRole:
        for r in self.roles:
            if index in r.indices:
                return r
        raise IndexError(index)
