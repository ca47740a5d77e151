"""Check a whole spec: resolve names, type every expression, fix every shape.

`check_spec(spec, params)` returns the `CheckedSpec` (None if there were errors) and the
list of diagnostics. It keeps going after an error so that one run reports as much as it
can: the repair loop needs every finding at once.
"""

from __future__ import annotations

import ast
import difflib
import math
import re
import string
from typing import Any

import numpy as np

from gymwright.diagnostic import Diagnostic, error, has_errors, warning
from gymwright.errors import ExprError
from gymwright.spec.checked import (
    CArg,
    CBaseline,
    CBaselineRule,
    CChoice,
    CFeature,
    CGrid,
    CheckedSpec,
    CMetric,
    CProbe,
    CRole,
    CRule,
    CTerm,
    CVar,
)
from gymwright.spec.expr.check import Checked, Scope, Symbol, check, const_eval
from gymwright.spec.expr.parse import parse
from gymwright.spec.expr.types import INF, Info, broadcast
from gymwright.spec.limits import (
    MAX_ACTIONS,
    MAX_AGENTS,
    MAX_ARG_VALUES,
    MAX_CONST_SIZE,
    MAX_FEATURE_SIZE,
    MAX_GRID_POOL,
    MAX_GRID_SIDE,
    MAX_OBS_DIM,
    MAX_POOL_CELLS,
    MAX_STATE_SIZE,
    MAX_VOCAB,
    count_diagnostics,
    state_values,
)
from gymwright.spec.model import Const, Enum, EnvSpec, First, Var

DIRECTIONS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1), "stay": (0, 0)}
RESERVED = {"me", "t", "action", "True", "False", "None", "reward", "ret",
            "terminated", "truncated", "metric", "p", "v", "np", "rt"}
STAGE = "static"


def check_spec(spec: EnvSpec, params: dict[str, Any] | None = None) -> tuple[CheckedSpec | None, list[Diagnostic]]:
    """Check `spec` under the param assignment `params` (defaults for the rest)."""
    too_many = count_diagnostics(spec)  # refused before any work that grows with the counts
    if too_many:
        return None, too_many
    b = _Builder(spec, dict(params or {}))
    result = b.run()
    return (None if has_errors(b.diags) else result), b.diags


