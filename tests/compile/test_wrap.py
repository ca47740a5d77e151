"""Generated lines are wrapped as a person would, and wrapping never changes the code."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gymwright.compile.build import export_source
from gymwright.compile.inline import MARKER
from gymwright.compile.wrap import wrap_source
from gymwright.spec.loader import library_names

CASES = [
    "x = f(aaaaaaaaaa, bbbbbbbbbb, lambda stream, n: v._rng.u(GRID_SITE + stream, 0, n), cccccccccccccccc, 0)",
    "obs = {a: self.observe(a) for i, a in enumerate(self.agents) if aaaaaaaaaaaaaaaaa and bbbbbbbbbbbbbbbbbbbb}",
    "table = {'walker_0': [1, 2, 3, 4, 5, 6, 7, 8, 9], 'walker_1': [1, 2, 3, 4, 5, 6, 7, 8, 9], 'w': (1, 2)}",
    "y = grid[aaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, cccccccccccccccccccccccccc, ddddddddd]",
    "if bool(np.logical_and(aaaaaaaaaaaaaaaaaaaaaaa, np.logical_or(bbbbbbbbbbbbbbbbbbbbbbbb, cccccccccccccccc))):",
    "return np.concatenate([np.asarray(v.round, dtype=np.float32).ravel(), np.asarray(v.offer, dtype=np.float32)])",
]


@pytest.mark.parametrize("line", CASES)
def test_wrapping_keeps_the_syntax_tree_and_shortens_the_line(line: str) -> None:
    wrapped = wrap_source("    " + line, width=60)
    body = "\n    pass" if line.endswith(":") else ""
    assert ast.dump(ast.parse(line + body)) == ast.dump(ast.parse(textwrap.dedent(wrapped) + body))
    assert len(wrapped.splitlines()) > 1
    assert max(len(x) for x in wrapped.splitlines()) < len(line)


def test_text_inside_strings_and_short_lines_stay_as_they_are() -> None:
    doc = '    """' + "x = f(a, b) " * 12 + "\n" + "    " + "y = g(a, b) " * 12 + '\n    """'
    assert wrap_source(doc, width=40) == doc
    assert wrap_source("x = f(a, b)", width=40) == "x = f(a, b)"


def test_the_longest_generated_line_of_any_library_export_is_short() -> None:
    """It was 628 characters (MAPF's tables); what is left over 100 is a string literal or a
    line of a multi-line literal."""
    longest = 0
    for name in library_names():
        generated = export_source(name).split(MARKER, 1)[1]
        longest = max(longest, max(len(line) for line in generated.splitlines()))
    assert longest <= 200, longest
