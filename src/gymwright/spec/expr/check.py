"""Static checking of one expression: name resolution, dtype, shape and value interval.

`check(source, scope)` parses, whitelists and annotates every node with an `Info` (read back
with `types.info_of`); random calls get a draw-site number (`types.site_of`) unique in the spec, so
that every backend draws the same numbers. Errors quote the source with a caret.
"""

from __future__ import annotations

import ast
import difflib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gymwright.errors import ExprError
from gymwright.spec.expr.functions import FUNCTIONS, MAX_ARRAY_SIZE, ArgError, CallInfo
from gymwright.spec.expr.parse import parse
from gymwright.spec.expr.types import (
    INF,
    Info,
    broadcast,
    found_info,
    interval_div,
    interval_mul,
    numeric,
    promote,
    set_info,
    set_site,
    union,
)

MAX_CONST_POWER = 1e300


@dataclass(frozen=True)
class Symbol:
    """A name an expression may use. `code` is how the Python backend spells it."""

    name: str
    kind: str  # param const builtin state agent_state action arg me t probe
    info: Info
    code: str
    doc: str = ""


class FailedName(ExprError):
    """An expression reads a name whose declaration failed (reported there, once): whoever checks
    the expression reports nothing more, so one failing const is one error, not a cascade."""


@dataclass
class Scope:
    """The names visible in one place of a spec, and what is allowed there."""

    symbols: dict[str, Symbol]
    context: str  # for messages: "rewards", "step rule", ...
    per_agent: bool = False
    random: bool = False
    mechanics: dict[str, Any] = field(default_factory=dict)  # module name -> its checked form (for its functions)
    sites: list[int] = field(default_factory=lambda: [0])  # shared counter of random draw sites
    hidden: dict[str, str] = field(default_factory=dict)  # name -> why it is not visible here
    shape_names: set[str] = field(default_factory=set)  # names whose values fixed a shape
    failed: dict[str, str] = field(default_factory=dict)  # declared names whose declaration failed -> why

    def lookup(self, name: str, source: str, node: ast.AST) -> Symbol:
        if name in self.symbols:
            return self.symbols[name]
        col = getattr(node, "col_offset", None)
        if name in self.failed:
            raise FailedName(f"`{name}` is undefined because {self.failed[name]}", source=source, col=col)
        if name in self.hidden:
            raise ExprError(f"`{name}` {self.hidden[name]}", source=source, col=col)
        if name in FUNCTIONS:
            raise ExprError(f"`{name}` is a function; call it, e.g. `{FUNCTIONS[name].signature}`",
                            source=source, col=col)
        close = difflib.get_close_matches(name, list(self.symbols), n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(f'`{c}`' for c in close)}?" if close else (
            "declare it under params, consts, state or agent_state")
        raise ExprError(f"undefined name `{name}` in {self.context}", source=source, col=col, hint=hint)

    def next_site(self) -> int:
        self.sites[0] += 1
        return self.sites[0]


@dataclass
class Checked:
    """A checked expression: its source, annotated tree and result info."""

    source: str
    tree: ast.Expression
    info: Info
    names: set[str]


def check(source: Any, scope: Scope) -> Checked:
    text, tree = parse(source)
    names: set[str] = set()
    info = _Checker(text, scope, names).visit(tree.body)
    return Checked(text, tree, info, names)


