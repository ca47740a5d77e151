"""`gymwright report RUN [RUN ...] -o report.html`: one self-contained HTML page (registered in
`gymwright.cli`). One run: the task, the spec, its verification, learning curves, the evaluation
with confidence intervals, failure kinds, recorded episodes (text and GIFs), a curriculum's
lineage. Several runs: a comparison, seeds pooled by what differs between the runs (`--group-by`
names the grouping), curves with 95% bands, IQMs with bootstrap intervals, the configs side by side."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from gymwright.cli.common import err, out  # inert consoles (gymwright.cli.inert)


class Axis(StrEnum):
    steps = "steps"
    time = "time"


def report_command(
    runs: Annotated[list[Path], typer.Argument(metavar="RUN [RUN ...]", show_default=False,
                                               help="A run folder (`gymwright train --out`) or a curriculum folder (`gymwright evolve`); several to compare them.")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="The HTML file to write (default: RUN/report.html; for several runs, comparison.html in their common folder).")] = None,
    force: Annotated[bool, typer.Option("--force", "-f", help="Overwrite an existing file.")] = False,
    run_verifier: Annotated[bool, typer.Option("--verify/--no-verify",
                                               help="Run the verifier when design.json does not carry its summary (one run).")] = True,
    group_by: Annotated[list[str] | None, typer.Option("--group-by", "-g", metavar="SETTING",
                                                       help="Group several runs by these settings (e.g. lr, algo, engineer, params.size; `run`: each run alone) instead of by all that differ.")] = None,
    x: Annotated[Axis, typer.Option("--x", help="The curves' axis: env steps, or wall-clock seconds of training.")] = Axis.steps,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
) -> None:
    """Write one self-contained HTML report of a run (curves, evaluation, failures, episodes, lineage), or compare runs."""
    from gymwright.cli.common import check_writable, domain_errors, fail, to_json
    from gymwright.report import read_cohort, read_run, write_comparison, write_report
    from gymwright.report.page import default_comparison_path

    def say(what: str) -> None:
        err.print(Text(f"{what}...", style="dim"))

    where = ", ".join(map(str, runs))
    if len(runs) == 1 and group_by:
        fail([f"--group-by {', '.join(group_by)} groups several runs, and one was given ({runs[0]})"],
             "pass the runs to compare, e.g. `gymwright report runs/a-s0 runs/a-s1 runs/b-s0 runs/b-s1 --group-by lr`")
    if len(runs) == 1:
        with domain_errors(where):
            folder = read_run(runs[0])  # first: not a run folder, or nothing to report
        path = output if output is not None else runs[0] / "report.html"
        check_writable(path, force)
        with domain_errors(where):
            report = write_report(folder, path, run_verifier=run_verifier, progress=say, x=x.value)
    else:
        with domain_errors(where):
            cohort = read_cohort(runs, group_by)
        path = output if output is not None else default_comparison_path([r.root for r in cohort.runs])
        check_writable(path, force)
        with domain_errors(where):
            report = write_comparison(cohort, path, x=x.value, progress=say)
    if as_json:
        typer.echo(to_json({"report": str(report.path), "bytes": report.bytes, "sections": report.sections,
                            "missing": report.missing, "not_applicable": report.not_applicable,
                            "notes": report.notes}))
        return
    out.print(f"Wrote {report.path} ({report.bytes / 1024:.0f} KiB, self-contained): {', '.join(report.sections)}.")
    unrecorded = [s for s in report.missing if s not in report.not_applicable]
    if unrecorded:
        out.print(Text(f"Not recorded: {', '.join(unrecorded)} (each section says what would record it).",
                       style="yellow"))
    if report.not_applicable:
        out.print(Text(f"Not applicable to this run: {', '.join(report.not_applicable)} (each section says why).",
                       style="yellow"))
    for note in report.notes:
        out.print(Text(f"- {note}", style="yellow"))
    out.print(f"Open it in a browser: {report.path.resolve().as_uri()}")
