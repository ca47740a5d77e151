"""The state of one check of a spec, and what every section's checks do with it.

`CheckContext` is the one interface between `spec.checker` and the checks of each section
(`spec/checks/*.py`, and the `checks.py` of every mechanics module): it holds the spec, the
diagnostics, the symbols declared so far and what the earlier sections found, and offers the
helpers they share (declaring a name, a scope for an expression, checking one expression,
constant ints, bounds and assignments). Each section's checks are functions of it.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from gymwright.diagnostic import Diagnostic, error
from gymwright.errors import ExprError
from gymwright.spec import names
from gymwright.spec.checked import CRole, CVar
from gymwright.spec.expr.check import Checked, FailedName, Scope, Symbol, check, const_eval
from gymwright.spec.expr.types import Info, broadcast

if TYPE_CHECKING:
    from gymwright.spec.model import EnvSpec

KIND_OF = {"param": "param", "const": "const", "enum": "enum member", "state": "variable",
           "agent_state": "variable", "action": "choice", "arg": "argument", "builtin": "const"}
"""The kind of name (`spec.names`) of each kind of symbol (a mechanics module's constant is `p.<name>`, as a const)."""
STAGE = "static"


@dataclass
class CheckContext:
    """One check of `spec` under the param values `overrides` (defaults for the rest).

    The sections' checks run in the order a spec's names become known (`spec.checker.run`), and
    each leaves here what the later ones read: params and consts, the roles, the built-in
    variables of the mechanics modules and their checked forms, the action symbols."""

    spec: EnvSpec
    overrides: dict[str, Any]
    diags: list[Diagnostic] = field(default_factory=list)
    symbols: dict[str, Symbol] = field(default_factory=dict)
    sites: list[int] = field(default_factory=lambda: [0])  # shared counter of random draw sites
    shape_names: set[str] = field(default_factory=set)  # every name that fixed a shape somewhere
    used: set[str] = field(default_factory=set)  # every name any expression reads
    structural: set[str] = field(default_factory=set)  # params that fix shapes or counts
    sizing: set[str] = field(default_factory=set)  # names a count or a size reads (`const_int`): must be ints
    failed: dict[str, str] = field(default_factory=dict)  # name -> why it is undefined (its declaration failed, reported)
    shape_params: dict[str, set[str]] = field(default_factory=dict)  # var -> params its shape depends on
    params: dict[str, Any] = field(default_factory=dict)  # the param values checked
    consts: dict[str, Any] = field(default_factory=dict)
    computed: list[tuple[str, str, str]] = field(default_factory=list)  # consts written as expressions: (name, source, doc)
    roles: list[CRole] = field(default_factory=list)
    builtin_state: list[CVar] = field(default_factory=list)  # the mechanics modules' variables
    builtin_agent_state: list[CVar] = field(default_factory=list)
    builtin_values: dict[str, Any] = field(default_factory=dict)  # constants a mechanics module declares (`p.<name>`)
    mechanics: dict[str, Any] = field(default_factory=dict)  # module name -> its checked form
    action_symbols: dict[str, Symbol] = field(default_factory=dict)
    arg_dtypes: dict[str, str] = field(default_factory=dict)  # argument name -> dtype
    choice_names: list[str] = field(default_factory=list)
    broken_choices: set[tuple[str, str]] = field(default_factory=set)  # (role, choice) refused: not reported again
    state_size: int | None = None  # values in state and agent_state so far (see `check_vars`)

    # -- reporting and declaring
    def error(self, path: str, message: str, hint: str = "", **kw: Any) -> None:
        self.diags.append(error(STAGE, path, message, hint, **kw))

    def declare(self, sym: Symbol, path: str) -> bool:
        """Add `sym` to the names expressions may read; False (reported) if its name is taken."""
        kind = KIND_OF.get(sym.kind, "name")
        why = names.reserved_for(sym.name, kind)  # the one list of reserved names, by kind (`spec.names`)
        if why is not None:
            self.error(path, f"`{sym.name}` is reserved for {why}",
                       f"rename the {kind} (e.g. `{names.suggestion(sym.name, kind)}`)")
            return False
        if sym.name in self.symbols:
            other = self.symbols[sym.name]
            self.error(path, f"`{sym.name}` is already declared (as a {other.kind.replace('_', ' ')})",
                       "every param, const, variable, action and argument needs its own name")
            return False
        self.symbols[sym.name] = sym
        return True

    def builtin(self, name: str, value: Any, doc: str, path: str) -> None:
        """Declare a constant a mechanics module brings (`height`, a tile kind, `vocab`): an int
        every generated module sets as `p.<name>`."""
        self.builtin_values[name] = value
        self.declare(Symbol(name, "builtin", Info("int", (), value, value, True, value), f"p.{name}", doc), path)

    def builtin_var(self, var: CVar, path: str) -> None:
        """Declare a variable a mechanics module keeps (`pos`, `msg`): it leads `state` or
        `agent_state`, and the module sets it at reset and updates it each step."""
        (self.builtin_agent_state if var.per_agent else self.builtin_state).append(var)
        shape = ((self.n_agents,) if var.per_agent else ()) + var.shape
        self.declare(Symbol(var.name, "agent_state" if var.per_agent else "state",
                            Info(var.dtype, shape, var.lo, var.hi), f"v.{var.name}", var.doc), path)

    # -- expressions
    def scope(self, context: str, *, per_agent: bool = False, me: tuple[int, int] | None = None,
              random: bool = False, actions: bool = False, extra: dict[str, Symbol] | None = None,
              hidden: dict[str, str] | None = None) -> Scope:
        """The names an expression in `context` may read."""
        syms = dict(self.symbols)
        for name in self.structural:  # a structural param has one value per module: use it
            sym = syms.get(name)
            if sym is not None and sym.kind == "param":
                syms[name] = Symbol(name, "param", sym.info.with_(lo=float(sym.info.value), hi=float(sym.info.value)), sym.code, sym.doc)
        hide = dict(hidden or {})
        if actions:
            syms.update(self.action_symbols)
        else:
            for name in self.action_names():
                hide.setdefault(name, f"is an action and is not known in {context}")
        if per_agent:
            lo, hi = me if me else (0, self.n_agents - 1)
            syms["me"] = Symbol("me", "me", Info("int", (), float(lo), float(hi)), "me")
        syms.update(extra or {})
        return Scope(syms, context, per_agent=per_agent, random=random, mechanics=self.mechanics,
                     sites=self.sites, hidden=hide, shape_names=self.shape_names,
                     failed={k: why for k, why in self.failed.items() if k not in syms})

    def expr(self, source: Any, scope: Scope, path: str) -> Checked | None:
        """`source` checked in `scope`; None (reported at `path`) when it does not check."""
        try:
            c = check(source, scope)
            self.used |= c.names
            return c
        except FailedName:  # its cause is reported once, where the name's declaration failed
            return None
        except ExprError as e:
            self.error(path, e.message, e.hint, value=e.source or source,
                       trace=[ln for ln in e.caret().splitlines()])
            return None

    def const_int(self, source: Any, path: str, what: str, lo: int = 0, hi: int | None = None) -> int | None:
        """The value of a constant int expression (a count, a size) in lo..hi; its params become structural."""
        c = self.expr(source, self.scope(f"{what}"), path)
        if c is None:
            return None
        value = const_eval(c.tree.body)
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not c.info.const or not isinstance(value, int) or isinstance(value, bool):
            self.error(path, f"{what} must be a constant int (literals, params, consts), got `{c.source}`")
            return None
        self.structural |= {n for n in c.names if self.symbols[n].kind == "param"}
        self.sizing |= c.names
        if value < lo or (hi is not None and value > hi):
            rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
            self.error(path, f"{what} is {value}; it must be {rng}", value=value)
            return None
        return value

    def bound(self, source: Any, path: str, default: float, side: str) -> tuple[float, Checked | None]:
        """The interval end of a declared bound (sound for every param value) and its expression."""
        if source is None:
            return default, None
        c = self.expr(source, self.scope("a variable bound"), path)
        if c is None:
            return default, None
        if not c.info.const or c.info.shape:
            self.error(path, f"bound must be a constant scalar (literals, params, consts), got `{c.source}`")
            return default, None
        return (c.info.lo if side == "lo" else c.info.hi), c

    def assignable(self, c: Checked, dtype: str, shape: tuple[int, ...], path: str, target: str) -> bool:
        """Whether `c` may be assigned to a variable of `dtype` and `shape` (reported if not)."""
        got = c.info
        ok_dtype = dtype == "float" and got.dtype in ("int", "float", "bool") or dtype == "int" and got.dtype in ("int", "bool") or dtype == got.dtype
        if not ok_dtype:
            hint = {"int": "convert with int(x), round(x) or floor(x)", "bool": "compare, e.g. `x > 0`"}.get(dtype, "")
            self.error(path, f"`{target}` is {dtype} but the value `{c.source}` is {got.dtype}", hint, value=c.source)
            return False
        if broadcast(got.shape, shape) != shape:
            want = "a scalar" if not shape else f"shape {list(shape)}"
            self.error(path, f"`{target}` has {want} but the value `{c.source}` is a {got.describe()}",
                       "index or reduce the value (e.g. x[me], sum(x)), or declare the variable's shape",
                       value=c.source)
            return False
        return True

    # -- what the spec has
    def action_names(self) -> set[str]:
        """Choice and argument names as written (known before actions are checked)."""
        names = {"action"}
        for choices in self.spec.actions.values():
            for ch in choices:
                names.add(ch.name)
                names.update(ch.args)
        return names - set(self.symbols)

    @property
    def n_agents(self) -> int:
        return sum(r.count for r in self.roles)

    def role_by_index(self, i: int) -> CRole:
        return next(r for r in self.roles if i in r.indices)

    def param_hint(self, name: str) -> str:
        """`did you mean ...?` for a misspelled param, and the list of the spec's params."""
        known = list(self.spec.params)
        close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
        listed = f"this spec's params: {', '.join(known) or 'none'}"
        return f"did you mean {' or '.join(f'`{c}`' for c in close)}? ({listed})" if close else listed