class _Checker:
    def __init__(self, source: str, scope: Scope, names: set[str]) -> None:
        self.source = source
        self.scope = scope
        self.names = names

    def err(self, node: ast.AST, msg: str, hint: str = "") -> ExprError:
        return ExprError(msg, source=self.source, col=getattr(node, "col_offset", None), hint=hint)

    def visit(self, node: ast.AST) -> Info:
        handler = _HANDLERS.get(type(node))
        if handler is None:
            raise self.err(node, f"`{type(node).__name__}` is not allowed here")
        info = handler(self, node)
        self.check_size(node, info.shape)
        set_info(node, info)
        return info

    def check_size(self, node: ast.AST, shape: tuple[int, ...]) -> None:
        if math.prod(shape) > MAX_ARRAY_SIZE:
            raise self.err(node, f"array of shape {list(shape)} has more than {MAX_ARRAY_SIZE} elements",
                           "keep arrays small: index, slice or reduce before combining them")

    # -- leaves
    def constant(self, node: ast.Constant) -> Info:
        v = node.value
        assert isinstance(v, int | float), "parse.py lets only number and bool literals through"
        dtype = "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "float"
        return Info(dtype, (), float(v), float(v), True, v)

    def name(self, node: ast.Name) -> Info:
        if node.id in ("True", "False"):
            return Info("bool", (), float(node.id == "True"), float(node.id == "True"), True, node.id == "True")
        if node.id == "me" and not self.scope.per_agent and "me" not in self.scope.symbols:
            raise self.err(node, f"`me` is only defined in per-agent places (agent_state, rewards, observe, legal); {self.scope.context} is global",
                           "index an agent explicitly, e.g. `x[0]`, or reduce over agents, e.g. `sum(x)`")
        sym = self.scope.lookup(node.id, self.source, node)
        self.names.add(node.id)
        return sym.info

    def list_(self, node: ast.List) -> Info:
        if not node.elts:
            raise self.err(node, "empty list literal", "use zeros(n) for an empty-looking array")
        items = [self.visit(e) for e in node.elts]
        shape = items[0].shape
        if any(i.shape != shape for i in items):
            raise self.err(node, "list elements have different shapes: " + ", ".join(i.describe() for i in items))
        dtype = promote(*(i.dtype for i in items))
        const = all(i.const for i in items)
        value = np.array([i.value for i in items]) if const and all(i.value is not None for i in items) else None
        return Info(dtype, (len(items), *shape), min(i.lo for i in items), max(i.hi for i in items), const, value)

    def tuple_(self, node: ast.Tuple) -> Info:
        raise self.err(node, "tuples are only allowed in indexing (`x[i, j]`) and in shape=",
                       "use a list literal `[a, b]` for an array")

    # -- operators
    def binop(self, node: ast.BinOp) -> Info:
        a, b = self.visit(node.left), self.visit(node.right)
        shape = broadcast(a.shape, b.shape)
        if shape is None:
            raise self.err(node, f"shapes do not broadcast: {a.describe()} {_OPS[type(node.op)]} {b.describe()}",
                           "index or reduce one side so the shapes match")
        self.check_size(node, shape)
        const = a.const and b.const
        op = type(node.op)
        if op is ast.Pow:
            return self._pow(node, a, b, shape, const)
        if op is ast.Div:
            lo, hi = interval_div(a, b)
            return Info("float", shape, lo, hi, const, _fold(a, b, np.true_divide, const))
        dtype = promote(numeric(a.dtype), numeric(b.dtype))
        if op is ast.Add:
            lo, hi = a.lo + b.lo, a.hi + b.hi
        elif op is ast.Sub:
            lo, hi = a.lo - b.hi, a.hi - b.lo
        elif op is ast.Mult:
            lo, hi = interval_mul(a, b)
        elif op is ast.FloorDiv:
            lo, hi = interval_div(a, b)
            lo, hi = (math.floor(lo) if math.isfinite(lo) else lo), (math.floor(hi) if math.isfinite(hi) else hi)
        else:  # Mod: [0, b) for a positive divisor
            lo, hi = (0.0, b.hi - 1 if dtype == "int" else b.hi) if b.lo > 0 else (-INF, INF)
        lo, hi = (-INF if math.isnan(lo) else lo), (INF if math.isnan(hi) else hi)
        return Info(dtype, shape, lo, hi, const, _fold(a, b, _NP_OPS[op], const))

    def _pow(self, node: ast.BinOp, a: Info, b: Info, shape: tuple[int, ...], const: bool) -> Info:
        value = None
        if const and a.value is not None and b.value is not None:
            with np.errstate(all="ignore"):
                out = np.power(np.asarray(a.value, dtype=np.float64), np.asarray(b.value, dtype=np.float64))
            if np.any(np.isnan(out)):
                raise self.err(node, "power has no real value (a negative number to a fractional exponent, or 0 ** -1 style)",
                               "keep the base >= 0 for fractional exponents")
            if not np.all(np.isfinite(out)) or np.any(np.abs(out) > MAX_CONST_POWER):
                raise self.err(node, "power overflows: the result is too large to represent",
                               "powers are computed in float; keep them below 1e300")
            value = out.item() if out.shape == () else out
        lo, hi = -INF, INF
        if 0 <= a.lo and a.hi <= 1 and b.lo >= 0:
            lo, hi = 0.0, 1.0
        elif a.lo >= 0 and b.lo >= 0 and b.hi < INF and a.hi < INF:
            try:
                hi = max(a.hi ** b.hi, a.hi ** b.lo, 1.0)
                lo = 0.0
            except OverflowError:
                lo, hi = 0.0, INF
        return Info("float", shape, lo, hi, const, value)

    def unary(self, node: ast.UnaryOp) -> Info:
        x = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            return Info("bool", x.shape, 0.0, 1.0, x.const, None if x.value is None else np.logical_not(x.value))
        value = None if x.value is None else _as_number(x.value)  # +b and -b of a bool are ints, folded too
        if isinstance(node.op, ast.USub):
            return Info(numeric(x.dtype), x.shape, -x.hi, -x.lo, x.const, None if value is None else -value)
        return x.with_(dtype=numeric(x.dtype), value=value)

    def boolop(self, node: ast.BoolOp) -> Info:
        items = [self.visit(v) for v in node.values]
        shape: tuple[int, ...] | None = ()
        for i in items:
            shape = broadcast(shape, i.shape) if shape is not None else None
        if shape is None:
            raise self.err(node, "operands of and/or have shapes that do not broadcast: " + ", ".join(i.describe() for i in items))
        fn = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        return Info("bool", shape, 0.0, 1.0, all(i.const for i in items), _fold_all(items, lambda *v: fn.reduce(np.broadcast_arrays(*v))))

    def compare(self, node: ast.Compare) -> Info:
        items = [self.visit(node.left)] + [self.visit(c) for c in node.comparators]
        shape: tuple[int, ...] | None = ()
        for i in items:
            shape = broadcast(shape, i.shape) if shape is not None else None
        if shape is None:
            raise self.err(node, "compared values have shapes that do not broadcast: " + ", ".join(i.describe() for i in items))

        def chain(*v: Any) -> Any:
            out = np.bool_(True)
            for op, a, b in zip(node.ops, v, v[1:], strict=False):
                out = np.logical_and(out, _CMP_OPS[type(op)](a, b))
            return out
        return Info("bool", shape, 0.0, 1.0, all(i.const for i in items), _fold_all(items, chain))

    def ifexp(self, node: ast.IfExp) -> Info:
        c, a, b = self.visit(node.test), self.visit(node.body), self.visit(node.orelse)
        ab = broadcast(a.shape, b.shape)
        shape = broadcast(c.shape, ab) if ab is not None else None
        if shape is None:
            raise self.err(node, f"branches and condition do not broadcast: {c.describe()}, {a.describe()}, {b.describe()}")
        lo, hi = union(a, b)
        return Info(promote(a.dtype, b.dtype), shape, lo, hi, c.const and a.const and b.const, _fold_all([c, a, b], np.where))

    def subscript(self, node: ast.Subscript) -> Info:
        base = self.visit(node.value)
        idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(idx) > len(base.shape):
            raise self.err(node, f"too many indices: {base.describe()} has {len(base.shape)} axes",
                           "scalars cannot be indexed" if not base.shape else "")
        shape: list[int] = []
        lead: tuple[int, ...] | None = ()
        for axis, ix in enumerate(idx):
            if isinstance(ix, ast.Slice):
                shape.append(self._slice_len(ix, base.shape[axis]))
                continue
            i = self.visit(ix)
            if i.dtype != "int":
                raise self.err(ix, f"index must be an int, got {i.describe()}",
                               "use int(x) or round(x); to select with a bool mask use where() or sum(x * mask)")
            lead = broadcast(lead, i.shape) if lead is not None else None
            if lead is None:
                raise self.err(ix, "index arrays do not broadcast")
            size = base.shape[axis]
            if i.const and i.lo < 0:
                raise self.err(ix, f"index {i.lo:g} is negative: indices count from 0 here (a negative one does not "
                                   "count from the end)", f"for the last entry of axis {axis} write {size - 1}")
            if i.hi < INF and i.lo > -INF and i.lo < 0:  # numpy would wrap it to the end, silently
                raise self.err(ix, f"index range [{i.lo:g}, {i.hi:g}] reaches below 0 for axis {axis} of size {size}: "
                                   f"a negative index is an error here (it does not count from the end)",
                               f"guard it and clamp the index, e.g. `x[max(i, 0)] if i >= 0 else 0` where -1 means "
                               f"none, or `x[clip(i, 0, {size - 1})]`")
            if i.hi < INF and i.lo > -INF and i.hi >= size:
                raise self.err(ix, f"index range [{i.lo:g}, {i.hi:g}] is out of bounds for axis {axis} of size {size}",
                               f"guard it and clamp the index, e.g. `x[min(i, {size - 1})] if i < {size} else 0`, "
                               f"or `x[clip(i, 0, {size - 1})]`")
        out = (*(lead or ()), *shape, *base.shape[len(idx):])
        if any(isinstance(ix, ast.Slice) for ix in idx) and lead:
            raise self.err(node, "mixing index arrays and slices is not supported")
        const = base.const and all((found_info(ix) or base).const for ix in idx if not isinstance(ix, ast.Slice))
        return Info(base.dtype, tuple(out), base.lo, base.hi, const, _index_value(base, idx) if const else None)

    def _slice_len(self, s: ast.Slice, size: int) -> int:
        bounds: list[int | None] = []
        for part in (s.lower, s.upper):
            if part is None:
                bounds.append(None)
                continue
            i = self.visit(part)
            if not i.const or i.value is None or i.dtype != "int":
                raise self.err(part, "slice bounds must be constant ints (literals, params, consts)")
            self.scope.shape_names.update(x.id for x in ast.walk(part) if isinstance(x, ast.Name))
            bounds.append(int(i.value))
        n = len(range(size)[slice(*bounds)])
        if n == 0:
            raise self.err(s, "slice selects nothing")
        return n

    # -- calls
    def call(self, node: ast.Call) -> Info:
        assert isinstance(node.func, ast.Name)
        fname = node.func.id
        func = FUNCTIONS.get(fname)
        if func is None:
            close = difflib.get_close_matches(fname, list(FUNCTIONS), n=3, cutoff=0.6)
            hint = f"did you mean {' or '.join(f'`{c}`' for c in close)}?" if close else "see the function list in docs/spec-language.md"
            raise self.err(node, f"unknown function `{fname}`", hint)
        if func.random and not self.scope.random:
            raise self.err(node, f"random function `{fname}` is not allowed in {self.scope.context}",
                           "draw random numbers in `init` or in step rules, and store them in a variable")
        lo, hi = func.nargs
        if not lo <= len(node.args) <= hi:
            n = f"{lo}" if lo == hi else f"{lo} to {hi}"
            raise self.err(node, f"`{fname}` takes {n} positional arguments, got {len(node.args)}",
                           f"signature: {func.signature}")
        for kw in node.keywords:
            if kw.arg not in func.kwargs:
                raise self.err(node, f"`{fname}` has no keyword `{kw.arg}`", f"signature: {func.signature}")
        args = [self.visit(a) for a in node.args]
        kwargs = {kw.arg: self._kwarg(kw) for kw in node.keywords if kw.arg}
        nodes: dict[int | str, ast.AST] = {i: a for i, a in enumerate(node.args)}
        nodes.update({kw.arg: kw.value for kw in node.keywords if kw.arg})

        def const_value(key: int | str) -> Any:
            n = nodes.get(key)
            if n is None:
                raise ArgError(f"missing argument {key}")
            v = const_eval(n)
            self.scope.shape_names.update(x.id for x in ast.walk(n) if isinstance(x, ast.Name))
            if v is None:
                raise ArgError(f"argument `{ast.unparse(n)}` must be constant (literals, params and consts only)")
            return v

        try:
            info = func.infer(CallInfo(args, kwargs, const_value, self.scope.mechanics))
        except ArgError as e:
            raise self.err(node, f"{fname}(): {e}", f"signature: {func.signature}") from None
        if func.random:
            set_site(node, self.scope.next_site())
        if info.const and func.impl is not None and all(a.value is not None for a in args):
            try:
                with np.errstate(all="ignore"):
                    value = func.impl(*[a.value for a in args], **{k: const_value(k) for k in kwargs})
                info = info.with_(value=value)
            except Exception:  # noqa: BLE001 - leave unfolded; runtime decides
                pass
        return info

    def _kwarg(self, kw: ast.keyword) -> Info:
        if isinstance(kw.value, ast.Tuple):
            items = [self.visit(e) for e in kw.value.elts]
            info = Info("int", (len(items),), const=all(i.const for i in items))
            set_info(kw.value, info)
            return info
        return self.visit(kw.value)


