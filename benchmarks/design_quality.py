"""Design-quality benchmark: how well each designer turns held-out task texts into verified specs.

Every designer (the offline designer, local models in template and spec mode, any hosted model
named in `GYMWRIGHT_BENCH_MODELS`) designs every task of `benchmarks/design_tasks.yaml`, each
design in a fresh temporary store (so no reply-cache hit helps a repeat or another designer),
with `DesignOptions(max_repairs=2)` and a per-design timeout. Each design is scored against the
task's expected template and stated params, and a markdown table (one row per designer) and a
per-task list of failures are printed. Tasks with hand-worked scenarios in `benchmarks/behaviour/`
(`benchmarks/scenarios.py`) are also replayed against every verified design: the second table
gives per designer verified, fits the task and behaves right (scenarios passed / total). A
code-mode design's module is played in a sandbox worker by action indices
(`benchmarks/code_scenarios.py`); the scenarios it cannot check are counted apart.

    python benchmarks/design_quality.py                      # every designer, every task
    python benchmarks/design_quality.py --quick              # offline + 5 tasks of the 0.5B model
    python benchmarks/design_quality.py --designers offline,local:qwen2.5-coder-0.5b@template --tasks 10
    python benchmarks/design_quality.py --designers 'local:qwen2.5-coder-1.5b@template[20]' --log runs.jsonl
    python benchmarks/design_quality.py --report runs.jsonl  # the table again from saved outcomes
    python benchmarks/design_quality.py --designers '...[30]' --log runs.jsonl --resume  # go on
    python benchmarks/design_quality.py --prompt-sizes       # no design: the spec-stage prompt sizes
    python benchmarks/design_quality.py --designers 'local:qwen2.5-coder-0.5b@template[4]' --with-scenarios
    python benchmarks/design_quality.py --designers 'openai:MODEL@spec' --own   # issue 42's own tasks
    python benchmarks/design_quality.py --references          # no design: the hand-written references
    python benchmarks/design_quality.py --references --own    # ... of the own tasks only

`--own` runs the tasks marked `own: true` (issue 42's eight off-library tasks) instead of the
default set, so the figures recorded over the default set stay comparable. `--references` designs
nothing: it verifies each hand-written reference design `benchmarks/behaviour/reference/<task>.yaml`
(`gymwright.verify.verify`: schema, static checks, compile, random play, probes) and replays the
task's scenarios on it, printing verified and scenarios passed per task (the same check as
`benchmarks/test_design_quality.py`, as a table, runnable against any gymwright on the path).

A designer is `MODEL@MODE[N]`: MODEL is `offline` or a `--model` name, MODE `template`, `spec` or
`code` (spec and code mode run only the tasks marked `spec_subset`), and `[N]` keeps that
designer's first N tasks. The tasks are interleaved (one paraphrase of every library spec, then a few off-library
tasks, three times), so the first N are a fair sample.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import yaml  # noqa: E402
from code_scenarios import NOT_CHECKABLE, load_code_actions, run_code_scenarios  # noqa: E402
from scenarios import NO_SPEC, PASSED, UNMATCHED, load_scenarios, run_scenarios, scenario_file  # noqa: E402

TASKS_FILE = Path(__file__).with_name("design_tasks.yaml")
BENCH_MODELS_ENV = "GYMWRIGHT_BENCH_MODELS"
MAX_REPAIRS = 2
DESIGN_TIMEOUT = 600.0  # seconds per design; a hung design is stopped and scored as a timeout
FLOAT_TOL = 1e-6
QUICK_LOCAL_TASKS = 5
LOCAL_MODELS = ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
NEW_DESIGN_MODES = ("spec", "code")  # write a new design (no template): the spec_subset tasks only


# ----------------------------------------------------------------------------- tasks
@dataclass(frozen=True)
class Task:
    """One held-out task text and what a good design of it is."""

    id: str
    task: str
    template: str | None  # the library spec that fits, None when the library has none
    params: dict[str, Any]  # the params the text states, with their values
    spec_subset: bool = False  # one of the tasks the (slow) spec-mode run uses
    own: bool = False  # one of issue 42's own tasks: run with --own, never in the default set

    @property
    def in_library(self) -> bool:
        return self.template is not None


def load_tasks(path: Path = TASKS_FILE, own: bool = False) -> list[Task]:
    """The held-out tasks (`own=False`, the default set every recorded figure counts) or only
    issue 42's own tasks (`own=True`, marked `own: true`)."""
    data = yaml.safe_load(path.read_text())
    tasks = [Task(t["id"], " ".join(t["task"].split()), t.get("template"), dict(t.get("params") or {}),
                  bool(t.get("spec_subset", False)), bool(t.get("own", False))) for t in data["tasks"]]
    return [t for t in tasks if t.own == own]


