"""Lower a checked expression to Python source (numpy for arrays, plain Python for scalars).

Dispatch is a table on node type; calls go through `CALLS`, keyed like the function table (and,
for a mechanics module's functions, through its part's: `mechanics.emit.python_calls`).
The source refers to spec names only as `p.<name>` (params, consts), `v.<name>` (state,
actions), `me`, and to runtime helpers; nothing else is reachable.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import Any

from gymwright.compile.tables import TABLES, literal
from gymwright.errors import CompileError
from gymwright.mechanics.emit import python_calls
from gymwright.spec.expr.check import Checked, Symbol
from gymwright.spec.expr.types import draws, info_of, site_of
from gymwright.spec.names import ident

_BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}
_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}



class PyEmitter:
    """Emits Python source for checked expressions of one place in the spec."""

    def __init__(self, symbols: dict[str, Symbol], *, per_agent: bool = False,
                 overrides: dict[str, str] | None = None, nonzero: frozenset[str] = frozenset()) -> None:
        self.symbols = symbols
        self.per_agent = per_agent
        self.overrides = overrides or {}
        self.nonzero = nonzero  # scalar params and consts that can never be 0 (their range excludes it)
        self.hoisted: dict[int, str] = {}  # id(node) -> local name computed before a per-agent loop

    def __call__(self, checked: Checked) -> str:
        return self.emit(checked.tree.body)

    def emit(self, node: ast.AST) -> str:
        hoisted = self.hoisted.get(id(node))
        if hoisted is not None:
            return hoisted
        handler = _NODES.get(type(node))
        if handler is None:
            raise CompileError(f"cannot lower `{type(node).__name__}`")
        return handler(self, node)

    # -- helpers
    def num(self, node: ast.AST) -> str:
        """The operand as a number: bools become ints (numpy bool arithmetic is logical)."""
        code = self.emit(node)
        info = info_of(node)
        if info.dtype != "bool":
            return code
        return f"{code}.astype(np.int64)" if info.shape else f"int({code})"

    def truth(self, node: ast.AST) -> str:
        code = self.emit(node)
        info = info_of(node)
        if info.dtype == "bool":
            return code
        return f"({code} != 0)" if info.shape else f"bool({code})"

    # -- nodes
    def constant(self, node: ast.Constant) -> str:
        return repr(node.value)

    def name(self, node: ast.Name) -> str:
        n = node.id
        if n in ("True", "False"):
            return n
        if n in self.overrides:
            return self.overrides[n]
        if n == "me":
            return "me"
        sym = self.symbols.get(n)
        return sym.code if sym is not None else f"v.{ident(n)}"

    def list_(self, node: ast.List) -> str:
        return "np.array([" + ", ".join(self.emit(e) for e in node.elts) + "])"

    def binop(self, node: ast.BinOp) -> str:
        op = type(node.op)
        a, b = self.num(node.left), self.num(node.right)
        scalar = not info_of(node.left).shape and not info_of(node.right).shape
        if op is ast.Pow:
            return f"rt_pow_s({a}, {b})" if scalar else f"rt_pow({a}, {b})"
        if op in (ast.Div, ast.FloorDiv, ast.Mod):
            rinfo = info_of(node.right)
            if isinstance(node.right, ast.Constant) and rinfo.value not in (0, 0.0, False) or \
                    scalar and isinstance(node.right, ast.Name) and node.right.id in self.nonzero:
                return f"({a} {_BIN[op]} {b})"
            fn = {ast.Div: "rt_div", ast.FloorDiv: "rt_floordiv", ast.Mod: "rt_mod"}[op]
            return f"{fn}_s({a}, {b})" if scalar else f"{fn}({a}, {b})"
        return f"({a} {_BIN[op]} {b})"

    def unary(self, node: ast.UnaryOp) -> str:
        if isinstance(node.op, ast.Not):
            x = self.truth(node.operand)
            return f"np.logical_not({x})" if info_of(node.operand).shape else f"(not {x})"
        sign = "-" if isinstance(node.op, ast.USub) else "+"
        return f"({sign}{self.num(node.operand)})"

    def boolop(self, node: ast.BoolOp) -> str:
        parts = [self.truth(v) for v in node.values]
        if info_of(node).shape:
            fn = "np.logical_and" if isinstance(node.op, ast.And) else "np.logical_or"
            out = parts[0]
            for p in parts[1:]:
                out = f"{fn}({out}, {p})"
            return out
        word = " and " if isinstance(node.op, ast.And) else " or "
        return "(" + word.join(parts) + ")"

    def compare(self, node: ast.Compare) -> str:
        items = [node.left, *node.comparators]
        codes = [self.num(i) if info_of(i).dtype == "bool" and info_of(i).shape else self.emit(i) for i in items]
        parts = [f"({codes[i]} {_CMP[type(op)]} {codes[i + 1]})" for i, op in enumerate(node.ops)]
        if len(parts) == 1:
            return parts[0]
        joiner = " & " if info_of(node).shape else " and "
        return "(" + joiner.join(parts) + ")"

    def ifexp(self, node: ast.IfExp) -> str:
        out = info_of(node)
        c = self.truth(node.test)
        a, b = self.emit(node.body), self.emit(node.orelse)
        if info_of(node.test).shape:
            return f"np.where({c}, {a}, {b})"
        if info_of(node.body).shape != out.shape:
            a = f"np.broadcast_to({a}, {out.shape!r})"
        if info_of(node.orelse).shape != out.shape:
            b = f"np.broadcast_to({b}, {out.shape!r})"
        return f"({a} if {c} else {b})"

    def subscript(self, node: ast.Subscript) -> str:
        base = self.emit(node.value)
        idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        parts = []
        for ix in idx:
            if isinstance(ix, ast.Slice):
                lo = self.emit(ix.lower) if ix.lower is not None else ""
                hi = self.emit(ix.upper) if ix.upper is not None else ""
                parts.append(f"{lo}:{hi}")
            else:
                parts.append(self.emit(ix))
        return f"{base}[{', '.join(parts)}]"

    def call(self, node: ast.Call) -> str:
        assert isinstance(node.func, ast.Name)
        fn = CALLS.get(node.func.id) or python_calls().get(node.func.id)
        if fn is None:
            raise CompileError(f"no Python lowering for function `{node.func.id}`")
        return fn(self, node)

    # -- call helpers
    def args(self, node: ast.Call) -> list[str]:
        return [self.emit(a) for a in node.args]

    def kw(self, node: ast.Call, name: str) -> str | None:
        for k in node.keywords:
            if k.arg == name:
                if isinstance(k.value, ast.Tuple):
                    return "(" + "".join(self.emit(e) + ", " for e in k.value.elts) + ")"
                return self.emit(k.value)
        return None

    def index(self) -> str:
        return self.overrides.get("me", "me") if self.per_agent else "0"


# Each handler takes the node type it is listed under, a pairing a dict's type cannot state: the
# node is typed Any here, and `emit` looks the handler up by the node's own type.
_NODES: dict[type, Callable[[PyEmitter, Any], str]] = {
    ast.Constant: PyEmitter.constant,
    ast.Name: PyEmitter.name,
    ast.List: PyEmitter.list_,
    ast.BinOp: PyEmitter.binop,
    ast.UnaryOp: PyEmitter.unary,
    ast.BoolOp: PyEmitter.boolop,
    ast.Compare: PyEmitter.compare,
    ast.IfExp: PyEmitter.ifexp,
    ast.Subscript: PyEmitter.subscript,
    ast.Call: PyEmitter.call,
}


# --------------------------------------------------------------------------- calls

def _array_any(node: ast.Call) -> bool:
    return any(info_of(a).shape for a in node.args)


def _elementwise(scalar: str, array: str) -> Callable[[PyEmitter, ast.Call], str]:
    def emit(e: PyEmitter, node: ast.Call) -> str:
        args = ", ".join(e.num(a) for a in node.args)
        return f"{array}({args})" if _array_any(node) else f"{scalar}({args})"
    return emit


def _minmax(scalar: str, array: str, reduce: str) -> Callable[[PyEmitter, ast.Call], str]:
    def emit(e: PyEmitter, node: ast.Call) -> str:
        if len(node.args) == 1:
            axis = e.kw(node, "axis")
            x = e.num(node.args[0])
            return f"{reduce}({x}, axis={axis})" if axis is not None else f"{reduce}({x})"
        if not _array_any(node):
            return f"{scalar}(" + ", ".join(e.num(a) for a in node.args) + ")"
        out = e.num(node.args[0])
        for a in node.args[1:]:
            out = f"{array}({out}, {e.num(a)})"
        return out
    return emit


SHORT = 32
"""Up to this many entries, `all(x)` and `any(x)` of a 1-d array are Python's on `x.tolist()`: the
same truth of each entry, at a tenth of a numpy reduction's call overhead."""


