"""Runtime modules are inlined into generated envs: each imports only what an exported file may."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.support.paths import SRC

RUNTIME = SRC / "runtime"
STDLIB = set(sys.stdlib_module_names)


def import_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: relative imports are not allowed"
            assert node.module is not None
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize(("module", "allowed"), [
    ("core.py", {"numpy", "math", "os", "difflib"}),
    ("namespace.py", set()),
    ("scenario.py", {"numpy", "math"}),
    ("grid.py", {"numpy", "collections", "typing"}),
    ("grid_batch.py", {"numpy"}),
    ("batch.py", {"numpy"}),
    ("aec.py", {"numpy", "gymnasium", "pettingzoo"} | STDLIB),
    ("conventions.py", {"numpy", "gymnasium", "sys", "collections", "typing"}),
])
def test_runtime_module_is_standalone(module: str, allowed: set[str]) -> None:
    roots = import_roots(RUNTIME / module)
    assert roots <= allowed, roots - allowed
    assert "__future__" not in roots  # would break when inlined below other code


def test_grid_batch_needs_numpy_only() -> None:
    assert import_roots(RUNTIME / "grid_batch.py") == {"numpy"}
