"""The runtime a generated module carries: only the definitions it reaches, imports on top.

The runtime modules (`gymwright/runtime/*.py`, then each mechanics module's runtime files: the
`runtime` of its registry entry) are standalone numpy code. A generated module
inlines the top-level definitions its own code names, and those they name in turn (a
closure), in the runtime's order, each with the comment lines above it; the imports those
definitions need, and the module's own, are gathered into one block at the top of the module.
`trusted_definitions()` is what the audit compares the inlined definitions with.
"""

from __future__ import annotations

import ast
import functools
import sys
from dataclasses import dataclass
from pathlib import Path

from gymwright.compile.tidy import tidy
from gymwright.compile.wrap import wrap_source
from gymwright.mechanics.registry import MECHANICS

PACKAGE_DIR = Path(__file__).resolve().parent.parent
CORE_FILES = ("runtime/core.py", "runtime/batch.py", "runtime/aec.py", "runtime/namespace.py", "runtime/scenario.py",
              "runtime/conventions.py", "runtime/textview.py")


def runtime_files() -> tuple[str, ...]:
    """The runtime files a generated module may inline (paths in the package), in order: the
    core's, then each mechanics module's."""
    return CORE_FILES + tuple(f for m in MECHANICS.values() for f in m.runtime)


@dataclass(frozen=True)
class Definition:
    """One top-level function, class or constant of a runtime module."""

    name: str
    module: str
    text: str  # its source, with the comment lines right above it
    dump: str  # ast.dump of its node: what the audit compares
    uses: frozenset[str]  # every name it reads


@dataclass(frozen=True)
class Imported:
    """One name a runtime module imports: `import numpy as np` -> Imported('np', 'numpy', None)."""

    name: str
    module: str
    member: str | None  # `from module import member` (None: `import module [as name]`)

    def line(self) -> str:
        if self.member is None:
            return f"import {self.module}" + (f" as {self.name}" if self.name != self.module else "")
        return f"from {self.module} import {self.member}" + (f" as {self.name}" if self.name != self.member else "")


@functools.cache
def runtime() -> tuple[dict[str, Definition], dict[str, Imported]]:
    """Every definition of the runtime modules (names are unique across them) and every import."""
    defs: dict[str, Definition] = {}
    imports: dict[str, Imported] = {}
    for file in runtime_files():
        text = (PACKAGE_DIR / file).read_text()
        lines = text.split("\n")
        for node in ast.parse(text).body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                for imp in imported(node):
                    imports[imp.name] = imp
            elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.Assign | ast.AnnAssign):
                for name in _bound(node):
                    if name in defs:
                        raise AssertionError(f"runtime name {name} is defined in {defs[name].module} and {file}")
                    defs[name] = Definition(name, file, _text(lines, node), ast.dump(node), _uses(node))
    return defs, imports


def trusted_definitions() -> dict[str, str]:
    """name -> ast.dump of every runtime definition (a multi-name assignment under each name)."""
    return {name: d.dump for name, d in runtime()[0].items()}


def trusted_imports() -> frozenset[Imported]:
    """Every import a generated module may carry (the runtime's and the module's own)."""
    return frozenset(runtime()[1].values()) | frozenset(GENERATED_IMPORTS)


def imported(node: ast.Import | ast.ImportFrom) -> list[Imported]:
    """The names an import statement binds."""
    if isinstance(node, ast.Import):
        return [Imported(a.asname or a.name, a.name, None) for a in node.names]
    return [Imported(a.asname or a.name, node.module or "", a.name) for a in node.names]


GENERATED_IMPORTS = (Imported("gymnasium", "gymnasium", None), Imported("ParallelEnv", "pettingzoo", "ParallelEnv"))
"""Imports of the generated env itself (it subclasses ParallelEnv; its spaces are gymnasium's)."""


def inline(used: set[str], extra_imports: tuple[Imported, ...] = ()) -> tuple[str, str]:
    """(imports block, runtime block) for generated code that names `used`."""
    defs, imports = runtime()
    need: set[str] = set()
    todo = [n for n in used if n in defs]
    while todo:
        name = todo.pop()
        if name in need:
            continue
        need.add(name)
        todo += [n for n in defs[name].uses if n in defs and n not in need]
    chosen = [d for d in defs.values() if d.name in need]
    seen: set[str] = set()
    blocks: list[str] = []
    module = ""
    for d in chosen:
        if d.text in seen:  # a multi-name assignment appears once
            continue
        seen.add(d.text)
        if d.module != module:
            module = d.module
            blocks.append(f"# ---- gymwright runtime ({module}) " + "-" * (60 - len(module)))
        blocks.append(d.text)
    names = set(used) | {n for d in chosen for n in d.uses}
    return _import_block({imports[n] for n in names if n in imports} | set(extra_imports)), "\n\n\n".join(blocks)


def _import_block(imports: set[Imported]) -> str:
    """isort's layout: standard library, then the rest; `import x` before `from x import a, b`."""
    groups: list[list[str]] = [[], []]
    for third in (0, 1):
        mine = [i for i in imports if (i.module.split(".")[0] not in sys.stdlib_module_names) == bool(third)]
        groups[third] += sorted(i.line() for i in mine if i.member is None)
        by_module: dict[str, list[str]] = {}
        for i in mine:
            if i.member is not None:
                by_module.setdefault(i.module, []).append(i.member if i.name == i.member else f"{i.member} as {i.name}")
        groups[third] += [f"from {m} import {', '.join(sorted(names))}" for m, names in sorted(by_module.items())]
    return "\n\n".join("\n".join(g) for g in groups if g)


def _bound(node: ast.FunctionDef | ast.ClassDef | ast.Assign | ast.AnnAssign) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _uses(node: ast.stmt) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def _text(lines: list[str], node: ast.stmt) -> str:
    decorators = getattr(node, "decorator_list", None) or []
    start = min([node.lineno] + [d.lineno for d in decorators]) - 1
    while start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    return "\n".join(lines[start:node.end_lineno])


MARKER = "# ---- generated from the spec " + "-" * 69
"""The line between the runtime and the generated code (what the audit splits a module at)."""


@functools.lru_cache(maxsize=128)
def _tidied(body: str, taken: frozenset[str]) -> str:
    """`body` tidied and wrapped (both pure functions of the text: a module generated again, as
    the verifier, the trainer and the batch backend each do, is tidied once)."""
    return wrap_source(tidy(body, taken))


def assemble(docstring: str, body: str, extra_imports: tuple[Imported, ...] = ()) -> str:
    """A whole module: `docstring` (already safe text), the imports, the runtime that `body`
    reaches, the marker line, then `body` (the generated code)."""
    try:
        used = {n.id for n in ast.walk(ast.parse(body)) if isinstance(n, ast.Name)}
    except SyntaxError:  # the audit refuses the module and says where; inline everything meanwhile
        used = set(runtime()[0])
    imports, runtime_block = inline(used, extra_imports)
    body = _tidied(body, frozenset(runtime()[0]))
    return f'"""{docstring}"""\n\n{imports}\n\n\n{runtime_block}\n\n\n{MARKER}\n{body}'
