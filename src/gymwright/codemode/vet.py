"""Static vetting of a model's environment module with `ast`, before anything of it runs.

The module may import only from `ALLOWED_IMPORTS`; it may not name `eval`, `exec`, `compile`,
`open`, `__import__`, `globals`, `vars`, ... (`REFUSED_NAMES`), any dunder name, or any
dunder attribute (`super().__init__` excepted); a private attribute (`x._y`) only on `self`;
attributes that reach the interpreter or files (`REFUSED_ATTRS`: `os`, `sys`, `modules`,
`f_globals`, `tofile`, `loadtxt`, ...) not at all; no attribute of an imported module that is
itself a module outside the allowlist (`dataclasses.inspect`); a module only as `module.name`
(never passed, stored or assigned to), and no attribute of a module assigned or deleted;
`getattr`/`hasattr` only with a literal public name that passes the same attribute rules
(`getattr(typing, "sys")` is `typing.sys`), `setattr` the same and only on `self`;
no `global`/`nonlocal`, no `async`; at the top level only imports,
definitions and assignments. It must define one `ParallelEnv` subclass with `reset(self,
seed=None, options=None)`, `step(self, actions)`, `observation_space(self, agent)`,
`action_space(self, agent)`, and an `__init__` callable without arguments.

Every refusal is a `Diagnostic` whose path is `code:LINE` and whose trace quotes the line:
what the repair loop sends back to the model. Vetting is the first layer only; the sandbox
(`gymwright.codemode.sandbox`) holds even for code that was never vetted.
"""

from __future__ import annotations

import ast
import importlib
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from gymwright.diagnostic import Diagnostic, error, has_errors, warning

STAGE = "vet"
MAX_CODE_CHARS = 60_000
MAX_LINES = 1_500
ALLOWED_IMPORTS = frozenset({
    "numpy", "math", "random", "functools", "itertools", "dataclasses", "typing", "collections",
    "copy", "enum", "gymnasium", "gymnasium.spaces", "pettingzoo", "pettingzoo.utils",
    "__future__",
})
ALLOWED_ROOTS = frozenset(m.split(".")[0] for m in ALLOWED_IMPORTS)
# `import gymnasium` alone is allowed only as `from gymnasium import spaces`
FROM_ONLY = {"gymnasium": frozenset({"spaces"})}
REFUSED_NAMES = frozenset({
    "eval", "exec", "compile", "open", "__import__", "globals", "vars", "locals", "breakpoint",
    "input", "help", "exit", "quit", "memoryview", "delattr",
})
NAME_ARG_CALLS = frozenset({"getattr", "setattr", "hasattr"})
SELF_ONLY_CALLS = frozenset({"setattr"})  # may change attributes of `self` only
REFUSED_ATTRS = frozenset({
    "os", "sys", "builtins", "modules", "environ", "system", "popen", "subprocess", "ctypes",
    "f_globals", "f_locals", "f_back", "f_builtins", "f_code", "gi_frame", "gi_code", "cr_frame",
    "ag_frame", "tb_frame", "tb_next", "co_code", "func_globals", "mro",
    # numpy's file input and output
    "load", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "fromfile",
    "tofile", "memmap", "fromregex", "DataSource", "ctypeslib",
})
REQUIRED_METHODS = {"reset": ("self", "seed", "options"), "step": ("self", "actions"),
                    "observation_space": ("self", "agent"), "action_space": ("self", "agent")}
SIGNATURES = {"reset": "self, seed=None, options=None", "step": "self, actions",
              "observation_space": "self, agent", "action_space": "self, agent"}
TOP_LEVEL = (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef, ast.Assign,
             ast.AnnAssign, ast.Expr)
BASE_NAME = "ParallelEnv"


@dataclass(frozen=True)
class Vetted:
    """The outcome of vetting: findings, and the environment class (None when not found)."""

    diagnostics: list[Diagnostic]
    env_class: str | None

    @property
    def passed(self) -> bool:
        return not has_errors(self.diagnostics)