# ----------------------------------------------------------------------------- designers
@dataclass(frozen=True)
class Designer:
    """`model` None is the offline designer; `limit` keeps the first N of its tasks."""

    model: str | None
    mode: str  # offline, template, spec, code
    limit: int | None = None

    @property
    def label(self) -> str:
        if self.model is None:
            return "offline"
        return f"{self.model} --mode {self.mode}"

    def tasks(self, tasks: list[Task], cap: int | None) -> list[Task]:
        chosen = [t for t in tasks if t.spec_subset] if self.mode in NEW_DESIGN_MODES else list(tasks)
        limit = self.limit if self.limit is not None else cap
        return chosen[:limit] if limit is not None else chosen


def parse_designer(text: str) -> Designer:
    """`offline`, `MODEL@MODE`, `MODEL@MODE[N]` (MODE: template, spec or code; default template)."""
    text = text.strip()
    limit = None
    if text.endswith("]") and "[" in text:
        text, _, n = text[:-1].rpartition("[")
        limit = int(n)
    model, _, mode = text.partition("@")
    if model == "offline":
        return Designer(None, "offline", limit)
    mode = mode or "template"
    if mode not in ("template", *NEW_DESIGN_MODES):
        raise SystemExit(f"designer {text!r}: mode must be template, spec or code, not {mode!r}")
    return Designer(model, mode, limit)


def local_installed(name: str) -> str | None:
    """None when `local:NAME` can run here, else why not."""
    import importlib.util

    from gymwright.llm.local_models import KNOWN, cache_dir, in_hf_cache, part_files

    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed (pip install 'gymwright[local]')"
    model = KNOWN[name]
    if (cache_dir() / "models" / model.filename).is_file() or in_hf_cache(model) is not None:
        return None
    return None if part_files(model) is not None else f"its parts are not installed ({model.pip})"


def default_designers(notes: list[str]) -> list[Designer]:
    designers = [Designer(None, "offline"),
                 Designer("local:qwen2.5-coder-0.5b", "template"),
                 Designer("local:qwen2.5-coder-0.5b", "spec")]
    why = local_installed("qwen2.5-coder-1.5b")
    if why is None:
        designers.append(Designer("local:qwen2.5-coder-1.5b", "template"))
    else:
        notes.append(f"local:qwen2.5-coder-1.5b skipped: {why}")
    for name in filter(None, (m.strip() for m in os.environ.get(BENCH_MODELS_ENV, "").split(","))):
        designers += [Designer(name, "template"), Designer(name, "spec"), Designer(name, "code")]
    return designers


# ----------------------------------------------------------------------------- one design
class Cancelled(Exception):
    pass


class Watched:
    """A provider wrapper whose calls fail for good once the design has timed out (so the
    client's retries cannot restart a local server the watchdog stopped). Attributes such as
    `context_tokens` (which makes prompts compact for a local model) pass through."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.cancelled = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def complete(self, request: Any) -> Any:
        from gymwright.llm.base import LLMError

        if self.cancelled:
            raise LLMError("the benchmark's per-design timeout stopped this design")
        return self._inner.complete(request)

    def cancel(self) -> None:
        self.cancelled = True
        if hasattr(self._inner, "close"):
            self._inner.close()  # a local server stops; its pending request fails


@dataclass
class Outcome:
    """One design of one task by one designer, and its score."""

    designer: str
    task_id: str
    expected_template: str | None
    expected_params: dict[str, Any]
    passed: bool = False
    status: str = ""
    template: str | None = None  # the library spec the design used (None: none / a new spec)
    spec_name: str | None = None
    params: dict[str, Any] = field(default_factory=dict)  # the designed spec's param defaults
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    attempts: int = 0
    parse_errors: int = 0
    explanation: str = ""
    verified: bool = False  # the spec passed verification (fits the task or not)
    fits_task: str = "unknown"  # the task-fit review: yes, no, unknown
    timed_out: bool = False
    error: str = ""
    replies: list[str] = field(default_factory=list)  # "stage: reply" per model call, shortened
    scenarios: list[dict[str, str]] = field(default_factory=list)  # {name, kind, reason} per scenario


def template_used(result: Any, mode: str) -> str | None:
    """The library template a design used: the offline choice, or template mode's reply."""
    if mode == "offline":
        return result.template
    if mode == "template":
        chosen = [("none" if a.parsed.get("same_kind") is False else a.parsed.get("template"))
                  for a in result.attempts if a.stage == "template" and isinstance(a.parsed, dict)]
        chosen = [c for c in chosen if isinstance(c, str)]
        return chosen[-1] if chosen else None  # "none": the model said no template is the same kind
    return None  # spec mode writes a new spec


