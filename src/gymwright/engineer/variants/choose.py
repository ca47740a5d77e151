"""Which variant the heuristic engineer picks when no knob can move the task metric toward its band.

Only a task that is too easy (its metric above the band) gets a variant: every variant of the
library makes a game harder (a new choice to weigh, hidden information, noise, more agents,
obstacles, a discount), none makes one easier. The pick is the first variant, in the library's
order, whose precondition holds and whose new spec verifies; the others' reasons are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gymwright.engineer.variants.base import VariantRefused
from gymwright.engineer.variants.library import VARIANTS, Edit, Source, applicable, apply_variant


@dataclass
class Pick:
    edit: Edit | None
    passed_over: dict[str, str] = field(default_factory=dict)
    """variant -> why it was not picked (its precondition, or its spec did not verify)"""

    def describe(self) -> str:
        if self.edit is None:
            return "no variant of the library applies (" + "; ".join(f"{k}: {v}" for k, v in self.passed_over.items()) + ")"
        e = self.edit
        return f"variant `{e.variant}`: {e.rationale} (it writes {', '.join(e.changed)})"


def pick_variant(source: Source, params: dict[str, Any] | None = None,
                 names: Sequence[str] | None = None) -> Pick:
    """The first of `names` (default: every variant, in the library's order) that applies to the
    spec at `params` and verifies."""
    order = list(names) if names is not None else list(VARIANTS)
    verdicts = applicable(source, params)
    passed: dict[str, str] = {}
    for name in order:
        if verdicts.get(name) is not None:
            passed[name] = str(verdicts[name])
            continue
        try:
            return Pick(apply_variant(source, name, params), passed)
        except VariantRefused as e:
            passed[name] = e.message
    return Pick(None, passed)