class _Finder:
    """Collects findings with the line quoted; knows the module's import aliases and each
    node's parent."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()
        self.found: list[Diagnostic] = []
        self.modules: dict[str, str] = {}  # alias -> the allowlisted module it names
        self.parents: dict[ast.AST, ast.AST] = {}

    def add(self, node: ast.AST | int, message: str, hint: str, severe: bool = True) -> None:
        line = node if isinstance(node, int) else getattr(node, "lineno", 0)
        quote = self.lines[line - 1].strip()[:160] if 0 < line <= len(self.lines) else ""
        make = error if severe else warning
        self.found.append(make(STAGE, f"code:{line}", message, hint,
                               trace=[f"{line}: {quote}"] if quote else []))


def is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


def _super_init(node: ast.Attribute) -> bool:
    v = node.value
    return (node.attr == "__init__" and isinstance(v, ast.Call) and isinstance(v.func, ast.Name)
            and v.func.id == "super" and not v.args and not v.keywords)


def check_import(node: ast.Import | ast.ImportFrom, f: _Finder) -> None:
    allowed = ", ".join(sorted(ALLOWED_IMPORTS - {"__future__"}))
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name not in ALLOWED_IMPORTS or alias.name in FROM_ONLY:
                f.add(node, f"import of `{alias.name}` is not allowed",
                      f"import only from: {allowed} (gymnasium as `from gymnasium import spaces`)")
        return
    module = node.module or ""
    if node.level or module not in ALLOWED_IMPORTS:
        f.add(node, f"import from `{'.' * node.level}{module}` is not allowed",
              f"import only from: {allowed}")
        return
    for alias in node.names:
        only = FROM_ONLY.get(module)
        if alias.name == "*" or alias.name.startswith("_") and module != "__future__" or (
                only is not None and alias.name not in only):
            f.add(node, f"`from {module} import {alias.name}` is not allowed",
                  "import public names one by one (gymnasium: `from gymnasium import spaces`)")
        elif module != "__future__" and (reached := _reaches_module(module, alias.name)):
            f.add(node, f"`from {module} import {alias.name}` is the module `{reached}`, which environments "
                  "may not use", f"import only from: {allowed}")


def check_name(node: ast.Name, f: _Finder) -> None:
    check_module_use(node, f)
    if node.id in REFUSED_NAMES:
        f.add(node, f"`{node.id}` is not allowed in an environment",
              "an environment needs no dynamic code, files or introspection: compute with numpy")
    elif is_dunder(node.id) and node.id != "__name__":
        f.add(node, f"the dunder name `{node.id}` is not allowed", "use only ordinary names")


def _module_of(value: ast.expr, f: _Finder) -> str | None:
    """The allowlisted module an expression names (`np`, `np.random`), or None."""
    if isinstance(value, ast.Name):
        return f.modules.get(value.id)
    if isinstance(value, ast.Attribute):
        outer = _module_of(value.value, f)
        if outer is not None:
            found = _resolve(outer, value.attr)
            return found.__name__ if isinstance(found, types.ModuleType) else None
    return None


def _resolve(module: str, name: str) -> object:
    """`module.name` looked up in gymwright's own process (the allowlisted modules are
    imported here anyway; nothing of the model's code is)."""
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def _reaches_module(module: str, name: str) -> str | None:
    """The module outside the allowlist that `module.name` is, if it is one."""
    found = _resolve(module, name)
    if isinstance(found, types.ModuleType) and found.__name__.split(".")[0] not in ALLOWED_ROOTS:
        return found.__name__
    return None


