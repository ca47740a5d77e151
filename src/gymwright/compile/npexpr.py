"""Lower a checked expression to batched numpy source (the batch backend).

Every value has a *prefix* of leading axes before its type shape: none (constants: kind 0),
the copy axis B (kind 1), or the copy and agent axes B x A (kind 2, per-agent places, where
`me` is the array of the role's agent indices). Operands are aligned before they combine:
a prefixed value gets singleton axes so that numpy's right-aligned broadcasting matches the
spec's type broadcasting. Dispatch is a table on node type; calls go through `CALLS` (and, for a
mechanics module's functions, through its part's: `mechanics.emit.batch_calls`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gymwright.compile.tables import TABLES, literal
from gymwright.errors import CompileError
from gymwright.mechanics.emit import batch_calls
from gymwright.spec.expr.check import Checked, Symbol
from gymwright.spec.expr.types import info_of, site_of
from gymwright.spec.names import ident

_BIN = {ast.Add: "np.add", ast.Sub: "np.subtract", ast.Mult: "np.multiply", ast.Div: "np.true_divide",
        ast.FloorDiv: "np.floor_divide", ast.Mod: "np.mod"}
_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
PREFIX = {0: 0, 1: 1, 2: 2}
WIDEN_MAX_AGENTS = 4  # a per-copy value meeting up to this many agents is copied out per agent (b_wide)
POW_TABLE_MAX = 64  # `param ** e` is looked up in a table of the param's powers up to this many exponents
INF = float("inf")



@dataclass
class V:
    """A lowered value: its code and its prefix kind (0 none, 1 copies, 2 copies x agents)."""

    code: str
    kind: int
    shape: tuple[int, ...]
    dtype: str


def pad(v: V, kind: int, rank: int) -> str:
    """Code of `v` with singleton axes so it broadcasts as a value of prefix `kind`, type rank `rank`."""
    if v.kind == 0:
        return v.code
    extra = rank - len(v.shape)
    lead = [":"] * v.kind
    if v.kind == 1 and kind == 2:
        lead.append("None")
    idx = lead + ["None"] * extra
    if len(idx) == v.kind:
        return v.code
    return f"{v.code}[{', '.join(idx)}]"


class NpEmitter:
    """Emits batched numpy source for the checked expressions of one place in the spec.

    `kinds` gives each symbol's prefix kind (state: 1, consts: 0, ...); `per_agent` makes
    `me` the agent-index array `ME` (kind 2).
    """

    def __init__(self, symbols: dict[str, Symbol], kinds: dict[str, int], *, per_agent: bool = False,
                 overrides: dict[str, tuple[str, int]] | None = None,
                 me_range: tuple[int, int] | None = None, hoist: Callable[[str], str] | None = None,
                 powers: str | None = None) -> None:
        self.symbols = symbols
        self.kinds = kinds
        self.per_agent = per_agent
        self.overrides = overrides or {}
        self.me_range = me_range if per_agent else None  # `me` = arange(*me_range): x[me] is a slice
        self.shared: dict[int, tuple[str, int]] = {}  # id(node) -> (local name, kind) computed once
        # id(node) -> (code, arguments) of an agents_view / agents_view_of call lowered to
        # `window_sums_batch(plan[, values])`: the observation adds those into its buffer
        self.window_sums: dict[int, tuple[str, str]] = {}
        self.hoist = hoist  # code -> a local computed once before the statement (None: inline)
        self.powers = powers  # code of the env's BatchPowers (None: no tables of param powers)

    def __call__(self, checked: Checked) -> V:
        return self.emit(checked.tree.body)

    def emit(self, node: ast.AST) -> V:
        shared = self.shared.get(id(node))
        if shared is not None:
            info = info_of(node)
            return V(shared[0], shared[1], info.shape, info.dtype)
        handler = _NODES.get(type(node))
        if handler is None:
            raise CompileError(f"cannot lower `{type(node).__name__}` to batch code")
        info = info_of(node)
        code, kind = handler(self, node)
        return V(code, kind, info.shape, info.dtype)

    # -- helpers
    def aligned(self, nodes: Sequence[ast.AST], rank: int | None = None, numeric: bool = False,
                with_floats: bool = False) -> tuple[list[str], int]:
        """Codes of the nodes padded to one prefix kind; `numeric`: bools as int64, except with
        `with_floats` where another operand is a float (a numpy operator then takes a bool as
        0.0 / 1.0, as it would the int)."""
        vals = [self.emit(n) for n in nodes]
        kind = max(v.kind for v in vals)
        r = max(len(v.shape) for v in vals) if rank is None else rank
        codes = []
        floats = with_floats and any(v.dtype == "float" for v in vals)
        for v in vals:
            c = self.widen(v, kind, r)
            if numeric and v.dtype == "bool" and not floats:
                c = f"np.asarray({c}, dtype=np.int64)"
            codes.append(c)
        return codes, kind

    def widen(self, v: V, kind: int, rank: int) -> str:
        """`pad`, except that a scalar per copy (B,) meeting a role's agent axis (B, n), n <= 4,
        becomes a (B, n) copy (`b_wide`): numpy's broadcast of a (B, 1) operand against a (B, n)
        one runs a short inner loop of n per copy, several times slower than two long loops."""
        if kind == 2 and v.kind == 1 and rank == 0 and not v.shape and self.me_range is not None:
            n = self.me_range[1] - self.me_range[0]
            if 1 < n <= WIDEN_MAX_AGENTS:
                return f"b_wide({v.code}, {n})"
        return pad(v, kind, rank)

    def where(self, c: V, a: V, b: V, rank: int) -> tuple[str, int]:
        """`np.where` of a condition and two values, aligned to one prefix kind."""
        kind = max(c.kind, a.kind, b.kind)
        cond = self.widen(V(self.truth(c), c.kind, c.shape, "bool"), kind, rank)
        return f"np.where({cond}, {self.widen(a, kind, rank)}, {self.widen(b, kind, rank)})", kind

    def truth(self, v: V) -> str:
        return v.code if v.dtype == "bool" else f"({v.code} != 0)"

    # -- nodes
    def constant(self, node: ast.Constant) -> tuple[str, int]:
        return repr(node.value), 0

    def name(self, node: ast.Name) -> tuple[str, int]:
        n = node.id
        if n in ("True", "False"):
            return n, 0
        if n in self.overrides:
            return self.overrides[n]
        if n == "me":
            return "ME", 2
        sym = self.symbols.get(n)
        code = sym.code if sym is not None else f"v.{ident(n)}"
        return code, self.kinds.get(n, 1)

    def list_(self, node: ast.List) -> tuple[str, int]:
        codes, kind = self.aligned(list(node.elts))
        if kind == 0:
            return "np.array([" + ", ".join(codes) + "])", 0
        return f"np.stack(np.broadcast_arrays({', '.join(codes)}), axis={PREFIX[kind]})", kind

    def binop(self, node: ast.BinOp) -> tuple[str, int]:
        codes, kind = self.aligned([node.left, node.right], len(info_of(node).shape), numeric=True, with_floats=True)
        op = type(node.op)
        if op is ast.Pow:
            table = self.int_power(node, codes)
            return table or f"np.power(np.asarray({codes[0]}, dtype=np.float64), {codes[1]})", kind
        return f"{_BIN[op]}({codes[0]}, {codes[1]})", kind

    def int_power(self, node: ast.BinOp, codes: list[str]) -> str | None:
        """`param ** e` for a free param (one value per copy) and an int e per copy of a bounded
        range (at most POW_TABLE_MAX values): `b_pow_int`, a look-up in a table of the param's
        powers made once, in place of a C pow per copy. None where that does not apply."""
        left, right = node.left, node.right
        if self.powers is None or not isinstance(left, ast.Name) or left.id in self.overrides:
            return None
        sym, e = self.symbols.get(left.id), info_of(right)
        if sym is None or sym.kind != "param" or self.kinds.get(left.id) != 1 or info_of(left).shape:
            return None
        if e.dtype != "int" or e.shape or not -INF < e.lo <= e.hi < INF or e.hi - e.lo + 1 > POW_TABLE_MAX:
            return None
        if self.emit(right).kind != 1:
            return None
        lo, n = int(e.lo), int(e.hi - e.lo) + 1
        return f"b_pow_int({self.powers}, {left.id!r}, {codes[0]}, {codes[1]}, {lo}, {n})"

    def unary(self, node: ast.UnaryOp) -> tuple[str, int]:
        v = self.emit(node.operand)
        if isinstance(node.op, ast.Not):
            return f"np.logical_not({self.truth(v)})", v.kind
        code = f"np.asarray({v.code}, dtype=np.int64)" if v.dtype == "bool" else v.code
        return (f"np.negative({code})" if isinstance(node.op, ast.USub) else code), v.kind

    def boolop(self, node: ast.BoolOp) -> tuple[str, int]:
        rank = len(info_of(node).shape)
        vals = [self.emit(n) for n in node.values]
        kind = max(v.kind for v in vals)
        fn = "np.logical_and" if isinstance(node.op, ast.And) else "np.logical_or"
        parts = [self.widen(V(self.truth(v), v.kind, v.shape, "bool"), kind, rank) for v in vals]
        out = parts[0]
        for p in parts[1:]:
            out = f"{fn}({out}, {p})"
        return out, kind

    def compare(self, node: ast.Compare) -> tuple[str, int]:
        items = [node.left, *node.comparators]
        mine = self.is_me(node)
        if mine is not None:
            return mine, 2
        codes, kind = self.aligned(items, len(info_of(node).shape), numeric=True)
        parts = [f"({codes[i]} {_CMP[type(op)]} {codes[i + 1]})" for i, op in enumerate(node.ops)]
        return " & ".join(parts) if len(parts) > 1 else parts[0], kind

    def is_me(self, node: ast.Compare) -> str | None:
        """`me == x` / `me != x` (either order) for an int x per copy, as `b_is_me`: one flag per
        copy and agent built directly, not by numpy's broadcast (a short inner loop per copy)."""
        if len(node.ops) != 1 or type(node.ops[0]) not in (ast.Eq, ast.NotEq) or self.me_range is None:
            return None
        left, right = node.left, node.comparators[0]
        other = right if isinstance(left, ast.Name) and left.id == "me" else left
        if not (isinstance(left, ast.Name) and left.id == "me" or isinstance(right, ast.Name) and right.id == "me"):
            return None
        x = self.emit(other)
        if x.kind != 1 or x.shape or x.dtype != "int" or isinstance(other, ast.Name) and other.id == "me":
            return None
        lo, hi = self.me_range
        code = f"b_is_me({x.code}, {lo}, {hi - lo})"
        return code if isinstance(node.ops[0], ast.Eq) else f"np.logical_not({code})"

    def ifexp(self, node: ast.IfExp) -> tuple[str, int]:
        rank = len(info_of(node).shape)
        return self.where(self.emit(node.test), self.emit(node.body), self.emit(node.orelse), rank)

    def subscript(self, node: ast.Subscript) -> tuple[str, int]:
        base = self.emit(node.value)
        idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        dynamic = [ix for ix in idx if not isinstance(ix, ast.Slice) and not isinstance(ix, ast.Constant)]
        if not dynamic:
            parts = [":"] * base.kind
            for ix in idx:
                parts.append(_static_index(ix, self))
            return f"{base.code}[{', '.join(parts)}]", base.kind
        return self.gather(base, idx)

    def own_slice(self, base: V, idx: Sequence[ast.AST]) -> tuple[str, int] | None:
        """`x[me, ...]` with static further indices: the role's agents are a contiguous range,
        so this is a basic slice (a view) of the agent axis, not a gather."""
        first = idx[0]
        if (self.me_range is None or base.kind > 1 or "me" in self.overrides
                or not (isinstance(first, ast.Name) and first.id == "me")
                or not base.shape or base.shape[0] < self.me_range[1]
                or not all(isinstance(ix, ast.Constant | ast.Slice) for ix in idx[1:])):
            return None
        rest = "".join(", " + _static_index(ix, self) for ix in idx[1:])
        lo, hi = self.me_range
        if base.kind == 0:
            return f"{base.code}[None, {lo}:{hi}{rest}]", 2
        return f"{base.code}[:, {lo}:{hi}{rest}]", 2

    def gather(self, base: V, idx: Sequence[ast.AST]) -> tuple[str, int]:
        """Advanced indexing with per-copy (and per-agent) index arrays."""
        own = self.own_slice(base, idx)
        if own is not None:
            return own
        vals = [self.emit(ix) for ix in idx]
        lead = max((len(v.shape) for v in vals), default=0)
        kind = max([base.kind] + [v.kind for v in vals])
        if (base.kind == kind == 1 and len(base.shape) == 1 and len(vals) == 1 and vals[0].kind == 1
                and vals[0].dtype == "int" and not lead):
            return f"b_pick({base.code}, {vals[0].code})", 1  # x[i] for x (n,) and i one per copy
        parts = []
        extra = ", None" * lead
        if base.kind >= 1:
            parts.append(f"BI[:{', None' if kind == 2 else ''}{extra}]")
        if base.kind == 2:
            parts.append(f"AI[None, :{extra}]")
        for axis, v in enumerate(vals):
            size = base.shape[axis]
            code = pad(v, kind, lead)
            parts.append(code if v.kind == 0 else f"b_clip_index({code}, {size})")
        return f"{base.code}[{', '.join(parts)}]", kind

    def call(self, node: ast.Call) -> tuple[str, int]:
        assert isinstance(node.func, ast.Name)
        fn = CALLS.get(node.func.id) or batch_calls().get(node.func.id)
        if fn is None:
            raise CompileError(f"no batch lowering for function `{node.func.id}`")
        return fn(self, node)

    def kw(self, node: ast.Call, name: str) -> ast.AST | None:
        return next((k.value for k in node.keywords if k.arg == name), None)