def _reduce(fn: str, wrap: str = "") -> Callable[[PyEmitter, ast.Call], str]:
    def emit(e: PyEmitter, node: ast.Call) -> str:
        x = e.num(node.args[0]) if fn not in ("np.any", "np.all", "np.count_nonzero") else e.emit(node.args[0])
        axis = e.kw(node, "axis")
        if axis is not None:
            return f"{fn}({x}, axis={axis})"
        shape = info_of(node.args[0]).shape
        if fn in ("np.any", "np.all") and len(shape) == 1 and shape[0] <= SHORT:
            return f"{fn[3:]}({x}.tolist())"
        call = f"{x}.{fn[3:]}()" if fn in _METHODS else f"{fn}({x})"  # method form: less overhead
        return f"{wrap}({call})" if wrap else call
    return emit


_METHODS = {"np.sum", "np.mean", "np.any", "np.all", "np.argmax", "np.argmin"}


def _random(fn: str) -> Callable[[PyEmitter, ast.Call], str]:
    def emit(e: PyEmitter, node: ast.Call) -> str:
        site = site_of(node)
        shape = info_of(node).shape
        args = "".join(", " + e.emit(a) for a in node.args)
        return f"{fn}(v._rng, {site}, {e.index()}, {shape!r}{args})"
    return emit


