"""The agent-axis lowering (`compile/agent_axis.py`) with one more case: `agents_view_of(c, r, x)`
where the values `x` are the same for every agent (no `me`, no random draw), such as
`sign(goal[:, 0] - pos[:, 0])` or `reached or fell`.

Such an `x` is lowered once by the per-agent Python emitter (its code reads no `me`, so it is the
same code at the role level) and every agent's window is cut from one grid of those values
(`rt_agents_view_of_rows`), exactly the values `rt_agents_view_of` gives agent by agent.
"""

from __future__ import annotations

import ast

from gymwright.compile.agent_axis import AxisEmitter, NotOnAxis
from gymwright.compile.pyexpr import PyEmitter
from gymwright.spec.expr.check import Symbol


def _same_for_every_agent(node: ast.AST) -> bool:
    return not any(isinstance(n, ast.Name) and n.id == "me" or hasattr(n, "gw_site") for n in ast.walk(node))


class ValuesAxisEmitter(AxisEmitter):
    """`AxisEmitter` that also lowers `agents_view_of` with values shared by every agent."""

    def __init__(self, symbols: dict[str, Symbol], lo: int, hi: int, n_agents: int,
                 nonzero: frozenset[str], values: PyEmitter) -> None:
        super().__init__(symbols, lo, hi, n_agents, nonzero)
        self.values = values  # lowers the shared values (per-agent Python code without `me`)

    def emit(self, node: ast.AST) -> tuple[str, bool]:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "agents_view_of"
                and len(node.args) == 3 and not node.keywords and _same_for_every_agent(node.args[2])):
            return super().emit(node)
        center, radius, x = node.args
        (cc, on), (cr, r_on) = self.emit(center), self.emit(radius)
        if not on or r_on or center.gw.shape != (2,):  # type: ignore[attr-defined]
            raise NotOnAxis("window of values")
        return self.share(f"rt_agents_view_of_rows(v, {cc}, {cr}, {self.values.emit(x)})"), True
