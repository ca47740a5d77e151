"""Text templates (`text.observe`, `text.render`): literal parts and checked `{expr:fmt}` fields."""

from __future__ import annotations

import re
import string
from typing import Any

from gymwright.spec.checks.base import CheckerBase
from gymwright.spec.expr.check import Scope


class TextChecks(CheckerBase):
    """`text`."""

    def check_text(self) -> list[Any] | None:
        t = self.spec.text
        if t is None:
            return None
        for role_name, tmpl in t.observe.items():
            role = next((r for r in self.roles if r.name == role_name), None)
            if role is None:
                self.error(f"text.observe.{role_name}", f"text for unknown role `{role_name}`")
                continue
            scope = self.scope("a text template", per_agent=True, me=(role.start, role.start + role.count - 1), actions=True)
            role.text_observe = self._template(tmpl, scope, f"text.observe.{role_name}")
        if t.render is None:
            return None
        return self._template(t.render, self.scope("a text template", actions=True), "text.render")

    def _template(self, tmpl: str, scope: Scope, path: str) -> list[Any]:
        parts: list[Any] = []
        try:
            parsed = list(string.Formatter().parse(tmpl))
        except ValueError as e:
            self.error(path, f"bad template: {e}", "placeholders are {expr} or {expr:fmt}; write {{ for a literal brace")
            return parts
        for literal, field_, fmt, conv in parsed:
            if literal:
                parts.append(literal)
            if field_ is None:
                continue
            if conv:
                self.error(path, f"conversions (!{conv}) are not allowed in templates")
                continue
            if fmt and not re.fullmatch(r"[<>^]?[+\- ]?\d*(\.\d+)?[dfegs%]?", fmt):
                self.error(path, f"format spec `{fmt}` is not allowed", "use e.g. :.2f, :d, :>5")
                continue
            c = self.expr(field_, scope, path)
            if c is not None:
                parts.append((c, fmt or ""))
        return parts
