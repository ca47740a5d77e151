"""The design commands of the CLI: `design`, `designs`, `show` (registered in `gymwright.cli`).

Progress goes to stderr (a line per stage, attempt and verification, with a spinner while the
model thinks that shows the stage, the attempt, the seconds waited and the tokens so far),
results to stdout, so `--json` output stays clean for scripts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import yaml
from rich.console import Console
from rich.status import Status
from rich.table import Table
from rich.text import Text

from gymwright.cli.common import err, out  # inert consoles (gymwright.cli.inert)
from gymwright.cli.inert import inert
from gymwright.store import DesignRecord, Store, default_store_path

if TYPE_CHECKING:
    from gymwright.design import DesignEvent, DesignResult

MODES = ("spec", "template", "offline", "code")  # gymwright.design.MODES, imported lazily below


StoreOpt = Annotated[
    Path | None,
    typer.Option("--store", help="The store folder (default: $GYMWRIGHT_STORE, else ./.gymwright)."),
]


class Waiting:
    """The spinner's text, rendered afresh at every refresh: what runs, for how long, and the
    tokens the design has used so far."""

    def __init__(self, text: str, tokens: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.text, self.tokens, self.clock, self.since = text, tokens, clock, clock()

    def __str__(self) -> str:
        return f"{self.text} - {self.clock() - self.since:.0f} s, {self.tokens:,} tokens so far"

    def __rich__(self) -> Text:
        return Text(str(self))


class LiveProgress:
    """Prints each finished step on stderr; a spinner says what is running now, for how long,
    and how many tokens the design has used."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.status: Status | None = None
        self.waiting: Waiting | None = None

    def __call__(self, e: DesignEvent) -> None:
        if e.kind == "ask":
            self.spin(f"{e.stage}: asking {e.message} (attempt {e.attempt + 1})", e.tokens)
        elif e.kind == "verify":
            self.spin(f"{e.stage}: verifying (schema, static, compile, dynamic, probes, degeneracy)", e.tokens)
        elif e.kind == "reply":
            self.line(e.passed, f"{e.stage}: reply {'ok' if e.passed else 'unusable: ' + first_line(e.message)}")
        elif e.kind in ("verified", "reviewed"):
            self.line(e.passed, f"{e.stage}: {e.message}")
        else:
            self.line(None, f"{e.stage}: {e.message}")

    def spin(self, text: str, tokens: int = 0) -> None:
        self.waiting = Waiting(text, tokens)
        if self.status is None:
            self.status = self.console.status(self.waiting)
            self.status.start()
        else:
            self.status.update(self.waiting)

    def line(self, ok: bool | None, text: str) -> None:
        mark, style = {True: ("ok ", "green"), False: ("!! ", "red"), None: ("   ", "dim")}[ok]
        self.console.print(Text(mark, style=style) + Text(inert(text)))

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


# --------------------------------------------------------------------------- design
def print_result(r: DesignResult, reviewed: bool = True) -> None:
    verdict = Text(f"design {r.design_id}: ")
    verdict.append(r.status.upper() if not r.passed else "passed",
                   style="bold green" if r.passed else "bold red")
    tokens = f", {r.usage.total} tokens, {r.provider_calls} model calls" if r.mode != "offline" else ""
    verdict.append(f" ({len(r.attempts)} attempts, {r.wall_s:.1f} s{tokens})")
    out.print(verdict)
    out.print(Text(f"verified: {'yes' if r.verified else 'no'}; fits the task: {r.fits_task}"
                   + ("" if r.fits_task != "unknown" else
                      " (the task-fit review failed)" if r.review_error else f" ({unknown_fit_reason(r.mode, reviewed)})")))
    out.print(Text(f"designer: {r.model} [{r.mode} mode; model from {r.model_source}]", style="dim"))
    if r.explanation:
        out.print(Text(inert(r.explanation)))
    if r.spec_path and r.mode == "code":
        out.print(f"module: {r.spec_path}" + ("" if r.passed else f" ({kept_as(r.status, r.verified)})"))
        if r.passed:
            out.print("It ran only inside a sandbox worker, and the file runs it there too: its "
                      "`parallel_env()` and `env()` give PettingZoo envs over a sandbox worker; "
                      f"`gymwright train {r.spec_path}` trains on it.")
        return
    if r.spec_path:
        out.print(f"spec: {r.spec_path}" + ("" if r.passed else f" ({kept_as(r.status, r.verified)})"))
    if r.passed and r.spec_path:
        out.print(f"Next: `gymwright run {r.spec_path} --render --episodes 1`, "
                  f"`gymwright show {r.design_id}` for every attempt.")
    elif not r.passed:
        out.print(f"`gymwright show {r.design_id}` lists every attempt and its diagnostics.")


