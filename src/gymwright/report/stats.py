"""Aggregates over seeds for a comparison: the interquartile mean (IQM) and its stratified
bootstrap interval, as in rliable (Agarwal et al. 2021, "Deep RL at the edge of the statistical
precipice"), written here in numpy.

Scores are a matrix `(runs, tasks)`: one row per seed, one column per evaluation configuration.
The IQM is the mean of the middle half of all its cells (`scipy.stats.trim_mean(x, 0.25)`:
`int(0.25 * n)` cells cut from each end). The interval resamples the runs with replacement
within each task (column) independently, `reps` times, and takes the 2.5th and 97.5th
percentiles of the statistic (rliable's `get_interval_estimates(..., method="percentile")`).

rliable 1.2.0 itself installs here but does not import: it requires `arch<8`, and arch 7.2.0
fails to import under the pandas 3 in this environment (`deprecate_kwarg()` changed), so the
same estimators are implemented here (see tests/report/test_report_compare.py for the hand-worked cases).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

REPS = 10_000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    """A point estimate with its interval (equal to it when there is one run: no spread to resample)."""

    point: float
    low: float
    high: float
    runs: int

    def text(self, digits: int = 3) -> str:
        if self.runs < 2:
            return f"{self.point:.{digits}g}"
        return f"{self.point:.{digits}g} [{self.low:.{digits}g}, {self.high:.{digits}g}]"


def iqm(scores: np.ndarray, axis: int | tuple[int, ...] | None = None) -> np.ndarray:
    """The 25% trimmed mean over `axis` (all cells by default), as `scipy.stats.trim_mean`."""
    x = np.asarray(scores, dtype=float)
    axes = tuple(range(x.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    keep = [i for i in range(x.ndim) if i not in axes]
    flat = np.moveaxis(x, [*keep], list(range(len(keep)))).reshape(*[x.shape[i] for i in keep], -1)
    n = flat.shape[-1]
    cut = int(0.25 * n)
    return np.sort(flat, axis=-1)[..., cut: n - cut].mean(axis=-1)


def iqm_interval(scores: np.ndarray | list[np.ndarray], reps: int = REPS, seed: int = 0) -> Interval:
    """The IQM of `scores` and its 95% stratified bootstrap percentile interval. `scores` is a
    matrix `(runs, tasks)` (each column a stratum), or a list of per-task arrays of run scores
    (strata of different sizes): each stratum's runs are resampled within it."""
    strata = [c for c in _strata(scores) if c.size]
    if not strata:
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    point, runs = float(iqm(np.concatenate(strata))), max(c.size for c in strata)
    if runs < 2:
        return Interval(point, point, point, runs)
    stats = _resampled_iqm(strata, reps, np.random.default_rng(seed))
    low, high = np.percentile(stats, [100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2])
    return Interval(point, float(low), float(high), runs)


def iqm_band(curves: np.ndarray, reps: int = 2_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per point of `curves` `(runs, points)`: the IQM over runs and its 95% bootstrap band (the
    same resample of runs at every point, so the band is one curve of resamples wide)."""
    y = np.asarray(curves, dtype=float)
    center = iqm(y, axis=0)
    if y.shape[0] < 2:
        return center, center, center
    idx = np.random.default_rng(seed).integers(0, y.shape[0], size=(reps, y.shape[0]))
    stats = iqm(y[idx], axis=1)  # (reps, points)
    low, high = np.percentile(stats, [100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2], axis=0)
    return center, low, high


def _strata(scores: np.ndarray | list[np.ndarray]) -> list[np.ndarray]:
    if isinstance(scores, np.ndarray):
        return [np.asarray(c, dtype=float).ravel() for c in np.atleast_2d(np.asarray(scores, dtype=float).T)]
    return [np.asarray(c, dtype=float).ravel() for c in scores if np.asarray(c).size]


def _resampled_iqm(strata: list[np.ndarray], reps: int, rng: np.random.Generator) -> np.ndarray:
    return iqm(np.concatenate([c[rng.integers(0, c.size, size=(reps, c.size))] for c in strata], axis=1), axis=1)


def difference_interval(a: np.ndarray | list[np.ndarray], b: np.ndarray | list[np.ndarray], reps: int = REPS,
                        seed: int = 0) -> Interval:
    """IQM(a) - IQM(b) and its 95% percentile interval, the runs of `a` and of `b` resampled apart
    (each within its strata); no interval unless both have two runs or more."""
    sa, sb = _strata(a), _strata(b)
    point = float(iqm(np.concatenate(sa)) - iqm(np.concatenate(sb)))
    runs = min(max(c.size for c in sa), max(c.size for c in sb))
    if runs < 2:
        return Interval(point, point, point, runs)
    rng = np.random.default_rng(seed)
    diffs = _resampled_iqm(sa, reps, rng) - _resampled_iqm(sb, reps, rng)
    low, high = np.percentile(diffs, [100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2])
    return Interval(point, float(low), float(high), runs)
