"""`design(task)`: from task text to a verified spec, recorded in the store.

Picks the designer (a model from `--model`, then `GYMWRIGHT_MODEL`, else the offline designer),
runs the mode (`spec`: four stages and repairs; `template`: pick a library spec and set params;
`offline`: retrieval plus rules), writes the spec file, and records the design, every attempt
and the outcome in the store. Ctrl-C marks the design interrupted; what was finished stays.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gymwright.atomic import write_atomic
from gymwright.design.offline import OfflineChoice
from gymwright.design.prompts import load_prompts
from gymwright.design.session import DesignEvent, DesignSession, DesignStopped, Progress
from gymwright.design.staged import run_spec_mode
from gymwright.design.templated import run_offline_mode, run_template_mode
from gymwright.errors import GymwrightError
from gymwright.llm.base import LLMError, Provider, Usage
from gymwright.llm.client import LLM, Budget
from gymwright.llm.resolve import choose_model, provider_from_name
from gymwright.store import AttemptRecord, Store
from gymwright.verify.report import VerificationReport

MODES = ("spec", "template", "offline", "code")
REVIEWED = ("spec", "code")  # the modes whose verified design the model reviews against the task
OFFLINE_LABEL = "offline designer (retrieval + rules, no language model)"
VERIFY_EPISODES = 20


@dataclass
class DesignResult:
    """What a design produced: two verdicts, `verified` (the spec passed verification) and
    `fits_task` (a task-fit review by the model: yes, no, or unknown when nothing reviewed it).
    `passed` is both together: verified, and not found to miss the task."""

    design_id: int
    status: str  # passed, unfit (verified, a review check failed), review_failed (verified, the review call failed), failed, error, interrupted
    mode: str
    model: str
    model_source: str
    task: str
    spec: dict[str, Any] | None = None
    spec_sha: str | None = None
    spec_path: Path | None = None
    report: VerificationReport | None = None
    attempts: list[AttemptRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    provider_calls: int = 0
    wall_s: float = 0.0
    explanation: str = ""
    template: str | None = None  # offline designer: the library spec it chose (None: none fits)
    best_match: str | None = None  # offline designer: the nearest library spec, fit or not
    score: float | None = None  # offline designer: the best match's similarity (0..1)
    template_hash: str = ""
    store_path: Path | None = None
    verified: bool = False
    fits_task: str = "unknown"  # yes, no, unknown (session.FITS)
    findings: list[str] = field(default_factory=list)  # the review's failed checks
    review_error: str = ""  # why the task-fit review failed (status review_failed)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "design_id": self.design_id, "passed": self.passed, "status": self.status,
            "verified": self.verified, "fits_task": self.fits_task, "findings": self.findings,
            "review_error": self.review_error,
            "mode": self.mode, "model": self.model, "model_source": self.model_source,
            "task": self.task, "attempts": len(self.attempts),
            "spec_path": str(self.spec_path) if self.spec_path else None,
            "spec_sha": self.spec_sha, "spec_name": (self.spec or {}).get("name"),
            "template": self.template, "best_match": self.best_match, "score": self.score, "explanation": self.explanation,
            "usage": self.usage.to_dict(), "provider_calls": self.provider_calls,
            "wall_s": round(self.wall_s, 3), "template_hash": self.template_hash,
            "store": str(self.store_path) if self.store_path else None,
            "report": self.report.to_dict() if self.report else None,
        }


@dataclass
class DesignOptions:
    """How to design. Every field has the CLI option of the same name."""

    model: str | None = None  # openai:MODEL, anthropic:MODEL, ollama:MODEL, scripted:FILE
    base_url: str | None = None
    mode: str | None = None  # spec (default with a model), template, offline (default without)
    max_repairs: int = 3
    max_calls: int = 30
    max_tokens: int = 400_000
    timeout: float = 120.0
    retries: int = 4  # retries of a call after a 429, a 5xx, a lost connection or a timeout
    retry_backoff: float = 1.0  # seconds before the first retry, doubling (a server's hint wins)
    verify_episodes: int = VERIFY_EPISODES
    use_cache: bool = True
    review: bool = True  # spec and code mode: the model reviews the verified design against the task


def resolve_mode(mode: str | None, has_model: bool, model: str | None = None) -> str:
    """The mode asked for; by default spec mode with a model, except a local (small) model,
    which picks and tunes a library spec (template mode): measured, a 0.5B model rarely writes
    a whole spec that verifies. Without a model, the offline designer."""
    if mode is None:
        if not has_model:
            return "offline"
        return "template" if (model or "").startswith("local:") else "spec"
    if mode not in MODES:
        raise GymwrightError(f"unknown mode {mode!r}", path="--mode",
                             hint=f"choose one of {', '.join(MODES)}")
    if mode in ("spec", "code") and not has_model:
        raise GymwrightError(
            f"--mode {mode} needs a language model, and none was given", path="--mode",
            hint="pass --model (e.g. openai:gpt-4o-mini, ollama:qwen2.5-coder) or set "
                 "GYMWRIGHT_MODEL; without one, --mode offline picks and tunes a library spec")
    return "offline" if mode == "template" and not has_model else mode


def make_llm(name: str, opts: DesignOptions, store: Store, provider: Provider | None) -> LLM:
    provider = provider or provider_from_name(name, base_url=opts.base_url, timeout=opts.timeout)
    return LLM(provider, budget=Budget(max_calls=opts.max_calls, max_tokens=opts.max_tokens),
               cache=store.reply_cache() if opts.use_cache else None,
               retries=opts.retries, backoff=opts.retry_backoff)


def design(task: str, options: DesignOptions | None = None, *, store: Store | None = None,
           out: Path | None = None, progress: Progress | None = None,
           provider: Provider | None = None) -> DesignResult:
    """Design an environment for `task`; see the module docstring."""
    opts = options or DesignOptions()
    if not task.strip():
        raise GymwrightError("the task text is empty", path="TASK",
                             hint='describe the environment, e.g. "two robots split a pie"')
    name, source = (provider.name + ":" + provider.model, "provider") if provider else choose_model(opts.model)
    mode = resolve_mode(opts.mode, name is not None, name)
    from gymwright.design.coded import check_out_path

    check_out_path(mode, out)  # a .yaml for a module, or a .py for a spec: refused before any call
    own_store = store is None
    store = store or Store.open()
    llm = None
    try:
        llm = make_llm(name, opts, store, provider) if name is not None and mode != "offline" else None
        return _run(task, opts, mode, llm, source, store, out, progress or (lambda e: None))
    finally:
        if llm is not None and provider is None and hasattr(llm.provider, "close"):
            llm.provider.close()  # e.g. stop a local model's server
        if own_store:
            store.close()


def _run(task: str, opts: DesignOptions, mode: str, llm: LLM | None, source: str, store: Store,
         out: Path | None, progress: Progress) -> DesignResult:
    prompts = load_prompts()
    label = llm.label if llm else OFFLINE_LABEL
    settings = {"max_repairs": opts.max_repairs, "max_calls": opts.max_calls,
                "max_tokens": opts.max_tokens, "verify_episodes": opts.verify_episodes,
                "prompts_version": prompts.version, "model_source": source,
                "base_url": opts.base_url, "pid": os.getpid(),
                "review": opts.review and mode in REVIEWED}
    design_id = store.start_design(task, model=label, mode=mode, template_hash=prompts.hash,
                                   settings=settings)
    session = DesignSession(store=store, design_id=design_id, prompts=prompts, llm=llm,
                            max_repairs=opts.max_repairs, verify_episodes=opts.verify_episodes,
                            progress=progress, task=task, review=opts.review and mode in REVIEWED)
    result = DesignResult(design_id, "running", mode, label, source, task,
                          template_hash=prompts.hash, store_path=store.path)
    start = time.perf_counter()
    try:
        spec, report, choice = run_mode(session, mode, task)
        finish(result, session, spec, report, choice, out)
    except KeyboardInterrupt:
        result.status, result.explanation = "interrupted", "interrupted (Ctrl-C)"
        raise
    except (DesignStopped, LLMError) as e:
        if session.verified is not None:  # a verified spec is never lost
            session.repair_error = session.repair_error or e.message
            finish(result, session, *session.verified, None, out)
        else:
            result.status = "failed" if isinstance(e, DesignStopped) else "error"
            result.explanation = str(e)
    finally:
        close(result, session, store, llm, time.perf_counter() - start)
    return result


def run_mode(session: DesignSession, mode: str, task: str,
             ) -> tuple[dict[str, Any] | None, VerificationReport | None, OfflineChoice | None]:
    if mode == "offline":
        (spec, report), choice = run_offline_mode(session, task)
        return spec, report, choice
    if mode == "code":
        from gymwright.design.coded import run_code_mode

        return (*run_code_mode(session, task), None)
    runner = run_spec_mode if mode == "spec" else run_template_mode
    spec, report = runner(session, task)
    return spec, report, None


def finish(result: DesignResult, session: DesignSession, spec: dict[str, Any] | None,
           report: VerificationReport | None, choice: OfflineChoice | None, out: Path | None) -> None:
    result.report = report
    if choice is not None:
        result.template, result.best_match = choice.template, choice.best.name
        result.score, result.explanation = choice.best.score, choice.explanation
    candidate = spec or last_candidate(session)
    result.verified = spec is not None
    result.fits_task, result.findings = session.fits_task, list(session.findings)
    result.review_error = session.review_error if result.verified else ""
    result.status = verdict(result.verified, result.fits_task, result.review_error)
    if candidate is not None:
        result.spec = candidate
        result.spec_sha = session.store.put_spec(candidate, name=str(candidate.get("name", "")))
        result.spec_path = write_spec_file(candidate, result, session.store,
                                           out if result.passed else None)
    if result.status == "unfit":
        result.explanation = (f"{passed_checks(result)}, but the task-fit review found that it "
                              "does not do what the task asks on these checks:\n" + "\n".join(result.findings))
    elif result.status == "review_failed":
        result.explanation = (f"{passed_checks(result)}, but the task-fit review failed: {result.review_error}; "
                              "it is kept unreviewed (run the design again, or review it yourself)")
    elif not result.explanation and not result.passed:
        result.explanation = failure_summary(session, report)
    if session.repair_error and result.verified:
        result.explanation += (f"\nThe repair after the review could not go on ({session.repair_error}): "
                               "this is the last verified spec.")


def commented(text: str) -> str:
    """`text` as YAML comment lines: every line of it (a task of several lines, a stray carriage
    return) starts with `# `, so nothing in it becomes a key of the written spec."""
    return "".join(f"# {line}\n" for line in text.splitlines() or [""])


def passed_checks(result: DesignResult) -> str:
    """What a verified design passed, in its mode's words."""
    return "the module passed the sandboxed checks" if result.mode == "code" else "the spec passed verification"