def kept_as(status: str, verified: bool) -> str:
    """What the spec file of a design that did not pass is."""
    if not verified:
        return "the last attempt, not verified"
    return {"review_failed": "verified, not reviewed: the review failed"}.get(
        status, "verified, but the review found it unfit")


def unknown_fit_reason(mode: str, reviewed: bool = True) -> str:
    """Why a design's fit to the task is unknown."""
    if mode in ("spec", "code") and not reviewed:
        return "not reviewed: --no-review"
    if mode in ("spec", "code"):
        return "no usable task-fit review"
    if mode == "offline":
        return "no model reviewed it; the offline designer refuses templates that lack what the task names"
    return "no model reviewed it; template mode asks only whether the template is the same kind of game"


def design_command(
    task: Annotated[str, typer.Argument(metavar="TASK", help="The task, in plain words.", show_default=False)],
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="openai:MODEL, anthropic:MODEL, ollama:MODEL, local:NAME, "
        "scripted:FILE or offline (default: $GYMWRIGHT_MODEL, else the offline designer, the "
        "best designer measured; a local model runs only when named).")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", help="An OpenAI-compatible server (vLLM, llama.cpp, LM Studio); default $OPENAI_BASE_URL.")] = None,
    mode: Annotated[str | None, typer.Option(
        "--mode", help=f"{' | '.join(MODES)} (default: spec with a model, offline without).")] = None,
    max_repairs: Annotated[int, typer.Option("--max-repairs", min=0, help="Repair attempts after the first spec.")] = 3,
    max_calls: Annotated[int, typer.Option("--max-calls", min=1, help="Budget: model calls per design.")] = 30,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Budget: tokens per design.")] = 400_000,
    output: Annotated[Path | None, typer.Option("--out", "-o", help="Write the verified spec here (.yaml; --mode code: a .py module).")] = None,
    force: Annotated[bool, typer.Option("--force", "-f", help="Overwrite --out if it exists.")] = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Ask the model even when the reply is cached.")] = False,
    no_review: Annotated[bool, typer.Option(
        "--no-review", help="Spec and code mode: skip the task-fit review after verification (fits the task: unknown).")] = False,
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
) -> None:
    """Design an environment from a task text, verify it, and record it in the store."""
    from gymwright.cli.common import check_writable, domain_errors, to_json
    from gymwright.design import DesignOptions, design

    if output is not None:
        check_writable(output, force)
    opts = DesignOptions(model=model, base_url=base_url, mode=mode, max_repairs=max_repairs,
                         max_calls=max_calls, max_tokens=max_tokens, use_cache=not no_cache,
                         review=not no_review)
    progress = LiveProgress(err)
    with domain_errors(), Store.open(store) as st:
        try:
            result = design(task, opts, store=st, out=output,
                            progress=(lambda e: None) if as_json else progress)
        except KeyboardInterrupt:
            progress.stop()
            err.print(Text(f"interrupted: the design is marked interrupted in {st.path}; every "
                           "finished attempt is kept (`gymwright designs`)", style="yellow"))
            raise typer.Exit(130) from None
        finally:
            progress.stop()
    if as_json:
        typer.echo(to_json(result.to_json_dict()))
    else:
        print_result(result, reviewed=not no_review)
    raise typer.Exit(0 if result.passed else 1)


# --------------------------------------------------------------------------- designs, show
def designs_command(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many, newest first.")] = 20,
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
) -> None:
    """List the designs in the store, newest first."""
    from gymwright.cli.common import domain_errors, to_json

    with domain_errors(), Store.open(store) as st:
        rows = st.designs(limit)
    if as_json:
        typer.echo(to_json([summary_dict(r) for r in rows]))
        return
    if not rows:
        out.print(f"No designs in {default_store_path(store)} yet. "
                  'Start one: gymwright design "two robots divide a pie by alternating offers"')
        return
    table = Table(title=f"designs in {default_store_path(store)}")
    for col in ("id", "started (UTC)", "status", "fits task", "mode", "designer", "tries", "tokens", "task"):
        table.add_column(col, overflow="fold")
    for r in rows:
        style = {"passed": "green", "failed": "red", "unfit": "red", "review_failed": "red", "error": "red",
                 "interrupted": "yellow"}.get(r.status, "")
        table.add_row(str(r.id), r.started_at[:19].replace("T", " "), Text(r.status, style=style),
                      r.fits_task, r.mode, r.model, str(r.n_attempts), str(r.usage.total), r.task[:60])
    out.print(table)


