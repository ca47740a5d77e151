"""The audit of generated modules: defence in depth behind the rule that free text never
becomes code.

Before any generated module runs (or is exported), `audit_module` parses it and checks that it
is made only of what the generator can legitimately emit:

- the module docstring; then imports that the runtime or the env itself makes, and runtime
  definitions each *exactly* (as a syntax tree) as gymwright ships it; then the marker line
  (`gymwright.compile.inline.MARKER`) and the generated part;
- in the generated part, only the statement and expression forms the generators write (no
  `try`, `while`, `global`, `del`, walrus, `yield`, `await`, no imports, no decorators);
- every free name is one the module binds itself, a runtime function or class, or a listed
  safe builtin (never `eval`, `exec`, `open`, `getattr`, `vars`, `__import__`, ...); a module
  (`np`, `math`, `gymnasium`, `functools`) is named only as `module.attr`, with an attribute
  that the generators' own templates use;
- every attribute is one that the generators' templates use, a name the spec declared, or a
  generated name made from declared names; never a dunder, never one of
  `gymwright.spec.names.UNSAFE_ATTRIBUTES` (file access, reflection, `str.format`).

The allowed attributes are read from the string literals of the generator modules themselves, so the audit follows the generators as they change and still refuses anything
a spec's text could smuggle in. A module that fails is refused with `CompileError`
("generated code failed its audit") naming the line, before a single statement of it runs.
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import json
import re
from pathlib import Path

from gymwright.compile.common import spec_sha
from gymwright.compile.inline import MARKER, imported, trusted_definitions, trusted_imports
from gymwright.errors import CompileError
from gymwright.mechanics.base import stage_of
from gymwright.spec.checked import CheckedSpec
from gymwright.spec.names import UNSAFE_ATTRIBUTES, ident

_COMPILE_DIR = Path(__file__).resolve().parent
GENERATORS = ("python_backend.py", "pygen/*.py", "common.py", "batch_backend.py", "tables.py",
              "pyexpr.py", "npexpr.py", "agent_axis.py", "sharing.py")
"""The modules (glob patterns under compile/) whose string literals are the templates of generated code;
with the code-generating files of the mechanics modules (`mechanics_generators`)."""
_MECHANICS_DIR = _COMPILE_DIR.parent / "mechanics"


def mechanics_generators() -> list[Path]:
    """The files of the mechanics modules that generate code (`mechanics.base.stage_of`)."""
    return [p for p in sorted(_MECHANICS_DIR.rglob("*.py")) if stage_of(p) == "compile"]
MODULES = frozenset({"np", "math", "gymnasium", "functools"})
"""Modules a generated module may name, always as `module.attribute`."""
SAFE_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "dict", "enumerate", "float", "format", "int", "isinstance",
    "len", "list", "max", "min", "range", "reversed", "round", "set", "slice", "sorted", "str", "sum",
    "tuple", "zip", "True", "False", "None", "Exception", "ValueError", "RuntimeError",
    "TypeError", "KeyError", "IndexError", "NotImplementedError",
})
"""Builtins generated code may call: none reaches files, modules, frames or attributes by name."""
_STATEMENTS = (ast.Import, ast.ImportFrom, ast.Assign, ast.AugAssign, ast.Expr, ast.If, ast.For,
               ast.With, ast.Return, ast.Raise, ast.Continue, ast.Break, ast.Pass, ast.FunctionDef,
               ast.ClassDef)
_EXPRESSIONS = (ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Lambda, ast.IfExp, ast.Dict, ast.Set,
                ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Compare, ast.Call,
                ast.FormattedValue, ast.JoinedStr, ast.Constant, ast.Attribute, ast.Subscript,
                ast.Starred, ast.Name, ast.List, ast.Tuple, ast.Slice)
_PARTS = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop, ast.comprehension,
          ast.arguments, ast.arg, ast.keyword, ast.alias, ast.withitem)
_DUNDER_METHODS = frozenset({"__init__"})
_ATTR = re.compile(r"\.([A-Za-z_]\w*)")
_MODULE_ATTR = re.compile(r"(?<![\w.])(" + "|".join(sorted(MODULES)) + r")\.([A-Za-z_]\w*)")


@functools.cache
def templates() -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """(attributes, attributes per module) that the generators' string literals use."""
    attrs: set[str] = set()
    per_module: dict[str, set[str]] = {m: set() for m in MODULES}
    for path in sorted(p for pattern in GENERATORS for p in _COMPILE_DIR.glob(pattern)) + mechanics_generators():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                attrs |= set(_ATTR.findall(node.value))
                for module, attr in _MODULE_ATTR.findall(node.value):
                    per_module[module].add(attr)
    attrs -= UNSAFE_ATTRIBUTES
    return frozenset(attrs), {m: frozenset(a - UNSAFE_ATTRIBUTES) for m, a in per_module.items()}


