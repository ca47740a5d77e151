"""One finding of the evaluator: a named check, its verdict, a sentence, and the evidence."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from gymwright.train.episodes import Z95

Verdict = Literal["ok", "warning", "fail", "n/a"]


@dataclass
class Check:
    """`verdict` is ok (the environment passes this check), warning (worth a look), fail (not a
    good training environment on this count) or n/a (the check does not apply here)."""

    name: str
    verdict: Verdict
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def mean_ci(x: np.ndarray) -> tuple[float, float]:
    """Mean and the 95% confidence half-width (normal approximation) of a sample."""
    x = np.asarray(x, dtype=float)
    if x.size < 2:
        return float(x.mean()) if x.size else float("nan"), float("nan")
    return float(x.mean()), float(Z95 * x.std(ddof=1) / np.sqrt(x.size))


def slope_ci(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of y on x and its 95% half-width (nan with fewer than 3 points)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 3 or np.ptp(x) == 0:
        return float("nan"), float("nan")
    xc = x - x.mean()
    slope = float((xc * (y - y.mean())).sum() / (xc**2).sum())
    resid = y - y.mean() - slope * xc
    se = np.sqrt((resid**2).sum() / (x.size - 2) / (xc**2).sum())
    return slope, float(Z95 * se)


def stage_offsets(spans: list[tuple[float, float] | None]) -> list[float]:
    """Where each stage starts when stages are laid end to end on one axis, from each stage's
    (first, last) x (None: no rows). A stage that counts from zero is placed after the one
    before; one that continued the count (its first x beyond the last one's) keeps its own x."""
    out, end, last_raw = [], 0.0, None
    for span in spans:
        if span is None:
            out.append(end)
            continue
        first, last = span
        offset = 0.0 if last_raw is not None and first > last_raw else end
        out.append(offset)
        end, last_raw = offset + last, last
    return out


def end_to_end(x: np.ndarray) -> tuple[np.ndarray, int]:
    """A log's x laid end to end: where x does not grow, a new stage began counting from zero
    (a curriculum's stages, one after the other); (the laid-out x, the number of stages)."""
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return x, 0
    cuts = [0, *(np.flatnonzero(np.diff(x) <= 0) + 1).tolist(), x.size]
    parts = [x[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
    offsets = stage_offsets([(float(p[0]), float(p[-1])) for p in parts])
    return np.concatenate([p + o for p, o in zip(parts, offsets, strict=True)]), len(parts)
