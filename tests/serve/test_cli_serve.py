"""`gymwright serve`: a bad spec, role, opponent or rule fails before anything listens, with the fix
(serving for real: tests/serve/test_interop_recipes.py runs the command of docs/interop.md)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gymwright.cli import app

pytest.importorskip("openenv.core.env_server")  # a slow import: paid at collection, not in a test


@pytest.mark.parametrize(("args", "said"), [
    (["stag_hunt", "--role", "hunter_9"], "did you mean hunter_1"),
    (["stag_hunt", "--role", "hunter_0", "--opponent", "scripted:nope"], "its baselines: always_stag, always_hare"),
    (["stag_hunt", "--opponent", "scripted:always_stag"], "without a role"),
    (["stag_hunt", "--invalid", "skip"], "give one of random, first"),
    (["stag_hunte"], "did you mean stag_hunt?"),
])
def test_serve_refuses_what_it_cannot_serve(args, said):
    result = CliRunner().invoke(app, ["serve", *args])
    assert result.exit_code == 1 and said in result.output, result.output


def test_serve_help_names_the_loopback_default():
    result = CliRunner().invoke(app, ["serve", "--help"])
    assert result.exit_code == 0 and "127.0.0.1" in result.output and "--opponent" in result.output
