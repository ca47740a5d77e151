"""`gymwright report RUN -o report.html`: one self-contained HTML page about a run (registered in
`gymwright.cli`). The task, the spec, its verification, learning curves, the evaluation with
confidence intervals, failure kinds, recorded episodes (text and GIFs), a curriculum's lineage."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def report_command(
    run: Annotated[Path, typer.Argument(metavar="RUN", show_default=False,
                                        help="A run folder (`gymwright train --out`) or a curriculum folder (`gymwright evolve`).")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="The HTML file to write (default: RUN/report.html).")] = None,
    force: Annotated[bool, typer.Option("--force", "-f", help="Overwrite an existing file.")] = False,
    run_verifier: Annotated[bool, typer.Option("--verify/--no-verify",
                                               help="Run the verifier when design.json does not carry its summary.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
) -> None:
    """Write one self-contained HTML report of a run: curves, evaluation, failures, episodes, lineage."""
    from gymwright.cli.common import check_writable, domain_errors, to_json
    from gymwright.report import read_run, write_report

    with domain_errors(str(run)):
        folder = read_run(run)  # first: not a run folder, or nothing to report
    path = output if output is not None else run / "report.html"
    check_writable(path, force)
    with domain_errors(str(run)):
        report = write_report(folder, path, run_verifier=run_verifier,
                              progress=lambda what: err.print(Text(f"{what}...", style="dim")))
    if as_json:
        typer.echo(to_json({"report": str(report.path), "bytes": report.bytes, "sections": report.sections,
                            "missing": report.missing, "notes": report.notes}))
        return
    out.print(f"Wrote {report.path} ({report.bytes / 1024:.0f} KiB, self-contained): {', '.join(report.sections)}.")
    if report.missing:
        out.print(Text(f"Not recorded: {', '.join(report.missing)} (each section says what would record it).",
                       style="yellow"))
    for note in report.notes:
        out.print(Text(f"- {note}", style="yellow"))
    out.print(f"Open it in a browser: {report.path.resolve().as_uri()}")
