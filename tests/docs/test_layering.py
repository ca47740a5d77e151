"""The packages import only downward, as docs/architecture.md draws them (issue 15, item 5)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support import paths

ROOT = paths.SRC
DOC = paths.ROOT / "docs" / "architecture.md"
LAYERS = {
    "errors": 0, "diagnostic": 0, "atomic": 0, "runtime": 1, "mapf": 2, "spec": 3, "compile": 4,
    "verify": 5, "llm": 6, "codemode": 6, "store": 7, "design": 8, "train": 9, "evaluate": 10, "engineer": 11,
    "curriculum": 12, "report": 12, "cli": 13, "__init__": 13,
}
EXCEPTIONS = {
    # a generated grid.solve env in gymwright's own process solves the layouts its module does not
    # carry; an exported module carries its pools and never reaches this import
    ("runtime/solved.py", "mapf"),
}


def package(path: Path) -> str:
    rel = path.relative_to(ROOT)
    name = rel.parts[0].removesuffix(".py")
    return "cli" if name.startswith("cli") else name


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, gymwright package) of every import in `path`, inside functions too."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "gymwright":
            parts = node.module.split(".")
            names = [parts[1]] if len(parts) > 1 else [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name.split(".")[1] for a in node.names if a.name.startswith("gymwright.")]
        out += [(node.lineno, "cli" if n.startswith("cli") else n) for n in names]
    return out


def test_every_package_imports_only_packages_below_it() -> None:
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        me = package(path)
        rel = str(path.relative_to(ROOT))
        for line, target in imports(path):
            if target == me or (rel, target) in EXCEPTIONS:
                continue
            if target not in LAYERS:
                wrong.append(f"{rel}:{line} imports gymwright.{target}, which docs/architecture.md does not place")
            elif LAYERS[target] > LAYERS[me] or (LAYERS[target] == LAYERS[me] and LAYERS[me] not in (0, 13)):
                wrong.append(f"{rel}:{line} ({me}, layer {LAYERS[me]}) imports {target} (layer {LAYERS[target]})")
    assert not wrong, "\n".join(wrong)


def test_nothing_imports_the_command_line() -> None:
    users = [f"{p.relative_to(ROOT)}:{line}" for p in ROOT.rglob("*.py") if package(p) not in ("cli", "__init__")
             for line, target in imports(p) if target == "cli"]
    assert not users, users


def test_the_architecture_doc_draws_these_layers() -> None:
    """Every package of the table in docs/architecture.md sits at the layer the test uses."""
    rows = re.findall(r"^\| (\d+) \| (.+?) \|", DOC.read_text(), flags=re.M)
    doc = {name.strip("` /").removesuffix(".py").removesuffix("_*"): int(layer)
           for layer, cell in rows for name in cell.split(", ")}
    for name, layer in LAYERS.items():
        assert doc.get(name) == layer, (name, doc.get(name), layer)
    assert {p.name.removesuffix(".py") for p in ROOT.iterdir()
            if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"} <= set(doc)


def test_the_runtime_imports_nothing_of_gymwright_and_llm_knows_no_environments() -> None:
    for path in sorted(ROOT.rglob("*.py")):
        rel, me = str(path.relative_to(ROOT)), package(path)
        found = {t for _, t in imports(path) if t != me and (rel, t) not in EXCEPTIONS}
        if me == "runtime":
            assert not found, (rel, found)
        if me == "llm":
            assert found <= {"errors", "diagnostic", "atomic"}, (rel, found)
