"""How hard is the environment for the trained policy? Its task metric against a target band."""

from __future__ import annotations

import math
from collections.abc import Sequence

from gymwright.diagnostic import shown
from gymwright.errors import GymwrightError
from gymwright.evaluate.checks import Check, mean_ci
from gymwright.train.episodes import EvalResult

DEFAULT_BAND = (0.2, 0.8)


def check_band(band: Sequence[float], where: str = "band", metric: str | None = None) -> None:
    """A target band is two finite numbers, the lower first; `GymwrightError` naming `where` (the
    option, `--band`, or the field) otherwise."""
    values = list(band) if isinstance(band, list | tuple) else [band]
    if len(values) == 2 and all(_finite(v) for v in values) and values[0] <= values[1]:
        return
    raise GymwrightError(f"{' '.join(map(_text, values))} is not a band: give two finite numbers, the lower first",
                         path=where, hint=f"the target range of {metric or 'the task metric'}, e.g. 0.4 0.8")


def _finite(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _text(x: object) -> str:
    return f"{x:g}" if isinstance(x, int | float) and not isinstance(x, bool) else shown(repr(x))


def difficulty(trained: EvalResult, task_metric: str | None,
               band: tuple[float, float] = DEFAULT_BAND) -> Check:
    """ok inside the band; `too easy` above it (little left to learn), `too hard` below it."""
    if not task_metric or task_metric not in trained.episode_metrics:
        return Check("difficulty", "n/a", "no task metric to judge difficulty by (name one with --metric)")
    value, ci = mean_ci(trained.episode_metrics[task_metric])
    lo, hi = band
    evidence = {"metric": task_metric, "value": value, "ci95": ci, "band": list(band)}
    if value - ci > hi:
        return Check("difficulty", "warning", f"too easy: {task_metric} = {value:.3g} +/- {ci:.2g}, above "
                     f"the target band [{lo:g}, {hi:g}]; make the task harder (bigger maps, more agents)", evidence)
    if value + ci < lo:
        return Check("difficulty", "warning", f"too hard: {task_metric} = {value:.3g} +/- {ci:.2g}, below "
                     f"the target band [{lo:g}, {hi:g}]; make it easier or train longer", evidence)
    return Check("difficulty", "ok", f"{task_metric} = {value:.3g} +/- {ci:.2g}, within [{lo:g}, {hi:g}]",
                 evidence)