def spec_params(spec: dict[str, Any] | None) -> dict[str, Any]:
    return {k: (p or {}).get("default") for k, p in ((spec or {}).get("params") or {}).items()}


def run_design(designer: Designer, task: Task, provider: Any | None, timeout: float) -> Outcome:
    """Design `task` in a fresh temporary store, in a worker thread watched for `timeout` s."""
    from gymwright.design import DesignOptions, design
    from gymwright.store import Store

    out = Outcome(designer.label, task.id, task.template, task.params)
    watched = Watched(provider) if provider is not None else None
    box: dict[str, Any] = {}

    def work() -> None:
        with tempfile.TemporaryDirectory(prefix="gw-bench-") as folder:
            store = Store.open(Path(folder) / "store")
            try:
                opts = DesignOptions(model=designer.model or "offline", mode=designer.mode,
                                     max_repairs=MAX_REPAIRS)
                box["result"] = design(task.task, opts, store=store, provider=watched)
            except BaseException as e:  # noqa: BLE001 - scored, never fatal to the run
                box["error"] = f"{type(e).__name__}: {e}"
            finally:
                store.close()

    start = time.perf_counter()
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        out.timed_out = True
        if watched is not None:
            watched.cancel()
        worker.join(60)
    out.wall_s = time.perf_counter() - start
    result = box.get("result")
    if result is None:
        out.status = "timeout" if out.timed_out else "error"
        out.error = box.get("error", "the design did not finish")
        out.scenarios = check_behaviour(task.id, None, designer.mode)
        return out
    out.passed = bool(result.passed) and not out.timed_out
    out.verified = bool(getattr(result, "verified", result.passed)) and not out.timed_out
    out.fits_task = str(getattr(result, "fits_task", "unknown"))
    out.status = "timeout" if out.timed_out else result.status
    out.template = template_used(result, designer.mode)
    out.spec_name = (result.spec or {}).get("name")
    out.params = spec_params(result.spec) if out.template else {}
    out.calls = result.provider_calls
    out.prompt_tokens = result.usage.prompt_tokens
    out.completion_tokens = result.usage.completion_tokens
    out.attempts = len(result.attempts)
    out.parse_errors = sum(1 for a in result.attempts if a.parse_error and a.stage != "offline")
    out.explanation = result.explanation or ""
    out.replies = [f"{a.stage}: {short(a.reply or '', 400)}"
                   + (f" [{short(a.parse_error, 200)}]" if a.parse_error else "")
                   for a in result.attempts if a.reply is not None]
    out.error = box.get("error", "")
    out.scenarios = check_behaviour(task.id, result.spec if out.verified else None, designer.mode)
    return out


def check_behaviour(task_id: str, spec: dict[str, Any] | None, mode: str = "spec") -> list[dict[str, str]]:
    """The task's hand-worked scenarios replayed against a verified spec, or in code mode against
    the verified module in a sandbox (None: all fail)."""
    scenarios = load_scenarios(task_id)
    if mode == "code":
        results = run_code_scenarios(spec["code"] if spec else None, scenarios, load_code_actions(task_id))
    else:
        results = run_scenarios(spec, scenarios)
    return [{"name": r.name, "kind": r.kind, "reason": short(r.reason, 300)} for r in results]