def _slice(s: ast.Slice, e: NpEmitter) -> str:
    lo = e.emit(s.lower).code if s.lower is not None else ""
    hi = e.emit(s.upper).code if s.upper is not None else ""
    return f"{lo}:{hi}"


def _static_index(ix: ast.AST, e: NpEmitter) -> str:
    """Code of an index known when generating: a slice or a literal (callers pick only those)."""
    if isinstance(ix, ast.Slice):
        return _slice(ix, e)
    assert isinstance(ix, ast.Constant), "a static index is a slice or a literal"
    return repr(ix.value)


# Each handler takes the node type it is listed under, a pairing a dict's type cannot state: the
# node is typed Any here, and `emit` looks the handler up by the node's own type.
_NODES: dict[type, Callable[[NpEmitter, Any], tuple[str, int]]] = {
    ast.Constant: NpEmitter.constant,
    ast.Name: NpEmitter.name,
    ast.List: NpEmitter.list_,
    ast.BinOp: NpEmitter.binop,
    ast.UnaryOp: NpEmitter.unary,
    ast.BoolOp: NpEmitter.boolop,
    ast.Compare: NpEmitter.compare,
    ast.IfExp: NpEmitter.ifexp,
    ast.Subscript: NpEmitter.subscript,
    ast.Call: NpEmitter.call,
}


