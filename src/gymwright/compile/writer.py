"""A tiny indented-source writer for code generation, and the one rule for free text in it.

Free text (a doc, a spec path, an expression's source) reaches generated source only through
`one_line` (a comment) or `docstring_text` (a docstring); everything else is a `repr()` literal.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def one_line(text: str) -> str:
    """`text` as one line that is safe inside a `#` comment: every character that is not
    printable (each line separator `str.splitlines` knows, every other control or format
    character) is written as its escape, so nothing after it can become code."""
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in str(text))


def docstring_text(text: str) -> str:
    """`text` safe inside a `\"\"\"` docstring: backslashes doubled (no `\\N{`, `\\x` escapes), the
    quotes that could close it escaped (each of a run of two or more, and one that ends the text:
    a lone quote inside reads as itself), and every non-printable character except the newline
    escaped. Lines are split on every separator `str.splitlines` knows and joined with `\\n`."""
    lines = str(text).splitlines()
    out = []
    for k, line in enumerate(lines):
        line = _quotes(line.replace("\\", "\\\\"), last=k == len(lines) - 1)
        out.append("".join(ch if ch.isprintable() else _escape(ch).replace("\\", "\\\\") for ch in line))
    return "\n".join(out)


def _quotes(line: str, last: bool) -> str:
    """`line` with each `"` escaped that has a `"` beside it, or ends the text (`last`): no
    unescaped quote then touches another, so three never meet (the docstring's own included)."""
    n = len(line)
    return "".join('\\"' if ch == '"' and ((i > 0 and line[i - 1] == '"') or (i + 1 < n and line[i + 1] == '"')
                                         or (last and i == n - 1)) else ch
                   for i, ch in enumerate(line))


class Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, line: str = "", comment: str = "") -> None:
        if comment:
            self.lines.append("    " * self.depth + f"# {one_line(comment)}")
            if not line:
                return
        self.lines.append(("    " * self.depth + line) if line else "")

    @contextmanager
    def block(self, header: str, comment: str = "") -> Iterator[None]:
        self(header, comment)
        self.depth += 1
        start = len(self.lines)
        try:
            yield
        finally:
            if len(self.lines) == start:
                self("pass")
            self.depth -= 1

    def source(self) -> str:
        return "\n".join(self.lines) + "\n"
