"""A code-mode module's params: the keyword arguments of its class's `__init__` with literal
defaults (`def __init__(self, rounds=20, stag_reward=4.0, render_mode=None)`).

`declared_params` reads them from the module's text with `ast` (never running it): every
parameter of `__init__` but `self` and `render_mode` whose default is an int, float or bool
literal (a negative number too), with that default. `check_params` holds a config (`--param`,
a config file's `params:`) to them: each name must be declared, and its value of the default's
kind (a bool for a bool; a whole number for an int; any number for a float). The values reach
the class as keyword arguments when the sandbox worker makes an instance (`make {params}`).
"""

from __future__ import annotations

import ast
from typing import Any

from gymwright.errors import GymwrightError

Value = int | float | bool
SKIPPED = frozenset({"self", "render_mode"})


def _literal(node: ast.expr | None) -> Value | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _literal(node.operand)
        if isinstance(inner, bool) or inner is None:
            return None
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | bool):
        return node.value
    return None


def declared_params(source: str, env_class: str | None = None) -> dict[str, Value]:
    """The params the module's class declares (name -> default), in `__init__`'s order; {}
    when the text does not parse or the class is not found (vetting reports those)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    chosen = next((c for c in classes if c.name == env_class), None) if env_class else \
        (classes[0] if len(classes) == 1 else next((c for c in classes if any(
            (isinstance(b, ast.Name) and b.id == "ParallelEnv") or (isinstance(b, ast.Attribute) and b.attr == "ParallelEnv")
            for b in c.bases)), None))
    init = next((f for f in (chosen.body if chosen else []) if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None:
        return {}
    args = init.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = [*zip(positional, defaults, strict=True), *zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    out: dict[str, Value] = {}
    for arg, default in pairs:
        value = _literal(default)
        if arg.arg not in SKIPPED and value is not None:
            out[arg.arg] = value
    return out


def check_params(label: str, declared: dict[str, Value], given: dict[str, Any]) -> dict[str, Value]:
    """`given` held to the module's declared params; GymwrightError names the param, what is
    wrong and the params there are."""
    if given and not declared:
        raise GymwrightError(f"{label} is a code-mode module, which takes no params (given: {', '.join(sorted(given))})",
                             path="params", hint="drop --param / `params:`; to make a number a param, give the class's "
                                                 "__init__ a keyword argument with a default (e.g. `rounds=20`)")
    there = ", ".join(f"{k}={v!r}" for k, v in declared.items())
    out: dict[str, Value] = {}
    for name, value in given.items():
        if name not in declared:
            raise GymwrightError(
                f"{label} has no param `{name}` (its params, the keyword arguments of its class's __init__ "
                f"with their defaults: {there})", path=f"params.{name}",
                hint="use one of those names, or give the class's __init__ a keyword argument with a default")
        default = declared[name]
        if isinstance(default, bool):
            ok = isinstance(value, bool)
            kind = "true or false"
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool) or (
                isinstance(value, float) and value.is_integer())
            value = int(value) if ok else value
            kind = "a whole number"
        else:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            value = float(value) if ok else value
            kind = "a number"
        if not ok:
            raise GymwrightError(f"{label}: param `{name}` must be {kind} (its default is {default!r}), got {value!r}",
                                 path=f"params.{name}", hint=f"pass --param {name}=VALUE with {kind}")
        out[name] = value
    return out


__all__ = ["check_params", "declared_params"]
