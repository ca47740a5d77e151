"""Rewards, metrics and the ends of an episode (`terminate`, `truncate`)."""

from __future__ import annotations

import ast
import math

from gymwright.diagnostic import warning
from gymwright.spec.checked import CMetric, CTerm
from gymwright.spec.checks.actions import role_span
from gymwright.spec.checks.context import STAGE, CheckContext
from gymwright.spec.expr.check import Checked
from gymwright.spec.expr.parse import parse_names


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
        if m.per_agent:
            out += _per_agent_metric(ctx, name, m.expr, m.reduce, m.kind, path)
            continue
        c = ctx.expr(m.expr, ctx.scope(f"metric `{name}`", actions=True), f"{path}.expr")
        if c is None:
            continue
        if c.info.shape:
            ctx.error(f"{path}.expr", f"a metric must be a scalar, got a {c.info.describe()}", "reduce it, e.g. sum(x) or mean(x)")
            continue
        out.append(CMetric(name, c, m.reduce, path))
    return out


class _MeIs(ast.NodeTransformer):
    """`me` replaced by one agent's index."""

    def __init__(self, index: int) -> None:
        self.index = index

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Constant(self.index), node) if node.id == "me" else node


def _per_agent_metric(ctx: CheckContext, name: str, expr: object, reduce: str, kind: str, path: str) -> list[CMetric]:
    """`per_agent: true`: one number per agent, checked once with `me`, then one metric per agent
    (`NAME.AGENT_ID`) whose expression has `me` replaced by the agent's index: both backends and
    every report see ordinary scalar metrics."""
    if kind != "stat":
        ctx.error(f"{path}.kind", f"a per-agent metric is a `stat`, not `{kind}`: the {kind} measure is one number per episode",
                  f"write the {kind} measure as its own scalar metric (e.g. `sum(...)` or `max(...)` over the agents)")
        return []
    c = ctx.expr(expr, ctx.scope(f"metric `{name}`", per_agent=True, actions=True), f"{path}.expr")
    if c is None:
        return []
    if c.info.shape:
        ctx.error(f"{path}.expr", f"a per-agent metric must be one number per agent, got a {c.info.describe()}",
                  "index with `me` (e.g. `chips[me]`) or reduce with sum()/mean()")
        return []
    out = []
    for i, agent in enumerate(a for r in ctx.roles for a in r.agent_ids):
        tree = _MeIs(i).visit(parse_names(c.source))
        one = ctx.expr(ast.unparse(tree), ctx.scope(f"metric `{name}.{agent}`", actions=True), f"{path}.expr")
        if one is None:
            return []
        out.append(CMetric(f"{name}.{agent}", one, reduce, path, spec_name=name))
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


def check_agent_end(ctx: CheckContext) -> Checked | None:
    """`terminate_agent`: one bool per agent (`me`), in simultaneous play only."""
    source = ctx.spec.terminate_agent
    if source is None:
        return None
    if ctx.spec.turns != "simultaneous":
        ctx.error("terminate_agent", "`terminate_agent` needs simultaneous play: in a turn-based game the agent "
                  "whose turn it is could have left the game",
                  "end the whole episode with `terminate`, or skip a finished agent's turns in `turns.active`")
        return None
    c = ctx.expr(source, ctx.scope("terminate_agent", per_agent=True, actions=True), "terminate_agent")
    if c is not None and (c.info.dtype != "bool" or c.info.shape):
        ctx.error("terminate_agent", f"terminate_agent must be one bool per agent, got {c.info.describe()}",
                  "compare with `me`, e.g. `passed[me]` or `pos[me, 0] >= goal_row`")
        return None
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
