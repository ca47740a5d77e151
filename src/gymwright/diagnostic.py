"""Diagnostic: one finding about a spec, written for a person and for the repair prompt."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    error = "error"
    warning = "warning"
    info = "info"


@dataclass
class Diagnostic:
    """A finding: where it is (`path`), what is wrong (`message`) and how to fix it (`hint`)."""

    severity: Severity
    stage: str
    path: str
    message: str
    hint: str = ""
    value: Any = None
    trace: list[str] = field(default_factory=list)

    def format(self) -> str:
        """One readable block: `error [static] rewards.x[0].expr: message` + hint."""
        head = f"{self.severity.value} [{self.stage}] {self.path or '<spec>'}: {self.message}"
        lines = [head]
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        lines.extend(f"  {t}" for t in self.trace)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["severity"] = self.severity.value
        if d["value"] is not None and not isinstance(d["value"], str | int | float | bool | list):
            d["value"] = repr(d["value"])
        return d


def shown(value: Any, width: int = 60) -> str:
    """A value as a message quotes it: text as it is, anything else as its repr, cut to about
    `width` characters with its full length said (a 5,000-digit number is not quoted whole)."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= width else f"{text[:max(width - 20, 10)]}... ({len(text):,} characters)"


def error(stage: str, path: str, message: str, hint: str = "", **kw: Any) -> Diagnostic:
    return Diagnostic(Severity.error, stage, path, message, hint, **kw)


def warning(stage: str, path: str, message: str, hint: str = "", **kw: Any) -> Diagnostic:
    return Diagnostic(Severity.warning, stage, path, message, hint, **kw)


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    return any(d.severity is Severity.error for d in diagnostics)


def info(stage: str, path: str, message: str, hint: str = "", **kw: Any) -> Diagnostic:
    return Diagnostic(Severity.info, stage, path, message, hint, **kw)
