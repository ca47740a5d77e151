"""One design in progress: asks the model, records every attempt, verifies candidate specs.

Every attempt (the prompt, the reply, the parsed JSON or the parse error, the verification
report) is written to the store as soon as it is finished, in its own transaction, so a design
killed half-way leaves every finished attempt readable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from gymwright.design.prompts import PromptSet, compact_json
from gymwright.diagnostic import error
from gymwright.errors import GymwrightError
from gymwright.llm.base import Completion, LLMError, Message, Request, Usage
from gymwright.llm.client import LLM
from gymwright.llm.jsonreply import JSONReplyError, extract_json, schema_instruction
from gymwright.spec.loader import read_data
from gymwright.store import AttemptRecord, Store, spec_hash
from gymwright.verify.report import StageResult, VerificationReport
from gymwright.verify.verifier import verify

T = TypeVar("T")


@dataclass(frozen=True)
class DesignEvent:
    """A step of a design, for a live progress display."""

    kind: str  # "ask", "reply", "verify", "verified", "reviewed", "note"
    stage: str
    attempt: int
    message: str = ""
    passed: bool | None = None
    tokens: int = 0  # tokens used by the design so far


Progress = Callable[[DesignEvent], None]

# The longest reply each stage may need, in tokens: small replies stay small (a local model's
# context is short, and a bounded reply cannot run away repeating itself). A repair answers
# with what its loop's first stage answers (a whole spec, or the params), so it has that
# stage's budget: a whole spec is 1,500-3,000 tokens (a grid spec with short docs about 3,000).
REPLY_TOKENS = {"roles": 900, "dynamics": 1800, "rewards": 1500, "template": 200, "params": 400,
                "review": 1200, "code_review": 1200, "spec": 8192, "code": 8192}
DEFAULT_REPLY_TOKENS = 4096
SHORT_CONTEXT = 8192  # tokens; at or below it the spec prompt is compact
SHORT_CONTEXT_REPLY = 1500  # a short-context model's longest reply
FITS = ("yes", "no", "unknown")  # DesignResult.fits_task
SPEC_REPLY = "the whole corrected spec as one JSON object (not a diff)"


class DesignStopped(GymwrightError):
    """The design cannot go on (no usable reply after every repair, a spent budget, ...)."""


class ReplyUnusable(Exception):
    """A reply that parsed as JSON but is not what the stage asked for."""


def validation_message(e: ValidationError) -> str:
    """Pydantic errors as `path: message` lines, short enough for a repair prompt."""
    lines = []
    for err in e.errors()[:8]:
        path = ".".join(str(p) for p in err["loc"]) or "<reply>"
        lines.append(f"{path}: {err['msg']}")
    return "the JSON does not match the schema:\n" + "\n".join(lines)


def reply_budget(stage: str, short_context: bool) -> int:
    """The max_tokens of a reply of `stage` (a repair: its loop's first stage)."""
    tokens = REPLY_TOKENS.get(stage, DEFAULT_REPLY_TOKENS)
    return min(tokens, SHORT_CONTEXT_REPLY) if short_context else tokens


def cut_off(problem: str, completion: Completion, max_tokens: int) -> str:
    """The parse problem of a reply the server stopped at max_tokens, saying so."""
    if not completion.truncated:
        return problem
    return (f"the reply was cut off at max_tokens={max_tokens} before it was complete; "
            f"write a shorter reply (shorter docs and names). {problem}")


class DesignSession:
    def __init__(self, *, store: Store, design_id: int, prompts: PromptSet, llm: LLM | None,
                 max_repairs: int, verify_episodes: int, progress: Progress,
                 task: str = "", review: bool = True) -> None:
        self.task = task
        self.review_fit = review  # spec mode: a task-fit review after verification
        self.fits_task = "unknown"  # the last review's verdict (FITS)
        self.findings: list[str] = []  # the last review's failed checks
        self.review_feedback: dict[str, str] = {}  # the last review's failed checks, for the repair prompt
        self.review_error = ""  # why the last review failed ("" when it did not)
        self.repair_error = ""  # why a repair after a verified spec could not go on
        self.verified: tuple[dict[str, Any], VerificationReport] | None = None  # the last verified spec
        self.store = store
        self.design_id = design_id
        self.prompts = prompts
        self.llm = llm
        self.max_repairs = max_repairs
        self.verify_episodes = verify_episodes
        self.progress = progress
        self.attempts: list[AttemptRecord] = []
        self.last_report: VerificationReport | None = None
        self.parent: tuple[str, str] | None = None  # (spec sha, why the next spec derives from it)
        # code mode: checks a candidate in place of the spec verifier (design/coded.py)
        self.checker: Callable[[dict[str, Any]], VerificationReport] | None = None
        # code mode: reviews a candidate in place of spec mode's review (design/code_review.py),
        # and the template its failed checks go back in
        self.reviewer: Callable[[Any, dict[str, Any]], Any] | None = None
        self.review_repair = "review_repair"

    @property
    def short_context(self) -> bool:
        """The model's context is short (a local model): prompts are made compact."""
        ctx = getattr(self.llm.provider, "context_tokens", None) if self.llm else None
        return ctx is not None and ctx <= SHORT_CONTEXT

    # ------------------------------------------------------------------------ recording
    @property
    def usage(self) -> Usage:
        total = Usage()
        for a in self.attempts:
            total = total + a.usage
        return total

    def record(self, attempt: AttemptRecord) -> AttemptRecord:
        attempt.index = len(self.attempts)
        attempt.id = self.store.add_attempt(self.design_id, attempt)
        self.attempts.append(attempt)
        return attempt

    def note(self, stage: str, message: str) -> None:
        self.event("note", stage, message)

    def event(self, kind: str, stage: str, message: str = "", passed: bool | None = None,
              attempt: int | None = None) -> None:
        at = len(self.attempts) if attempt is None else attempt
        self.progress(DesignEvent(kind, stage, at, message, passed, self.usage.total))

    # ------------------------------------------------------------------------ asking
    def system(self) -> Message:
        return Message("system", self.prompts.render("system"))

    def call(self, stage: str, messages: list[Message], schema: dict[str, Any] | None,
             reply_stage: str | None = None) -> tuple[Completion, int]:
        """Ask the model; (the completion, the max_tokens it was given). `reply_stage`: whose
        reply budget (a repair answers as its loop's first stage)."""
        assert self.llm is not None, "a model call in a design without a model"
        self.event("ask", stage, self.llm.label)
        if schema is not None and not self.llm.supports_schema and len(compact_json(schema)) < 4000:
            last = messages[-1]
            messages = [*messages[:-1], Message(last.role, last.content + "\n\n"
                                                + schema_instruction(schema, stage))]
        max_tokens = reply_budget(reply_stage or stage, self.short_context)
        completion = self.llm.complete(Request(tuple(messages), schema=schema, schema_name=stage,
                                               max_tokens=max_tokens))
        return completion, max_tokens

    def ask_json(self, stage: str, messages: list[Message], schema: dict[str, Any],
                 parse: Callable[[Any], T]) -> tuple[T, str]:
        """Ask until a reply parses (at most 1 + max_repairs tries); the value and its text."""
        last_error = ""
        for _ in range(self.max_repairs + 1):
            start = time.perf_counter()
            completion, max_tokens = self.call(stage, messages, schema)
            value, data, last_error = self.parse_reply(completion.text, parse)
            if last_error:
                last_error = cut_off(last_error, completion, max_tokens)
            self.record_reply(stage, messages, completion, data, last_error, start)
            if not last_error:
                return value, completion.text  # type: ignore[return-value]  # with no error, parse_reply's value is parse's result (a T), not its None
            messages = [*messages[:2], Message("assistant", completion.text),
                        Message("user", self.prompts.render("parse_error", error=last_error))]
        raise DesignStopped(
            f"stage `{stage}`: no usable reply after {self.max_repairs + 1} tries; "
            f"the last one: {last_error}",
            hint="try a stronger model (--model), or raise --max-repairs")

    def record_reply(self, stage: str, messages: list[Message], completion: Completion,
                     data: Any, problem: str, start: float) -> None:
        """Record a reply that is not a spec candidate (a plan, or one that did not parse)."""
        self.record(AttemptRecord(
            index=0, stage=stage, prompt=[m.to_dict() for m in messages], reply=completion.text,
            parsed=data, parse_error=problem or None, passed=False if problem else None,
            usage=completion.usage, cached=completion.cached, wall_s=time.perf_counter() - start))
        self.event("reply", stage, problem or "ok", passed=not problem,
                   attempt=len(self.attempts) - 1)

    @staticmethod
    def parse_reply(text: str, parse: Callable[[Any], T]) -> tuple[T | None, Any, str]:
        """(value, raw JSON, "") when the reply is usable, else (None, raw JSON or None, why)."""
        try:
            data = extract_json(text)
        except JSONReplyError as e:
            return None, None, e.message
        try:
            return parse(data), data, ""
        except ValidationError as e:
            return None, data, validation_message(e)
        except ReplyUnusable as e:
            return None, data, str(e)

    def link(self, sha: str) -> None:
        """Record lineage from the spec this one derives from (a repair, a template), if any."""
        if self.parent is not None and self.parent[0] != sha:
            self.store.add_lineage(self.parent[0], sha, self.parent[1][:500], self.design_id)

    def derive_from_library(self, name: str, params: dict[str, Any]) -> None:
        """The next spec is library spec `name` with `params` written in as defaults."""
        data, _ = read_data(name)
        sha = self.store.put_spec(data, name=name)
        given = ", ".join(f"{k}={v}" for k, v in params.items()) or "its defaults"
        self.parent = (sha, f"library template {name} with {given}")

    def repair_loop(self, first_stage: str, base: list[Message], schema: dict[str, Any] | None,
                    to_spec: Callable[[str], tuple[dict[str, Any] | None, Any, str]],
                    repair_base: Callable[[str], list[Message]] | None = None,
                    reply: str = SPEC_REPLY, repair_template: str = "repair",
                    ) -> tuple[dict[str, Any] | None, VerificationReport | None]:
        """Ask for a spec, verify it, review it against the task (when `review_fit`), and send
        the findings (the verifier's report, the parse error, or the review's failed checks)
        back with the previous reply; at most 1 + max_repairs tries. Every reply has the first
        stage's budget. Returns the spec that passed verification and review (or was not
        reviewed), else the last spec that passed verification (the review said it does not fit
        the task: `fits_task` is "no"), else None; and that spec's (or the last) report.

        `to_spec(reply text)` gives (spec or None, the parsed JSON, why it is unusable);
        `repair_base(previous reply)` (default: `base`) starts the repair conversations, which
        then hold the previous reply and the findings.
        """
        messages, report, previous = base, None, None
        verified: tuple[dict[str, Any], VerificationReport] | None = None
        for attempt in range(self.max_repairs + 1):
            stage = first_stage if attempt == 0 else "repair"
            start = time.perf_counter()
            try:
                completion, max_tokens = self.call(stage, messages, schema, reply_stage=first_stage)
            except (DesignStopped, LLMError) as e:
                if verified is None:
                    raise
                self.repair_error = e.message  # a verified spec is never lost: return it
                self.note(stage, f"the repair could not go on ({e.message}); keeping the verified spec")
                return verified
            spec, data, problem = to_spec(completion.text)
            if spec is None:
                problem = cut_off(problem, completion, max_tokens)
                self.record_reply(stage, messages, completion, data, problem, start)
                feedback = self.prompts.render("parse_error", error=problem)
            else:
                report = self.verify(stage, spec)
                candidate = self.record_candidate(stage, messages, completion, spec, report,
                                                  time.perf_counter() - start)
                if not report.passed:
                    feedback = self.prompts.render(repair_template, report=report.to_prompt(), reply=reply)
                else:
                    verified = self.verified = (spec, report)
                    if not self.review_fit or self.reviewed_fits(spec):
                        return spec, report
                    self.parent = (str(candidate.spec_sha), "repair after the task-fit review found "
                                   f"that it does not fit the task ({self.findings[0][2:]})")
                    feedback = self.prompts.render(self.review_repair, reply=reply, **self.review_feedback)
            if previous is not None and completion.text.strip() == previous:
                feedback += ("\n\nYour reply was identical to your previous one, which failed the same "
                             "way: change the spec to fix the errors above.")
            previous = completion.text.strip()
            answer = compact_json(data) if data is not None else completion.text
            start_of = repair_base(answer) if repair_base is not None else base
            messages = [*start_of, Message("assistant", answer), Message("user", feedback)]
        return verified if verified is not None else (None, report)

    def reviewed_fits(self, spec: dict[str, Any]) -> bool:
        """Review `spec` against the task (sets `fits_task`, `findings` and what the repair
        prompt says); False only when a check of the review failed (the verdict follows the
        checks). A review that failed sets `review_error` and returns True: the design ends with
        the verified spec and that reason."""
        from gymwright.design.review import review_spec

        self.review_error = ""
        review = (self.reviewer or review_spec)(self, spec)
        if review is None:
            self.fits_task, self.findings = "unknown", []
            self.review_error = self.review_error or "no usable task-fit review came back"
            return True
        failed = review.failures()
        fits, disagrees = review.verdict, review.disagrees
        self.fits_task = "yes" if fits else "no"
        self.findings = [f"- {c.aspect}: {c.problem or 'does not fit the task'}"
                         + (f" Fix: {c.fix}" if c.fix else "") for c in failed]
        conflict = ("\nThe review's overall `fits_task` said that the spec fits, but the checks decide "
                    "the verdict: fix each point above.\n") if disagrees else ""
        self.review_feedback = {"failed": str(len(failed)), "total": str(len(review.checks)),
                                "findings": "\n".join(self.findings), "conflict": conflict}
        message = "fits the task" if fits else f"does not fit the task: {len(failed)} failed check(s)"
        if disagrees:
            message += " (its overall fits_task said it fits; the checks decide)"
        self.event("reviewed", "review", message, fits)
        return fits

    # ------------------------------------------------------------------------ verifying
    def verify(self, stage: str, spec: dict[str, Any]) -> VerificationReport:
        self.event("verify", stage)
        try:
            report = self.checker(spec) if self.checker else verify(spec, episodes=self.verify_episodes)
        except Exception as e:  # noqa: BLE001 - a verifier bug must not lose the design
            report = VerificationReport(str(spec.get("name", "<spec>")), {})
            report.stages.append(StageResult("compile", 0.0, 1, 0))
            report.stopped_at = "compile"
            report.diagnostics.append(error(
                "compile", "", f"the verifier failed on this spec ({type(e).__name__}: {e}); "
                "this is a gymwright bug, please report it with `gymwright show`"))
        self.last_report = report
        self.event("verified", stage, report.to_prompt(max_items=3).splitlines()[0], report.passed)
        return report

    def record_candidate(self, stage: str, messages: list[Message], completion: Completion | None,
                         spec: dict[str, Any], report: VerificationReport, wall_s: float,
                         ) -> AttemptRecord:
        """Store the spec (content-addressed) and the attempt that produced it."""
        sha = self.store.put_spec(spec, name=str(spec.get("name", "")))
        self.link(sha)
        if not report.passed:
            first = next((d for d in report.diagnostics if d.severity.value == "error"), None)
            why = f"{first.path}: {first.message}" if first else "it failed verification"
            self.parent = (sha, f"repair after verification failed at {report.stopped_at} ({why})")
        return self.record(AttemptRecord(
            index=0, stage=stage, prompt=[m.to_dict() for m in messages],
            reply=completion.text if completion else None, parsed=spec,
            report=report.to_dict(), passed=report.passed, spec_sha=sha,
            usage=completion.usage if completion else Usage(),
            cached=completion.cached if completion else False, wall_s=wall_s))


def with_defaults(spec: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """A copy of `spec` whose params default to `params` (so the spec stands on its own).

    Its probes were written for the old defaults, so each probe pins the old value of every
    param that changed (unless it sets that param itself): the probe still tests the game it was
    written for, and one written for another structure is skipped with a warning, not failed.
    """
    out = dict(spec)
    old = {name: p.get("default") for name, p in (spec.get("params") or {}).items()}
    out["params"] = {name: dict(p) for name, p in (spec.get("params") or {}).items()}
    for name, value in params.items():
        out["params"][name]["default"] = value
    changed = {k: old[k] for k, v in params.items() if old.get(k) != v}
    if changed and spec.get("probes"):
        out["probes"] = [{**probe, "params": {**changed, **(probe.get("params") or {})}}
                         for probe in spec["probes"]]
    return out


__all__ = ["DesignEvent", "DesignSession", "DesignStopped", "Progress", "ReplyUnusable",
           "spec_hash", "with_defaults"]
