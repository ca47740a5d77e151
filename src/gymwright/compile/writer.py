"""A tiny indented-source writer for code generation."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, line: str = "", comment: str = "") -> None:
        if comment:
            self.lines.append("    " * self.depth + f"# {comment}")
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
