"""Roles and their counts, the built-in names (`n_agents`, `n_<role>`, `is_<role>`, `t`) and the bound of `t`."""

from __future__ import annotations

import ast
import math

import numpy as np

from gymwright.errors import ExprError
from gymwright.spec.checked import CRole
from gymwright.spec.checks.context import CheckContext
from gymwright.spec.checks.params import check_computed_consts
from gymwright.spec.expr.check import Symbol, check
from gymwright.spec.expr.parse import parse
from gymwright.spec.expr.types import INF, Info
from gymwright.spec.limits import MAX_AGENTS


def check_roles(ctx: CheckContext) -> None:
    """`agents`: each role's count, 1..MAX_AGENTS (a param expression fixes its params)."""
    start = 0
    for name, role in ctx.spec.agents.items():
        path = f"agents.{name}.count"
        count = role.count if isinstance(role.count, int) else ctx.const_int(role.count, path, "agent count", lo=1, hi=MAX_AGENTS)
        if count is None:
            continue
        if not 1 <= count <= MAX_AGENTS:
            ctx.error(path, f"agent count is {count}; it must be 1..{MAX_AGENTS}")
            continue
        ctx.roles.append(CRole(name, count, start))
        start += count
    if start > MAX_AGENTS:
        ctx.error("agents", f"{start} agents in all; the limit is {MAX_AGENTS}")


def check_builtins(ctx: CheckContext) -> None:
    """`n_agents`, `n_<role>`, `is_<role>`, the computed consts (they may read them), then `t`."""
    n = ctx.n_agents
    if "n_agents" in ctx.symbols:  # a param may name the built-in, if it is the total
        if ctx.params.get("n_agents") != n:
            kind = "param" if "n_agents" in ctx.spec.params else ctx.symbols["n_agents"].kind
            where = "params" if kind == "param" else "consts"
            ctx.error(f"{where}.n_agents", f"{kind} `n_agents` = {ctx.params.get('n_agents', ctx.symbols['n_agents'].info.value)} but the spec has {n} agents in all",
                      "`n_agents` names the total number of agents; give yours another name")
    else:
        ctx.symbols["n_agents"] = Symbol("n_agents", "builtin", Info("int", (), n, n, True, n), "p.n_agents", "number of agents")
    for r in ctx.roles:
        mask = np.array([i in r.indices for i in range(n)])
        ctx.declare(Symbol(f"n_{r.name}", "builtin", Info("int", (), r.count, r.count, True, r.count), f"p.n_{r.name}", f"number of {r.name} agents"), f"agents.{r.name}")
        ctx.declare(Symbol(f"is_{r.name}", "builtin", Info("bool", (n,), 0.0, 1.0, True, mask), f"p.is_{r.name}", f"per agent: is it a {r.name}"), f"agents.{r.name}")
    check_computed_consts(ctx)  # after the agent counts, before `t`
    ctx.symbols["t"] = Symbol("t", "t", Info("int", (), 0.0, t_bound(ctx)), "v.t", "steps taken in this episode")


def t_bound(ctx: CheckContext) -> float:
    """The largest `t` can reach: an episode ends at the latest when a disjunct `t >= E`, `t > E`
    or `t == E` (E a constant with a finite maximum over the params' ranges; E >= 1 for `==`) of
    `terminate` or `truncate` first holds. INF when none bounds it."""
    best = INF
    for key in ("terminate", "truncate"):
        try:
            _, tree = parse(getattr(ctx.spec, key))
        except ExprError:
            continue  # check_end reports it
        body = tree.body
        for part in body.values if isinstance(body, ast.BoolOp) and isinstance(body.op, ast.Or) else [body]:
            best = min(best, _t_limit(ctx, part))
    return best


def _t_limit(ctx: CheckContext, node: ast.AST) -> float:
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return INF
    op, left, right = type(node.ops[0]), node.left, node.comparators[0]
    flipped: dict[type[ast.cmpop], type[ast.cmpop]] = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Eq: ast.Eq}
    if isinstance(right, ast.Name) and right.id == "t" and op in flipped:
        op, left, right = flipped[op], right, left
    if not (isinstance(left, ast.Name) and left.id == "t") or op not in (ast.GtE, ast.Gt, ast.Eq):
        return INF
    try:
        e = check(ast.unparse(right), ctx.scope("a step limit")).info
    except ExprError:
        return INF
    if not e.const or e.shape or e.dtype == "bool" or not math.isfinite(e.hi):
        return INF
    if op is ast.Eq:
        return e.hi if e.dtype == "int" and e.lo >= 1 else INF
    return float(max(math.ceil(e.hi) if op is ast.GtE else math.floor(e.hi) + 1, 1))
