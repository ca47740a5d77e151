"""Exports of model code are honest (issue 39, item 3): by default the exported file is a thin
PettingZoo module whose environments run the model's code in the sandbox worker; importing it
runs nothing a model wrote; `--raw` writes the module itself under a header that says so."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.codemode.export import RAW_HEADER
from tests.support.paths import MEET_ON_A_LINE, SRC

GOOD = MEET_ON_A_LINE
PLAY = """
import sys
sys.path.insert(0, {folder!r})
from pettingzoo.test import api_test, parallel_api_test
import exported
assert not hasattr(exported, "MeetOnALine")  # the class lives in the worker only
e = exported.parallel_env()
parallel_api_test(e, num_cycles=50)
e.close()
a = exported.env()
api_test(a, num_cycles=20)
a.close()
print("played", sorted(m for m in sys.modules if "meet" in m.lower() or m == "gymwright_model"))
"""


def export(tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    target = tmp_path / "exported.py"
    result = CliRunner().invoke(app, ["export", str(GOOD), "-o", str(target), *args])
    return result.exit_code, result.output, target


def test_the_default_export_runs_the_model_only_in_the_sandbox(tmp_path: Path) -> None:
    code, output, target = export(tmp_path)
    assert code == 0, output
    assert "sandbox worker" in output and "vetted" not in output
    tree = ast.parse(target.read_text())
    kinds = {type(node).__name__ for node in tree.body}
    assert kinds <= {"Expr", "ImportFrom", "Assign", "FunctionDef"}, kinds  # no class, no model code as code
    assigned = {t.id: n.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Name)}
    assert all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in assigned.values())
    assert ast.literal_eval(assigned["MODEL_CODE"]) == GOOD.read_text()
    done = subprocess.run([sys.executable, "-c", PLAY.format(folder=str(tmp_path))], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Passed Parallel API test" in done.stdout and "Passed API test" in done.stdout  # PettingZoo's own
    assert done.stdout.strip().splitlines()[-1] == "played []"


def test_a_changed_model_code_is_refused_by_its_digest(tmp_path: Path) -> None:
    code, output, target = export(tmp_path)
    assert code == 0, output
    text = target.read_text()
    target.write_text(text.replace("MODEL_CODE = '", "MODEL_CODE = 'import numpy\\n", 1))
    play = f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import exported; exported.parallel_env()"
    done = subprocess.run([sys.executable, "-c", play], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "MODEL_CODE does not match its SHA256: it was changed after the export" in done.stderr


def test_raw_writes_the_module_under_a_header_that_says_it_runs_unsandboxed(tmp_path: Path) -> None:
    code, output, target = export(tmp_path, "--raw")
    assert code == 0, output
    assert target.read_text() == RAW_HEADER + GOOD.read_text()
    assert "UNSANDBOXED" in target.read_text().splitlines()[2] and "UNSANDBOXED" in output


def test_raw_is_refused_for_a_spec(tmp_path: Path) -> None:
    spec = SRC / "spec" / "library"
    first = sorted(spec.glob("*.yaml"))[0]
    result = CliRunner().invoke(app, ["export", str(first), "-o", str(tmp_path / "e.py"), "--raw"])
    assert result.exit_code == 1 and "--raw: applies to a code-mode module" in result.output
    assert not (tmp_path / "e.py").exists()
