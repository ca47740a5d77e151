"""Behaviour checks of the design-quality benchmark: hand-worked scenarios a designed spec must pass.

`benchmarks/behaviour/<task id>.yaml` holds, for one task of `design_tasks.yaml`, a list of
`scenarios`, each written in the spec language's probe form (`start`, `actions`, `expect`; see
docs/spec-language.md, "Probes") and worked out by hand from the task text (each scenario's comment
gives the arithmetic). A scenario has no `params`: it is written for the values the task states,
so it runs at the designed spec's defaults and fails when the design left a stated value out.

`run_scenarios(spec, scenarios)` puts the scenarios in place of the spec's own probes, checks the
spec (a scenario that names an agent, choice, variable, feature or metric the design lacks, or a
start value its declarations refuse, is *unmatched*: failed, with the checker's reason), compiles
it once and replays the rest with the verifier's probe runner (`gymwright.verify.probes`): an
expectation that is false, an illegal action or a crash is *wrong*.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SCENARIO_DIR = Path(__file__).with_name("behaviour")
PASSED, UNMATCHED, WRONG, NO_SPEC = "passed", "unmatched", "wrong", "no spec"
_PROBE_PATH = re.compile(r"^probes\[(\d+)\]")


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario against one designed spec: `kind` is passed, unmatched, wrong or no spec."""

    name: str
    kind: str
    reason: str = ""

    @property
    def passed(self) -> bool:
        return self.kind == PASSED


def scenario_file(task_id: str, folder: Path = SCENARIO_DIR) -> Path:
    return folder / f"{task_id}.yaml"


def load_scenarios(task_id: str, folder: Path = SCENARIO_DIR) -> list[dict[str, Any]]:
    """The task's scenarios ([] when it has no file)."""
    path = scenario_file(task_id, folder)
    if not path.is_file():
        return []
    data = yaml.safe_load(path.read_text()) or {}
    scenarios = data.get("scenarios")
    if not isinstance(scenarios, list) or not scenarios:
        raise ValueError(f"{path}: `scenarios` must be a non-empty list of probes")
    return scenarios


def _index(path: str) -> int | None:
    m = _PROBE_PATH.match(path)
    return int(m.group(1)) if m else None


def _checked(spec: dict[str, Any], scenarios: list[dict[str, Any]]) -> tuple[Any, list[Any]]:
    """(checked spec or None, error diagnostics) of `spec` with `scenarios` as its probes."""
    from gymwright.diagnostic import Severity
    from gymwright.errors import SpecError
    from gymwright.spec.checker import check_spec
    from gymwright.spec.loader import load_spec

    data = copy.deepcopy(spec)
    data["probes"] = scenarios
    try:
        cs, diags = check_spec(load_spec(data))
    except SpecError as e:
        return None, list(e.diagnostics)
    return cs, [d for d in diags if d.severity == Severity.error]


def _reason(diags: list[Any]) -> str:
    """The findings, each as `where: message (values)`; `where` is inside the scenario."""
    parts = []
    for d in diags:
        inside = _PROBE_PATH.sub("", d.path).lstrip(".")
        where = (inside or "scenario") if _index(d.path) is not None else (d.path or "spec")
        values = [t.strip() for t in d.trace if " = " in t][:3]
        parts.append(f"{where}: {d.message}" + (f" ({'; '.join(values)})" if values else ""))
    return "; ".join(parts)


def run_scenarios(spec: dict[str, Any] | None, scenarios: list[dict[str, Any]]) -> list[ScenarioResult]:
    """Every scenario's result against `spec` (None: no verified spec, all fail)."""
    names = [str(s.get("name", f"scenario {i}")) for i, s in enumerate(scenarios)]
    if spec is None:
        return [ScenarioResult(n, NO_SPEC, "the design produced no verified spec") for n in names]
    _, errors = _checked(spec, scenarios)
    by_scenario: dict[int, list[Any]] = {}
    for d in errors:
        i = _index(d.path)
        if i is None:  # the spec itself does not check: nothing can run
            return [ScenarioResult(n, UNMATCHED, _reason([d])) for n in names]
        by_scenario.setdefault(i, []).append(d)
    runnable = [i for i in range(len(scenarios)) if i not in by_scenario]
    results: dict[int, ScenarioResult] = {
        i: ScenarioResult(names[i], UNMATCHED, _reason(ds)) for i, ds in by_scenario.items()}
    results.update(_replay(spec, scenarios, runnable, names))
    return [results[i] for i in range(len(scenarios))]


def _replay(spec: dict[str, Any], scenarios: list[dict[str, Any]], runnable: list[int],
            names: list[str]) -> dict[int, ScenarioResult]:
    """Compile `spec` with the runnable scenarios as probes and replay them."""
    from gymwright.compile.build import compile_checked
    from gymwright.verify.probes import run_probes

    if not runnable:
        return {}
    cs, errors = _checked(spec, [scenarios[i] for i in runnable])
    if cs is None or errors:  # checked one by one above; together they must check too
        return {i: ScenarioResult(names[i], UNMATCHED, _reason(errors)) for i in runnable}
    try:
        failed = run_probes(compile_checked(cs))
    except Exception as e:  # noqa: BLE001 - a design that does not compile fails every scenario
        return {i: ScenarioResult(names[i], WRONG, f"compile: {type(e).__name__}: {e}") for i in runnable}
    out = {i: ScenarioResult(names[i], PASSED) for i in runnable}
    for d in failed:
        k = _index(d.path)
        if k is not None:
            i = runnable[k]
            out[i] = ScenarioResult(names[i], WRONG, _reason([d]))
    return out
