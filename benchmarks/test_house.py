"""`house.py`: the bars issue 40 set hold on the committed tree, and the harness counts what it says.

Run with `pytest -m '' benchmarks/test_house.py` (CI runs the benchmarks' tests).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import house

ROOT = Path(__file__).resolve().parent.parent
LONGEST = 120  # lines, for any function of train/ or curriculum/
COMPLEXITY_PER_KLOC = 0.78  # the previous review's figure, which issue 40 asks to go under


def test_the_tree_keeps_the_bars_issue_40_set() -> None:
    tree = house.measure(ROOT)
    too_long = [f"{f.path}:{f.line} {f.name} ({f.lines} lines)" for f in tree.longest if f.lines > LONGEST]
    assert not too_long, f"functions of train/ or curriculum/ over {LONGEST} lines: {too_long}"
    assert tree.complexity_per_kloc < COMPLEXITY_PER_KLOC, (
        f"{tree.complexity} complexity findings in {tree.lines} lines ({tree.complexity_per_kloc}/kLOC): "
        f"run `ruff check --select {house.COMPLEXITY_RULES} src/gymwright` and split the new ones")
    assert not tree.type_ignores_unexplained, (
        "a `type: ignore` must say on its line why no typing states what the code does: "
        f"{tree.type_ignores_unexplained}")
    assert not tree.grid_files, f"files outside mechanics/grid/ that branch on the grid section: {tree.grid_files}"
    assert tree.tests_top <= 2, "tests mirror the package: a test file goes in the folder of what it tests"


def test_the_harness_finds_what_it_counts(tmp_path: Path) -> None:
    package = tmp_path / "src" / "gymwright"
    (package / "train").mkdir(parents=True)
    (package / "mechanics" / "grid").mkdir(parents=True)
    body = "\n".join(f"    x{i} = {i}" for i in range(125))
    (package / "train" / "long.py").write_text(f"def loop():\n{body}\n")
    (package / "train" / "typed.py").write_text(textwrap.dedent("""
        a = f()  # type: ignore[attr-defined]
        b = g()  # type: ignore[misc]  # numpy's stubs cannot say it
    """))
    (package / "curriculum").mkdir()
    (package / "curriculum" / "runner.py").write_text("from gymwright.train import long\n")
    (package / "curriculum" / "goal.py").write_text("from gymwright.spec import model\n")
    (package / "cli").mkdir()
    (package / "cli" / "demo.py").write_text("import gymwright.train\nimport os\n")
    (package / "compile.py").write_text('if cs.section("grid") is None:\n    pass\n')
    (package / "mechanics" / "grid" / "python.py").write_text("if cs.grid is None:\n    pass\n")
    (tmp_path / "tests" / "train").mkdir(parents=True)
    (tmp_path / "tests" / "test_top.py").write_text("")
    (tmp_path / "tests" / "train" / "test_nested.py").write_text("")

    tree = house.measure(tmp_path)

    assert [(f.name, f.lines) for f in tree.longest[:1]] == [("loop", 126)]
    assert tree.type_ignores == 2 and tree.type_ignores_unexplained == ["src/gymwright/train/typed.py:2"]
    assert tree.grid_files == ["src/gymwright/compile.py"]  # the grid module's own files do not count
    assert tree.imports == {"curriculum runner": 1, "cli/demo.py": 1}
    assert (tree.tests_top, tree.tests_nested) == (1, 1)
