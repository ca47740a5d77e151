"""The house's own figures: the measurements a reviewer takes of the source tree.

    python benchmarks/house.py [--root .] [--json]

What it counts (all from the source, nothing run):

- lines: every line of every ``.py`` under ``src/gymwright``;
- complexity: ruff's findings for McCabe complexity over 10 (C901), more than 6 returns
  (PLR0911), 12 branches (PLR0912) or 50 statements (PLR0915), and per 1,000 lines;
- longest functions in ``train/`` and the curriculum (``curriculum/``, or
  ``engineer/curriculum.py`` before it had a package of its own);
- grid branching: files outside the grid mechanics module's own files that test the spec's grid
  section by name (``cs.grid``, ``spec.grid``, ``checked.grid``, ``section("grid")``);
- ``type: ignore`` comments, and how many carry no reason (a reason is a ``#`` comment after it);
- gymwright modules imported by the curriculum's stage runner (``curriculum/runner.py``, before
  ``engineer/curriculum.py``) and by ``cli/demo.py``;
- test files at the top of ``tests/`` and in its subfolders.

``benchmarks/test_house.py`` holds the tree to the bars issue 40 set (no function over 120 lines in
``train/`` or the curriculum, complexity per 1,000 lines under 0.78, no ``type: ignore`` without
a reason, no file outside the grid module branching on its section).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

COMPLEXITY_RULES = "C901,PLR0911,PLR0912,PLR0915"
# a spec's or a checked spec's grid section, read by name (not a `grid` of something else: a text
# mention's `m.grid` in design/params_from_text.py)
GRID_TEST = re.compile(r"\b(?:cs|spec|checked|self\.cs|g\.cs|gen\.cs|self\.spec|compiled\.checked)\.grid\b"
                       r"|section\(\"grid\"\)")
IGNORE = re.compile(r"#\s*type:\s*ignore(\[[^\]]*\])?(.*)$")


@dataclass
class Function:
    path: str
    name: str
    line: int
    lines: int


@dataclass
class House:
    lines: int
    complexity: int
    complexity_per_kloc: float
    longest: list[Function] = field(default_factory=list)
    grid_files: list[str] = field(default_factory=list)
    type_ignores: int = 0
    type_ignores_unexplained: list[str] = field(default_factory=list)
    imports: dict[str, int] = field(default_factory=dict)
    tests_top: int = 0
    tests_nested: int = 0


def source_files(package: Path) -> list[Path]:
    return sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)


def functions(path: Path, root: Path) -> list[Function]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno or node.lineno
            found.append(Function(str(path.relative_to(root)), node.name, node.lineno,
                                  end - node.lineno + 1))
    return found


def curriculum_files(package: Path) -> list[Path]:
    home = package / "curriculum"
    return source_files(home) if home.is_dir() else [package / "engineer" / "curriculum.py"]


def runner_file(package: Path) -> Path:
    """The curriculum's stage runner: `curriculum/runner.py`, or `engineer/curriculum.py` before."""
    home = package / "curriculum" / "runner.py"
    return home if home.exists() else package / "engineer" / "curriculum.py"


def complexity(root: Path) -> int:
    ruff = Path(sys.executable).with_name("ruff")
    out = subprocess.run([str(ruff if ruff.exists() else "ruff"), "check", "--select",
                          COMPLEXITY_RULES, "--output-format", "concise", "--no-cache",
                          "src/gymwright"], cwd=root, capture_output=True, text=True)
    return sum(1 for line in out.stdout.splitlines() if re.search(r": (C901|PLR09)", line))


def grid_files(package: Path, root: Path) -> list[str]:
    own = {"grid"}
    hits = []
    for path in source_files(package):
        if own & {part.removesuffix(".py") for part in path.relative_to(package).parts}:
            continue
        if GRID_TEST.search(path.read_text(encoding="utf-8")):
            hits.append(str(path.relative_to(root)))
    return hits


def type_ignores(package: Path, root: Path) -> tuple[int, list[str]]:
    count, bare = 0, []
    for path in source_files(package):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = IGNORE.search(line)
            if found:
                count += 1
                if "#" not in found.group(2):
                    bare.append(f"{path.relative_to(root)}:{number}")
    return count, bare


def gymwright_imports(paths: list[Path]) -> int:
    names: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module.startswith("gymwright"):
                    names.add(node.module)
            elif isinstance(node, ast.ImportFrom) and node.level:
                names.add("." * node.level + (node.module or ""))
            elif isinstance(node, ast.Import):
                names |= {a.name for a in node.names if a.name.startswith("gymwright")}
    return len(names)


def measure(root: Path) -> House:
    package = root / "src" / "gymwright"
    files = source_files(package)
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files)
    found = complexity(root)
    measured = [f for p in source_files(package / "train") + curriculum_files(package)
                for f in functions(p, root)]
    measured.sort(key=lambda f: -f.lines)
    ignores, bare = type_ignores(package, root)
    tests = [p for p in (root / "tests").rglob("test_*.py") if "data" not in p.parts]
    return House(
        lines=lines, complexity=found, complexity_per_kloc=round(1000 * found / lines, 3),
        longest=measured[:5], grid_files=grid_files(package, root),
        type_ignores=ignores, type_ignores_unexplained=bare,
        imports={"curriculum runner": gymwright_imports([runner_file(package)]),
                 "cli/demo.py": gymwright_imports([package / "cli" / "demo.py"])},
        tests_top=sum(1 for p in tests if p.parent == root / "tests"),
        tests_nested=sum(1 for p in tests if p.parent != root / "tests"))


def show(house: House) -> str:
    rows = [f"lines of source        {house.lines}",
            f"complexity findings    {house.complexity} ({house.complexity_per_kloc} per 1,000 lines;"
            f" rules {COMPLEXITY_RULES})",
            "longest functions (train/, curriculum):"]
    rows += [f"  {f.lines:4d}  {f.path}:{f.line} {f.name}" for f in house.longest]
    rows.append(f"files testing the grid section outside grid's own: {len(house.grid_files)}")
    rows += [f"  {p}" for p in house.grid_files]
    rows.append(f"type: ignore comments  {house.type_ignores}"
                f" ({len(house.type_ignores_unexplained)} without a reason)")
    rows.append("gymwright modules imported: "
                + ", ".join(f"{k} {v}" for k, v in house.imports.items()))
    rows.append(f"test files             {house.tests_top} at the top of tests/,"
                f" {house.tests_nested} in subfolders")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    house = measure(args.root)
    print(json.dumps(asdict(house), indent=2) if args.json else show(house))


if __name__ == "__main__":
    main()
