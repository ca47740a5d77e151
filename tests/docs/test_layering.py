"""The packages import only downward, as docs/architecture.md draws them (issue 15, item 5).

A file of `gymwright/mechanics/` belongs to the stage its name says (`mechanics.base.stage_of`:
`runtime*.py` to runtime, `python.py`, `batch.py`, `tables.py`, `emit.py` to compile, the rest to
spec), and is held to that package's rule: a mechanics module keeps one folder while each of its
files keeps the layer of its stage."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from gymwright.mechanics.base import stage_of
from tests.support import paths

ROOT = paths.SRC
DOC = paths.ROOT / "docs" / "architecture.md"
LAYERS = {
    "errors": 0, "diagnostic": 0, "atomic": 0, "runtime": 1, "mapf": 2, "spec": 3, "compile": 4,
    "verify": 5, "llm": 6, "codemode": 6, "store": 7, "textgame": 7, "design": 8, "train": 9, "evaluate": 10,
    "lmtrain": 10, "serve": 10, "engineer": 11,
    "curriculum": 12, "report": 12, "cli": 13, "__init__": 13,
}
EXCEPTIONS = {
    # a generated grid.solve env in gymwright's own process solves the layouts its module does not
    # carry; an exported module carries its pools and never reaches this import
    ("mechanics/grid/runtime_solved.py", "mapf"),
}
MECHANICS_DOC = {"mechanics": 3, "mechanics/*/runtime*": 1, "mechanics/*/python": 4, "mechanics/*/batch": 4,
                 "mechanics/*/tables": 4, "mechanics/emit": 4}
"""How docs/architecture.md places the files of `mechanics/` (the package is spec, but for these)."""


def package(path: Path) -> str:
    rel = path.relative_to(ROOT)
    name = rel.parts[0].removesuffix(".py")
    if name == "mechanics":
        return stage_of(path)
    return "cli" if name.startswith("cli") else name


def _target(module: str) -> str:
    """The package an import of the gymwright module `module` reaches (a file of `mechanics/`:
    the package of its stage)."""
    parts = module.split(".")
    if parts[1] == "mechanics":
        return stage_of(ROOT.joinpath(*parts[1:]).with_suffix(".py"))
    return "cli" if parts[1].startswith("cli") else parts[1]


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, gymwright package) of every import in `path`, inside functions too."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        modules = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "gymwright":
            if node.module == "gymwright":
                modules = [f"gymwright.{a.name}" for a in node.names]
            elif node.module == "gymwright.mechanics" or node.module.startswith("gymwright.mechanics."):
                here = ROOT.joinpath(*node.module.split(".")[1:])  # `from gymwright.mechanics.grid import runtime`
                modules = [f"{node.module}.{a.name}" if (here / f"{a.name}.py").exists() else node.module
                           for a in node.names]
            else:
                modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names if a.name.startswith("gymwright.")]
        out += [(node.lineno, _target(m)) for m in modules]
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
    for name, layer in {**LAYERS, **MECHANICS_DOC}.items():
        assert doc.get(name) == layer, (name, doc.get(name), layer)
    assert {p.name.removesuffix(".py") for p in ROOT.iterdir()
            if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"} <= set(doc)


def test_every_file_of_a_mechanics_module_has_a_stage() -> None:
    """A module's files are named for their stage; a file the rule puts in spec imports no code
    generator (it would be a compile file under another name)."""
    for path in sorted((ROOT / "mechanics").rglob("*.py")):
        assert package(path) in ("runtime", "spec", "compile"), path


def test_the_runtime_imports_nothing_of_gymwright_and_llm_knows_no_environments() -> None:
    for path in sorted(ROOT.rglob("*.py")):
        rel, me = str(path.relative_to(ROOT)), package(path)
        found = {t for _, t in imports(path) if t != me and (rel, t) not in EXCEPTIONS}
        if me == "runtime":
            assert not found, (rel, found)
        if me == "llm":
            assert found <= {"errors", "diagnostic", "atomic"}, (rel, found)