def summary_dict(r: Any) -> dict[str, Any]:
    keep = ("id", "task", "model", "mode", "status", "verified", "fits_task", "started_at",
            "wall_s", "n_attempts", "spec_sha", "template_hash")
    data = {k: getattr(r, k) for k in keep}
    data["usage"] = r.usage.to_dict()
    return data


def show_command(
    design_id: Annotated[int, typer.Argument(metavar="ID", help="A design id (`gymwright designs`).")],
    prompts: Annotated[bool, typer.Option("--prompts", help="Print every prompt and reply in full.")] = False,
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
) -> None:
    """Show one design: every attempt, its diagnostics, and the final spec."""
    from gymwright.cli.common import domain_errors, to_json

    with domain_errors(), Store.open(store) as st:
        rec = st.design(design_id)
        spec = st.get_spec(rec.spec_sha) if rec.spec_sha else None
    if as_json:
        data = summary_dict(rec) | {"settings": rec.settings, "result": rec.result, "spec": spec,
                                    "attempts": [attempt_dict(a) for a in rec.attempts]}
        typer.echo(to_json(data))
        return
    print_design(rec, spec, prompts)


def attempt_dict(a: Any) -> dict[str, Any]:
    return {"index": a.index, "stage": a.stage, "passed": a.passed, "parse_error": a.parse_error,
            "spec_sha": a.spec_sha, "usage": a.usage.to_dict(), "cached": a.cached,
            "wall_s": a.wall_s, "prompt": a.prompt, "reply": a.reply, "parsed": a.parsed,
            "report": a.report}


def print_design(rec: DesignRecord, spec: dict[str, Any] | None, full: bool) -> None:
    out.rule(Text(f"design {rec.id}: {rec.status}", style="bold"))
    out.print(Text(f"task:     {rec.task}\ndesigner: {rec.model} ({rec.mode} mode)\n"
                   f"verified: {({True: 'yes', False: 'no'}).get(rec.verified, 'unknown')}; "
                   f"fits the task: {rec.fits_task}\n"
                   f"started:  {rec.started_at}  wall {rec.wall_s:.1f} s  tokens {rec.usage.total}\n"
                   f"prompts:  {rec.template_hash[:12]}"))
    if rec.result.get("explanation"):
        out.print(Text(inert(rec.result["explanation"])))
    for a in rec.attempts:
        print_attempt(a, full)
    if spec is not None:
        what = "module" if rec.mode == "code" else "spec"
        out.rule(Text(f"final {what}" if rec.status == "passed" else f"last {what} ({kept_as(rec.status, bool(rec.verified))})",
                      style="bold"))
        if rec.mode == "code" and isinstance(spec.get("code"), str):  # the module as text, numbered
            out.print(Text(inert(f"name: {spec.get('name')}, class: {spec.get('class', '(the only ParallelEnv)')}")))
            out.print(Text("\n".join(f"{i:4d}  {inert(line)}" for i, line in enumerate(spec["code"].splitlines(), 1))))
        else:
            out.print(Text(inert(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=100))))


def print_attempt(a: Any, full: bool) -> None:
    ok = {True: ("passed", "green"), False: ("failed", "red"), None: ("ok", "dim")}[a.passed]
    cached = ", cached" if a.cached else ""
    out.rule(Text(f"attempt {a.index}: {a.stage} - {ok[0]} ({a.usage.total} tokens{cached})", style=ok[1]))
    if full:
        for m in a.prompt:
            out.print(Text(f"[{m['role']}]\n{inert(m['content'])}", style="dim"))
        if a.reply is not None:
            out.print(Text(f"[reply]\n{inert(a.reply)}"))
    if a.parse_error:
        out.print(Text(inert(a.parse_error), style="red"))
    for d in (a.report or {}).get("diagnostics", []):
        if d.get("severity") in ("error", "warning"):
            style = "red" if d["severity"] == "error" else "yellow"
            where = f"{d.get('path')}: " if d.get("path") else ""
            out.print(Text(inert(f"  [{d['severity']}] {where}{d.get('message')}"), style=style))
