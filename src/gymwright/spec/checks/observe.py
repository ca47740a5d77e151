"""Observations: features, their sizes and bounds, private variables, unbounded shapes."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from gymwright.diagnostic import warning
from gymwright.spec.checked import CFeature
from gymwright.spec.checks.actions import role_span
from gymwright.spec.checks.context import STAGE, CheckContext
from gymwright.spec.expr.check import Checked
from gymwright.spec.limits import MAX_FEATURE_SIZE, MAX_OBS_DIM
from gymwright.spec.model import Feature


def check_observe(ctx: CheckContext) -> None:
    """`observe`: each role's features, their sizes and their bounds."""
    for role_name in ctx.spec.observe:
        if role_name not in ctx.spec.agents:
            ctx.error(f"observe.{role_name}", f"observations for unknown role `{role_name}`", f"roles: {', '.join(ctx.spec.agents)}")
    for role in ctx.roles:
        feats = ctx.spec.observe.get(role.name)
        if not feats:
            ctx.error(f"observe.{role.name}", f"role `{role.name}` observes nothing", "list at least one feature, e.g. `[t]`")
            continue
        total = 0
        for i, f in enumerate(feats):
            assert isinstance(f, Feature)  # EnvSpec's `observe` validator makes a bare expression a Feature
            path = f"observe.{role.name}[{i}]"
            scope = ctx.scope(f"observation feature {i}", per_agent=True, me=role_span(role), actions=True)
            c = ctx.expr(f.expr, scope, path)
            if c is None:
                continue
            size = c.info.size
            if size > MAX_FEATURE_SIZE:
                ctx.error(path, f"observation feature has {size} values; the limit is {MAX_FEATURE_SIZE}",
                          "observe a window (e.g. view(pos[me], 2)) or a summary (sum, mean) instead")
                continue
            total += size
            lo = _feature_bound(ctx, f.low, f"{path}.low", c.info.lo, "lo")
            hi = _feature_bound(ctx, f.high, f"{path}.high", c.info.hi, "hi")
            if lo > hi:
                ctx.error(path, f"observation bounds are empty: low {lo:g} is above high {hi:g}",
                          "set low <= high (or drop the override to use the inferred bounds)")
                continue
            name = f.name or (c.source if len(c.source) <= 40 else f"feature_{i}")
            role.features.append(CFeature(name, c, size, np.full(size, lo, np.float32), np.full(size, hi, np.float32), path))
            _check_private(ctx, c, path)
            _check_unbounded_shape(ctx, c, path)
        if total > MAX_OBS_DIM:
            ctx.error(f"observe.{role.name}", f"observation has {total} values; the limit is {MAX_OBS_DIM}")


def _feature_bound(ctx: CheckContext, source: Any, path: str, inferred: float, side: str) -> float:
    """A feature's declared `low`/`high`: a number, or a constant expression (its end over the
    params' ranges, so the box holds at every param value); `inferred` when not declared."""
    if source is None:
        return inferred
    if isinstance(source, int | float) and not isinstance(source, bool):
        return float(source)  # also -.inf / .inf, which are no expression
    return ctx.bound(source, path, inferred, side)[0]


def _check_private(ctx: CheckContext, c: Checked, path: str) -> None:
    """Warn when a feature reads another agent's private variable (anything but `x[me]`)."""
    private = {v for v, var in ctx.spec.agent_state.items() if var.private}
    mine = set()
    for node in ast.walk(c.tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            first = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
            if isinstance(first, ast.Name) and first.id == "me":
                mine.add(id(node.value))
    for node in ast.walk(c.tree):
        if isinstance(node, ast.Name) and node.id in private and id(node) not in mine:
            ctx.diags.append(warning(STAGE, path, f"observation reads `{node.id}`, which is private to each agent, "
                                     "beyond the agent's own entry: an information leak",
                                     f"observe only `{node.id}[me]`, or drop `private: true` if all agents may see it"))
            return


def _check_unbounded_shape(ctx: CheckContext, c: Checked, path: str) -> None:
    used = set()
    for n in c.names:
        used |= ctx.shape_params.get(n, set())
    for node in ast.walk(c.tree):
        if isinstance(node, ast.Call):
            used |= {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and x.id in ctx.spec.params}
    for n in sorted(used):
        p = ctx.spec.params[n]
        if p.max is None and (n in ctx.structural or n in ctx.shape_names):
            ctx.error(path, f"observation size is unbounded: its shape depends on param `{n}`, which has no max",
                      f"give `params.{n}` a max so every observation has a bounded size")