def check_attribute(node: ast.Attribute, f: _Finder) -> None:
    name = node.attr
    module = _module_of(node.value, f)
    if module is not None and not isinstance(node.ctx, ast.Load):
        f.add(node, f"assigning or deleting `{module}.{name}` is not allowed",
              "change only your own objects (`self.x = ...`); modules are read-only here")
        return
    if module is not None and (reached := _reaches_module(module, name)):
        f.add(node, f"`{module}.{name}` is the module `{reached}`, which environments may not use",
              f"import only from: {', '.join(sorted(ALLOWED_IMPORTS - {'__future__'}))}")
        return
    if is_dunder(name) and not _super_init(node):
        f.add(node, f"access to the dunder attribute `.{name}` is not allowed",
              "use only public attributes (the one exception is `super().__init__()`)")
    elif name.startswith("_") and not is_dunder(name) and not (
            isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
        f.add(node, f"the private attribute `.{name}` is reachable here only on `self`",
              "keep private state on `self`; do not reach into modules or other objects")
    elif name in REFUSED_ATTRS or name in REFUSED_NAMES:
        f.add(node, f"the attribute `.{name}` is not allowed (it reaches the interpreter or files)",
              "an environment reads and writes no files and needs no interpreter internals")


def check_call(node: ast.Call, f: _Finder) -> None:
    fn = node.func
    if not (isinstance(fn, ast.Name) and fn.id in NAME_ARG_CALLS):
        return
    target = node.args[0] if node.args else None
    arg = node.args[1] if len(node.args) > 1 else None
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            and arg.value.isidentifier() and not arg.value.startswith("_")):
        f.add(node, f"`{fn.id}` is allowed only with a literal public attribute name",
              f'write `{fn.id}(obj, "name")` with a name that does not start with `_`, or use the attribute')
        return
    if fn.id in SELF_ONLY_CALLS and not (isinstance(target, ast.Name) and target.id in ("self", "cls")):
        f.add(node, f"`{fn.id}` is allowed only on `self`", f'write `{fn.id}(self, "name", value)` or `self.name = value`')
        return
    if target is not None:  # the same rules as the attribute written out: getattr(typing, "sys") is typing.sys
        ctx = ast.Store() if fn.id in SELF_ONLY_CALLS else ast.Load()
        check_attribute(ast.Attribute(value=target, attr=arg.value, ctx=ctx, lineno=node.lineno,
                                      col_offset=node.col_offset), f)


def check_module_use(node: ast.Name, f: _Finder) -> None:
    """A module alias only as `module.name`: passed, stored or returned it would escape vetting."""
    parent = f.parents.get(node)
    if node.id in f.modules and not (isinstance(parent, ast.Attribute) and parent.value is node):
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in NAME_ARG_CALLS \
                and parent.args and parent.args[0] is node and parent.func.id != "setattr":
            return  # getattr(module, "name"): checked as module.name
        f.add(node, f"the module `{node.id}` may be used only as `{node.id}.name`",
              "do not pass, store or return a module: use its functions and values directly")


HANDLERS: dict[type, Callable[..., None]] = {
    ast.Import: check_import, ast.ImportFrom: check_import, ast.Name: check_name,
    ast.Attribute: check_attribute, ast.Call: check_call,
}
REFUSED_NODES = {
    ast.Global: ("`global` is not allowed", "keep state on `self`"),
    ast.Nonlocal: ("`nonlocal` is not allowed", "keep state on `self`"),
    ast.AsyncFunctionDef: ("`async def` is not allowed", "an environment steps synchronously"),
    ast.Await: ("`await` is not allowed", "an environment steps synchronously"),
    ast.AsyncFor: ("`async for` is not allowed", "an environment steps synchronously"),
    ast.AsyncWith: ("`async with` is not allowed", "an environment steps synchronously"),
}


def _learn(tree: ast.Module, f: _Finder) -> None:
    """Each node's parent, and the aliases of the allowlisted modules the module imports."""
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            f.parents[child] = node
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ALLOWED_IMPORTS:
                    f.modules[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                        alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module in ALLOWED_IMPORTS and not node.level:
            for alias in node.names:
                found = _resolve(node.module, alias.name)
                if isinstance(found, types.ModuleType):
                    f.modules[alias.asname or alias.name] = found.__name__


def _check_nodes(tree: ast.Module, f: _Finder) -> None:
    _learn(tree, f)
    for node in ast.walk(tree):
        handler = HANDLERS.get(type(node))
        if handler is not None:
            handler(node, f)
        refused = REFUSED_NODES.get(type(node))
        if refused is not None:
            f.add(node, *refused)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "__" in node.value \
                and any(is_dunder(w) for w in node.value.replace(".", " ").split()):
            f.add(node, "a string naming a dunder attribute is not allowed",
                  "strings in an environment are labels; do not spell interpreter internals")


def _check_top_level(tree: ast.Module, f: _Finder) -> None:
    for node in tree.body:
        if not isinstance(node, TOP_LEVEL) or (isinstance(node, ast.Expr) and not (
                isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))):
            f.add(node, f"a top-level `{type(node).__name__}` statement is not allowed",
                  "at the top level write only imports, definitions, constants and the docstring")


