"""Probes: scripted scenarios, their start values and expectations over rewards, observations and masks."""

from __future__ import annotations

import ast
import difflib
import re
from typing import Any

import numpy as np

from gymwright.diagnostic import warning
from gymwright.spec.checked import CMetric, CProbe, CVar
from gymwright.spec.checks.context import STAGE, CheckContext
from gymwright.spec.expr.check import Symbol
from gymwright.spec.expr.parse import parse_names
from gymwright.spec.expr.types import Info
from gymwright.spec.model import Probe


def check_probes(ctx: CheckContext, metrics: list[CMetric], variables: list[CVar]) -> list[CProbe]:
    """`probes`: each scenario's steps, start values and expectations (skipped, with a warning,
    at a structure other than the one it is written for)."""
    out = []
    ids = {a: i for i, a in enumerate(a for r in ctx.roles for a in r.agent_ids)}
    n = ctx.n_agents
    by_name = {v.name: v for v in variables}
    extra = {
        "reward": Symbol("reward", "probe", Info("float", (n,)), "P.reward"),
        "ret": Symbol("ret", "probe", Info("float", (n,)), "P.ret"),
        "terminated": Symbol("terminated", "probe", Info("bool", (), 0.0, 1.0), "P.terminated"),
        "truncated": Symbol("truncated", "probe", Info("bool", (), 0.0, 1.0), "P.truncated"),
    }
    for name, m in ctx.spec.metrics.items():  # all of them: a broken metric is reported once, where it is
        info = Info("float", (n,)) if m.per_agent else Info("float", ())  # per agent: metric.NAME.AGENT -> [i]
        extra[f"metric_{name}"] = Symbol(f"metric_{name}", "probe", info, f"P.metric_{name}")
    for role in ctx.roles:
        dim = sum(f.size for f in role.features)
        lo = min((float(f.low.min()) for f in role.features if f.size), default=0.0)
        hi = max((float(f.high.max()) for f in role.features if f.size), default=0.0)
        for agent in role.agent_ids:
            extra[f"obs_{agent}"] = Symbol(f"obs_{agent}", "probe", Info("float", (dim,), lo, hi), f"P.obs_{agent}")
            extra[f"mask_{agent}"] = Symbol(f"mask_{agent}", "probe", Info("bool", (role.n_actions,), 0.0, 1.0),
                                            f"P.mask_{agent}")
    for i, probe in enumerate(ctx.spec.probes):
        path = f"probes[{i}]"
        skip = _probe_skip_reason(ctx, probe)
        if skip:
            ctx.diags.append(warning(STAGE, path, f"probe `{probe.name}` skipped: {skip}",
                                     "a probe runs only at the structure (agent counts, sizes) it is "
                                     "written for: the spec's defaults, or what its `params` pin"))
            continue
        checked = _check_probe(ctx, probe, path, ids, extra, by_name)
        if checked is not None:
            out.append(checked)
    return out


def _probe_skip_reason(ctx: CheckContext, probe: Probe) -> str:
    """Why a probe does not run at this build's structure ('' when it does)."""
    written_for = {k: probe.params.get(k, ctx.spec.params[k].default)
                   for k in ctx.structural if k in ctx.spec.params}
    differs = {k: v for k, v in written_for.items() if ctx.params.get(k) != v}
    if not differs:
        return ""
    want = ", ".join(f"{k}={v}" for k, v in differs.items())
    have = ", ".join(f"{k}={ctx.params.get(k)}" for k in differs)
    return f"it is written for {want}; this build has {have}"


def _check_probe(ctx: CheckContext, probe: Probe, path: str, ids: dict[str, int], extra: dict[str, Symbol],
                 variables: dict[str, CVar]) -> CProbe | None:
    for k in probe.params:
        if k not in ctx.spec.params:
            ctx.error(f"{path}.params.{k}", f"unknown param `{k}`", ctx.param_hint(k))
    steps = [_probe_step(ctx, step, f"{path}.actions[{j}]", ids) for j, step in enumerate(probe.actions)]
    expects = []
    for j, src in enumerate(probe.expect):
        text = _rewrite_probe(ctx, src, ids, f"{path}.expect[{j}]")
        if text is None:
            continue
        c = ctx.expr(text, ctx.scope("a probe expectation", actions=True, extra=extra), f"{path}.expect[{j}]")
        if c is not None and (c.info.dtype != "bool" or c.info.shape):
            ctx.error(f"{path}.expect[{j}]", f"an expectation must be a scalar bool, got {c.info.describe()}")
            continue
        if c is not None:
            expects.append(c)
    start = _probe_start(ctx, probe.start, f"{path}.start", variables)
    played = [s for s in steps if s is not None]
    if len(played) == len(steps) and len(expects) == len(probe.expect) and start is not None:
        return CProbe(probe.name, dict(probe.params), probe.seed, played, expects, path,
                      list(probe.expect), start, probe.illegal)
    return None


def _probe_start(ctx: CheckContext, start: dict[str, Any], path: str, variables: dict[str, CVar]) -> dict[str, Any] | None:
    """The probe's start values, each checked against its variable's type, shape and bounds."""
    ok = True
    for name, value in start.items():
        var = variables.get(name)
        where = f"{path}.{name}"
        if var is None:
            close = difflib.get_close_matches(name, list(variables), n=1, cutoff=0.6)
            ctx.error(where, f"`{name}` is not a state or agent_state variable",
                      f"did you mean `{close[0]}`?" if close else f"variables: {', '.join(variables) or 'none'}")
            ok = False
            continue
        problem = _start_problem(var, value, ctx.n_agents)
        if problem:
            ctx.error(where, problem, "write it as the variable is declared (an agent_state value lists every agent)",
                      value=value)
            ok = False
    return dict(start) if ok else None


