"""VerificationReport: the one result of `verify`, for a person, a script and a repair prompt."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from gymwright.diagnostic import Diagnostic, Severity

STAGES = ("schema", "static", "compile", "dynamic", "probes", "degeneracy")
_ORDER = {Severity.error: 0, Severity.warning: 1, Severity.info: 2}


@dataclass
class StageResult:
    name: str
    seconds: float
    errors: int
    warnings: int


@dataclass
class VerificationReport:
    """What the verifier found. `passed` is True when no stage produced an error."""

    spec: str
    params: dict[str, Any]
    stages: list[StageResult] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    stopped_at: str | None = None  # the stage whose errors stopped the run

    @property
    def passed(self) -> bool:
        return not any(d.severity is Severity.error for d in self.diagnostics)

    @property
    def timings(self) -> dict[str, float]:
        return {s.name: round(s.seconds, 4) for s in self.stages}

    def of(self, severity: Severity) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is severity]

    def to_dict(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "params": self.params,
            "passed": self.passed,
            "stages": [s.name for s in self.stages],
            "stopped_at": self.stopped_at,
            "timings": self.timings,
            "counts": {sev.value: len(self.of(sev)) for sev in Severity},
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=str)

    def to_prompt(self, max_items: int = 20) -> str:
        """Compact, ordered by severity: each finding with its spec path and its fix.

        This is what the repair loop sends back to the model that wrote the spec.
        """
        status = "PASSED" if self.passed else f"FAILED at stage `{self.stopped_at}`"
        counts = ", ".join(f"{len(self.of(s))} {s.value}s" for s in Severity)
        lines = [f"Verification of spec `{self.spec}`: {status} ({counts})."]
        ranked = sorted(self.diagnostics, key=lambda d: (_ORDER[d.severity], not d.path,
                                                          STAGES.index(d.stage) if d.stage in STAGES else 99))
        for i, d in enumerate(ranked[:max_items], 1):
            lines.append(f"{i}. [{d.severity.value}] {d.path or '<spec>'}: {d.message}")
            if d.hint:
                lines.append(f"   fix: {d.hint}")
            for t in d.trace[:4]:
                lines.append(f"   | {t}")
        if len(ranked) > max_items:
            lines.append(f"... and {len(ranked) - max_items} more findings of lower severity.")
        if not self.passed:
            lines.append("Return the whole corrected spec. Fix every error; address warnings if you can.")
        return "\n".join(lines)

    def format(self) -> str:
        """Plain text grouped by stage (the CLI renders its own rich version)."""
        lines = [f"{self.spec}: {'passed' if self.passed else 'FAILED'}"]
        for s in self.stages:
            lines.append(f"[{s.name}] {s.seconds * 1000:.0f} ms, {s.errors} errors, {s.warnings} warnings")
            lines += ["  " + ln for d in self.diagnostics if d.stage == s.name for ln in d.format().splitlines()]
        return "\n".join(lines)