def _is_env_class(node: ast.ClassDef) -> bool:
    for base in node.bases:
        name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
        if name == BASE_NAME:
            return True
    return False


def _methods(cls: ast.ClassDef) -> Iterator[ast.FunctionDef]:
    yield from (n for n in cls.body if isinstance(n, ast.FunctionDef))


def _check_signature(fn: ast.FunctionDef, need: tuple[str, ...], f: _Finder) -> None:
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    missing = [n for n in need if n not in names]
    if missing:
        f.add(fn, f"`{fn.name}` lacks the parameter(s) {', '.join(missing)}",
              f"define `def {fn.name}({SIGNATURES[fn.name]})` (PettingZoo's ParallelEnv API)")


def _check_init(fn: ast.FunctionDef, f: _Finder) -> None:
    args = fn.args
    positional = len(args.posonlyargs) + len(args.args) - 1  # without self
    no_default_kw = [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None]
    if positional > len(args.defaults) or no_default_kw:
        f.add(fn, "`__init__` must be callable without arguments",
              "give every parameter of `__init__` a default (e.g. `render_mode=None`)")


def _check_class(tree: ast.Module, wanted: str | None, f: _Finder) -> str | None:
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    envs = [c for c in classes if _is_env_class(c)]
    if wanted and not any(c.name == wanted for c in classes):
        f.add(1, f"the module defines no class `{wanted}`",
              "set `class` to the name of the ParallelEnv subclass the module defines")
        return None
    if len(envs) != 1:  # the written module, `train` and `export` run the one subclass: it must be the checked one
        f.add(1, f"expected exactly one `ParallelEnv` subclass, found {len(envs)}",
              "define one `class Name(ParallelEnv)` (from pettingzoo import ParallelEnv) and no other")
        return None
    chosen = envs[0]
    if wanted and chosen.name != wanted:
        f.add(chosen, f"`class` names `{wanted}`, but the module's `ParallelEnv` subclass is `{chosen.name}`",
              f"set `class` to `{chosen.name}`")
        return None
    methods = {m.name: m for m in _methods(chosen)}
    for name, need in REQUIRED_METHODS.items():
        if name not in methods:
            f.add(chosen, f"class `{chosen.name}` defines no `{name}` method",
                  f"define `def {name}({SIGNATURES[name]})` (PettingZoo's ParallelEnv API)")
        else:
            _check_signature(methods[name], need, f)
    if "__init__" in methods:
        _check_init(methods["__init__"], f)
    if "possible_agents" not in ast.unparse(chosen):
        f.add(chosen, f"class `{chosen.name}` never sets `possible_agents`",
              "set `self.possible_agents = [...]` in `__init__`")
    return chosen.name


def vet_source(source: str, env_class: str | None = None) -> Vetted:
    """Vet `source` (the model's module); `env_class` names the class when there are several."""
    f = _Finder(source)
    if len(source) > MAX_CODE_CHARS or source.count("\n") > MAX_LINES:
        f.add(1, f"the module is too long ({len(source)} characters, {source.count(chr(10)) + 1} lines)",
              f"keep it under {MAX_CODE_CHARS} characters and {MAX_LINES} lines")
        return Vetted(f.found, None)
    try:
        tree = ast.parse(source, filename="<model>")
    except SyntaxError as e:
        f.add(e.lineno or 1, f"syntax error: {e.msg}", "return a module that `ast.parse` accepts")
        return Vetted(f.found, None)
    _check_nodes(tree, f)
    _check_top_level(tree, f)
    chosen = _check_class(tree, env_class, f)
    f.found.sort(key=lambda d: int(d.path.split(":")[1]))
    return Vetted(f.found, chosen)


__all__ = ["ALLOWED_IMPORTS", "ALLOWED_ROOTS", "REFUSED_ATTRS", "REFUSED_NAMES", "Vetted", "vet_source"]