# ----------------------------------------------------------------------------- scoring
def same_value(expected: Any, got: Any) -> bool:
    """Equal; floats within FLOAT_TOL; a bool only equals a bool."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return isinstance(expected, bool) and isinstance(got, bool) and expected == got
    if isinstance(expected, int | float) and isinstance(got, int | float):
        return math.isclose(float(expected), float(got), rel_tol=0.0, abs_tol=FLOAT_TOL)
    return bool(expected == got)


def params_right(o: Outcome) -> tuple[int, int]:
    """(stated params the design got right, stated params); none right with the wrong template."""
    stated = o.expected_params
    if o.template != o.expected_template:
        return 0, len(stated)
    return sum(same_value(v, o.params.get(k)) for k, v in stated.items()), len(stated)


def wrong_params(o: Outcome) -> list[str]:
    return [f"{k}={o.params.get(k)!r} (want {v!r})" for k, v in o.expected_params.items()
            if not same_value(v, o.params.get(k))]


def refused(o: Outcome) -> bool:
    """The design said no library template fits and produced no spec: the offline designer's
    refusal (no model call), or a model's `none` in template mode (the right answer to an
    off-library task; a model that gives no usable spec otherwise has not refused, it has failed)."""
    if o.passed or o.status != "failed" or o.spec_name:
        return False
    return (o.template is None and o.calls == 0) or o.template == "none"


@dataclass
class Row:
    designer: str
    mode: str
    tasks: int
    library_tasks: int
    verified: int  # library tasks with a verified spec
    right_template: int | None  # None: not applicable (spec mode)
    params_all_right: int | None
    params_share: float | None  # mean share of stated params right, over library tasks
    off_library: int
    off_refused: int
    off_verified: int
    verified_total: int  # all tasks
    fits: str  # the task-fit review over designs that verified: "yes/no/unknown"
    calls: int
    tokens: int
    wall_median: float
    wall_total: float
    timeouts: int
    errors: int
    note: str = ""
    behaviour: Behaviour | None = None


@dataclass
class Behaviour:
    """The hand-worked scenarios over one designer's designs (tasks with a scenario file only)."""

    designs: int  # designs of tasks that have scenarios
    designs_right: int  # of them, designs that passed every scenario
    lib_passed: int
    lib_total: int
    off_passed: int
    off_total: int
    unmatched: int  # failed: the design lacks a name, or refuses a start value
    wrong: int  # failed: ran, and an expectation was false (or an action illegal)
    no_spec: int  # failed: no verified spec to run
    not_checkable: int = 0  # code mode: needs what a module does not expose (out of the totals above)


def behaviour(outcomes: list[Outcome]) -> Behaviour:
    """Scenarios passed over those that could be checked; a design passes every scenario only if
    none was left unchecked."""
    checked = [o for o in outcomes if o.scenarios]
    kinds = [s["kind"] for o in checked for s in o.scenarios]

    def passed(lib: bool) -> tuple[int, int]:
        runs = [s for o in checked if (o.expected_template is not None) == lib for s in o.scenarios
                if s["kind"] != NOT_CHECKABLE]
        return sum(s["kind"] == PASSED for s in runs), len(runs)

    (lp, lt), (op, ot) = passed(True), passed(False)
    return Behaviour(len(checked), sum(all(s["kind"] == PASSED for s in o.scenarios) for o in checked),
                     lp, lt, op, ot, kinds.count(UNMATCHED), kinds.count("wrong"), kinds.count(NO_SPEC),
                     kinds.count(NOT_CHECKABLE))


def score(designer: str, mode: str, outcomes: list[Outcome], note: str = "") -> Row:
    lib = [o for o in outcomes if o.expected_template is not None]
    off = [o for o in outcomes if o.expected_template is None]
    applicable = mode not in NEW_DESIGN_MODES
    rights = [params_right(o) for o in lib]
    walls = [o.wall_s for o in outcomes]
    return Row(
        designer=designer, mode=mode, tasks=len(outcomes), library_tasks=len(lib),
        verified=sum(o.passed for o in lib),
        right_template=sum(o.template == o.expected_template for o in lib) if applicable else None,
        params_all_right=sum(r == n for r, n in rights) if applicable else None,
        params_share=(statistics.fmean(r / n if n else 1.0 for r, n in rights)
                      if applicable and rights else None),
        off_library=len(off), off_refused=sum(refused(o) for o in off),
        off_verified=sum(o.passed for o in off), verified_total=sum(o.passed for o in outcomes),
        fits="/".join(str(sum(o.fits_task == f for o in outcomes if o.verified or o.passed))
                      for f in ("yes", "no", "unknown")),
        calls=sum(o.calls for o in outcomes),
        tokens=sum(o.prompt_tokens + o.completion_tokens for o in outcomes),
        wall_median=statistics.median(walls) if walls else 0.0, wall_total=sum(walls),
        timeouts=sum(o.timed_out for o in outcomes),
        errors=sum(o.status == "error" for o in outcomes), note=note, behaviour=behaviour(outcomes))


# ----------------------------------------------------------------------------- output
def frac(k: int | None, n: int) -> str:
    if k is None:
        return "n/a"
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "-"


def per_verified(total: int, verified: int, is_model: bool, digits: int = 1) -> str:
    if not is_model:
        return "0"
    return f"{total / verified:,.{digits}f}" if verified else f"{total:,} (none verified)"