def declared_attributes(cs: CheckedSpec) -> frozenset[str]:
    """Attribute names a spec legitimately adds: its symbols and the generated names made from them."""
    out = set(cs.symbols) | {ident(n) for n in (*cs.choice_names, *cs.arg_names)} | {"action"}
    for r in cs.roles:
        out |= {f"_observe_{r.name}", f"_observe_all__{r.name}"}
        for c in r.choices:
            out |= {f"_argv_{r.name}__{c.name}__{a.name}" for a in c.args}
    out |= {f"_script_{b.name}" for b in cs.baselines}
    return frozenset(out)


class AuditError(CompileError):
    """A generated module is not made only of checked parts."""


def audit_module(source: str, cs: CheckedSpec) -> None:
    """Refuse `source` (raise AuditError) unless it is its docstring, imports and runtime
    definitions exactly as gymwright ships them, the marker line, then generated code built
    only from checked parts (see the module doc).

    A module this process passed before for the same checked spec (the same source, by its
    SHA-256, and the same spec and params) passes again without a second walk; a refusal is never
    remembered."""
    key = (hashlib.sha256(source.encode()).hexdigest(), spec_sha(cs),
           json.dumps(cs.params, sort_keys=True, default=repr))
    if key in _PASSED:
        return
    _audit(source, cs)
    if len(_PASSED) >= _PASSED_MAX:
        _PASSED.pop(next(iter(_PASSED)))
    _PASSED[key] = None


_PASSED: dict[tuple[str, str, str], None] = {}  # (source sha256, spec sha256, params) of modules passed
_PASSED_MAX = 512


def _audit(source: str, cs: CheckedSpec) -> None:
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise _failed(e.lineno or 0, f"it does not parse ({e.msg})") from None
    body = tree.body
    if not body or not (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                        and isinstance(body[0].value.value, str)):
        raise _failed(1, "it does not open with its docstring")
    lines = source.split("\n")
    after_doc = body[0].end_lineno or 1
    marker = next((i for i in range(after_doc, len(lines)) if lines[i] == MARKER), None)
    if marker is None:
        raise _failed(after_doc + 1, "the line that ends the runtime part is missing")
    runtime = _runtime_part(body[1:], marker)
    try:
        generated = ast.parse("\n".join(lines[marker + 1:]))
    except SyntaxError as e:  # the whole module parsed: cannot happen, but never exec what fails
        raise _failed((e.lineno or 0) + marker + 1, f"it does not parse ({e.msg})") from None
    _Auditor(cs, runtime, marker + 1).run(generated)


def _runtime_part(nodes: list[ast.stmt], marker: int) -> frozenset[str]:
    """Check that every statement before the marker is a trusted import or runtime definition
    (compared as syntax trees); the names the generated part may use from it (its definitions:
    an imported module such as `os` is for the runtime's own use)."""
    trusted, imports = trusted_definitions(), trusted_imports()
    bound: set[str] = set()
    for node in nodes:
        if node.lineno > marker:
            break
        if isinstance(node, ast.Import | ast.ImportFrom):
            for imp in imported(node):
                if imp not in imports:
                    raise _failed(node.lineno, f"it imports `{imp.line()}`, which the runtime does not")
            continue
        names = [n.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if t is not None
                 for n in ast.walk(t) if isinstance(n, ast.Name)] if isinstance(node, ast.Assign | ast.AnnAssign) \
            else [getattr(node, "name", "")]
        if not names or any(trusted.get(n) != ast.dump(node) for n in names):
            raise _failed(node.lineno, "the runtime part differs from gymwright's runtime modules")
        bound |= set(names)
    return frozenset(bound) | {"ParallelEnv"}  # the generated env's base class (imported on top)


def _failed(line: int, why: str) -> AuditError:
    return AuditError(f"generated code failed its audit at line {line}: {why}",
                      hint="the module was refused before it ran; this is a gymwright bug, please report it "
                           "with the spec")