# --------------------------------------------------------------------------- calls

def _elementwise(fn: str, numeric: bool = True) -> Callable[[NpEmitter, ast.Call], tuple[str, int]]:
    def emit(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
        codes, kind = e.aligned(list(node.args), len(info_of(node).shape), numeric=numeric)
        return f"{fn}({', '.join(codes)})", kind
    return emit


def _nary(fn: str) -> Callable[[NpEmitter, ast.Call], tuple[str, int]]:
    def emit(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
        if len(node.args) == 1:
            return _reduce(fn.replace("maximum", "max").replace("minimum", "min"))(e, node)
        codes, kind = e.aligned(list(node.args), len(info_of(node).shape), numeric=True)
        out = codes[0]
        for c in codes[1:]:
            out = f"{fn}({out}, {c})"
        return out, kind
    return emit


def _reduce(fn: str, numeric: bool = True) -> Callable[[NpEmitter, ast.Call], tuple[str, int]]:
    def emit(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
        x = e.emit(node.args[0])
        code = f"np.asarray({x.code}, dtype=np.int64)" if numeric and x.dtype == "bool" else x.code
        p = PREFIX[x.kind]
        axis_node = e.kw(node, "axis")
        if axis_node is not None:
            a = int(info_of(axis_node).value) % len(x.shape)
            axis = str(p + a)
        else:
            axis = repr(tuple(range(p, p + len(x.shape)))) if fn not in ("np.argmax", "np.argmin") else str(p)
        folded = _folded(fn, x, code, axis)
        return (folded or f"{fn}({code}, axis={axis})"), x.kind
    return emit


_FOLD_OPS = {"np.all": "np.logical_and", "np.any": "np.logical_or", "np.count_nonzero": "np.add",
             "np.sum": "np.add", "np.mean": "np.add"}
FOLD_MAX = 8  # as runtime/batch.py


def _folded(fn: str, x: V, code: str, axis: str) -> str | None:
    """`b_fold` code for an exact reduction of a few elements per copy (see runtime `b_fold`):
    logical any/all/count of bools, integer sums and means. None where numpy's own is kept."""
    op = _FOLD_OPS.get(fn)
    axes = ast.literal_eval(axis)
    axes = axes if isinstance(axes, tuple) else (axes,)
    sizes = [x.shape[a - PREFIX[x.kind]] for a in axes]
    n = 1
    for d in sizes:
        n *= d
    exact = x.dtype == "bool" or (x.dtype == "int" and fn in ("np.sum", "np.mean"))
    if op is None or x.kind == 0 or not exact or not 0 < n <= FOLD_MAX or 0 in sizes:
        return None
    if fn == "np.count_nonzero":
        code = f"np.asarray({code}, dtype=np.int64)"
    out = f"b_fold({op}, {code}, {axes!r})"
    return f"np.true_divide({out}, {n})" if fn == "np.mean" else out


def _random(kind_of_draw: str) -> Callable[[NpEmitter, ast.Call], tuple[str, int]]:
    def emit(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
        info = info_of(node)
        site = site_of(node)
        n = 1
        for d in info.shape:
            n *= d
        me = "ME_IDX" if e.per_agent else "None"
        kind = 2 if e.per_agent else 1
        p = PREFIX[kind]
        rank = len(info.shape)
        pairs = kind_of_draw == "normal"
        u = f"b_draw(r, {site}, {me}, {n}, {pairs})"
        if kind_of_draw == "normal":
            z = f"b_normal({u}, {p}, {info.shape!r})"
            args = [pad(e.emit(a), kind, rank) for a in node.args]
            mean, std = (args + ["0.0", "1.0"][len(args):])[:2]
            return f"({mean} + {std} * {z})", kind
        shaped = f"b_shape({u}, {p}, {info.shape!r})"
        args = [pad(e.emit(a), kind, rank) for a in node.args]
        if kind_of_draw == "uniform":
            lo, hi = (args + ["0.0", "1.0"][len(args):])[:2]
            return f"({lo} + ({hi} - {lo}) * {shaped})", kind
        if kind_of_draw == "randint":
            lo, hi = args
            return f"({lo} + np.floor({shaped} * ({hi} - {lo})).astype(np.int64)).astype(np.int64)", kind
        return f"({shaped} < {args[0]})", kind
    return emit


def _choice(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
    a = e.emit(node.args[0])
    kind = max(a.kind, 2 if e.per_agent else 1)
    me = "ME_IDX" if e.per_agent else "None"
    return f"b_choice({pad(a, kind, 1)}, b_draw(r, {site_of(node)}, {me}, 1))", kind


def _permutation(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
    n = info_of(node).shape[0]
    me = "ME_IDX" if e.per_agent else "None"
    return f"b_permutation(b_draw(r, {site_of(node)}, {me}, {n}))", (2 if e.per_agent else 1)


def _const_call(template: str) -> Callable[[NpEmitter, ast.Call], tuple[str, int]]:
    def emit(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
        args = [e.emit(a).code for a in node.args]
        return template.format(*args, shape=info_of(node).shape), 0
    return emit


def _to_int(how: str) -> Callable[[NpEmitter, ast.Call], tuple[str, int]]:
    def emit(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
        x = e.emit(node.args[0])
        return f"b_int({x.code}, {how!r})", x.kind
    return emit


def _same_kind(template: str) -> Callable[[NpEmitter, ast.Call], tuple[str, int]]:
    def emit(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
        x = e.emit(node.args[0])
        return template.format(x.code, axis=PREFIX[x.kind]), x.kind
    return emit


def _push(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
    w, x = e.emit(node.args[0]), e.emit(node.args[1])
    kind = max(w.kind, x.kind, 1)
    return f"b_push({pad(w, kind, len(w.shape))}, {pad(x, kind, len(w.shape) - 1)}, {PREFIX[kind]})", kind


def _roll(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
    x, k = e.emit(node.args[0]), e.emit(node.args[1])
    kind = max(x.kind, k.kind)
    return f"b_roll({pad(x, kind, len(x.shape))}, {pad(k, kind, 0)}, {PREFIX[kind]})", kind


CALLS: dict[str, Callable[[NpEmitter, ast.Call], tuple[str, int]]] = {
    "abs": _elementwise("np.abs"),
    "sign": _elementwise("np.sign"),
    "sqrt": _elementwise("np.sqrt"),
    "exp": _elementwise("np.exp"),
    "log": _elementwise("np.log"),
    "floor": _to_int("floor"),
    "ceil": _to_int("ceil"),
    "round": _to_int("round"),
    "int": _to_int("int"),
    "float": _same_kind("b_float({0})"),
    "bool": _same_kind("(np.asarray({0}) != 0)"),
    "isclose": _elementwise("rt_isclose"),
    "max": _nary("np.maximum"),
    "min": _nary("np.minimum"),
    "clip": _elementwise("np.clip"),
    "where": lambda e, n: _where(e, n),
    "sum": _reduce("np.sum"),
    "mean": _reduce("np.mean"),
    "count": _reduce("np.count_nonzero", numeric=False),
    "any": _reduce("np.any", numeric=False),
    "all": _reduce("np.all", numeric=False),
    "argmax": _reduce("np.argmax"),
    "argmin": _reduce("np.argmin"),
    "dot": lambda e, n: _dot(e, n),
    "arange": _const_call("np.arange({0})"),
    "linspace": _const_call("np.linspace({0}, {1}, {2})"),
    "zeros": _const_call("np.zeros({shape!r})"),
    "ones": _const_call("np.ones({shape!r})"),
    "onehot": lambda e, n: (lambda x: (f"b_onehot({x.code}, {e.emit(n.args[1]).code})", x.kind))(e.emit(n.args[0])),
    "push": _push,
    "roll": _roll,
    "others": lambda e, n: _others(e, n),
    "stack": lambda e, n: _stack(e, n),
    "transpose": lambda e, n: (lambda x: (f"b_transpose({x.code})", x.kind))(e.emit(n.args[0])),
    **{name: lambda e, n: (literal(info_of(n).value), 0) for name in TABLES},
    "uniform": _random("uniform"),
    "normal": _random("normal"),
    "randint": _random("randint"),
    "bernoulli": _random("bernoulli"),
    "choice": _choice,
    "permutation": _permutation,
}
"""The lowering of the core functions; a mechanics module's functions have theirs in its batch
part (`mechanics.emit.batch_calls`)."""


def _where(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
    rank = len(info_of(node).shape)
    c, a, b = (e.emit(x) for x in node.args)
    return e.where(c, a, b, rank)


def _dot(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
    codes, kind = e.aligned(list(node.args), 1, numeric=True)
    return f"np.sum(np.multiply({codes[0]}, {codes[1]}), axis=-1)", kind


def _others(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
    x, i = e.emit(node.args[0]), e.emit(node.args[1])
    kind = max(x.kind, i.kind)
    return f"b_others({pad(x, kind, len(x.shape))}, {pad(i, kind, 0)}, {PREFIX[kind]}, {len(x.shape)})", kind


def _stack(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
    codes, kind = e.aligned(list(node.args), len(info_of(node).shape) - 1)
    if kind == 0 and not any(info_of(a).shape for a in node.args):
        return "np.array([" + ", ".join(codes) + "])", 0
    return f"np.stack(np.broadcast_arrays({', '.join(codes)}), axis=-1)", kind
