"""`gymwright export MODULE.py`: a code-mode module, vetted and checked again, as text to write.

The module is read as text (never imported), vetted with `ast` and run through the sandboxed
checks (`checks.check_code`); only a module that passes both is returned. An exported module
is then an ordinary PettingZoo file: whoever imports it outside gymwright runs it unsandboxed.
"""

from __future__ import annotations

from pathlib import Path

from gymwright.codemode.checks import check_code
from gymwright.codemode.source import read_code
from gymwright.errors import GymwrightError


def vetted_module(path: Path, episodes: int = 5) -> str:
    """The text of the module at `path` once it passed vetting and the sandboxed checks."""
    source = read_code(path)
    report, _ = check_code(source, name=path.stem, episodes=episodes)
    if not report.passed:
        raise GymwrightError(f"the module did not pass the code-mode checks:\n{report.to_prompt(8)}",
                             path=str(path), hint="fix the findings (code:LINE is the line in the module)")
    return source


__all__ = ["vetted_module"]
