"""Runtime modules are inlined into generated envs: each imports only what an exported file may."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.support.paths import SRC

PACKAGE = SRC
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


ALLOWED = {
    "runtime/core.py": {"numpy", "math", "os", "difflib"},
    "runtime/namespace.py": set(),
    "runtime/scenario.py": {"numpy", "math"},
    "runtime/batch.py": {"numpy"},
    "runtime/aec.py": {"numpy", "gymnasium", "pettingzoo"} | STDLIB,
    "runtime/conventions.py": {"numpy", "gymnasium", "sys", "collections", "typing"},
    "runtime/textview.py": {"numpy", "json", "re"},
    "mechanics/grid/runtime.py": {"numpy", "collections", "typing"},
    "mechanics/grid/runtime_batch.py": {"numpy"},
    "mechanics/grid/runtime_solved.py": {"numpy", "base64", "io", "gymwright"},  # gymwright's solver, only at params an export does not carry
}


@pytest.mark.parametrize(("module", "allowed"), sorted(ALLOWED.items()))
def test_runtime_module_is_standalone(module: str, allowed: set[str]) -> None:
    roots = import_roots(PACKAGE / module)
    assert roots <= allowed, roots - allowed
    assert "__future__" not in roots  # would break when inlined below other code


def test_every_inlined_file_is_checked_here() -> None:
    from gymwright.compile.inline import runtime_files

    assert set(runtime_files()) == set(ALLOWED)


def test_grid_batch_needs_numpy_only() -> None:
    assert import_roots(PACKAGE / "mechanics/grid/runtime_batch.py") == {"numpy"}