class _Builder:
    def __init__(self, spec: EnvSpec, overrides: dict[str, Any]) -> None:
        self.spec = spec
        self.overrides = overrides
        self.diags: list[Diagnostic] = []
        self.symbols: dict[str, Symbol] = {}
        self.sites = [0]
        self.shape_names: set[str] = set()  # every name that fixed a shape somewhere
        self.used: set[str] = set()  # every name any expression reads
        self.bound_exprs: dict[str, tuple[Checked | None, Checked | None]] = {}
        self.structural: set[str] = set()
        self.shape_params: dict[str, set[str]] = {}  # var -> params its shape depends on
        self.params: dict[str, Any] = {}
        self.roles: list[CRole] = []
        self.grid: CGrid | None = None
        self.action_symbols: dict[str, Symbol] = {}
        self.broken_choices: set[tuple[str, str]] = set()  # (role, choice) refused: not reported again
        self.state_size: int | None = None  # values in state and agent_state so far (see _count_state)

    # ------------------------------------------------------------------ helpers
    def error(self, path: str, message: str, hint: str = "", **kw: Any) -> None:
        self.diags.append(error(STAGE, path, message, hint, **kw))

    def declare(self, sym: Symbol, path: str) -> bool:
        if sym.name in RESERVED:
            self.error(path, f"`{sym.name}` is a reserved name", "choose another name")
            return False
        if sym.name in self.symbols:
            other = self.symbols[sym.name]
            self.error(path, f"`{sym.name}` is already declared (as a {other.kind.replace('_', ' ')})",
                       "every param, const, variable, action and argument needs its own name")
            return False
        self.symbols[sym.name] = sym
        return True

    def scope(self, context: str, *, per_agent: bool = False, me: tuple[int, int] | None = None,
              random: bool = False, actions: bool = False, extra: dict[str, Symbol] | None = None,
              hidden: dict[str, str] | None = None) -> Scope:
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
        return Scope(syms, context, per_agent=per_agent, random=random, grid=self.grid,
                     sites=self.sites, hidden=hide, shape_names=self.shape_names)

    def expr(self, source: Any, scope: Scope, path: str) -> Checked | None:
        try:
            c = check(source, scope)
            self.used |= c.names
            return c
        except ExprError as e:
            self.error(path, e.message, e.hint, value=e.source or source,
                       trace=[ln for ln in e.caret().splitlines()])
            return None

    def const_int(self, source: Any, path: str, what: str, lo: int = 0, hi: int | None = None) -> int | None:
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
        if value < lo or (hi is not None and value > hi):
            rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
            self.error(path, f"{what} is {value}; it must be {rng}", value=value)
            return None
        return value

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

    # ------------------------------------------------------------------ run
    def run(self) -> CheckedSpec | None:
        self.check_params()
        self.check_consts()
        self.check_roles()
        if not self.roles:
            return None
        self.check_builtins()
        self.check_grid()
        self.check_channel()
        state = self.check_vars("state", per_agent=False)
        agent_state = self.check_vars("agent_state", per_agent=True)
        self.check_actions()
        active = self.check_turns()
        grid_late = self.check_grid_late()
        rules = self.check_rules()
        self.check_rewards()
        metrics = self.check_metrics()
        ends = [self.check_end(k) for k in ("terminate", "truncate")]
        self.check_observe()
        text_render = self.check_text()
        baselines = self.check_baselines()
        self.structural |= self.shape_names & set(self.spec.params)
        probes = self.check_probes(metrics, self.builtin_state + state + self.builtin_agent_state + agent_state)
        self.check_shape_params()
        if has_errors(self.diags) or self.grid is not None and not grid_late:
            return None
        return CheckedSpec(
            spec=self.spec, params=self.params,
            param_types={k: p.type or "float" for k, p in self.spec.params.items()},
            structural=self.structural, consts=self.consts, roles=self.roles,
            state=self.builtin_state + state, agent_state=self.builtin_agent_state + agent_state,
            rules=rules, metrics=metrics, terminate=ends[0], truncate=ends[1],  # type: ignore[arg-type]
            active=active, grid=self.grid, vocab=self.vocab, text_render=text_render,
            probes=probes, symbols=self.symbols, n_sites=self.sites[0], used=self.used,
            arg_names=self.arg_dtypes, choice_names=self.choice_names, baselines=baselines,
        )

    # ------------------------------------------------------------------ params and consts
    def param_hint(self, name: str) -> str:
        """`did you mean ...?` for a misspelled param, and the list of the spec's params."""
        known = list(self.spec.params)
        close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
        listed = f"this spec's params: {', '.join(known) or 'none'}"
        return f"did you mean {' or '.join(f'`{c}`' for c in close)}? ({listed})" if close else listed

    def check_params(self) -> None:
        for name in self.overrides:
            if name not in self.spec.params:
                self.error(f"params.{name}", f"unknown param `{name}`", self.param_hint(name))
        for name, p in self.spec.params.items():
            path = f"params.{name}"
            given = name in self.overrides
            value = self.overrides.get(name, p.default)
            where = f"{path} (given {value!r})" if given else f"{path}.default"
            value = self._coerce_param(value, p.type or "float", where)
            if value is None:  # reported; go on with the default so later checks don't cascade
                value = p.default
            if p.min is not None and p.max is not None and p.min > p.max:
                self.error(f"{path}.min", f"min {p.min:g} is larger than max {p.max:g}")
            if (p.min is not None and value < p.min) or (p.max is not None and value > p.max):
                self.error(where, f"param `{name}` = {value!r} is out of its range [{_fmt(p.min)}, {_fmt(p.max)}]",
                           f"choose a value in [{_fmt(p.min)}, {_fmt(p.max)}]", value=value)
            self.params[name] = value
            lo = float(p.min) if p.min is not None else -INF
            hi = float(p.max) if p.max is not None else INF
            if p.type == "bool":
                lo, hi = 0.0, 1.0
            self.declare(Symbol(name, "param", Info(p.type or "float", (), lo, hi, True, value), f"p.{name}", p.doc), path)

    def _coerce_param(self, value: Any, dtype: str, where: str) -> Any:
        if dtype == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
                return value.lower() in ("true", "1")
        elif dtype == "int":
            if isinstance(value, str):
                try:
                    value = float(value)
                except ValueError:
                    pass
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, float) and value.is_integer():
                return int(value)
        else:
            try:
                if not isinstance(value, bool):
                    value = float(value)
                    if math.isfinite(value):
                        return value
            except (TypeError, ValueError, OverflowError):
                pass
        article = "an" if dtype == "int" else "a"
        if dtype != "bool" and isinstance(value, float) and not math.isfinite(value):  # NaN fails no range check
            self.error(where, f"expected a finite {dtype} value, got {value!r}: NaN and infinities compare false "
                       "against every range, so no range check can hold them", f"give a finite {dtype}", value=repr(value))
            return None
        self.error(where, f"expected {article} {dtype} value, got {value!r}", f"give {article} {dtype}", value=value)
        return None

    def check_consts(self) -> None:
        """Enums and literal consts; computed ones wait for the agent counts (check_computed_consts)."""
        self.consts: dict[str, Any] = {}
        self.computed: list[tuple[str, str, str]] = []  # (name, expression, doc), in order
        for name, c in self.spec.consts.items():
            path = f"consts.{name}"
            if isinstance(c, Enum):
                for i, member in enumerate(c.enum):
                    self.consts[member] = i
                    self.declare(Symbol(member, "const", Info("int", (), i, i, True, i), f"p.{member}", f"{name} enum member"), f"{path}.enum[{i}]")
                continue
            raw = c.value if isinstance(c, Const) else c
            doc = c.doc if isinstance(c, Const) else ""
            if isinstance(raw, str):
                self.computed.append((name, raw, doc))
            else:
                self.declare_const(name, raw, doc)

    def check_computed_consts(self) -> None:
        for name, source, doc in self.computed:
            value = self.computed_const(name, source, f"consts.{name}")
            if value is not None:
                self.declare_const(name, value, doc)

    def declare_const(self, name: str, raw: Any, doc: str) -> None:
        path = f"consts.{name}"
        try:
            arr = np.asarray(raw)
        except ValueError:
            arr = np.asarray([], dtype=object)
        if arr.dtype.kind not in "biuf" or arr.size == 0:
            self.error(path, f"const `{name}` must be a number, a bool or a rectangular nested list of numbers, got {raw!r}",
                       "tables must have rows of equal length", value=raw)
            return
        dtype = {"b": "bool", "i": "int", "u": "int", "f": "float"}[arr.dtype.kind]
        value: Any = arr.item() if arr.shape == () else arr.astype({"bool": bool, "int": np.int64, "float": np.float64}[dtype])
        if arr.size > MAX_CONST_SIZE:
            self.error(path, f"const `{name}` has {arr.size:,} elements; the limit (MAX_CONST_SIZE) is {MAX_CONST_SIZE:,}",
                       "a const is a small table: give its params smaller values or filter it", value=arr.size)
            return
        self.consts[name] = value
        self.declare(Symbol(name, "const", Info(dtype, arr.shape, float(arr.min()), float(arr.max()), True, value), f"p.{name}", doc), path)

    def computed_const(self, name: str, source: str, path: str) -> Any:
        """The value of a const written as an expression (None if refused). It is computed once,
        when the env is built, so every param it reads is structural (one value per module)."""
        why = "is not known when consts are computed (they are fixed when the env is built, before any episode)"
        hidden = {n: why for n in [*self.spec.state, *self.spec.agent_state, "t"]}
        c = self.expr(source, self.scope(f"const `{name}`", hidden=hidden), path)
        if c is None:
            return None
        value = const_eval(c.tree.body) if c.info.const else None
        if value is None:
            self.error(path, f"const `{name}` must be constant (literals, params, earlier consts), got `{c.source}`",
                       "state, actions, `t` and random draws are not known when the env is built")
            return None
        params = {n for n in c.names if self.symbols[n].kind == "param"}
        for p in sorted(params):
            if self.spec.params[p].type == "float":
                self.error(path, f"const `{name}` reads float param `{p}`: a computed const is fixed when the env "
                           "is built, so the params it reads must be int or bool", f"write `{c.source}` where it is used instead")
                return None
        self.structural |= params
        return value.tolist() if isinstance(value, np.ndarray) else value

    # ------------------------------------------------------------------ agents
    def check_roles(self) -> None:
        start = 0
        for name, role in self.spec.agents.items():
            path = f"agents.{name}.count"
            count = role.count if isinstance(role.count, int) else self.const_int(role.count, path, "agent count", lo=1, hi=MAX_AGENTS)
            if count is None:
                continue
            if not 1 <= count <= MAX_AGENTS:
                self.error(path, f"agent count is {count}; it must be 1..{MAX_AGENTS}")
                continue
            self.roles.append(CRole(name, count, start))
            start += count
        if start > MAX_AGENTS:
            self.error("agents", f"{start} agents in all; the limit is {MAX_AGENTS}")

    def check_builtins(self) -> None:
        n = self.n_agents
        if "n_agents" in self.symbols:  # a param may name the built-in, if it is the total
            if self.params.get("n_agents") != n:
                kind = "param" if "n_agents" in self.spec.params else self.symbols["n_agents"].kind
                where = "params" if kind == "param" else "consts"
                self.error(f"{where}.n_agents", f"{kind} `n_agents` = {self.params.get('n_agents', self.symbols['n_agents'].info.value)} but the spec has {n} agents in all",
                           "`n_agents` names the total number of agents; give yours another name")
        else:
            self.symbols["n_agents"] = Symbol("n_agents", "builtin", Info("int", (), n, n, True, n), "p.n_agents", "number of agents")
        for r in self.roles:
            mask = np.array([i in r.indices for i in range(n)])
            self.declare(Symbol(f"n_{r.name}", "builtin", Info("int", (), r.count, r.count, True, r.count), f"p.n_{r.name}", f"number of {r.name} agents"), f"agents.{r.name}")
            self.declare(Symbol(f"is_{r.name}", "builtin", Info("bool", (n,), 0.0, 1.0, True, mask), f"p.is_{r.name}", f"per agent: is it a {r.name}"), f"agents.{r.name}")
        self.check_computed_consts()  # after the agent counts, before `t`
        self.symbols["t"] = Symbol("t", "t", Info("int", (), 0.0, self.t_bound()), "v.t", "steps taken in this episode")
        self.builtin_state: list[CVar] = []
        self.builtin_agent_state: list[CVar] = []
        self.vocab: int | None = None

    def t_bound(self) -> float:
        """The largest `t` can reach: an episode ends at the latest when a disjunct `t >= E`, `t > E`
        or `t == E` (E a constant with a finite maximum over the params' ranges; E >= 1 for `==`) of
        `terminate` or `truncate` first holds. INF when none bounds it."""
        best = INF
        for key in ("terminate", "truncate"):
            try:
                _, tree = parse(getattr(self.spec, key))
            except ExprError:
                continue  # check_end reports it
            body = tree.body
            for part in body.values if isinstance(body, ast.BoolOp) and isinstance(body.op, ast.Or) else [body]:
                best = min(best, self._t_limit(part))
        return best

    def _t_limit(self, node: ast.AST) -> float:
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            return INF
        op, left, right = type(node.ops[0]), node.left, node.comparators[0]
        flipped = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Eq: ast.Eq}
        if isinstance(right, ast.Name) and right.id == "t" and op in flipped:
            op, left, right = flipped[op], right, left
        if not (isinstance(left, ast.Name) and left.id == "t") or op not in (ast.GtE, ast.Gt, ast.Eq):
            return INF
        try:
            e = check(ast.unparse(right), self.scope("a step limit")).info
        except ExprError:
            return INF
        if not e.const or e.shape or e.dtype == "bool" or not math.isfinite(e.hi):
            return INF
        if op is ast.Eq:
            return e.hi if e.dtype == "int" and e.lo >= 1 else INF
        return float(max(math.ceil(e.hi) if op is ast.GtE else math.floor(e.hi) + 1, 1))

    # ------------------------------------------------------------------ mechanics
    def check_grid(self) -> None:
        g = self.spec.grid
        if g is None:
            for role, r in self.spec.actions.items():
                for i, ch in enumerate(r):
                    if ch.move is not None:
                        self.error(f"actions.{role}[{i}].move", "`move` needs a `grid:` section", "declare a grid, or remove move")
            return
        h = self.const_int(g.height, "grid.height", "grid height", 1, MAX_GRID_SIDE)
        w = self.const_int(g.width, "grid.width", "grid width", 1, MAX_GRID_SIDE)
        if h is None or w is None:
            return
        kinds = list(g.tiles)
        chars = [t.char for t in g.tiles.values()]
        if len(set(chars)) != len(chars):
            self.error("grid.tiles", f"tile chars must be distinct, got {chars}")
        fixed = self._grid_map(g.map, h, w, chars)
        densities = []
        for k, (kname, tk) in enumerate(g.tiles.items()):
            self.declare(Symbol(kname, "builtin", Info("int", (), k, k, True, k), f"p.{kname}", "tile kind"), f"grid.tiles.{kname}")
            c = self.expr(tk.density, self.scope("grid density"), f"grid.tiles.{kname}.density")
            if c is not None and c.info.dtype not in ("int", "float"):
                self.error(f"grid.tiles.{kname}.density", f"density must be a number, got {c.info.describe()}")
            densities.append(c)
        n = self.n_agents
        starts = self._grid_points(g.starts, "grid.starts", h, w, n)
        goals = self._grid_points(g.goals, "grid.goals", h, w, n)
        slip = self.expr(g.slip, self.scope("grid slip"), "grid.slip")
        pool = self.expr(g.pool, self.scope("grid pool"), "grid.pool")
        if pool is not None and (pool.info.dtype != "int" or pool.info.shape or not pool.info.const):
            self.error("grid.pool", f"pool must be a constant int (a literal or an int param), got {pool.info.describe()}")
        elif pool is not None and (pool.info.lo < 0 or pool.info.hi > MAX_GRID_POOL):
            self.error("grid.pool", f"pool must be 0..{MAX_GRID_POOL}", "0 draws a fresh layout at every reset")
        elif pool is not None and g.solve is None and int(const_eval(pool.tree.body)) * h * w > MAX_POOL_CELLS:
            layouts = int(const_eval(pool.tree.body))  # at the params checked (an instance may set another)
            self.error("grid.pool", f"a pool of {layouts:,} layouts of {h}x{w} cells holds {layouts * h * w:,} cells, "
                       f"all generated at the first reset; the limit is {MAX_POOL_CELLS:,}",
                       "give the pool fewer layouts, or `pool: 0` for a fresh layout at every reset")
        solve = self._check_solve(h, w, densities, pool) if g.solve is not None else None
        for sym in (Symbol("height", "builtin", Info("int", (), h, h, True, h), "p.height"),
                    Symbol("width", "builtin", Info("int", (), w, w, True, w), "p.width")):
            self.declare(sym, "grid")
        side = float(max(h, w) - 1)
        self.builtin_state.append(CVar("tiles", "int", (h, w), None, 0.0, len(kinds) - 1, False, doc="tile kind per cell", builtin=True))
        points = [("pos", "position [row, col]")] + ([("goal", "goal [row, col]")] if g.goals != "none" else [])
        for name, doc in points:
            self.builtin_agent_state.append(CVar(name, "int", (2,), None, 0.0, side, True, doc=doc, builtin=True))
        if solve is not None:
            self.builtin_state.append(CVar("optimal_cost", "int", (), None, 0.0, INF, False, builtin=True,
                                           doc="optimal sum of arrival times of this layout (grid.solve)"))
        for name, doc in (("moved", "moved in the last step"), ("conflict", "last move cancelled by another agent")):
            self.builtin_agent_state.append(CVar(name, "bool", (), None, 0.0, 1.0, True, doc=doc, builtin=True))
        for var in self.builtin_state + self.builtin_agent_state:
            shape = ((n,) if var.per_agent else ()) + var.shape
            self.declare(Symbol(var.name, "agent_state" if var.per_agent else "state",
                                Info(var.dtype, shape, var.lo, var.hi), f"v.{var.name}", var.doc), "grid")
        if fixed is not None:
            self._check_fixed_layout(fixed, starts, goals, [t.blocked for t in g.tiles.values()])
        self.grid = CGrid(h, w, kinds, chars, [tuple(t.color) for t in g.tiles.values()],  # type: ignore[misc]
                          densities, [t.blocked for t in g.tiles.values()],  # type: ignore[arg-type]
                          [t.passable for t in g.tiles.values()], fixed, starts, goals,
                          slip, g.collision, None, n, g.goals != "none", pool, solve)  # type: ignore[arg-type]

    def _check_solve(self, h: int, w: int, densities: list[Checked | None], pool: Checked | None) -> Checked | None:
        """`grid.solve`: the layouts must be ones the MAPF generator can make; returns `wait_ratio`."""
        from gymwright.mapf.instances import AGENTS, MAX_HOLE_RATIO, SIZES

        g, where = self.spec.grid, "grid.solve"
        assert g is not None and g.solve is not None
        if h != w or not SIZES[0] <= h <= SIZES[1]:
            self.error(where, f"solved layouts need a square grid of side {SIZES[0]}..{SIZES[1]}, got {h}x{w}",
                       "make height and width the same param (e.g. `size`) with that range")
        if not AGENTS[0] <= self.n_agents <= AGENTS[1]:
            self.error(where, f"solved layouts take {AGENTS[0]}..{AGENTS[1]} agents, the spec has {self.n_agents}")
        fixed = [name for name, bad in (("map", g.map is not None), ("starts", g.starts != "random"),
                                        ("goals", g.goals != "random")) if bad]
        if fixed:
            self.error(where, f"solved layouts draw the lake, starts and goals themselves; grid.{fixed[0]} "
                       "must be left out (random)", f"remove grid.{fixed[0]}, or remove grid.solve")
        if g.collision != "block":
            self.error(where, "solved layouts assume vertex and swap conflicts are blocked", "set `collision: block`")
        kinds = list(g.tiles)
        holes = [k for k, t in enumerate(g.tiles.values()) if t.blocked]
        if len(holes) != 1:
            self.error(where, f"solved layouts need exactly one blocked tile kind (the holes), got {len(holes)}",
                       "mark the hole kind `blocked: true`")
        for k, c in enumerate(densities):
            if k in holes and c is not None and c.info.hi > MAX_HOLE_RATIO:
                self.error(f"grid.tiles.{kinds[k]}.density", f"the hole density may reach {c.info.hi:g}; "
                           f"solved layouts take at most {MAX_HOLE_RATIO}", f"bound it to 0..{MAX_HOLE_RATIO}")
            elif k and k not in holes and c is not None and (not c.info.const or c.info.hi != 0):
                self.error(f"grid.tiles.{kinds[k]}.density", "solved layouts generate only the floor and the holes",
                           "give this kind no density, or remove grid.solve")
        if pool is None or pool.info.lo < 1:
            self.error("grid.pool", "solved layouts are drawn from a pool, so `pool` must be at least 1",
                       "give pool a minimum of 1 (e.g. a param with min 1)")
        ratio = self.expr(g.solve.wait_ratio, self.scope("grid wait ratio"), f"{where}.wait_ratio")
        if ratio is not None and (ratio.info.dtype not in ("int", "float") or ratio.info.shape or not ratio.info.const):
            self.error(f"{where}.wait_ratio", f"wait_ratio must be a constant number (a literal or a param), got {ratio.info.describe()}")
        elif ratio is not None and (ratio.info.lo < 0 or ratio.info.hi > 1):
            self.error(f"{where}.wait_ratio", f"wait_ratio may be {ratio.info.lo:g}..{ratio.info.hi:g}; it is a share, 0..1",
                       "bound the param to 0..1")
        return ratio

    def _check_fixed_layout(self, tiles: np.ndarray, starts: np.ndarray | None, goals: np.ndarray | None,
                            blocked: list[bool]) -> None:
        """A fixed map must admit the agents and keep each goal reachable (checked once, here)."""
        from gymwright.runtime.grid import generate_layout

        def uniforms(stream: int, n: int) -> np.ndarray:
            return np.random.default_rng(stream).random(n)

        try:
            generate_layout(tiles.shape[0], tiles.shape[1], self.n_agents, [0.0] * len(blocked), blocked,
                            uniforms, tiles, starts, goals)
        except ValueError as e:
            self.error("grid.map", f"the fixed layout does not work: {e}",
                       "open a path between each start and its goal, or move the starts/goals")

    def _grid_map(self, rows: list[str] | None, h: int, w: int, chars: list[str]) -> np.ndarray | None:
        if rows is None:
            return None
        if len(rows) != h:
            self.error("grid.map", f"map has {len(rows)} rows but grid.height is {h}")
            return None
        out = np.zeros((h, w), dtype=np.int64)
        for r, row in enumerate(rows):
            if len(row) != w:
                self.error(f"grid.map[{r}]", f"row has {len(row)} cells but grid.width is {w}", value=row)
                return None
            for c, ch in enumerate(row):
                if ch not in chars:
                    self.error(f"grid.map[{r}]", f"unknown tile char {ch!r} at column {c}", f"tile chars: {chars}", value=row)
                    return None
                out[r, c] = chars.index(ch)
        return out

    def _grid_points(self, pts: Any, path: str, h: int, w: int, n: int) -> np.ndarray | None:
        if pts in ("random", "none"):
            return None
        arr = np.asarray(pts, dtype=np.int64)
        if arr.shape != (n, 2):
            self.error(path, f"expected {n} positions [row, col] (one per agent), got shape {list(arr.shape)}")
            return None
        if (arr < 0).any() or (arr[:, 0] >= h).any() or (arr[:, 1] >= w).any():
            self.error(path, f"positions must lie inside the {h}x{w} grid", value=pts)
            return None
        return arr

    def check_grid_late(self) -> bool:
        g = self.spec.grid
        if g is None or self.grid is None:
            return False
        n = self.n_agents
        c = self.expr(g.can_move, self.scope("grid.can_move", per_agent=True), "grid.can_move")
        if c is not None and (c.info.dtype != "bool" or c.info.shape):
            self.error("grid.can_move", f"can_move must be a per-agent bool, got {c.info.describe()}")
        self.grid.can_move = c  # type: ignore[assignment]
        return c is not None and n > 0

    def check_channel(self) -> None:
        ch = self.spec.channel
        if ch is None:
            return
        vocab = ch.vocab if isinstance(ch.vocab, int) else self.const_int(ch.vocab, "channel.vocab", "vocab", 1, MAX_VOCAB)
        if vocab is None or not 1 <= vocab <= MAX_VOCAB:
            self.error("channel.vocab", f"vocab must be an int in 1..{MAX_VOCAB}", value=vocab,
                       hint="a channel needs a symbol per thing worth saying: a few dozen at most")
            return
        self.vocab = vocab
        self.declare(Symbol("vocab", "builtin", Info("int", (), vocab, vocab, True, vocab), "p.vocab", "number of symbols"), "channel.vocab")
        var = CVar("msg", "int", (), None, -1.0, vocab - 1.0, True, doc="last symbol sent (-1 = silent)", builtin=True)
        self.builtin_agent_state.append(var)
        self.declare(Symbol("msg", "agent_state", Info("int", (self.n_agents,), -1.0, vocab - 1.0), "v.msg", var.doc), "channel")

    # ------------------------------------------------------------------ variables
    def check_vars(self, section: str, per_agent: bool) -> list[CVar]:
        out = []
        decl: dict[str, Var] = getattr(self.spec, section)
        later = {name: f"is declared after this variable in {section}; move it earlier to use it in init" for name in decl}
        for name, var in decl.items():
            path = f"{section}.{name}"
            later.pop(name)
            cvar = self._check_var(name, var, path, per_agent, later)
            if cvar is None:
                continue
            out.append(cvar)
            full = ((self.n_agents,) if per_agent else ()) + cvar.shape
            self.declare(Symbol(name, section, Info(cvar.dtype, full, cvar.lo, cvar.hi), f"v.{name}", var.doc), path)
        return out

    def _count_state(self, name: str, shape: tuple[int, ...], per_agent: bool, path: str) -> None:
        """Add a variable's values to the state's total, refusing it past MAX_STATE_SIZE."""
        if self.state_size is None:  # the first variable: start from the mechanics modules' built-ins
            self.state_size = sum(state_values(v.shape, self.n_agents if v.per_agent else 1)
                                  for v in self.builtin_state + self.builtin_agent_state)
        n = state_values(shape, self.n_agents if per_agent else 1)
        if self.state_size + n <= MAX_STATE_SIZE:
            self.state_size += n
            return
        sizes = ([f"{self.n_agents} agents"] if per_agent else []) + [f"{d:,}" for d in shape]
        held = f"{' x '.join(sizes)} = {n:,}" if len(sizes) > 1 else f"{n:,}"
        where = f"`{name}` alone holds {held} values" if n > MAX_STATE_SIZE else \
            f"state and agent_state would hold {self.state_size + n:,} values with `{name}` ({held})"
        self.error(path, f"{where}; the limit for all state and agent_state together is {MAX_STATE_SIZE:,}",
                   "keep state small (a short history window, a small grid); agent_state is multiplied by the "
                   "number of agents", value=n)

    def _check_var(self, name: str, var: Var, path: str, per_agent: bool, later: dict[str, str]) -> CVar | None:
        shape = []
        before = set(self.structural)
        for i, d in enumerate(var.shape):
            v = d if isinstance(d, int) else self.const_int(d, f"{path}.shape[{i}]", "dimension", 1, MAX_STATE_SIZE)
            if v is None:
                return None
            if v < 1:
                self.error(f"{path}.shape[{i}]", f"dimension is {v}; it must be >= 1")
                return None
            shape.append(v)
        self.shape_params[name] = {n for d in var.shape if isinstance(d, str) for n in re.findall(r"[A-Za-z_]\w*", d) if n in self.spec.params}
        self.structural |= before
        self._count_state(name, tuple(shape), per_agent, f"{path}.shape")
        ctx = f"{path}.init"
        scope = self.scope(f"the init of `{name}`", per_agent=per_agent, random=True, hidden=later)
        init = self.expr(var.init, scope, ctx)
        dtype = var.type or (init.info.dtype if init is not None else "float")
        if init is not None:
            self._assignable(init, dtype, tuple(shape), ctx, name)
        (lo, lo_c), (hi, hi_c) = self._bound(var.min, f"{path}.min", -INF, "lo"), self._bound(var.max, f"{path}.max", INF, "hi")
        if dtype == "bool":
            lo, hi, lo_c, hi_c = 0.0, 1.0, None, None
        return CVar(name, dtype, tuple(shape), init, lo, hi, per_agent, var.private, var.doc, path,
                    min_expr=lo_c, max_expr=hi_c)

    def _bound(self, source: Any, path: str, default: float, side: str) -> tuple[float, Checked | None]:
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

    def _feature_bound(self, source: Any, path: str, inferred: float, side: str) -> float:
        """A feature's declared `low`/`high`: a number, or a constant expression (its end over the
        params' ranges, so the box holds at every param value); `inferred` when not declared."""
        if source is None:
            return inferred
        if isinstance(source, int | float) and not isinstance(source, bool):
            return float(source)  # also -.inf / .inf, which are no expression
        return self._bound(source, path, inferred, side)[0]

    def _assignable(self, c: Checked, dtype: str, shape: tuple[int, ...], path: str, target: str) -> bool:
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

    # ------------------------------------------------------------------ actions and turns
    def check_actions(self) -> None:
        self.arg_dtypes: dict[str, str] = {}
        self.choice_names: list[str] = []
        n = self.n_agents
        for role_name in self.spec.actions:
            if role_name not in self.spec.agents:
                self.error(f"actions.{role_name}", f"actions for unknown role `{role_name}`", f"roles: {', '.join(self.spec.agents)}")
        arg_infos: dict[str, tuple[float, float]] = {}
        for role in self.roles:
            choices = self.spec.actions.get(role.name)
            if not choices:
                self.error(f"actions.{role.name}", f"role `{role.name}` has no actions", "give every role at least one choice (e.g. `{name: wait}`)")
                continue
            offset = 0
            seen: set[str] = set()
            for i, ch in enumerate(choices):
                path = f"actions.{role.name}[{i}]"
                if ch.name in seen:
                    self.error(f"{path}.name", f"choice `{ch.name}` appears twice in role `{role.name}`")
                    continue
                seen.add(ch.name)
                args = self._check_args(ch.args, path, arg_infos)
                if args is not None and not self._fits_actions(role, ch.name, args, offset, f"{path}.args"):
                    args = None
                if args is None:  # reported; keep the names declared so later checks don't cascade
                    self.broken_choices.add((role.name, ch.name))
                    if ch.name not in self.choice_names:
                        self.choice_names.append(ch.name)
                    for aname in ch.args:
                        self.arg_dtypes.setdefault(aname, "float")
                        arg_infos.setdefault(aname, (0.0, 0.0))
                    continue
                cc = CChoice(role.name, ch.name, offset, args, None, path=path, doc=ch.doc)
                if ch.move is not None:
                    cc.move = DIRECTIONS[ch.move] if isinstance(ch.move, str) else tuple(ch.move)  # type: ignore[assignment]
                    if len(cc.move) != 2:  # type: ignore[arg-type]
                        self.error(f"{path}.move", f"move must be a direction or [drow, dcol], got {ch.move}")
                role.choices.append(cc)
                offset += cc.n
                if ch.name not in self.choice_names:
                    self.choice_names.append(ch.name)
        for name in self.choice_names:
            sym = Symbol(name, "action", Info("bool", (n,), 0.0, 1.0), f"v.{name}", "per agent: took this choice this step")
            self._declare_action(sym)
        for name, (lo, hi) in arg_infos.items():
            sym = Symbol(name, "arg", Info(self.arg_dtypes[name], (n,), min(lo, 0.0), max(hi, 0.0)), f"v.{name}", "per agent: argument value chosen this step (0 if not chosen)")
            self._declare_action(sym)
        self._declare_action(Symbol("action", "action", Info("int", (n,), -1.0, INF), "v.action", "per agent: flat action index taken (-1 = none)"))
        for role in self.roles:
            for cc, ch in zip(role.choices, [c for c in self.spec.actions.get(role.name, []) if c.name in {x.name for x in role.choices}], strict=False):
                self._check_legal(role, cc, ch.legal, ch.message)

    def _fits_actions(self, role: CRole, choice: str, args: list[CArg], offset: int, path: str) -> bool:
        """The role's action count stays within MAX_ACTIONS; computed from the argument sizes
        (a product), never by enumerating the combinations."""
        n = 1
        for a in args:
            n *= len(a.values)
        if offset + n <= MAX_ACTIONS:
            return True
        sizes = " x ".join(f"{len(a.values):,}" for a in args)
        alone = f"`{choice}` alone has {sizes} = {n:,}" if len(args) > 1 else f"`{choice}` has {n:,}"
        self.error(path, f"role `{role.name}` would have {offset + n:,} actions ({alone}); the limit is "
                   f"{MAX_ACTIONS:,} actions per role",
                   "every combination of argument values is one action: give arguments fewer values (e.g. "
                   "`linspace(0, 1, 11)`), or choose one argument per step with separate choices", value=offset + n)
        return False

    def _declare_action(self, sym: Symbol) -> None:
        if sym.name in self.symbols or sym.name in RESERVED - {"action"}:
            self.error("actions", f"action name `{sym.name}` clashes with a {self.symbols[sym.name].kind if sym.name in self.symbols else 'reserved name'} of the same name",
                       "rename the choice or argument")
            return
        self.action_symbols[sym.name] = sym

    def _check_args(self, args: dict[str, Any], path: str, arg_infos: dict[str, tuple[float, float]]) -> list[CArg] | None:
        out = []
        for aname, src in args.items():
            apath = f"{path}.args.{aname}"
            c = self.expr(src, self.scope("argument values"), apath)
            if c is None:
                return None
            value = const_eval(c.tree.body)
            if value is None or not c.info.const:
                self.error(apath, f"argument values must be constant (literals, params, consts), got `{c.source}`")
                return None
            arr = np.atleast_1d(np.asarray(value))
            if arr.ndim != 1 or arr.size == 0 or arr.size > MAX_ARG_VALUES:
                self.error(apath, f"argument values must be a 1-D list of 1..{MAX_ARG_VALUES} numbers, got shape {list(arr.shape)}",
                           "e.g. `linspace(0, 1, 11)`, `arange(5)` or `[1, 2, 5]`")
                return None
            self.structural |= {n for n in c.names if n in self.spec.params}
            dtype = c.info.dtype
            prev = self.arg_dtypes.get(aname)
            if prev is not None and prev != dtype:
                self.error(apath, f"argument `{aname}` is {dtype} here but {prev} in another choice", "use one dtype for an argument name, or rename one")
                return None
            self.arg_dtypes[aname] = dtype
            lo, hi = arg_infos.get(aname, (INF, -INF))
            arg_infos[aname] = (min(lo, float(arr.min())), max(hi, float(arr.max())))
            out.append(CArg(aname, arr.astype({"bool": bool, "int": np.int64, "float": np.float64}[dtype]), dtype))
        return out

    def _check_legal(self, role: CRole, cc: CChoice, legal: Any, message: Any) -> None:
        combos = cc.combos()
        k = len(combos)
        extra = {}
        for a in cc.args:
            vals = np.array([c[a.name] for c in combos])
            extra[a.name] = Symbol(a.name, "arg", Info(a.dtype, (k,), float(vals.min()), float(vals.max()), False, None),
                                   f"p._argv_{role.name}__{cc.name}__{a.name}")
        me = (role.start, role.start + role.count - 1)
        scope = self.scope(f"the legal condition of `{cc.name}`", per_agent=True, me=me, extra=extra)
        c = self.expr(legal, scope, f"{cc.path}.legal")
        if c is not None:
            if c.info.dtype != "bool" or c.info.shape not in ((), (k,)):
                self.error(f"{cc.path}.legal", f"legal must be a bool per agent (or per argument value), got {c.info.describe()}",
                           "compare, e.g. `phase == 0`")
            cc.legal = c
        if message is not None:
            if self.vocab is None:
                self.error(f"{cc.path}.message", "`message` needs a `channel:` section", "declare `channel: {vocab: N}`")
                return
            mscope = self.scope(f"the message of `{cc.name}`", per_agent=True, me=me, actions=True)
            m = self.expr(message, mscope, f"{cc.path}.message")
            if m is not None and (m.info.dtype != "int" or m.info.shape):
                self.error(f"{cc.path}.message", f"message must be an int symbol per agent, got {m.info.describe()}", "e.g. `word[me]`")
            cc.message = m

    def check_turns(self) -> Checked | None:
        turns = self.spec.turns
        if turns == "simultaneous":
            return None
        c = self.expr(turns.active, self.scope("turns.active"), "turns.active")  # type: ignore[union-attr]
        if c is None:
            return None
        if c.info.dtype not in ("int", "bool") or c.info.shape:
            self.error("turns.active", f"active must be a scalar int (an agent index), got {c.info.describe()}")
        elif c.info.lo < 0 or c.info.hi > self.n_agents - 1:
            if c.info.lo > -INF and c.info.hi < INF:
                self.error("turns.active", f"active can be {c.info.lo:g}..{c.info.hi:g} but agents are 0..{self.n_agents - 1}",
                           "use `x % n_agents` or clip()")
        return c

    # ------------------------------------------------------------------ step rules
    def check_rules(self) -> list[CRule]:
        rules: list[CRule] = []
        for i, entry in enumerate(self.spec.step):
            if isinstance(entry, First):
                group = [(r, f"step[{i}].first[{j}]") for j, r in enumerate(entry.first)]
            else:
                group = [(entry, f"step[{i}]")]
            checked = [self._check_rule(r, path, len(rules) + 2 * k) for k, (r, path) in enumerate(group)]
            if any(c is None for c in checked):
                continue
            flat = [c for pair in checked for c in pair]  # type: ignore[union-attr]
            exclusive = isinstance(entry, First) or len(flat) > 1
            if exclusive and len({c.per_agent for c in flat}) > 1:
                self.error(f"step[{i}]", "the rules of an exclusive group must all set global state or all set agent_state",
                           "split the group: one for global state, one for per-agent state")
                continue
            if isinstance(entry, First) and entry.doc:  # the group's doc goes with its first rule
                flat[0].doc = f"{entry.doc}; {flat[0].doc}" if flat[0].doc else entry.doc
            for k, c in enumerate(flat):
                c.group = i if exclusive else -1
                if exclusive and k < len(flat) - 1 and c.when.source == "True":
                    self.diags.append(warning(STAGE, c.path, "this rule always fires, so the rules after it in its "
                                              "group never do", "give it a `when`, or move it last"))
            rules += flat
        return rules

    def _check_rule(self, rule: Any, path: str, index: int) -> list[CRule] | None:
        """A rule as one CRule, or two (its `set` when `when` holds, then its `else`); None if refused."""
        branches = [("set", rule.set)] + ([("else", rule.else_)] if rule.else_ else [])
        kinds, bad = {}, False  # a bad target is reported and skipped: the rest is still checked
        for key, sets in branches:
            for target in sets:
                sym = self.symbols.get(target)
                if sym is None or sym.kind not in ("state", "agent_state"):
                    what = f"a {sym.kind.replace('_', ' ')}" if sym else "not declared"
                    close = [n for n, s in self.symbols.items() if s.kind in ("state", "agent_state")]
                    self.error(f"{path}.{key}.{target}", f"cannot set `{target}`: it is {what}",
                               f"rules set state or agent_state variables: {', '.join(close) or 'none declared'}")
                    bad = True
                elif target in ("moved", "conflict", "msg"):
                    self.error(f"{path}.{key}.{target}", f"`{target}` is maintained by a mechanics module and cannot be set")
                    bad = True
                else:
                    kinds[target] = sym.kind
        if len(set(kinds.values())) > 1:
            self.error(f"{path}.set", "a rule cannot set both state and agent_state variables",
                       "split it into two rules: one for global state, one for per-agent state")
            return None
        per_agent = "agent_state" in kinds.values()
        scope = self.scope(f"step rule {path.removeprefix('step[').replace(']', '', 1)}", per_agent=per_agent, random=True, actions=True)
        when = self.expr(rule.when, scope, f"{path}.when")
        if when is not None and (when.info.dtype != "bool" or when.info.shape):
            self.error(f"{path}.when", f"`when` must be a scalar bool{' per agent' if per_agent else ''}, got {when.info.describe()}",
                       "compare, e.g. `phase == 0`" + (" or `x[me] > 0`" if per_agent else "; per-agent conditions belong in rules over agent_state"))
            when = None
        out = []
        for key, sets in branches:
            checked = []
            for target, src in sets.items():
                if target not in kinds:
                    continue
                c = self.expr(src, scope, f"{path}.{key}.{target}")
                if c is None:
                    continue
                var_shape = self.symbols[target].info.shape[1:] if per_agent else self.symbols[target].info.shape
                if self._assignable(c, self.symbols[target].info.dtype, var_shape, f"{path}.{key}.{target}", target):
                    checked.append((target, c))
            always = when if key == "set" else self.expr(True, scope, path)
            bad = bad or when is None or always is None or len(checked) != len(sets)
            if not bad:
                out.append(CRule(index + len(out), always, checked, per_agent, path if key == "set" else f"{path}.else", rule.doc))  # type: ignore[arg-type]
        return None if bad else out

    # ------------------------------------------------------------------ rewards, metrics, ends
    def check_rewards(self) -> None:
        for role_name in self.spec.rewards:
            if role_name not in self.spec.agents:
                self.error(f"rewards.{role_name}", f"rewards for unknown role `{role_name}`", f"roles: {', '.join(self.spec.agents)}")
        for role in self.roles:
            names: set[str] = set()
            for i, term in enumerate(self.spec.rewards.get(role.name, [])):
                path = f"rewards.{role.name}[{i}]"
                if term.name in names:
                    self.error(f"{path}.name", f"reward term `{term.name}` appears twice")
                names.add(term.name)
                scope = self.scope(f"reward term `{term.name}`", per_agent=True, me=(role.start, role.start + role.count - 1), actions=True)
                c = self.expr(term.expr, scope, f"{path}.expr")
                if c is None:
                    continue
                if c.info.shape:
                    self.error(f"{path}.expr", f"a reward term must be one number per agent, got a {c.info.describe()}",
                               "index with `me` or reduce with sum()/mean()")
                    continue
                if not math.isfinite(term.weight):
                    self.error(f"{path}.weight", "weight must be finite")
                role.terms.append(CTerm(term.name, c, term.weight, path))

    def check_metrics(self) -> list[CMetric]:
        out = []
        tasks = [name for name, m in self.spec.metrics.items() if m.kind == "task"]
        if len(tasks) > 1:
            self.error(f"metrics.{tasks[1]}.kind", f"`{tasks[0]}` is already the task metric; a spec has one",
                       "make this one `kind: stat` (or `failure`)")
        for name, m in self.spec.metrics.items():
            path = f"metrics.{name}"
            c = self.expr(m.expr, self.scope(f"metric `{name}`", actions=True), f"{path}.expr")
            if c is None:
                continue
            if c.info.shape:
                self.error(f"{path}.expr", f"a metric must be a scalar, got a {c.info.describe()}", "reduce it, e.g. sum(x) or mean(x)")
                continue
            out.append(CMetric(name, c, m.reduce, path))
        return out

    def check_end(self, key: str) -> Checked | None:
        c = self.expr(getattr(self.spec, key), self.scope(key, actions=True), key)
        if c is not None and (c.info.dtype != "bool" or c.info.shape):
            self.error(key, f"{key} must be a scalar bool, got {c.info.describe()}",
                       "compare, e.g. `t >= max_steps`; for per-agent values use any(...) or all(...)")
            return None
        if c is not None and key == "truncate":
            self.warn_task_rounds(c)
        return c

    def warn_task_rounds(self, c: Checked) -> None:
        """`truncate: t >= rounds`: a round count the task defines ends the episode by the task's own
        rules, which is termination (a trainer bootstraps the value of a truncated episode)."""
        body = c.tree.body
        if not (isinstance(body, ast.Compare) and len(body.ops) == 1 and isinstance(body.ops[0], ast.GtE | ast.Gt)
                and isinstance(body.left, ast.Name) and body.left.id == "t"):
            return
        names = [n.id for n in ast.walk(body.comparators[0]) if isinstance(n, ast.Name)]
        docs = {n: (self.spec.params[n].doc if n in self.spec.params else "") for n in names}
        rounds = [n for n in names if "round" in n.lower() or "round" in docs[n].lower()]
        if rounds:
            self.diags.append(warning(STAGE, "truncate", f"`truncate: {c.source}` ends the episode at `{rounds[0]}`, "
                                      "a number of rounds the task defines: that is termination",
                                      f"write it in `terminate` (e.g. `... or {c.source}`); keep `truncate` for a step cap "
                                      "imposed from outside the task, such as `t >= max_steps`"))

    # ------------------------------------------------------------------ observations and text
    def check_observe(self) -> None:
        for role_name in self.spec.observe:
            if role_name not in self.spec.agents:
                self.error(f"observe.{role_name}", f"observations for unknown role `{role_name}`", f"roles: {', '.join(self.spec.agents)}")
        for role in self.roles:
            feats = self.spec.observe.get(role.name)
            if not feats:
                self.error(f"observe.{role.name}", f"role `{role.name}` observes nothing", "list at least one feature, e.g. `[t]`")
                continue
            me = (role.start, role.start + role.count - 1)
            total = 0
            for i, f in enumerate(feats):
                path = f"observe.{role.name}[{i}]"
                scope = self.scope(f"observation feature {i}", per_agent=True, me=me, actions=True)
                c = self.expr(f.expr, scope, path)
                if c is None:
                    continue
                size = c.info.size
                if size > MAX_FEATURE_SIZE:
                    self.error(path, f"observation feature has {size} values; the limit is {MAX_FEATURE_SIZE}",
                               "observe a window (e.g. view(pos[me], 2)) or a summary (sum, mean) instead")
                    continue
                total += size
                lo = self._feature_bound(f.low, f"{path}.low", c.info.lo, "lo")
                hi = self._feature_bound(f.high, f"{path}.high", c.info.hi, "hi")
                if lo > hi:
                    self.error(path, f"observation bounds are empty: low {lo:g} is above high {hi:g}",
                               "set low <= high (or drop the override to use the inferred bounds)")
                    continue
                name = f.name or (c.source if len(c.source) <= 40 else f"feature_{i}")
                role.features.append(CFeature(name, c, size, np.full(size, lo, np.float32), np.full(size, hi, np.float32), path))
                self._check_private(c, path)
                self._check_unbounded_shape(c, path)
            if total > MAX_OBS_DIM:
                self.error(f"observe.{role.name}", f"observation has {total} values; the limit is {MAX_OBS_DIM}")

    def _check_private(self, c: Checked, path: str) -> None:
        """Warn when a feature reads another agent's private variable (anything but `x[me]`)."""
        private = {v for v, var in self.spec.agent_state.items() if var.private}
        mine = set()
        for node in ast.walk(c.tree):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
                first = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
                if isinstance(first, ast.Name) and first.id == "me":
                    mine.add(id(node.value))
        for node in ast.walk(c.tree):
            if isinstance(node, ast.Name) and node.id in private and id(node) not in mine:
                self.diags.append(warning(STAGE, path, f"observation reads `{node.id}`, which is private to each agent, "
                                          "beyond the agent's own entry: an information leak",
                                          f"observe only `{node.id}[me]`, or drop `private: true` if all agents may see it"))
                return

    def _check_unbounded_shape(self, c: Checked, path: str) -> None:
        used = set()
        for n in c.names:
            used |= self.shape_params.get(n, set())
        for node in ast.walk(c.tree):
            if isinstance(node, ast.Call):
                used |= {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and x.id in self.spec.params}
        for n in sorted(used):
            p = self.spec.params[n]
            if p.max is None and (n in self.structural or n in self.shape_names):
                self.error(path, f"observation size is unbounded: its shape depends on param `{n}`, which has no max",
                           f"give `params.{n}` a max so every observation has a bounded size")

    def check_text(self) -> list[Any] | None:
        t = self.spec.text
        if t is None:
            return None
        for role_name, tmpl in t.observe.items():
            role = next((r for r in self.roles if r.name == role_name), None)
            if role is None:
                self.error(f"text.observe.{role_name}", f"text for unknown role `{role_name}`")
                continue
            scope = self.scope("a text template", per_agent=True, me=(role.start, role.start + role.count - 1), actions=True)
            role.text_observe = self._template(tmpl, scope, f"text.observe.{role_name}")
        if t.render is None:
            return None
        return self._template(t.render, self.scope("a text template", actions=True), "text.render")

    def _template(self, tmpl: str, scope: Scope, path: str) -> list[Any]:
        parts: list[Any] = []
        try:
            parsed = list(string.Formatter().parse(tmpl))
        except ValueError as e:
            self.error(path, f"bad template: {e}", "placeholders are {expr} or {expr:fmt}; write {{ for a literal brace")
            return parts
        for literal, field_, fmt, conv in parsed:
            if literal:
                parts.append(literal)
            if field_ is None:
                continue
            if conv:
                self.error(path, f"conversions (!{conv}) are not allowed in templates")
                continue
            if fmt and not re.fullmatch(r"[<>^]?[+\- ]?\d*(\.\d+)?[dfegs%]?", fmt):
                self.error(path, f"format spec `{fmt}` is not allowed", "use e.g. :.2f, :d, :>5")
                continue
            c = self.expr(field_, scope, path)
            if c is not None:
                parts.append((c, fmt or ""))
        return parts

    # ------------------------------------------------------------------ probes
    def check_probes(self, metrics: list[CMetric], variables: list[CVar]) -> list[CProbe]:
        out = []
        ids = {a: i for i, a in enumerate(a for r in self.roles for a in r.agent_ids)}
        n = self.n_agents
        self.probe_vars = {v.name: v for v in variables}
        extra = {
            "reward": Symbol("reward", "probe", Info("float", (n,)), "P.reward"),
            "ret": Symbol("ret", "probe", Info("float", (n,)), "P.ret"),
            "terminated": Symbol("terminated", "probe", Info("bool", (), 0.0, 1.0), "P.terminated"),
            "truncated": Symbol("truncated", "probe", Info("bool", (), 0.0, 1.0), "P.truncated"),
        }
        for name in self.spec.metrics:  # all of them: a broken metric is reported once, where it is
            extra[f"metric_{name}"] = Symbol(f"metric_{name}", "probe", Info("float", ()), f"P.metric_{name}")
        for role in self.roles:
            dim = sum(f.size for f in role.features)
            lo = min((float(f.low.min()) for f in role.features if f.size), default=0.0)
            hi = max((float(f.high.max()) for f in role.features if f.size), default=0.0)
            for agent in role.agent_ids:
                extra[f"obs_{agent}"] = Symbol(f"obs_{agent}", "probe", Info("float", (dim,), lo, hi), f"P.obs_{agent}")
                extra[f"mask_{agent}"] = Symbol(f"mask_{agent}", "probe", Info("bool", (role.n_actions,), 0.0, 1.0),
                                                f"P.mask_{agent}")
        for i, probe in enumerate(self.spec.probes):
            path = f"probes[{i}]"
            skip = self._probe_skip_reason(probe)
            if skip:
                self.diags.append(warning(STAGE, path, f"probe `{probe.name}` skipped: {skip}",
                                          "a probe runs only at the structure (agent counts, sizes) it is "
                                          "written for: the spec's defaults, or what its `params` pin"))
                continue
            checked = self._check_probe(i, probe, path, ids, extra)
            if checked is not None:
                out.append(checked)
        return out

    def _probe_skip_reason(self, probe: Any) -> str:
        """Why a probe does not run at this build's structure ('' when it does)."""
        written_for = {k: probe.params.get(k, self.spec.params[k].default)
                       for k in self.structural if k in self.spec.params}
        differs = {k: v for k, v in written_for.items() if self.params.get(k) != v}
        if not differs:
            return ""
        want = ", ".join(f"{k}={v}" for k, v in differs.items())
        have = ", ".join(f"{k}={self.params.get(k)}" for k in differs)
        return f"it is written for {want}; this build has {have}"

    def _check_probe(self, i: int, probe: Any, path: str, ids: dict[str, int], extra: dict[str, Symbol]) -> CProbe | None:
        for k in probe.params:
            if k not in self.spec.params:
                self.error(f"{path}.params.{k}", f"unknown param `{k}`", self.param_hint(k))
        steps = [self._probe_step(step, f"{path}.actions[{j}]", ids) for j, step in enumerate(probe.actions)]
        expects = []
        for j, src in enumerate(probe.expect):
            text = self._rewrite_probe(src, ids, f"{path}.expect[{j}]")
            if text is None:
                continue
            c = self.expr(text, self.scope("a probe expectation", actions=True, extra=extra), f"{path}.expect[{j}]")
            if c is not None and (c.info.dtype != "bool" or c.info.shape):
                self.error(f"{path}.expect[{j}]", f"an expectation must be a scalar bool, got {c.info.describe()}")
                continue
            if c is not None:
                expects.append(c)
        start = self._probe_start(probe.start, f"{path}.start")
        if all(s is not None for s in steps) and len(expects) == len(probe.expect) and start is not None:
            return CProbe(probe.name, dict(probe.params), probe.seed, steps, expects, path,  # type: ignore[arg-type]
                          list(probe.expect), start, probe.illegal)
        return None

    def _probe_start(self, start: dict[str, Any], path: str) -> dict[str, Any] | None:
        """The probe's start values, each checked against its variable's type, shape and bounds."""
        ok = True
        for name, value in start.items():
            var = self.probe_vars.get(name)
            where = f"{path}.{name}"
            if var is None:
                close = difflib.get_close_matches(name, list(self.probe_vars), n=1, cutoff=0.6)
                self.error(where, f"`{name}` is not a state or agent_state variable",
                           f"did you mean `{close[0]}`?" if close else f"variables: {', '.join(self.probe_vars) or 'none'}")
                ok = False
                continue
            problem = _start_problem(var, value, self.n_agents)
            if problem:
                self.error(where, problem, "write it as the variable is declared (an agent_state value lists every agent)",
                           value=value)
                ok = False
        return dict(start) if ok else None

    def _rewrite_probe(self, src: str, ids: dict[str, int], path: str) -> str | None:
        bad: list[str] = []

        def agent(m: re.Match[str]) -> str:
            if m.group(2) not in ids:
                bad.append(m.group(2))
                return m.group(0)
            return f"{m.group(1)}[{ids[m.group(2)]}]"

        out = self._rewrite_views(src, ids, bad)
        out = re.sub(r"\b(reward|ret)\.([A-Za-z_]\w*)", agent, out)
        out = re.sub(r"\bmetric\.([A-Za-z_]\w*)", r"metric_\1", out)
        if bad and "." in bad[0]:
            agent, member = bad[0].split(".", 1)
            self.error(path, f"{agent} has no observation feature or choice named `{member}`",
                       "name a feature that has a `name:` in `observe`, or a choice of the agent's role", value=src)
            return None
        if bad:
            self.error(path, f"unknown agent id `{bad[0]}`", f"agent ids: {', '.join(ids)}", value=src)
            return None
        return out

    def _rewrite_views(self, src: str, ids: dict[str, int], bad: list[str]) -> str:
        """`obs.A[i]`, `obs.A.FEATURE`, `mask.A[a]`, `mask.A.CHOICE` -> the probe symbols of agent A."""
        def view(m: re.Match[str]) -> str:
            kind, agent, member = m.group(1), m.group(2), m.group(3)
            if agent not in ids:
                bad.append(agent)
                return m.group(0)
            role = self.roles_by_index(ids[agent])
            if member is None:
                return f"{kind}_{agent}"
            if kind == "obs":
                at = 0
                for f in role.features:
                    if f.name == member:
                        return f"obs_{agent}[{at}]" if f.size == 1 else f"obs_{agent}[{at}:{at + f.size}]"
                    at += f.size
            else:
                for c in role.choices:
                    if c.name == member:
                        return f"mask_{agent}[{c.offset}]" if c.n == 1 else f"any(mask_{agent}[{c.offset}:{c.offset + c.n}])"
            bad.append(f"{agent}.{member}")
            return m.group(0)

        return re.sub(r"\b(obs|mask)\.([A-Za-z_]\w*?)(?:\.([A-Za-z_]\w*))?(?=\W|$)", view, src)

    def _probe_step(self, step: dict[str, str], path: str, ids: dict[str, int]) -> dict[str, tuple[str, dict[str, Any]]] | None:
        out = {}
        for agent_id, text in step.items():
            if agent_id not in ids:
                self.error(f"{path}.{agent_id}", f"unknown agent id `{agent_id}`", f"agent ids: {', '.join(ids)}")
                return None
            role = self.roles_by_index(ids[agent_id])
            parsed = _parse_action(text)
            if parsed is None:
                self.error(f"{path}.{agent_id}", f"cannot read action {text!r}", "write `choice` or `choice(arg=value)`", value=text)
                return None
            name, kwargs = parsed
            choice = next((c for c in role.choices if c.name == name), None)
            if choice is None:
                if (role.name, name) not in self.broken_choices:  # else its own error says why
                    self.error(f"{path}.{agent_id}", f"role `{role.name}` has no choice `{name}`", f"choices: {', '.join(c.name for c in role.choices)}")
                return None
            if set(kwargs) != {a.name for a in choice.args}:
                self.error(f"{path}.{agent_id}", f"`{name}` takes arguments {[a.name for a in choice.args]}, got {list(kwargs)}", value=text)
                return None
            for a in choice.args:
                if not np.isclose(a.values, kwargs[a.name]).any():
                    self.error(f"{path}.{agent_id}", f"{kwargs[a.name]} is not a value of argument `{a.name}`", f"values: {a.values.tolist()}", value=text)
                    return None
            out[agent_id] = (name, kwargs)
        return out

    # ------------------------------------------------------------------ scripted baselines
    def check_baselines(self) -> list[CBaseline]:
        out = []
        for name, roles in self.spec.baselines.items():
            base, ok = CBaseline(name, {}), True
            if not roles:
                self.error(f"baselines.{name}", f"baseline `{name}` scripts no role",
                           f"give rules for at least one role ({', '.join(self.spec.agents)}), or remove it")
                continue
            for role_name, rules in roles.items():
                path = f"baselines.{name}.{role_name}"
                role = next((r for r in self.roles if r.name == role_name), None)
                if role is None:
                    if role_name not in self.spec.agents:
                        self.error(path, f"baseline `{name}` scripts unknown role `{role_name}`",
                                   f"roles: {', '.join(self.spec.agents)}")
                    ok = False
                    continue
                hidden = {a: "is an action: a baseline decides before this step's actions are taken, so it cannot "
                             "read them; keep what it needs in state (e.g. a history window)" for a in self.action_names()}
                scope = self.scope(f"baseline `{name}`", per_agent=True, me=(role.start, role.start + role.count - 1),
                                   hidden=hidden)
                checked = [self._baseline_rule(role, rule, f"{path}[{i}]", scope) for i, rule in enumerate(rules)]
                ok = ok and all(c is not None for c in checked)
                base.rules[role_name] = [c for c in checked if c is not None]
            if ok:
                out.append(base)
        return out

    def _baseline_rule(self, role: CRole, rule: Any, path: str, scope: Scope) -> CBaselineRule | None:
        when = None if rule.when is True else self.expr(rule.when, scope, f"{path}.when")
        when_ok = rule.when is True or when is not None
        if when is not None and (when.info.dtype != "bool" or when.info.shape):
            self.error(f"{path}.when", f"`when` must be a bool per agent, got {when.info.describe()}",
                       "compare, e.g. `phase == 0` or `past[1 - me, -1] == D`")
            when_ok = False
        action = self._baseline_action(role, rule.action, f"{path}.action", scope)
        if not when_ok or action is None:
            return None
        return CBaselineRule(None if when is None or when.source == "True" else when, action[0], action[1], path, rule.doc)

    def _baseline_action(self, role: CRole, text: str, path: str, scope: Scope) -> tuple[CChoice, list[tuple[CArg, Checked]]] | None:
        parsed = _parse_script_action(text)
        if parsed is None:
            self.error(path, f"cannot read action {text!r}",
                       "write `choice` or `choice(arg=value)`, e.g. `propose(share=0.5)`", value=text)
            return None
        cname, kwargs = parsed
        choice = next((c for c in role.choices if c.name == cname), None)
        if choice is None:
            if (role.name, cname) not in self.broken_choices:  # else its own error says why
                self.error(path, f"role `{role.name}` has no choice `{cname}`",
                           f"choices of {role.name}: {', '.join(c.name for c in role.choices)}", value=text)
            return None
        want = [a.name for a in choice.args]
        if set(kwargs) != set(want):
            example = f"{cname}({', '.join(f'{a}=...' for a in want)})" if want else cname
            self.error(path, f"`{cname}` takes arguments {want}, got {list(kwargs)}",
                       f"write `{example}`", value=text)
            return None
        args = []
        for a in choice.args:
            c = self.expr(kwargs[a.name], scope, path)
            if c is None:
                return None
            if c.info.shape or c.info.dtype not in ("int", "float", "bool"):
                self.error(path, f"argument `{a.name}` must be one number per agent, got {c.info.describe()}",
                           "index with `me` or reduce, e.g. `value[me]`", value=text)
                return None
            value = const_eval(c.tree.body) if c.info.const else None
            if isinstance(value, int | float | np.number) and not np.isclose(a.values, value).any():
                near = a.values[int(np.abs(a.values.astype(float) - float(value)).argmin())].item()
                self.diags.append(warning(STAGE, path, f"{value} is not a value of argument `{a.name}`: "
                                          f"the baseline plays the nearest, {near:g}",
                                          f"values: {', '.join(f'{x:g}' for x in a.values.tolist())}"))
            args.append((a, c))
        return choice, args

    def roles_by_index(self, i: int) -> CRole:
        return next(r for r in self.roles if i in r.indices)

    # ------------------------------------------------------------------ final checks
    def check_shape_params(self) -> None:
        for name in sorted(self.structural):
            p = self.spec.params.get(name)
            if p is not None and p.type == "float":
                self.error(f"params.{name}", f"param `{name}` sizes arrays or counts agents, so it must be an int", "set `type: int`")


