"""The Python backend's generator base: its state, the expression emitter, and the small
helpers its parts (`compile/pygen/*`, `compile/mechanics/*`) share."""

from __future__ import annotations

import ast
import functools
from collections.abc import Collection
from typing import Any

from gymwright.compile.common import class_name
from gymwright.compile.pyexpr import PyEmitter
from gymwright.compile.writer import Writer
from gymwright.spec.checked import CheckedSpec, CVar
from gymwright.spec.expr.check import Checked

NP_DTYPE = {"bool": "bool", "int": "np.int64", "float": "np.float64"}


def uses_me_or_random(c: Checked) -> bool:
    if "me" in c.names:
        return True
    return any(hasattr(n, "gw_site") for n in ast.walk(c.tree))


def all_trees(cs: CheckedSpec) -> list[ast.AST]:
    """Every checked expression tree of the spec (for whole-spec analyses)."""
    found: list[Checked | None] = [cs.terminate, cs.truncate, cs.active]
    found += [x for var in cs.state + cs.agent_state for x in (var.init, var.min_expr, var.max_expr)]
    found += [r.when for r in cs.rules] + [c for r in cs.rules for _, c in r.sets]
    found += [m.expr for m in cs.metrics] + [e for pr in cs.probes for e in pr.expect]
    for role in cs.roles:
        found += [t.expr for t in role.terms] + [f.expr for f in role.features]
        found += [c.legal for c in role.choices] + [c.message for c in role.choices]
        found += [part[0] for part in (role.text_observe or []) if not isinstance(part, str)]
    found += [part[0] for part in (cs.text_render or []) if not isinstance(part, str)]
    if cs.grid is not None:
        found += [cs.grid.can_move, cs.grid.slip, *cs.grid.densities]
    return [c.tree for c in found if c is not None]


def draws_after_reset(cs: CheckedSpec) -> bool:
    """Whether the env may draw random numbers after `reset` (a random call in any expression
    but the variables' start values, the baselines' included, or a mechanics module): only then
    does `step` keep its draws' step counter (`v._rng.step`) up to date."""
    inits = {id(var.init.tree) for var in cs.state + cs.agent_state if var.init is not None}
    trees = [t for t in all_trees(cs) if id(t) not in inits]
    trees += [c.tree for b in cs.baselines for rules in b.rules.values() for rule in rules
              for c in ([rule.when] if rule.when is not None else []) + [x for _, x in rule.args]]
    return cs.grid is not None or cs.vocab is not None or any(hasattr(n, "gw_site") for t in trees for n in ast.walk(t))


IMPLICIT = {"tiles", "pos"}  # read by grid functions (tile, view, agents_view) without being named


def as_bool(code: str) -> str:
    return code if code.startswith("bool(") or code in ("True", "False") else f"bool({code})"


def unconditional(root: ast.AST, target: ast.AST) -> bool:
    """True if `target` is evaluated whenever `root` is (not inside a branch or a short-circuit)."""
    def walk(node: ast.AST) -> bool | None:
        if node is target:
            return True
        for child in ast.iter_child_nodes(node):
            found = walk(child)
            if found is not None:
                guarded = isinstance(node, ast.IfExp) and child is not node.test or \
                    isinstance(node, ast.BoolOp) and child is not node.values[0]
                return found and not guarded
        return None
    return bool(walk(root))


def is_true(c: Checked | None) -> bool:
    return c is None or c.source == "True"


def _own_read(em: PyEmitter, node: ast.AST, names: Collection[str]) -> str | None:
    """The name x when `node` reads `x[me]` of one of the per-agent variables `names` (`v.x`, not
    a name the emitter overrides), else None."""
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in names
            and isinstance(node.slice, ast.Name) and node.slice.id == "me"
            and em.emit(node.value) == f"v.{node.value.id}"):
        return node.value.id
    return None