def _simple(template: str) -> Callable[[PyEmitter, ast.Call], str]:
    def emit(e: PyEmitter, node: ast.Call) -> str:
        return template.format(*e.args(node))
    return emit


def _bool_call(e: PyEmitter, node: ast.Call) -> str:
    return e.truth(node.args[0])


def _float_call(e: PyEmitter, node: ast.Call) -> str:
    x = e.emit(node.args[0])
    return f"np.asarray({x}, dtype=np.float64)" if info_of(node.args[0]).shape else f"float({x})"


def _clip(e: PyEmitter, node: ast.Call) -> str:
    x, lo, hi = (e.num(a) for a in node.args)
    return f"np.clip({x}, {lo}, {hi})" if _array_any(node) else f"min(max({x}, {lo}), {hi})"


def _where(e: PyEmitter, node: ast.Call) -> str:
    c = e.truth(node.args[0])
    a, b = e.emit(node.args[1]), e.emit(node.args[2])
    return f"np.where({c}, {a}, {b})" if _array_any(node) else f"({a} if {c} else {b})"


def _filled(value: str) -> Callable[[PyEmitter, ast.Call], str]:
    def emit(e: PyEmitter, node: ast.Call) -> str:
        return f"np.full({info_of(node).shape!r}, {value})"
    return emit


