"""The `gymwright` command line: a thin shell over the pipeline, one module per command group.

`common` holds the app, the consoles, the shared options and errors at the command boundary
(`GymwrightError` and `SpecError` become short bullets on stderr and exit 1); `spec` the commands
on one spec (library, validate, verify, run, export, schema); `design`, `train`, `play`,
`evaluate`, `evolve`, `report` and `demo` one group each. Nothing outside this package
imports it.
"""

from gymwright.cli import (
    demo,
    design,
    evaluate,
    evolve,
    lmtrain,  # noqa: F401  (registers train-lm and eval-lm)
    play,
    report,
    serve,
    spec,
    train,
)
from gymwright.cli.common import app

app.command("design")(design.design_command)
app.command("designs")(design.designs_command)
app.command("show")(design.show_command)
app.command("train")(train.train_command)
app.command("play")(play.play_command)
app.command("evaluate")(evaluate.evaluate_command)
app.command("evolve")(evolve.evolve_command)
app.command("report")(report.report_command)
app.command("demo")(demo.demo_command)
app.command("serve")(serve.serve_command)

__all__ = ["app", "spec"]