def _start_problem(var: CVar, value: Any, n_agents: int) -> str:
    """Why `value` cannot start variable `var` ('' when it can)."""
    arr = np.asarray(value)
    shape = ((n_agents,) if var.per_agent else ()) + tuple(var.shape)
    if arr.dtype == object:
        return f"a start value is numbers or bools in the variable's shape {list(shape)}, got {value!r}"
    kinds = {"bool": "b", "int": "iu", "float": "iuf"}[var.dtype]
    if arr.dtype.kind not in kinds:
        return f"`{var.name}` is {var.dtype}; got {value!r}"
    if arr.shape != shape:
        return f"`{var.name}` has shape {list(shape)}, got {list(arr.shape)}"
    if arr.size and (arr.min() < var.lo or arr.max() > var.hi):
        return f"{value!r} is outside the bounds of `{var.name}`, [{var.lo:g}, {var.hi:g}]"
    return ""


def _parse_action(text: str) -> tuple[str, dict[str, Any]] | None:
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Name):
        return node.id, {}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
        kw = {}
        for k in node.keywords:
            v = k.value
            if isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.USub) and isinstance(v.operand, ast.Constant):
                v = ast.Constant(-v.operand.value)
            if not isinstance(v, ast.Constant) or not isinstance(v.value, int | float) or k.arg is None:
                return None
            kw[k.arg] = v.value
        return node.func.id, kw
    return None


def _parse_script_action(text: str) -> tuple[str, dict[str, str]] | None:
    """`choice` or `choice(arg=expr, ...)` -> (choice, {arg: expression source})."""
    text = text.strip()
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Name):
        return node.id, {}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args \
            and all(k.arg is not None for k in node.keywords):
        return node.func.id, {str(k.arg): ast.get_source_segment(text, k.value) or "" for k in node.keywords}
    return None


def _fmt(v: float | None) -> str:
    return "-inf" if v is None else f"{v:g}"
