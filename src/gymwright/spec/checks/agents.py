"""Roles and their counts, the built-in names (`n_agents`, `n_<role>`, `is_<role>`, `t`) and the bound of `t`."""

from __future__ import annotations

import ast
import math

import numpy as np

from gymwright.errors import ExprError
from gymwright.spec.checked import CRole, CVar
from gymwright.spec.checks.base import CheckerBase
from gymwright.spec.expr.check import Symbol, check
from gymwright.spec.expr.parse import parse
from gymwright.spec.expr.types import INF, Info
from gymwright.spec.limits import MAX_AGENTS


class AgentChecks(CheckerBase):
    """`agents`, the built-in names, and the largest step `t` reaches."""

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