CALLS: dict[str, Callable[[PyEmitter, ast.Call], str]] = {
    "abs": _elementwise("abs", "np.abs"),
    "sign": _elementwise("np.sign", "np.sign"),
    "sqrt": _elementwise("np.sqrt", "np.sqrt"),
    "exp": _elementwise("np.exp", "np.exp"),
    "log": _elementwise("np.log", "np.log"),
    "floor": _elementwise("rt_floor", "rt_floor"),
    "ceil": _elementwise("rt_ceil", "rt_ceil"),
    "round": _elementwise("rt_round", "rt_round"),
    "int": _elementwise("rt_int", "rt_int"),
    "float": _float_call,
    "bool": _bool_call,
    "max": _minmax("max", "np.maximum", "np.max"),
    "min": _minmax("min", "np.minimum", "np.min"),
    "clip": _clip,
    "where": _where,
    "isclose": _simple("np.isclose({0}, {1}, rtol=1e-9, atol=1e-12)"),
    "sum": _reduce("np.sum"),
    "mean": _reduce("np.mean", "float"),
    "count": _reduce("np.count_nonzero"),
    "any": _reduce("np.any", "bool"),
    "all": _reduce("np.all", "bool"),
    "argmax": _reduce("np.argmax", "int"),
    "argmin": _reduce("np.argmin", "int"),
    "dot": _simple("np.dot({0}, {1})"),
    "arange": _simple("np.arange({0})"),
    "linspace": _simple("np.linspace({0}, {1}, {2})"),
    "zeros": _filled("0.0"),
    "ones": _filled("1.0"),
    "onehot": _simple("rt_onehot({0}, {1})"),
    "push": _simple("rt_push({0}, {1})"),
    "roll": _simple("rt_roll({0}, {1})"),
    "others": _simple("rt_others({0}, {1})"),
    "stack": lambda e, n: ("np.array([" + ", ".join(e.args(n)) + "])" if not _array_any(n)
                           else "rt_stack(" + ", ".join(e.args(n)) + ")"),
    "transpose": _simple("np.transpose({0})"),
    **{name: lambda e, n: literal(info_of(n).value) for name in TABLES},
    "uniform": _random("draw_uniform"),
    "normal": _random("draw_normal"),
    "randint": _random("draw_randint"),
    "bernoulli": _random("draw_bernoulli"),
    "choice": lambda e, n: f"draw_choice(v._rng, {site_of(n)}, {e.index()}, {e.emit(n.args[0])})",
    "permutation": lambda e, n: f"draw_permutation(v._rng, {site_of(n)}, {e.index()}, {e.emit(n.args[0])})",
}
"""The lowering of the core functions; a mechanics module's functions have theirs in its Python
part (`mechanics.emit.python_calls`)."""


_HOISTABLE = {"sum", "mean", "count", "any", "all", "dot", "argmax", "argmin", "max", "min"}


def hoistable(node: ast.AST) -> bool:
    """A reduction that does not depend on `me`, draws nothing and cannot raise: same for every agent."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _HOISTABLE):
        return False
    if node.func.id in ("max", "min") and len(node.args) != 1:
        return False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == "me":
            return False
        if draws(sub) or isinstance(sub, ast.Subscript) or isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Div | ast.FloorDiv | ast.Mod | ast.Pow):
            return False
    return True


def _invariant(node: ast.AST) -> bool:
    """Arithmetic that does not depend on `me`, draws nothing and cannot raise (division and
    powers lower to guarded helpers or divide by a nonzero param; no indexing)."""
    if not isinstance(node, ast.BinOp):
        return False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == "me" or draws(sub) or isinstance(sub, ast.Subscript):
            return False
        if isinstance(sub, ast.Call) and not hoistable(sub):
            return False
    return True


def hoist(emitter: PyEmitter, trees: Sequence[ast.AST], prefix: str = "h") -> list[tuple[str, str]]:
    """Plan loop-invariant parts of `trees`: returns (local, code) pairs to compute first.

    Reductions are hoisted wherever they are; invariant arithmetic only where it always runs
    (not inside a branch of `x if c else y` or after the first operand of `and` / `or`).
    """
    out: list[tuple[str, str]] = []
    seen: dict[str, str] = {}

    def visit(node: ast.AST, always: bool) -> None:
        if id(node) not in emitter.hoisted and (hoistable(node) or always and _invariant(node)):
            code = emitter.emit(node)
            name = seen.get(code)
            if name is None:
                name = f"{prefix}{len(out)}"
                seen[code] = name
                out.append((name, code))
            emitter.hoisted[id(node)] = name
            return
        for child in ast.iter_child_nodes(node):
            guarded = isinstance(node, ast.IfExp) and child is not node.test or \
                isinstance(node, ast.BoolOp) and child is not node.values[0]
            visit(child, always and not guarded)

    for tree in trees:
        visit(tree, True)
    return out