def markdown_table(rows: Iterable[Row]) -> str:
    head = ("| designer | tasks | verified (library tasks) | right template | params all right "
            "| stated params right | off-library: refused | off-library: produced a verified spec "
            "| fits the task (yes/no/unknown, of verified) "
            "| model calls / verified spec | tokens / verified spec | wall s / task (median) "
            "| wall total | timeouts, errors |")
    lines = [head, "|" + " --- |" * 14]
    for r in rows:
        is_model = r.mode != "offline"
        share = "n/a" if r.params_share is None else f"{100 * r.params_share:.0f}%"
        lines.append(
            f"| {r.designer}{' (' + r.note + ')' if r.note else ''} | {r.tasks} "
            f"| {frac(r.verified, r.library_tasks)} | {frac(r.right_template, r.library_tasks)} "
            f"| {frac(r.params_all_right, r.library_tasks)} | {share} "
            f"| {frac(r.off_refused, r.off_library) if r.mode not in NEW_DESIGN_MODES else 'n/a'} "
            f"| {frac(r.off_verified, r.off_library)} | {r.fits} "
            f"| {per_verified(r.calls, r.verified_total, is_model)} "
            f"| {per_verified(r.tokens, r.verified_total, is_model, 0)} "
            f"| {r.wall_median:.1f} | {fmt_duration(r.wall_total)} | {r.timeouts}, {r.errors} |")
    return "\n".join(lines)


def behaviour_table(rows: Iterable[Row]) -> str:
    """Per designer: verified, fits the task, behaves right (the hand-worked scenarios)."""
    lines = ["| designer | verified (all tasks) | fits the task (yes/no/unknown, of verified) "
             "| behaves right: library tasks (scenarios passed) | behaves right: off-library tasks "
             "| designs passing every scenario | failed scenarios: unmatched names / wrong / no verified spec "
             "| not checkable on a code module (out of the counts) |",
             "|" + " --- |" * 8]
    for r in rows:
        b = r.behaviour or behaviour([])
        lines.append(
            f"| {r.designer}{' (' + r.note + ')' if r.note else ''} | {frac(r.verified_total, r.tasks)} "
            f"| {r.fits} | {frac(b.lib_passed, b.lib_total)} | {frac(b.off_passed, b.off_total)} "
            f"| {frac(b.designs_right, b.designs)} | {b.unmatched} / {b.wrong} / {b.no_spec} "
            f"| {b.not_checkable if r.mode == 'code' else 'n/a'} |")
    return "\n".join(lines)


def fmt_duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def failure_reason(o: Outcome) -> str | None:
    """Why a design counts as a failure, or None when it is right."""
    if o.expected_template is None:
        if refused(o):
            return None
        if o.passed and o.template is None and o.scenarios:  # a new spec: judged by its behaviour
            return scenario_failures(o)
        if o.passed:
            kind = f"library template {o.template}" if o.template else f"a new spec `{o.spec_name}`"
            return f"verified {kind} for an off-library task"
        return short(o.error or o.explanation) or o.status
    if o.template is not None and o.template != o.expected_template:
        return f"wrong template ({'verified' if o.passed else o.status})"
    if not o.passed:
        return f"{o.status}: {short(o.error or o.explanation)}"
    if o.template is not None and wrong_params(o):
        return "params: " + ", ".join(wrong_params(o))
    return scenario_failures(o)


def scenario_failures(o: Outcome) -> str | None:
    """The scenarios a verified design failed, or None when it failed none (a code-mode design's
    scenarios that could not be checked are named, but are no failure)."""
    failed = [s for s in o.scenarios if s["kind"] not in (PASSED, NOT_CHECKABLE)]
    unchecked = sum(s["kind"] == NOT_CHECKABLE for s in o.scenarios)
    if not failed:
        return None
    tail = f" ({unchecked} not checkable on the module)" if unchecked else ""
    return (f"{len(failed)} of {len(o.scenarios)} scenarios failed{tail}: "
            + "; ".join(f"{s['name']} ({s['kind']}: {short(s['reason'], 120)})" for s in failed))