def verdict(verified: bool, fits_task: str, review_error: str = "") -> str:
    """The design's status from its two verdicts (and whether the review call failed)."""
    if not verified:
        return "failed"
    if review_error:
        return "review_failed"
    return "unfit" if fits_task == "no" else "passed"


def last_candidate(session: DesignSession) -> dict[str, Any] | None:
    """The last spec the design produced (for a failed design: the one to look at)."""
    for attempt in reversed(session.attempts):
        if attempt.spec_sha:
            return session.store.get_spec(attempt.spec_sha)
    return None


def failure_summary(session: DesignSession, report: VerificationReport | None) -> str:
    tries = sum(a.stage in ("spec", "repair", "template", "code") for a in session.attempts)
    if report is None:
        return f"no usable spec after {tries} tries"
    return f"the last spec failed verification after {tries} tries: " + report.to_prompt(5)


def write_spec_file(spec: dict[str, Any], result: DesignResult, store: Store, out: Path | None) -> Path:
    """`out` when given (and the spec passed), else the store's artifacts folder. Atomic."""
    name = str(spec.get("name", "spec"))
    suffix = {"passed": "", "unfit": ".unfit", "review_failed": ".unreviewed"}.get(result.status, ".failed")
    ext = ".py" if result.mode == "code" else ".yaml"  # code mode: the vetted module itself
    path = out or store.path / "artifacts" / "specs" / f"{name}-{result.spec_sha[:12]}{suffix}{ext}"  # type: ignore[index]  # the one caller sets spec_sha (put_spec) just before
    path.parent.mkdir(parents=True, exist_ok=True)
    header = commented(f"designed by gymwright (design {result.design_id}, {result.model})\ntask: {result.task}")
    if result.mode == "code":
        from gymwright.design.coded import write_code_file

        return write_code_file(spec, path, f"designed by gymwright (design {result.design_id}, "
                                           f"{result.model}); a language model wrote MODEL_CODE below: it runs only in "
                                           "gymwright's sandbox worker (`gymwright export --raw` gives the module itself)"
                                           f"\ntask: {result.task}")
    write_atomic(path, header + yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=100))
    return path


def close(result: DesignResult, session: DesignSession, store: Store, llm: LLM | None,
          wall_s: float) -> None:
    result.attempts, result.usage, result.wall_s = session.attempts, session.usage, wall_s
    result.provider_calls = llm.calls if llm else 0
    if result.status == "running":
        result.status = "error"
    summary = {"explanation": result.explanation, "template": result.template,
               "verified": result.verified, "fits_task": result.fits_task, "findings": result.findings,
               "review_error": result.review_error,
               "score": result.score, "spec_path": str(result.spec_path) if result.spec_path else None,
               "provider_calls": result.provider_calls}
    store.finish_design(result.design_id, status=result.status, spec_sha=result.spec_sha,
                        result=summary, usage=result.usage, wall_s=wall_s)


__all__ = ["MODES", "DesignEvent", "DesignOptions", "DesignResult", "design"]
