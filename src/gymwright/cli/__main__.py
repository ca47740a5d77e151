"""`python -m gymwright.cli ...`: the same as the `gymwright` command."""

from gymwright.cli import app

app(prog_name="gymwright")