class PyGenBase:
    """One generation of a module: the checked spec, the writer, and what every part uses;
    `_Gen` in `compile/python_backend.py` composes the parts."""

    def __init__(self, cs: CheckedSpec, instrument: bool = False, solved_pools: dict[str, str] | None = None) -> None:
        self.cs = cs
        self.instrument = instrument
        self.solved_pools = solved_pools or {}
        self.w = Writer()
        self.n = cs.n_agents
        self.cls = class_name(cs.spec.name)
        self._axis: dict[str, Any] = {}  # role -> its features over the agent axis (or None)
        self._axis_shared: dict[str, dict[str, str]] = {}  # role -> shared call code -> local
        self._axis_windows: dict[str, dict[str, tuple[str, str, str | None]]] = {}  # role -> AxisEmitter.windows
        self._loop: dict[str, list[Any]] = {}  # role -> parts of its features the same for every agent

    def em(self, per_agent: bool = False, **overrides: str) -> PyEmitter:
        return PyEmitter(self.cs.symbols, per_agent=per_agent, overrides=overrides, nonzero=self.nonzero)

    @functools.cached_property
    def nonzero(self) -> frozenset[str]:
        """Scalar params whose declared range excludes 0 and scalar consts that are not 0:
        dividing by them needs no guard (make_params enforces the ranges)."""
        out = set()
        for name, prm in self.cs.spec.params.items():
            lo, hi = prm.min, prm.max
            if prm.type != "bool" and (lo is not None and lo > 0 or hi is not None and hi < 0):
                out.add(name)
        for name, value in self.cs.consts.items():
            if isinstance(value, int | float) and not isinstance(value, bool) and value != 0:
                out.add(name)
        return frozenset(n for n in out if n in self.cs.symbols)

    def flags_from_lists(self, em: PyEmitter, trees: list[ast.AST], me: str = "me") -> list[str]:
        """The per-agent variables that `trees` read one agent at a time (`x[me]`), to be read from
        a list `x_ = v.x.tolist()` made before them (a numpy scalar read costs several times a
        list's): maps those reads on `em` to `x_[<me>]` and returns the names, in order of reading.

        Bool flags are read so anywhere. An integer row (`pos[me]`, shape `(k,)`) is read so only
        where a list means the same as the numpy row (`rows_from_lists`)."""
        flags = {var.name for var in self.cs.agent_state if var.dtype == "bool" and not var.shape}
        found: list[str] = []
        for tree in trees:
            for node in ast.walk(tree):
                name = _own_read(em, node, flags)
                if name is not None:
                    em.hoisted[id(node)] = f"{name}_[{me}]"
                    if name not in found:
                        found.append(name)
        for name in self.rows_from_lists(em, trees, me):
            if name not in found:
                found.append(name)
        return found

    def rows_from_lists(self, em: PyEmitter, trees: list[ast.AST], me: str) -> list[str]:
        """Integer rows of agent `me` read as lists, in the four forms where a list of Python ints
        means what the numpy row does: `all(x[me] == y[me])` is the lists' `==` and
        `any(x[me] != y[me])` their `!=` (rows of one shape), and `tile(x[me])` /
        `manhattan(x[me], y[me])` take a cell's two coordinates (`rt_tile1` and `rt_manhattan1`
        read them with `int()`). Maps those on `em`; returns the row names, in order of reading.
        (Bool and float rows are left to numpy: a float list compares NaN by identity.)"""
        rows = {var.name: var.shape for var in self.cs.agent_state if var.dtype == "int" and len(var.shape) == 1}
        found: list[str] = []

        def row(node: ast.AST) -> str | None:
            return _own_read(em, node, rows.keys())

        def read(name: str) -> str:
            if name not in found:
                found.append(name)
            return f"{name}_[{me}]"

        for tree in trees:
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords):
                    continue
                fn, args = node.func.id, node.args
                if fn in ("tile", "manhattan") and len(args) == (1 if fn == "tile" else 2):
                    names = [row(a) for a in args]
                    if all(n is not None and rows[n] == (2,) for n in names):
                        for a, n in zip(args, names, strict=True):
                            em.hoisted[id(a)] = read(n)  # type: ignore[arg-type]
                elif fn in ("all", "any") and len(args) == 1 and isinstance(args[0], ast.Compare):
                    cmp = args[0]
                    op = ast.Eq if fn == "all" else ast.NotEq
                    if len(cmp.ops) == 1 and isinstance(cmp.ops[0], op):
                        a, b = row(cmp.left), row(cmp.comparators[0])
                        if a is not None and b is not None and rows[a] == rows[b]:
                            sign = "==" if fn == "all" else "!="
                            em.hoisted[id(node)] = f"({read(a)} {sign} {read(b)})"
        return found

    # In `step`: the per-agent lists `x_ = v.x.tolist()` read so far at the top level of its body
    # (depth `_lists_depth`) whose v.x is not replaced since (each is read once until then); None
    # elsewhere (every read is written).
    _lists: set[str] | None = None
    _lists_depth = 0

    def read_lists(self, names: list[str]) -> None:
        """`x_ = v.x.tolist()` for each name, but those still valid in `step` (`_lists`). Only a
        read at the top level of `step`'s body is kept or reused: one inside a block may not run."""
        fresh = self._lists if self.w.depth == self._lists_depth else None
        new = [name for name in names if fresh is None or name not in fresh]
        for k, name in enumerate(new):
            self.w(f"{name}_ = v.{name}.tolist()", comment="read per agent, from lists" if k == 0 else "")
        if fresh is not None:
            fresh.update(new)

    def replaced(self, names: list[str] | None = None) -> None:
        """The step just assigned v.<name> for `names` (None: it may have assigned anything):
        their lists are read again when next needed."""
        if self._lists is not None:
            if names is None:
                self._lists.clear()
            else:
                self._lists.difference_update(names)

    def hook(self, path: str) -> None:
        if self.instrument:
            with self.w.block("if self._hook is not None:"):
                self.w(f"self._hook({path!r})")

    def cast(self, var: CVar, code: str) -> str:
        if var.shape:
            return f"np.array(np.broadcast_to({code}, {var.shape!r}), dtype={NP_DTYPE[var.dtype]})"
        try:
            value = ast.literal_eval(code)
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, bool | int | float) and not (isinstance(value, bool) and var.dtype != "bool"):
            return repr({"bool": bool, "int": int, "float": float}[var.dtype](value))  # a constant: cast now
        return f"{var.dtype}({code})"

    UNROLL = 8  # up to this many agents, step is written out per agent (no per-agent loops)

    @property
    def unrolled(self) -> bool:
        return self.n <= self.UNROLL

