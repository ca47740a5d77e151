"""How hard is the environment for the trained policy? Its task metric against a target band."""

from __future__ import annotations

from gymwright.evaluate.checks import Check, mean_ci
from gymwright.train.episodes import EvalResult

DEFAULT_BAND = (0.2, 0.8)


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
