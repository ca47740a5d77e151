"""docs/extending.md's recipes stay true: the function table and the backends' emitter tables
agree, and every file the recipes name exists."""

from __future__ import annotations

import re

from gymwright.compile.agent_axis import CALLS as AXIS
from gymwright.compile.npexpr import CALLS as BATCH
from gymwright.compile.pyexpr import CALLS as PYTHON
from gymwright.spec.expr.functions import FUNCTIONS
from tests.support.paths import ROOT


def test_every_function_has_a_lowering_in_both_backends() -> None:
    assert set(PYTHON) == set(FUNCTIONS), set(PYTHON) ^ set(FUNCTIONS)
    assert set(BATCH) == set(FUNCTIONS), set(BATCH) ^ set(FUNCTIONS)
    assert set(AXIS) <= set(FUNCTIONS), set(AXIS) - set(FUNCTIONS)


def test_every_file_the_recipes_name_exists() -> None:
    doc = (ROOT / "docs" / "extending.md").read_text()
    paths = set(re.findall(r"`((?:src|tests|docs)/[\w/.]+\.(?:py|md))`", doc)) | {"pyproject.toml", "constraints.txt"}
    assert len(paths) > 20
    missing = [p for p in sorted(paths) if "<" not in p and not (ROOT / p).exists()]
    assert not missing, missing
