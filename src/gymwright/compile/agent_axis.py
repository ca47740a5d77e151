"""Lower a per-agent expression over the agent axis of one role (the Python backend's observations).

The Python backend evaluates per-agent places once per agent, with `me` an int. For a role of
several agents whose features are a few small numpy calls each (windows, directions), that is
many calls per step; this emitter computes every agent of the role at once: `x[me]` becomes the
slice `x[lo:hi]` of the role's agents (leading axis n), scalars stay scalars. It covers a small
whitelist (agent-state reads, arithmetic, comparisons, logic, `sign`, `abs`, two-argument
`min`/`max`, `manhattan` on cells, `view`, `agents_view`); anything else (random draws, other
calls, `me` used any other way) raises `NotOnAxis` and the caller keeps the per-agent code.
Results equal the per-agent code's exactly: the same numpy/IEEE operations, elementwise.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import Any

from gymwright.mechanics.emit import axis_calls
from gymwright.spec.expr.check import Symbol
from gymwright.spec.expr.types import draws, info_of

_BIN = {ast.Add: "np.add", ast.Sub: "np.subtract", ast.Mult: "np.multiply", ast.Div: "np.true_divide"}
_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_SCALAR_KINDS = {"param", "const", "builtin", "state", "t"}


class NotOnAxis(Exception):
    """The expression is outside what the agent-axis lowering covers."""



class AxisEmitter:
    """Emits numpy source computing a per-agent expression for agents `lo .. hi-1` at once.

    Each lowered value is `(code, on_axis)`: on the axis it has shape `(n, *type shape)`, off
    the axis it is a scalar shared by every agent. Calls used several times (one `view` window
    read by two features) are computed once into `shared` locals.
    """

    def __init__(self, symbols: dict[str, Symbol], lo: int, hi: int, n_agents: int,
                 nonzero: frozenset[str] = frozenset()) -> None:
        self.symbols = symbols
        self.lo, self.hi, self.n_agents = lo, hi, n_agents
        self.nonzero = nonzero
        self.shared: dict[str, str] = {}  # call code -> local name
        self.windows: dict[str, tuple[str, str, str | None]] = {}  # local -> (centres, radius, values or None)

    def emit(self, node: ast.AST) -> tuple[str, bool]:
        if draws(node):
            raise NotOnAxis("random draw")
        handler = _NODES.get(type(node))
        if handler is None:
            raise NotOnAxis(type(node).__name__)
        return handler(self, node)

    def num(self, node: ast.AST) -> tuple[str, bool]:
        """The operand as a number (bool arrays become int64: numpy's bool arithmetic is logical)."""
        code, axis = self.emit(node)
        if info_of(node).dtype == "bool":
            return (f"{code}.astype(np.int64)" if axis else f"int({code})"), axis
        return code, axis

    def truth(self, node: ast.AST) -> tuple[str, bool]:
        code, axis = self.emit(node)
        if info_of(node).dtype == "bool":
            return code, axis
        return (f"({code} != 0)" if axis else f"bool({code})"), axis

    def same_rank(self, nodes: Sequence[ast.AST], axes: list[bool]) -> None:
        """Operands combine elementwise: agent-axis values of one type shape, shared ones scalar."""
        shapes = {info_of(n).shape for n, a in zip(nodes, axes, strict=True) if a}
        if len(shapes) > 1 or any(not a and info_of(n).shape for n, a in zip(nodes, axes, strict=True)):
            raise NotOnAxis("operands of different shapes")

    def share(self, code: str) -> str:
        name = self.shared.get(code)
        if name is None:
            name = self.shared[code] = f"c{len(self.shared)}"
        return name

    def share_window(self, centres: str, radius: str, values: str | None) -> str:
        """The shared local of a window over the agents: their counts (`values` None) or the sums
        of `values`. Recorded in `windows`, so that those around the same centres can be
        computed by one `rt_agents_windows_rows` call."""
        code = (f"rt_agents_view_rows(v, {centres}, {radius})" if values is None
                else f"rt_agents_view_of_rows(v, {centres}, {radius}, {values})")
        name = self.share(code)
        self.windows[name] = (centres, radius, values)
        return name

    # -- nodes
    def constant(self, node: ast.Constant) -> tuple[str, bool]:
        return repr(node.value), False

    def name(self, node: ast.Name) -> tuple[str, bool]:
        if node.id in ("True", "False"):
            return node.id, False
        if node.id == "me":
            return f"np.arange({self.lo}, {self.hi})", True
        sym = self.symbols.get(node.id)
        if sym is None or sym.kind not in _SCALAR_KINDS or sym.info.shape:
            raise NotOnAxis(f"name {node.id}")
        return sym.code, False

    def subscript(self, node: ast.Subscript) -> tuple[str, bool]:
        base, ix = node.value, node.slice
        if not (isinstance(ix, ast.Name) and ix.id == "me" and isinstance(base, ast.Name)):
            raise NotOnAxis("subscript other than x[me]")
        sym = self.symbols.get(base.id)
        if sym is None or sym.kind != "agent_state" or sym.info.shape[:1] != (self.n_agents,):
            raise NotOnAxis(f"subscript of {base.id}")
        return f"{sym.code}[{self.lo}:{self.hi}]", True

    def binop(self, node: ast.BinOp) -> tuple[str, bool]:
        op = type(node.op)
        if op not in _BIN:
            raise NotOnAxis("operator")
        if op is ast.Div and not (isinstance(node.right, ast.Constant) and node.right.value not in (0, 0.0, False)
                                  or isinstance(node.right, ast.Name) and node.right.id in self.nonzero):
            raise NotOnAxis("division by a value that may be 0")
        (a, x), (b, y) = self.num(node.left), self.num(node.right)
        self.same_rank([node.left, node.right], [x, y])
        if not (x or y):
            raise NotOnAxis("no agent axis")
        return f"{_BIN[op]}({a}, {b})", True

    def unary(self, node: ast.UnaryOp) -> tuple[str, bool]:
        if isinstance(node.op, ast.Not):
            code, axis = self.truth(node.operand)
            return (f"np.logical_not({code})" if axis else f"(not {code})"), axis
        code, axis = self.num(node.operand)
        if isinstance(node.op, ast.USub):
            return (f"np.negative({code})" if axis else f"(-{code})"), axis
        return code, axis

    def boolop(self, node: ast.BoolOp) -> tuple[str, bool]:
        parts = [self.truth(v) for v in node.values]
        self.same_rank(list(node.values), [a for _, a in parts])
        if not any(a for _, a in parts):
            raise NotOnAxis("no agent axis")
        fn = "np.logical_and" if isinstance(node.op, ast.And) else "np.logical_or"
        out = parts[0][0]
        for code, _ in parts[1:]:
            out = f"{fn}({out}, {code})"
        return out, True

    def compare(self, node: ast.Compare) -> tuple[str, bool]:
        if len(node.ops) != 1:
            raise NotOnAxis("chained comparison")
        nodes = [node.left, node.comparators[0]]
        vals = [self.num(n) if info_of(n).dtype == "bool" else self.emit(n) for n in nodes]
        self.same_rank(nodes, [a for _, a in vals])
        if not any(a for _, a in vals):
            raise NotOnAxis("no agent axis")
        return f"({vals[0][0]} {_CMP[type(node.ops[0])]} {vals[1][0]})", True

    def call(self, node: ast.Call) -> tuple[str, bool]:
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        fn = CALLS.get(name) or axis_calls().get(name)
        if fn is None or node.keywords:
            raise NotOnAxis("call")
        return fn(self, node)


def _elementwise(np_fn: str) -> Callable[[AxisEmitter, ast.Call], tuple[str, bool]]:
    def emit(e: AxisEmitter, node: ast.Call) -> tuple[str, bool]:
        vals = [e.num(a) for a in node.args]
        e.same_rank(list(node.args), [a for _, a in vals])
        if not any(a for _, a in vals):
            raise NotOnAxis("no agent axis")
        return f"{np_fn}({', '.join(c for c, _ in vals)})", True
    return emit


def _two(np_fn: str) -> Callable[[AxisEmitter, ast.Call], tuple[str, bool]]:
    inner = _elementwise(np_fn)

    def emit(e: AxisEmitter, node: ast.Call) -> tuple[str, bool]:
        if len(node.args) != 2:
            raise NotOnAxis("reduction")
        return inner(e, node)
    return emit


CALLS: dict[str, Callable[[AxisEmitter, ast.Call], tuple[str, bool]]] = {
    "sign": _elementwise("np.sign"),
    "abs": _elementwise("np.abs"),
    "min": _two("np.minimum"),
    "max": _two("np.maximum"),
}
"""The core functions lowered over the axis; a mechanics module's are in its Python part
(`mechanics.emit.axis_calls`: a grid's `manhattan`, `view`, `agents_view`, `agents_view_of`)."""

# Each handler takes the node type it is listed under, a pairing a dict's type cannot state: the
# node is typed Any here, and `emit` looks the handler up by the node's own type.
_NODES: dict[type, Callable[[AxisEmitter, Any], tuple[str, bool]]] = {
    ast.Constant: AxisEmitter.constant,
    ast.Name: AxisEmitter.name,
    ast.Subscript: AxisEmitter.subscript,
    ast.BinOp: AxisEmitter.binop,
    ast.UnaryOp: AxisEmitter.unary,
    ast.BoolOp: AxisEmitter.boolop,
    ast.Compare: AxisEmitter.compare,
    ast.Call: AxisEmitter.call,
}