def short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def failures_table(outcomes: Iterable[Outcome]) -> str:
    lines = ["| designer | task | expected | got | why |", "| --- | --- | --- | --- | --- |"]
    for o in outcomes:
        why = failure_reason(o)
        if why is None:
            continue
        got = o.template or (f"new spec `{o.spec_name}`" if o.spec_name else "none")
        expected = o.expected_template or "none"
        if o.expected_params:
            expected += " " + ", ".join(f"{k}={v}" for k, v in o.expected_params.items())
        lines.append(f"| {o.designer} | {o.task_id} | {expected} | {got} | {why.replace('|', '/')} |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- references
REFERENCE_DIR = Path(__file__).with_name("behaviour") / "reference"


@dataclass
class ReferenceCheck:
    """One hand-written reference design: verified, and its task's scenarios replayed on it."""

    task_id: str
    verified: bool
    why_not: str  # the first verification errors ('' when verified)
    scenarios: list[dict[str, str]]

    @property
    def passed(self) -> int:
        return sum(s["kind"] == PASSED for s in self.scenarios)


def reference_ids(tasks: list[Task], folder: Path = REFERENCE_DIR) -> list[str]:
    """The tasks of `tasks` that have a reference design (a YAML spec) in `folder`."""
    return [t.id for t in tasks if (folder / f"{t.id}.yaml").is_file()]


def check_reference(task_id: str, folder: Path = REFERENCE_DIR) -> ReferenceCheck:
    """Verify the reference design of `task_id` and replay the task's scenarios on it. A spec
    that does not load is not verified and fails every scenario with the loader's reason."""
    from gymwright.diagnostic import Severity
    from gymwright.spec.loader import read_data
    from gymwright.verify.verifier import verify

    path = folder / f"{task_id}.yaml"
    try:
        data = read_data(path)[0]
    except Exception as e:  # noqa: BLE001 - a reference the package cannot read is a finding
        why = short(f"{type(e).__name__}: {e}", 300)
        return ReferenceCheck(task_id, False, why, [{"name": str(s.get("name", "")), "kind": UNMATCHED,
                                                     "reason": why} for s in load_scenarios(task_id)])
    try:
        report = verify(data)
        errors = [d for d in report.diagnostics if d.severity is Severity.error]
        why = "; ".join(f"{d.path or d.stage}: {d.message}" for d in errors[:3])
        verified = report.passed
    except Exception as e:  # noqa: BLE001 - a verifier crash is a finding too
        verified, why = False, f"verify crashed: {type(e).__name__}: {e}"
    results = run_scenarios(data, load_scenarios(task_id))
    return ReferenceCheck(task_id, verified, short(why, 300),
                          [{"name": r.name, "kind": r.kind, "reason": short(r.reason, 300)} for r in results])


def reference_table(checks: list[ReferenceCheck]) -> str:
    """Per reference design: verified, scenarios passed, and why the first failures failed."""
    lines = ["| task | verified | scenarios passed | failed scenarios (kind: reason) |",
             "| --- | --- | --- | --- |"]
    for c in checks:
        failed = [s for s in c.scenarios if s["kind"] != PASSED]
        why = "; ".join(f"{s['name']} ({s['kind']}: {short(s['reason'], 140)})" for s in failed[:2])
        if len(failed) > 2:
            why += f"; and {len(failed) - 2} more"
        verified = "yes" if c.verified else f"no ({short(c.why_not, 140)})"
        lines.append(f"| {c.task_id} | {verified.replace('|', '/')} | {frac(c.passed, len(c.scenarios))} "
                     f"| {why.replace('|', '/') or '-'} |")
    total = sum(len(c.scenarios) for c in checks)
    lines.append(f"| all ({len(checks)}) | {sum(c.verified for c in checks)}/{len(checks)} "
                 f"| {frac(sum(c.passed for c in checks), total)} | |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- prompt sizes
REPAIR_REPORT_LINES = 6  # a typical repair: a six-line verifier finding


def prompt_sizes(tasks: list[Task]) -> list[dict[str, Any]]:
    """The spec-stage and repair prompts each task would get, in bytes (UTF-8), without a model:
    the plans are a fixed small plan whose `mechanics` are those of the task's library template
    (none for off-library tasks); the repair shows back the first example spec as the previous
    reply, with a six-line finding. Each size counts every message and the JSON schema sent."""
    from gymwright.design.prompts import compact_json, load_prompts, mechanics_of
    from gymwright.design.staged import SPEC_SCHEMA, fitted_repair_context, render_spec_prompt
    from gymwright.spec.loader import read_data

    prompts = load_prompts()
    system = prompts.render("system")
    rows = []
    for t in tasks:
        mechanics = sorted(mechanics_of(t.template)) if t.template else []
        plans = {"roles": '{"roles":[{"name":"agent","count":2,"goal":"the task"}]}',
                 "dynamics": compact_json({"mechanics": mechanics, "state": [{"name": "x"}]}),
                 "rewards": '{"terms":[{"role":"agent","name":"task","expr":"done"}]}'}
        user, examples = render_spec_prompt(prompts, t.task, plans)
        previous = compact_json(read_data(examples[0])[0]) if examples else "{}"
        finding = "\n".join(f"{i}. [error] step[0].set.x: undefined name `y` (fix: declare it)"
                            for i in range(1, REPAIR_REPORT_LINES + 1))
        context = fitted_repair_context(prompts, t.task, plans, previous, len(system + user))
        repair = [system, context, previous,
                  prompts.render("repair", report=finding, reply="the whole corrected spec")]
        schema = len(compact_json(SPEC_SCHEMA))
        rows.append({"task": t.id, "mechanics": ",".join(mechanics) or "none",
                     "examples": ", ".join(examples),
                     "spec_bytes": len((system + user).encode()) + schema,
                     "repair_bytes": sum(len(x.encode()) for x in repair) + schema})
    return rows


def prompt_size_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| task | mechanics | examples | spec prompt | repair prompt |",
             "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r['task']} | {r['mechanics']} | {r['examples']} | {r['spec_bytes'] / 1000:.1f} KB "
              f"| {r['repair_bytes'] / 1000:.1f} KB |" for r in rows]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the run
def make_provider(designer: Designer) -> Any | None:
    if designer.model is None:
        return None
    from gymwright.llm.resolve import provider_from_name

    return provider_from_name(designer.model, timeout=DESIGN_TIMEOUT)


def run_designer(designer: Designer, tasks: list[Task], timeout: float,
                 log: Path | None) -> tuple[list[Outcome], str]:
    """Design every task; one provider (one local server) per designer. (outcomes, note)."""
    outcomes: list[Outcome] = []
    try:
        provider = make_provider(designer)
    except Exception as e:  # noqa: BLE001 - a designer that cannot start is reported, not fatal
        print(f"[{designer.label}] cannot start: {e}", file=sys.stderr)
        return outcomes, f"not run: {short(str(e), 120)}"
    try:
        for i, task in enumerate(tasks, 1):
            o = run_design(designer, task, provider, timeout)
            outcomes.append(o)
            print(f"[{designer.label}] {i}/{len(tasks)} {task.id}: "
                  f"{'verified' if o.passed else o.status}, template {o.template}, "
                  f"{o.calls} calls, {o.wall_s:.1f} s"
                  + (f" -- {failure_reason(o)}" if failure_reason(o) else ""),
                  file=sys.stderr, flush=True)
            if log is not None:
                with log.open("a") as f:
                    f.write(json.dumps({"mode": designer.mode, **asdict(o)}) + "\n")
    finally:
        if provider is not None and hasattr(provider, "close"):
            provider.close()
    load = getattr(provider, "load_seconds", 0.0)
    return outcomes, (f"the first task's time includes the model load, {load:.1f} s" if load else "")


def read_log(paths: list[Path]) -> dict[tuple[str, str], list[Outcome]]:
    """Saved outcomes by (designer, mode), in file order; a repeated task keeps its last run."""
    grouped: dict[tuple[str, str], dict[str, Outcome]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                data = json.loads(line)
                mode = data.pop("mode")
                o = Outcome(**data)
                grouped.setdefault((o.designer, mode), {})[o.task_id] = o
    return {k: list(v.values()) for k, v in grouped.items()}


def subset_note(mode: str, n: int, total: int, library: int, off: int, scenarios: int | None = None) -> str:
    """Which tasks a row covers ('' for all); `scenarios`: how many tasks have scenarios, when
    only those ran."""
    if n == total:
        return ""
    which = "the spec-mode subset" if mode in NEW_DESIGN_MODES else f"the first {n}"
    if scenarios is not None:
        which = "the tasks with scenarios" if n == scenarios else f"{which} of the tasks with scenarios"
    return f"{which}: {n} of {total} tasks ({library} library, {off} off-library)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--designers", help="comma-separated: offline, MODEL@MODE, MODEL@MODE[N]")
    ap.add_argument("--tasks", type=int, help="only the first N tasks (of each designer's set)")
    ap.add_argument("--quick", action="store_true",
                    help=f"offline on every task, local:qwen2.5-coder-0.5b@template on the first "
                         f"{QUICK_LOCAL_TASKS}")
    ap.add_argument("--json", action="store_true", help="print the rows and outcomes as JSON")
    ap.add_argument("--timeout", type=float, default=DESIGN_TIMEOUT, help="seconds per design")
    ap.add_argument("--log", type=Path, help="append every outcome to this JSONL file as it ends")
    ap.add_argument("--resume", action="store_true",
                    help="with --log: skip the tasks the log already has for a designer")
    ap.add_argument("--report", type=Path, nargs="+", help="no run: the tables from saved JSONL logs")
    ap.add_argument("--tasks-file", type=Path, default=TASKS_FILE)
    ap.add_argument("--with-scenarios", action="store_true",
                    help="only the tasks with hand-worked scenarios (benchmarks/behaviour/)")
    ap.add_argument("--prompt-sizes", action="store_true",
                    help="no design: the spec-stage and repair prompt sizes of every task")
    ap.add_argument("--own", action="store_true",
                    help="issue 42's own tasks (marked `own: true`) instead of the default set")
    ap.add_argument("--references", action="store_true",
                    help="no design: verify each hand-written reference design "
                         "(benchmarks/behaviour/reference/) and replay its task's scenarios")
    ap.add_argument("--reference-dir", type=Path, default=REFERENCE_DIR,
                    help="with --references: the folder of reference designs (<task id>.yaml)")
    args = ap.parse_args(argv)

    all_tasks = load_tasks(args.tasks_file, own=args.own)
    if args.references:
        import gymwright

        checks = [check_reference(i, args.reference_dir) for i in reference_ids(all_tasks, args.reference_dir)]
        if args.json:
            print(json.dumps([asdict(c) for c in checks], indent=2))
        else:
            print(f"gymwright from {Path(gymwright.__file__).parent}\n")
            print(reference_table(checks))
        return 0
    if args.prompt_sizes:
        print(prompt_size_table(prompt_sizes(all_tasks)))
        return 0
    notes: list[str] = []
    results: list[tuple[Row, list[Outcome]]] = []
    pool = [t for t in all_tasks if scenario_file(t.id).is_file()] if args.with_scenarios else all_tasks
    if args.report:
        for (label, mode), outcomes in read_log(args.report).items():
            if args.with_scenarios:
                outcomes = [o for o in outcomes if o.task_id in {t.id for t in pool}]
            if args.tasks is not None:  # the same first N as a run with --tasks N
                keep = {t.id for t in Designer(label, mode).tasks(pool, args.tasks)}
                outcomes = [o for o in outcomes if o.task_id in keep]
            note = note_for(mode, outcomes, all_tasks, len(pool) if args.with_scenarios else None)
            results.append((score(label, mode, outcomes, note), outcomes))
    else:
        if args.quick:
            designers = [Designer(None, "offline"),
                         Designer("local:qwen2.5-coder-0.5b", "template", QUICK_LOCAL_TASKS)]
        elif args.designers:
            designers = [parse_designer(d) for d in args.designers.split(",") if d.strip()]
        else:
            designers = default_designers(notes)
        saved = read_log([args.log]) if args.resume and args.log and args.log.exists() else {}
        for d in designers:
            tasks = d.tasks(pool, args.tasks)
            earlier = saved.get((d.label, d.mode), [])
            done = {o.task_id for o in earlier}
            outcomes, run_note = run_designer(d, [t for t in tasks if t.id not in done],
                                              args.timeout, args.log)
            outcomes = [o for o in earlier if o.task_id in {t.id for t in tasks}] + outcomes
            note = "; ".join(filter(None, (note_for(d.mode, outcomes, all_tasks,
                                                    len(pool) if args.with_scenarios else None),
                                           run_note)))
            if outcomes or run_note:
                results.append((score(d.label, d.mode, outcomes, note), outcomes))

    if args.json:
        print(json.dumps({"rows": [asdict(r) for r, _ in results],
                          "outcomes": [asdict(o) for _, os_ in results for o in os_],
                          "notes": notes}, indent=2))
        return 0
    print(markdown_table(r for r, _ in results))
    print("\nVerified, fits the task, behaves right (hand-worked scenarios, benchmarks/behaviour/):\n")
    print(behaviour_table(r for r, _ in results))
    for n in notes:
        print(f"\n- {n}")
    print("\nFailures (task, expected, got, why):\n")
    print(failures_table(o for _, os_ in results for o in os_))
    return 0


def note_for(mode: str, outcomes: list[Outcome], all_tasks: list[Task], scenarios: int | None = None) -> str:
    lib = sum(o.expected_template is not None for o in outcomes)
    return subset_note(mode, len(outcomes), len(all_tasks), lib, len(outcomes) - lib, scenarios)


if __name__ == "__main__":
    sys.exit(main())