class _Auditor:
    def __init__(self, cs: CheckedSpec, runtime: frozenset[str], offset: int) -> None:
        attrs, per_module = templates()
        self.free = SAFE_BUILTINS | runtime
        self.attrs = attrs | declared_attributes(cs)
        self.per_module = per_module
        self.offset = offset

    def fail(self, node: ast.AST, why: str) -> AuditError:
        return _failed(getattr(node, "lineno", 0) + self.offset, why)

    def run(self, tree: ast.Module) -> None:
        bound = self.bound(tree)
        parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Module):
                continue
            self.form(node)
            if isinstance(node, ast.Name):
                self.name(node, bound, parents.get(id(node)))
            elif isinstance(node, ast.Attribute):
                self.attribute(node, parents.get(id(node)))

    def bound(self, tree: ast.Module) -> frozenset[str]:
        """Every name the generated part binds (assignments, parameters, defs, imports)."""
        out: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, ast.arg):
                out.add(node.arg)
            elif isinstance(node, ast.FunctionDef | ast.ClassDef):
                out.add(node.name)
            elif isinstance(node, ast.alias):
                out.add((node.asname or node.name).split(".")[0])
        for name in out:
            if name.startswith("__") and name not in _DUNDER_METHODS:
                raise _failed(0, f"it binds the dunder name `{name}`")
        return frozenset(out - MODULES)

    def form(self, node: ast.AST) -> None:
        if isinstance(node, ast.stmt):
            if not isinstance(node, _STATEMENTS):
                raise self.fail(node, f"`{type(node).__name__}` statements are never generated")
            self.statement(node)
        elif isinstance(node, ast.expr):
            if not isinstance(node, _EXPRESSIONS):
                raise self.fail(node, f"`{type(node).__name__}` expressions are never generated")
        elif not isinstance(node, _PARTS):
            raise self.fail(node, f"`{type(node).__name__}` is never generated")

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            raise self.fail(node, "it imports in the generated part (imports are all at the top)")
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            if node.decorator_list:
                raise self.fail(node, f"`{node.name}` has a decorator")
            if isinstance(node, ast.ClassDef) and node.keywords:
                raise self.fail(node, f"class `{node.name}` has keywords")
            if node.name.startswith("__") and node.name not in _DUNDER_METHODS:
                raise self.fail(node, f"it defines `{node.name}`")
        elif isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                        and isinstance(call.func.value, ast.Name) and call.func.value.id == "np"
                        and call.func.attr == "errstate") or item.optional_vars is not None:
                    raise self.fail(node, "a `with` block other than `np.errstate(...)`")
        elif isinstance(node, ast.Expr) and not isinstance(node.value, ast.Call | ast.Constant):
            raise self.fail(node, "an expression statement that is not a call or a docstring")

    def name(self, node: ast.Name, bound: frozenset[str], parent: ast.AST | None) -> None:
        ident = node.id
        if ident.startswith("__"):
            raise self.fail(node, f"it names `{ident}`")
        if ident in MODULES:
            if not (isinstance(parent, ast.Attribute) and parent.value is node):
                raise self.fail(node, f"it uses the module `{ident}` other than as `{ident}.<function>`")
            if parent.attr not in self.per_module[ident]:
                raise self.fail(node, f"`{ident}.{parent.attr}` is not used by any generator")
            return
        if isinstance(node.ctx, ast.Load) and ident not in bound and ident not in self.free:
            raise self.fail(node, f"it names `{ident}`, which is neither bound by the module, nor a "
                                  f"runtime function, nor a safe builtin")

    def attribute(self, node: ast.Attribute, parent: ast.AST | None) -> None:
        attr = node.attr
        if attr == "__class__" and _type_test(node, parent):
            return
        if attr.startswith("__") or attr in UNSAFE_ATTRIBUTES:
            raise self.fail(node, f"it uses the attribute `{attr}`")
        if isinstance(node.value, ast.Name) and node.value.id in MODULES:
            return  # checked with the module name
        if attr not in self.attrs:
            raise self.fail(node, f"the attribute `{attr}` is neither declared by the spec nor used by any generator")


def _type_test(node: ast.Attribute, parent: ast.AST | None) -> bool:
    """`x.__class__ is int` (or `is not`, against a plain name): the one dunder generated code
    reads, as an exact type test on its fast path; the class itself goes nowhere."""
    return (isinstance(parent, ast.Compare) and parent.left is node and len(parent.ops) == 1
            and isinstance(parent.ops[0], ast.Is | ast.IsNot) and isinstance(parent.comparators[0], ast.Name))


def unsafe_builtins() -> frozenset[str]:
    """Builtins the audit refuses (every builtin that is not in SAFE_BUILTINS), for the docs and tests."""
    return frozenset(n for n in dir(builtins) if not n.startswith("_")) - SAFE_BUILTINS
