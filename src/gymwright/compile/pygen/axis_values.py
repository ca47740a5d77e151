"""The agent-axis lowering (`compile/agent_axis.py`) with one more case: `agents_view_of(c, r, x)`
where the values `x` are the same for every agent (no `me`, no random draw), such as
`sign(goal[:, 0] - pos[:, 0])` or `reached or fell`.

Such an `x` is lowered once by the per-agent Python emitter (its code reads no `me`, so it is the
same code at the role level) and every agent's window is cut from one grid of those values
(`rt_agents_view_of_rows`), exactly the values `rt_agents_view_of` gives agent by agent.

`manhattan(a, b)` of two cells per agent is `rt_manhattan_rows`: the two columns' distances added,
the same integers as a sum over the last axis, without a numpy reduction over two entries. A role
that is every agent reads `x[me]` as the whole array `x` (the same values as its slice `x[0:n]`:
one call less per read, and `v.pos` itself to the window helpers, which keep their plan for it).
"""

from __future__ import annotations

import ast
from typing import TypeGuard

from gymwright.compile.agent_axis import AxisEmitter, NotOnAxis
from gymwright.compile.pyexpr import PyEmitter
from gymwright.spec.expr.check import Symbol
from gymwright.spec.expr.types import draws, info_of


def _call_of(node: ast.AST, name: str) -> TypeGuard[ast.Call]:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name and not node.keywords


def _same_for_every_agent(node: ast.AST) -> bool:
    return not any(isinstance(n, ast.Name) and n.id == "me" or draws(n) for n in ast.walk(node))


class ValuesAxisEmitter(AxisEmitter):
    """`AxisEmitter` that also lowers `agents_view_of` with values shared by every agent, and
    `manhattan` of cells through `rt_manhattan_rows`."""

    def __init__(self, symbols: dict[str, Symbol], lo: int, hi: int, n_agents: int,
                 nonzero: frozenset[str], values: PyEmitter) -> None:
        super().__init__(symbols, lo, hi, n_agents, nonzero)
        self.values = values  # lowers the shared values (per-agent Python code without `me`)

    def emit(self, node: ast.AST) -> tuple[str, bool]:
        if isinstance(node, ast.Subscript):
            return self.agents_of(node)
        if _call_of(node, "manhattan"):
            return self.manhattan(node)
        if not (_call_of(node, "agents_view_of") and len(node.args) == 3 and _same_for_every_agent(node.args[2])):
            return super().emit(node)
        center, radius, x = node.args
        (cc, on), (cr, r_on) = self.emit(center), self.emit(radius)
        if not on or r_on or info_of(center).shape != (2,):
            raise NotOnAxis("window of values")
        return self.share_window(cc, cr, self.values.emit(x)), True

    def manhattan(self, node: ast.Call) -> tuple[str, bool]:
        """`manhattan(a, b)` of two integer cells per agent: (n,) int64."""
        if len(node.args) != 2 or not all(info_of(n).shape == (2,) and info_of(n).dtype == "int" for n in node.args):
            raise NotOnAxis("manhattan of non-cells")
        (ca, x), (cb, y) = self.emit(node.args[0]), self.emit(node.args[1])
        if not (x and y):
            raise NotOnAxis("manhattan off the axis")
        return f"rt_manhattan_rows({ca}, {cb})", True

    def agents_of(self, node: ast.Subscript) -> tuple[str, bool]:
        """`x[me]`: the role's rows of `x`; the whole array (no slice) when the role is every agent."""
        code, on = AxisEmitter.subscript(self, node)
        every = f"[0:{self.n_agents}]"
        if self.lo == 0 and self.hi == self.n_agents and code.endswith(every):
            return code[:-len(every)], on
        return code, on
