"""The bad-input tests' view of the command line: run a command in-process and check that it
failed (or passed) cleanly: the exit code, no exception, no traceback, every fragment said."""

from __future__ import annotations

from typing import Any

from click.testing import Result
from typer.testing import CliRunner

from gymwright.cli import app


def invoke(*args: Any) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def assert_clean(result: Result, *fragments: str, code: int = 1) -> str:
    """Exit `code`, no exception and no traceback, every fragment said; the output, on one line."""
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert result.exit_code == code, result.output
    flat = " ".join(result.output.replace("│", " ").split())  # typer boxes usage errors
    assert "Traceback" not in flat and "this is a gymwright bug" not in flat
    for fragment in fragments:
        assert fragment in flat, (fragment, flat)
    return flat