def _rewrite_probe(ctx: CheckContext, src: str, ids: dict[str, int], path: str) -> str | None:
    bad: list[str] = []

    def agent(m: re.Match[str]) -> str:
        if m.group(2) not in ids:
            bad.append(m.group(2))
            return m.group(0)
        return f"{m.group(1)}[{ids[m.group(2)]}]"

    out = _rewrite_views(ctx, src, ids, bad)
    out = re.sub(r"\b(reward|ret)\.([A-Za-z_]\w*)", agent, out)
    out = re.sub(r"\bmetric\.([A-Za-z_]\w*)\.([A-Za-z_]\w*)",
                 lambda m: f"metric_{m.group(1)}[{ids[m.group(2)]}]" if m.group(2) in ids else m.group(0), out)
    out = re.sub(r"\bmetric\.([A-Za-z_]\w*)", r"metric_\1", out)
    if bad and "." in bad[0]:
        who, member = bad[0].split(".", 1)
        ctx.error(path, f"{who} has no observation feature or choice named `{member}`",
                  "name a feature that has a `name:` in `observe`, or a choice of the agent's role", value=src)
        return None
    if bad:
        ctx.error(path, f"unknown agent id `{bad[0]}`", f"agent ids: {', '.join(ids)}", value=src)
        return None
    return out


def _rewrite_views(ctx: CheckContext, src: str, ids: dict[str, int], bad: list[str]) -> str:
    """`obs.A[i]`, `obs.A.FEATURE`, `mask.A[a]`, `mask.A.CHOICE` -> the probe symbols of agent A."""
    def view(m: re.Match[str]) -> str:
        kind, agent, member = m.group(1), m.group(2), m.group(3)
        if agent not in ids:
            bad.append(agent)
            return m.group(0)
        role = ctx.role_by_index(ids[agent])
        if member is None:
            return f"{kind}_{agent}"
        if kind == "obs":
            at = 0
            for f in role.features:
                if f.name == member:
                    return f"obs_{agent}[{at}]" if f.size == 1 else f"obs_{agent}[{at}:{at + f.size}]"
                at += f.size
        else:
            for c in role.choices:
                if c.name == member:
                    return f"mask_{agent}[{c.offset}]" if c.n == 1 else f"any(mask_{agent}[{c.offset}:{c.offset + c.n}])"
        bad.append(f"{agent}.{member}")
        return m.group(0)

    return re.sub(r"\b(obs|mask)\.([A-Za-z_]\w*?)(?:\.([A-Za-z_]\w*))?(?=\W|$)", view, src)


def _probe_step(ctx: CheckContext, step: dict[str, str], path: str,
                ids: dict[str, int]) -> dict[str, tuple[str, dict[str, Any]]] | None:
    out = {}
    for agent_id, text in step.items():
        if agent_id not in ids:
            ctx.error(f"{path}.{agent_id}", f"unknown agent id `{agent_id}`", f"agent ids: {', '.join(ids)}")
            return None
        role = ctx.role_by_index(ids[agent_id])
        parsed = _parse_action(text)
        if parsed is None:
            ctx.error(f"{path}.{agent_id}", f"cannot read action {text!r}", "write `choice` or `choice(arg=value)`", value=text)
            return None
        name, kwargs = parsed
        choice = next((c for c in role.choices if c.name == name), None)
        if choice is None:
            if (role.name, name) not in ctx.broken_choices:  # else its own error says why
                ctx.error(f"{path}.{agent_id}", f"role `{role.name}` has no choice `{name}`", f"choices: {', '.join(c.name for c in role.choices)}")
            return None
        if set(kwargs) != {a.name for a in choice.args}:
            ctx.error(f"{path}.{agent_id}", f"`{name}` takes arguments {[a.name for a in choice.args]}, got {list(kwargs)}", value=text)
            return None
        for a in choice.args:
            if not np.isclose(a.values, kwargs[a.name]).any():
                ctx.error(f"{path}.{agent_id}", f"{kwargs[a.name]} is not a value of argument `{a.name}`", f"values: {a.values.tolist()}", value=text)
                return None
        out[agent_id] = (name, kwargs)
    return out


def _start_problem(var: CVar, value: Any, n_agents: int) -> str:
    """Why `value` cannot start variable `var` ('' when it can)."""
    arr = np.asarray(value)
    shape = ((n_agents,) if var.per_agent else ()) + tuple(var.shape)
    if arr.dtype == object:
        return f"a start value is numbers or bools in the variable's shape {list(shape)}, got {value!r}"
    kinds = {"bool": "b", "int": "iu", "float": "iuf"}[var.dtype]
    if arr.dtype.kind not in kinds:
        return f"`{var.name}` is {var.dtype}; got {value!r}"
    if arr.shape != shape:
        return f"`{var.name}` has shape {list(shape)}, got {list(arr.shape)}"
    if arr.size and (arr.min() < var.lo or arr.max() > var.hi):
        return f"{value!r} is outside the bounds of `{var.name}`, [{var.lo:g}, {var.hi:g}]"
    return ""


def _parse_action(text: str) -> tuple[str, dict[str, Any]] | None:
    try:
        node = parse_names(text.strip()).body
    except SyntaxError:
        return None
    if isinstance(node, ast.Name):
        return node.id, {}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
        kw = {}
        for k in node.keywords:
            v = k.value
            if (isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.USub) and isinstance(v.operand, ast.Constant)
                    and isinstance(v.operand.value, int | float)):
                v = ast.Constant(-v.operand.value)
            if not isinstance(v, ast.Constant) or not isinstance(v.value, int | float) or k.arg is None:
                return None
            kw[k.arg] = v.value
        return node.func.id, kw
    return None
