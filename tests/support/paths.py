"""Where the tests find the repository's folders, from whichever folder of tests/ they run."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""the repository's root"""
SRC = ROOT / "src" / "gymwright"
"""the package's source"""
DOCS = ROOT / "docs"
"""the docs the tests hold to the code"""
DATA = ROOT / "tests" / "data"
"""the tests' data files (specs, corpora, the code-mode fixture)"""
MEET_ON_A_LINE = DATA / "codemode" / "meet_on_a_line.py"
"""the code-mode fixture: a trusted, hand-written module"""
