"""Scripted baselines: per role, rules `{when, action}` whose arguments are expressions."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from gymwright.diagnostic import warning
from gymwright.spec.checked import CArg, CBaseline, CBaselineRule, CChoice, CRole
from gymwright.spec.checks.actions import role_span
from gymwright.spec.checks.context import STAGE, CheckContext
from gymwright.spec.expr.check import Checked, Scope, const_eval
from gymwright.spec.expr.parse import parse_names


def check_baselines(ctx: CheckContext) -> list[CBaseline]:
    """`baselines`: each scripted policy's rules, per role (a policy with a refused rule is left out)."""
    out = []
    for name, roles in ctx.spec.baselines.items():
        base, ok = CBaseline(name, {}), True
        if not roles:
            ctx.error(f"baselines.{name}", f"baseline `{name}` scripts no role",
                      f"give rules for at least one role ({', '.join(ctx.spec.agents)}), or remove it")
            continue
        for role_name, rules in roles.items():
            path = f"baselines.{name}.{role_name}"
            role = next((r for r in ctx.roles if r.name == role_name), None)
            if role is None:
                if role_name not in ctx.spec.agents:
                    ctx.error(path, f"baseline `{name}` scripts unknown role `{role_name}`",
                              f"roles: {', '.join(ctx.spec.agents)}")
                ok = False
                continue
            hidden = {a: "is an action: a baseline decides before this step's actions are taken, so it cannot "
                         "read them; keep what it needs in state (e.g. a history window)" for a in ctx.action_names()}
            scope = ctx.scope(f"baseline `{name}`", per_agent=True, me=role_span(role), hidden=hidden)
            checked = [_baseline_rule(ctx, role, rule, f"{path}[{i}]", scope) for i, rule in enumerate(rules)]
            ok = ok and all(c is not None for c in checked)
            base.rules[role_name] = [c for c in checked if c is not None]
        if ok:
            out.append(base)
    return out


def _baseline_rule(ctx: CheckContext, role: CRole, rule: Any, path: str, scope: Scope) -> CBaselineRule | None:
    when = None if rule.when is True else ctx.expr(rule.when, scope, f"{path}.when")
    when_ok = rule.when is True or when is not None
    if when is not None and (when.info.dtype != "bool" or when.info.shape):
        ctx.error(f"{path}.when", f"`when` must be a bool per agent, got {when.info.describe()}",
                  "compare, e.g. `phase == 0` or `past[1 - me, -1] == D`")
        when_ok = False
    action = _baseline_action(ctx, role, rule.action, f"{path}.action", scope)
    if not when_ok or action is None:
        return None
    return CBaselineRule(None if when is None or when.source == "True" else when, action[0], action[1], path, rule.doc)


def _baseline_action(ctx: CheckContext, role: CRole, text: str, path: str,
                     scope: Scope) -> tuple[CChoice, list[tuple[CArg, Checked]]] | None:
    parsed = _parse_script_action(text)
    if parsed is None:
        ctx.error(path, f"cannot read action {text!r}",
                  "write `choice` or `choice(arg=value)`, e.g. `propose(share=0.5)`", value=text)
        return None
    cname, kwargs = parsed
    choice = next((c for c in role.choices if c.name == cname), None)
    if choice is None:
        if (role.name, cname) not in ctx.broken_choices:  # else its own error says why
            ctx.error(path, f"role `{role.name}` has no choice `{cname}`",
                      f"choices of {role.name}: {', '.join(c.name for c in role.choices)}", value=text)
        return None
    want = [a.name for a in choice.args]
    if set(kwargs) != set(want):
        example = f"{cname}({', '.join(f'{a}=...' for a in want)})" if want else cname
        ctx.error(path, f"`{cname}` takes arguments {want}, got {list(kwargs)}",
                  f"write `{example}`", value=text)
        return None
    args = []
    for a in choice.args:
        c = ctx.expr(kwargs[a.name], scope, path)
        if c is None:
            return None
        if c.info.shape or c.info.dtype not in ("int", "float", "bool"):
            ctx.error(path, f"argument `{a.name}` must be one number per agent, got {c.info.describe()}",
                      "index with `me` or reduce, e.g. `value[me]`", value=text)
            return None
        value = const_eval(c.tree.body) if c.info.const else None
        if isinstance(value, int | float | np.number) and not np.isclose(a.values, value).any():
            near = a.values[int(np.abs(a.values.astype(float) - float(value)).argmin())].item()
            ctx.diags.append(warning(STAGE, path, f"{value} is not a value of argument `{a.name}`: "
                                     f"the baseline plays the nearest, {near:g}",
                                     f"values: {', '.join(f'{x:g}' for x in a.values.tolist())}"))
        args.append((a, c))
    return choice, args


def _parse_script_action(text: str) -> tuple[str, dict[str, str]] | None:
    """`choice` or `choice(arg=expr, ...)` -> (choice, {arg: expression source})."""
    text = text.strip()
    try:
        node = parse_names(text).body
    except SyntaxError:
        return None
    if isinstance(node, ast.Name):
        return node.id, {}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args \
            and all(k.arg is not None for k in node.keywords):
        return node.func.id, {str(k.arg): ast.get_source_segment(text, k.value) or "" for k in node.keywords}
    return None
