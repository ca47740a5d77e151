"""Wrap the long lines of generated code, as a person would, without changing what they mean.

A statement longer than the width is split inside its widest bracket, one item per line (the
commas of a lambda's parameters or a comprehension's targets are never split at); items still
too long are split the same way; a comment is wrapped at spaces. Every wrapped statement is
parsed again and kept only when its syntax tree is the one it had, so wrapping can make a
line shorter but never different.
"""

from __future__ import annotations

import ast
import io
import textwrap
import tokenize

WIDTH = 100
_OPEN = {"(": ")", "[": "]", "{": "}"}


def wrap_source(source: str, width: int = WIDTH) -> str:
    """`source` with every line over `width` characters wrapped where that is safe (lines inside
    a multi-line string are text, and stay as they are)."""
    if len(source.splitlines()) != source.count("\n") + 1 - source.endswith("\n"):
        return source  # line breaks other than \n: lines would not be what Python reads
    inside = _string_lines(source)
    return "\n".join(line for n, raw in enumerate(source.split("\n"), 1)
                     for line in ([raw] if n in inside else _wrap_line(raw, width)))


def _string_lines(source: str) -> set[int]:
    """Line numbers that continue a string begun on an earlier line (a docstring's body)."""
    out: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                out |= set(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):  # not Python: leave every line alone
        return set(range(1, source.count("\n") + 2))
    return out


def _wrap_line(line: str, width: int) -> list[str]:
    if len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    body = line.strip()
    if body.startswith("#"):
        return textwrap.wrap(body[1:].strip(), width=width - len(indent) - 2, initial_indent=f"{indent}# ",
                             subsequent_indent=f"{indent}# ", break_long_words=False, break_on_hyphens=False) or [line]
    tail = "\n    pass" if body.endswith(":") else ""  # a block header parses with a body
    if not _statement(body + tail):
        return [line]
    lines = _split(body, indent, width)
    if _same(body + tail, textwrap.dedent("\n".join(lines)) + tail):
        return lines
    return [line]


def _statement(text: str) -> ast.AST | None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    return tree if len(tree.body) == 1 else None


def _same(a: str, b: str) -> bool:
    ta, tb = _statement(a), _statement(b)
    return ta is not None and tb is not None and ast.dump(ta) == ast.dump(tb)


def _split(text: str, indent: str, width: int) -> list[str]:
    """`text` (one statement or expression) as lines at `indent`, split inside its widest bracket."""
    if len(indent) + len(text) <= width:
        return [indent + text]
    span = _widest(text)
    if span is None:
        return [indent + text]
    start, end, items = span
    inner = indent + "    "
    out = [indent + text[:start + 1]]
    for k, item in enumerate(items):
        parts = _split(item, inner, width - (1 if k < len(items) - 1 else 0))
        if k < len(items) - 1:
            parts[-1] += ","
        out += parts
    out.append(indent + text[end:])
    return out


def _widest(text: str) -> tuple[int, int, list[str]] | None:
    """(offset of the opening bracket, offset of its closing bracket, items split at its commas) of
    the widest bracket with two or more items, or, when none has, of the widest bracket."""
    pairs = _brackets(text)
    best = None
    for start, end, commas in sorted(pairs, key=lambda p: p[0] - p[1]):
        if end - start < 8:
            continue
        bounds = zip([start + 1] + [c + 1 for c in commas], commas + [end], strict=True)
        items = [item for a, b in bounds if (item := text[a:b].strip())]
        if len(items) >= 2:
            return start, end, items
        if best is None and items:
            best = (start, end, items)
    return best


def _brackets(text: str) -> list[tuple[int, int, list[int]]]:
    """Every bracket pair of `text`: (open offset, close offset, offsets of its own splittable commas)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    stack: list[list] = []  # [open offset, commas, lambda depth, has for]
    pairs = []
    for tok in tokens:
        if tok.start[0] != 1:
            break
        col = tok.start[1]
        if tok.type == tokenize.OP and tok.string in _OPEN:
            stack.append([col, [], 0, False])
        elif tok.type == tokenize.OP and tok.string in _OPEN.values() and stack:
            start, commas, _, has_for = stack.pop()
            pairs.append((start, col, [] if has_for else commas))
        elif not stack:
            continue
        elif tok.type == tokenize.NAME and tok.string == "lambda":
            stack[-1][2] += 1
        elif tok.type == tokenize.NAME and tok.string == "for":
            stack[-1][3] = True
        elif tok.type == tokenize.OP and tok.string == ":" and stack[-1][2]:
            stack[-1][2] -= 1
        elif tok.type == tokenize.OP and tok.string == "," and not stack[-1][2]:
            stack[-1][1].append(col)
    return pairs
