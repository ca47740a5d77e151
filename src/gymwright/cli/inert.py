"""What gymwright prints in a terminal is inert: text from model code or a model reply cannot
drive the terminal or style itself.

A model writes spec names, a module's comments, the exceptions its code raises, explanations,
replies and metric names. Printed raw, an escape sequence in them would draw a fake green
"PASSED", a carriage return would overwrite the line before it, an OSC 8 sequence would plant a
hyperlink to a local file, and rich markup (`[bold red]`, `[link=file:///etc/passwd]`) would
style or link it. `inert(text)` shows every control character (C0 but newline and tab, DEL,
C1 such as the one-byte CSI U+009B, and the line separators and bidirectional overrides that
reorder what is read) as a visible escape (`\\x1b`, `\\u202e`). `InertConsole` is the rich
console every command prints through: its markup is off by default (a string is printed as it
is; styling is asked for with `Text`), and whatever it renders (a string, a `Text`, a table, a
rule, a live spinner) passes through `inert` at the last step, its segments, where no hyperlink
is kept either; rich's own cursor controls pass as they are.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment

KEPT = ("\n", "\t")
BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029)
ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) not in KEPT}
ESCAPES |= {c: f"\\u{c:04x}" for c in BIDI}


def inert(text: object) -> str:
    """`text` with its control characters shown as escapes (see the module doc)."""
    return str(text).translate(ESCAPES)


class InertConsole(Console):
    """A rich console that prints nothing that could drive the terminal (see the module doc).
    Its defaults: markup off, no highlighting, soft wrap; keyword arguments as rich's `Console`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{"markup": False, "highlight": False, "soft_wrap": True, **kwargs})

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control:  # rich's own (cursor moves of a live display), never text
                yield segment
                continue
            style = segment.style
            yield Segment(inert(segment.text), style.update_link(None) if style is not None and style.link else style)


__all__ = ["InertConsole", "inert"]
