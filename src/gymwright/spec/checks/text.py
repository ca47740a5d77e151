"""Text templates (`text.observe`, `text.render`): literal parts and checked `{expr:fmt}` fields."""

from __future__ import annotations

import re
import string
from typing import Any

from gymwright.spec.checks.actions import role_span
from gymwright.spec.checks.context import CheckContext
from gymwright.spec.expr.check import Scope


def check_text(ctx: CheckContext) -> list[Any] | None:
    """`text`: each role's observation template (kept on the role) and the render template (returned)."""
    t = ctx.spec.text
    if t is None:
        return None
    for role_name, tmpl in t.observe.items():
        role = next((r for r in ctx.roles if r.name == role_name), None)
        if role is None:
            ctx.error(f"text.observe.{role_name}", f"text for unknown role `{role_name}`")
            continue
        scope = ctx.scope("a text template", per_agent=True, me=role_span(role), actions=True)
        role.text_observe = _template(ctx, tmpl, scope, f"text.observe.{role_name}")
    if t.render is None:
        return None
    return _template(ctx, t.render, ctx.scope("a text template", actions=True), "text.render")


def _template(ctx: CheckContext, tmpl: str, scope: Scope, path: str) -> list[Any]:
    parts: list[Any] = []
    try:
        parsed = list(string.Formatter().parse(tmpl))
    except ValueError as e:
        ctx.error(path, f"bad template: {e}", "placeholders are {expr} or {expr:fmt}; write {{ for a literal brace")
        return parts
    for literal, field_, fmt, conv in parsed:
        if literal:
            parts.append(literal)
        if field_ is None:
            continue
        if conv:
            ctx.error(path, f"conversions (!{conv}) are not allowed in templates")
            continue
        if fmt and not re.fullmatch(r"[<>^]?[+\- ]?\d*(\.\d+)?[dfegs%]?", fmt):
            ctx.error(path, f"format spec `{fmt}` is not allowed", "use e.g. :.2f, :d, :>5")
            continue
        c = ctx.expr(field_, scope, path)
        if c is not None:
            parts.append((c, fmt or ""))
    return parts
