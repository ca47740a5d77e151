"""`verify`: every stage in order, stopping at the first stage with errors, one report."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gymwright.compile.build import CompiledEnv, compile_checked
from gymwright.diagnostic import Diagnostic, Severity, error
from gymwright.errors import GymwrightError, SpecError
from gymwright.spec.checked import CheckedSpec
from gymwright.spec.checker import check_spec
from gymwright.spec.loader import load_spec
from gymwright.spec.model import EnvSpec
from gymwright.verify.degeneracy import degeneracy
from gymwright.verify.dynamic import Rollouts, api_tests, baseline_play, determinism, random_play
from gymwright.verify.probes import run_probes
from gymwright.verify.report import StageResult, VerificationReport
from gymwright.verify.static_checks import static_findings

DEFAULT_EPISODES = 50
BASELINE_SEEDS = (0, 1, 2)  # the episodes each scripted baseline plays in the dynamic stage


class _Run:
    """One verification: the stages share what earlier stages produced."""

    def __init__(self, source: Any, params: dict[str, Any], episodes: int, seed: int, max_steps: int) -> None:
        self.source = source
        self.params = params
        self.episodes = episodes
        self.seed = seed
        self.max_steps = max_steps
        self.spec: EnvSpec | None = None
        self.checked: CheckedSpec | None = None
        self.compiled: CompiledEnv | None = None
        self.instrumented: CompiledEnv | None = None
        self.rollouts = Rollouts()

    def schema(self) -> list[Diagnostic]:
        try:
            self.spec = self.source if isinstance(self.source, EnvSpec) else load_spec(self.source)
        except SpecError as e:
            return list(e.diagnostics)
        return []

    def static(self) -> list[Diagnostic]:
        assert self.spec is not None
        self.checked, diags = check_spec(self.spec, self.params)
        return diags + (static_findings(self.checked) if self.checked is not None else [])

    def compile(self) -> list[Diagnostic]:
        assert self.checked is not None
        try:
            self.compiled = compile_checked(self.checked, self.params)
            self.instrumented = compile_checked(self.checked, self.params, instrument=True)
            self.compiled.parallel_env().reset(seed=self.seed)
            self.compiled.aec_env().reset(seed=self.seed)
        except GymwrightError as e:
            return [error("compile", e.path, e.message, e.hint)]
        except Exception as e:  # noqa: BLE001 - generation or construction failed: report, don't crash
            return [error("compile", "", f"the generated env failed to build: {type(e).__name__}: {e}",
                          "if the spec passed its static checks this is a gymwright bug; please report it")]
        return []

    def dynamic(self) -> list[Diagnostic]:
        assert self.compiled is not None and self.instrumented is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NaN and inf are reported as findings
            diags = api_tests(self.compiled)
            found, self.rollouts = random_play(self.instrumented, self.episodes, self.seed, self.max_steps)
            if not any(d.severity is Severity.error for d in found):  # else the env's own errors come first
                found += baseline_play(self.instrumented, BASELINE_SEEDS, self.max_steps)
            return diags + found + determinism(self.compiled)

    def probes(self) -> list[Diagnostic]:
        assert self.compiled is not None
        return run_probes(self.compiled)

    def degeneracy(self) -> list[Diagnostic]:
        assert self.compiled is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return degeneracy(self.compiled, self.rollouts)


def verify(source: EnvSpec | str | Path | dict[str, Any], params: dict[str, Any] | None = None,
           episodes: int = DEFAULT_EPISODES, seed: int = 0, max_steps: int = 1000) -> VerificationReport:
    """Verify a spec: schema, static, compile, dynamic, probes, degeneracy."""
    run = _Run(source, dict(params or {}), episodes, seed, max_steps)
    name = source.name if isinstance(source, EnvSpec) else str(source) if not isinstance(source, dict) else str(source.get("name", "<dict>"))
    report = VerificationReport(name, dict(params or {}))
    stages: list[tuple[str, Callable[[], list[Diagnostic]]]] = [
        ("schema", run.schema), ("static", run.static), ("compile", run.compile),
        ("dynamic", run.dynamic), ("probes", run.probes), ("degeneracy", run.degeneracy),
    ]
    for stage, fn in stages:
        start = time.perf_counter()
        found = fn()
        report.diagnostics += found
        errors = sum(d.severity is Severity.error for d in found)
        warnings = sum(d.severity is Severity.warning for d in found)
        report.stages.append(StageResult(stage, time.perf_counter() - start, errors, warnings))
        if run.spec is not None:
            report.spec = run.spec.name
        if errors:
            report.stopped_at = stage
            break
    return report
