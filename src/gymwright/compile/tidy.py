"""Tidy generated code, as a person would, without changing what it does: the passes `tidy` runs.

`drop_unread_locals` drops what generated code computes and never reads: the
`p, v = self.p, self.v` preamble of a method that reads neither, and the like
(`me = AGENT_INDEX[agent]` where no role reads `me`). The generators write these preambles
uniformly; this pass removes the unread ones from the finished source. Only plain assignments
of names from `self.<attr>` or a subscript are touched, and only when no later statement of the
same function reads the name.

`write_tables_once` (compile/hoist.py) names each literal table the code repeats once, as a
module constant.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from gymwright.compile.hoist import write_tables_once


def tidy(source: str, taken: frozenset[str] = frozenset()) -> str:
    """`source` (the generated part of a module) after every pass of `PASSES`, in order; `taken`:
    names the module binds outside it (its runtime), which no new name may take."""
    for one_pass in PASSES:
        source = one_pass(source, taken)
    return source


def _unread(source: str, taken: frozenset[str]) -> str:
    return drop_unread_locals(source)


def drop_unread_locals(source: str) -> str:
    """`source` without the preamble assignments whose names its function never reads (unchanged
    when it does not parse or has line breaks other than `\\n`: the audit then says why)."""
    lines = source.split("\n")
    if len(source.splitlines()) != len(lines) - source.endswith("\n"):
        return source
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    edits: list[tuple[int, str | None]] = []  # (0-based line, replacement or None to delete)
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for k, stmt in enumerate(fn.body):
            names, values = _preamble(stmt)
            if not names:
                continue
            read = {n.id for later in fn.body[k + 1:] for n in ast.walk(later)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            keep = [(n, v) for n, v in zip(names, values, strict=True) if n in read]
            if len(keep) == len(names) or stmt.lineno != stmt.end_lineno:
                continue
            indent = lines[stmt.lineno - 1][: stmt.col_offset]
            text = None if not keep else indent + ", ".join(n for n, _ in keep) + " = " + ", ".join(v for _, v in keep)
            edits.append((stmt.lineno - 1, text))
    for line, text in sorted(edits, reverse=True):
        if text is None:
            del lines[line]
        else:
            lines[line] = text
    return "\n".join(lines)


def _preamble(stmt: ast.stmt) -> tuple[list[str], list[str]]:
    """(names, value sources) of `a, b = self.x, self.y` / `a = self.x` / `a = T[b]`; else empty."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return [], []
    target, value = stmt.targets[0], stmt.value
    targets = target.elts if isinstance(target, ast.Tuple) else [target]
    values = value.elts if isinstance(value, ast.Tuple) and isinstance(target, ast.Tuple) else [value]
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    if len(targets) != len(values) or len(names) != len(targets):
        return [], []
    if not all(_plain(v) for v in values):
        return [], []
    return names, [ast.unparse(v) for v in values]


def _plain(node: ast.expr) -> bool:
    """`self.x` or `NAME[name]`: reading it has no effect and cannot fail in generated code."""
    if isinstance(node, ast.Attribute):
        return isinstance(node.value, ast.Name) and node.value.id == "self"
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Name)


PASSES: tuple[Callable[[str, frozenset[str]], str], ...] = (_unread, write_tables_once)
"""The tidying passes, in order: unread preambles go first, so a table only they held is not shared."""