_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}
_NP_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
    ast.FloorDiv: np.floor_divide, ast.Mod: np.mod,
}

_HANDLERS: dict[type, Callable[[_Checker, Any], Info]] = {
    ast.Constant: _Checker.constant,
    ast.Name: _Checker.name,
    ast.List: _Checker.list_,
    ast.Tuple: _Checker.tuple_,
    ast.BinOp: _Checker.binop,
    ast.UnaryOp: _Checker.unary,
    ast.BoolOp: _Checker.boolop,
    ast.Compare: _Checker.compare,
    ast.IfExp: _Checker.ifexp,
    ast.Subscript: _Checker.subscript,
    ast.Call: _Checker.call,
}


_CMP_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: np.equal, ast.NotEq: np.not_equal, ast.Lt: np.less, ast.LtE: np.less_equal,
    ast.Gt: np.greater, ast.GtE: np.greater_equal,
}


def _fold_all(items: list[Info], fn: Callable[..., Any]) -> Any:
    """fn of the items' values when all are constant and known (a Python scalar for a scalar)."""
    if not all(i.const and i.value is not None for i in items):
        return None
    try:
        out = np.asarray(fn(*(i.value for i in items)))
    except (ValueError, TypeError, IndexError):
        return None
    return out.item() if out.shape == () else out


