"""Rewards, metrics and the ends of an episode (`terminate`, `truncate`)."""

from __future__ import annotations

import ast
import math

from gymwright.diagnostic import warning
from gymwright.spec.checked import CMetric, CTerm
from gymwright.spec.checks.actions import role_span
from gymwright.spec.checks.context import STAGE, CheckContext
from gymwright.spec.expr.check import Checked


def check_rewards(ctx: CheckContext) -> None:
    """`rewards`: each role's named terms, one number per agent."""
    for role_name in ctx.spec.rewards:
        if role_name not in ctx.spec.agents:
            ctx.error(f"rewards.{role_name}", f"rewards for unknown role `{role_name}`", f"roles: {', '.join(ctx.spec.agents)}")
    for role in ctx.roles:
        names: set[str] = set()
        for i, term in enumerate(ctx.spec.rewards.get(role.name, [])):
            path = f"rewards.{role.name}[{i}]"
            if term.name in names:
                ctx.error(f"{path}.name", f"reward term `{term.name}` appears twice")
            names.add(term.name)
            scope = ctx.scope(f"reward term `{term.name}`", per_agent=True, me=role_span(role), actions=True)
            c = ctx.expr(term.expr, scope, f"{path}.expr")
            if c is None:
                continue
            if c.info.shape:
                ctx.error(f"{path}.expr", f"a reward term must be one number per agent, got a {c.info.describe()}",
                          "index with `me` or reduce with sum()/mean()")
                continue
            if not math.isfinite(term.weight):
                ctx.error(f"{path}.weight", "weight must be finite")
            role.terms.append(CTerm(term.name, c, term.weight, path))


def check_metrics(ctx: CheckContext) -> list[CMetric]:
    """`metrics`: scalars, at most one of kind `task`."""
    out = []
    tasks = [name for name, m in ctx.spec.metrics.items() if m.kind == "task"]
    if len(tasks) > 1:
        ctx.error(f"metrics.{tasks[1]}.kind", f"`{tasks[0]}` is already the task metric; a spec has one",
                  "make this one `kind: stat` (or `failure`)")
    for name, m in ctx.spec.metrics.items():
        path = f"metrics.{name}"
        c = ctx.expr(m.expr, ctx.scope(f"metric `{name}`", actions=True), f"{path}.expr")
        if c is None:
            continue
        if c.info.shape:
            ctx.error(f"{path}.expr", f"a metric must be a scalar, got a {c.info.describe()}", "reduce it, e.g. sum(x) or mean(x)")
            continue
        out.append(CMetric(name, c, m.reduce, path))
    return out


def check_end(ctx: CheckContext, key: str) -> Checked | None:
    """`terminate` or `truncate`: a scalar bool."""
    c = ctx.expr(getattr(ctx.spec, key), ctx.scope(key, actions=True), key)
    if c is not None and (c.info.dtype != "bool" or c.info.shape):
        ctx.error(key, f"{key} must be a scalar bool, got {c.info.describe()}",
                  "compare, e.g. `t >= max_steps`; for per-agent values use any(...) or all(...)")
        return None
    if c is not None and key == "truncate":
        _warn_task_rounds(ctx, c)
    return c


def _warn_task_rounds(ctx: CheckContext, c: Checked) -> None:
    """`truncate: t >= rounds`: a round count the task defines ends the episode by the task's own
    rules, which is termination (a trainer bootstraps the value of a truncated episode)."""
    body = c.tree.body
    if not (isinstance(body, ast.Compare) and len(body.ops) == 1 and isinstance(body.ops[0], ast.GtE | ast.Gt)
            and isinstance(body.left, ast.Name) and body.left.id == "t"):
        return
    names = [n.id for n in ast.walk(body.comparators[0]) if isinstance(n, ast.Name)]
    docs = {n: (ctx.spec.params[n].doc if n in ctx.spec.params else "") for n in names}
    rounds = [n for n in names if "round" in n.lower() or "round" in docs[n].lower()]
    if rounds:
        ctx.diags.append(warning(STAGE, "truncate", f"`truncate: {c.source}` ends the episode at `{rounds[0]}`, "
                                 "a number of rounds the task defines: that is termination",
                                 f"write it in `terminate` (e.g. `... or {c.source}`); keep `truncate` for a step cap "
                                 "imposed from outside the task, such as `t >= max_steps`"))