def _index_value(base: Info, idx: Sequence[ast.AST]) -> Any:
    """The value of a constant subscript (its base and indices known), else None."""
    if base.value is None:
        return None
    key: list[Any] = []
    for ix in idx:
        if isinstance(ix, ast.Slice):
            bounds = [None if b is None else (found_info(b) or Info("int")).value for b in (ix.lower, ix.upper)]
            key.append(slice(*bounds))
            continue
        v = (found_info(ix) or Info("int")).value
        if v is None:
            return None
        key.append(np.asarray(v))
    try:
        out = np.asarray(base.value)[tuple(key)]
    except (IndexError, TypeError, ValueError):
        return None
    return out.item() if out.shape == () else out


def _fold(a: Info, b: Info, fn: Callable[[Any, Any], Any], const: bool) -> Any:
    if not const or a.value is None or b.value is None:
        return None
    try:
        with np.errstate(all="ignore"):
            av = np.asarray(a.value, dtype=np.int64) if a.dtype == "bool" else a.value
            bv = np.asarray(b.value, dtype=np.int64) if b.dtype == "bool" else b.value
            out = fn(av, bv)
        return out.item() if isinstance(out, np.ndarray) and out.shape == () else out
    except (ZeroDivisionError, ValueError, TypeError):
        return None


def const_eval(node: ast.AST) -> Any:
    """The value of a checked constant expression, or None when it is not constant."""
    if isinstance(node, ast.Tuple):
        vals = [const_eval(e) for e in node.elts]
        return None if any(v is None for v in vals) else tuple(vals)
    info = found_info(node)
    if info is None or not info.const:
        return None
    if info.value is not None:
        v = info.value
        return v.item() if isinstance(v, np.ndarray) and v.shape == () else v
    return _interp(node)


def _interp(node: ast.AST) -> Any:
    """Evaluate the few constant forms not folded during checking (conditionals, comparisons)."""
    if isinstance(node, ast.IfExp):
        c = const_eval(node.test)
        return None if c is None or np.ndim(c) > 0 else const_eval(node.body if c else node.orelse)
    if isinstance(node, ast.Compare):
        vals = [const_eval(node.left)] + [const_eval(c) for c in node.comparators]
        if any(v is None for v in vals):
            return None
        ops = {ast.Eq: np.equal, ast.NotEq: np.not_equal, ast.Lt: np.less, ast.LtE: np.less_equal,
               ast.Gt: np.greater, ast.GtE: np.greater_equal}
        return bool(all(np.all(ops[type(o)](a, b)) for o, a, b in zip(node.ops, vals, vals[1:], strict=False)))
    if isinstance(node, ast.BoolOp):
        vals = [const_eval(v) for v in node.values]
        if any(v is None for v in vals):
            return None
        return bool(all(vals)) if isinstance(node.op, ast.And) else bool(any(vals))
    if isinstance(node, ast.Subscript):
        base = const_eval(node.value)
        if base is None:
            return None
        idx = const_eval(node.slice) if not isinstance(node.slice, ast.Slice) else None
        return None if idx is None else np.asarray(base)[idx]
    return None


def _as_number(value: Any) -> Any:
    """A folded constant as a number: a bool (or bool array) as int64, numpy refuses `-` on bools;
    any other value as it is."""
    v = np.asarray(value)
    return v.astype(np.int64) if v.dtype == np.bool_ else value
