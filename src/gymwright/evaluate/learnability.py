"""Is the environment learnable? Trained against random-legal play, and the learning curve."""

from __future__ import annotations

from typing import Any

import numpy as np

from gymwright.evaluate.checks import Z95, Check, end_to_end, slope_ci
from gymwright.train.episodes import EvalResult


def learnability(trained: EvalResult, random: EvalResult, task_metric: str | None) -> Check:
    """Learnable when some role's return, or the task metric, beats random-legal play by more
    than the 95% confidence half-widths of the two (combined)."""
    gains = {}
    for role, r in trained.returns.items():
        margin = float(np.hypot(trained.ci95[role], random.ci95[role]))
        gains[role] = {"trained": r, "random": random.returns[role], "gain": r - random.returns[role],
                       "ci95": margin}
    metric = _metric_gain(trained, random, task_metric)
    better = [k for k, g in {**gains, **({task_metric: metric} if metric else {})}.items()
              if g["gain"] > g["ci95"]]
    evidence = {"returns": gains, "task_metric": metric}
    if better:
        return Check("learnability", "ok", f"trained play beats random-legal play on {', '.join(better)}",
                     evidence)
    return Check("learnability", "fail",
                 "trained play earns no more than random-legal play on any role's return or the task "
                 "metric (within 95% confidence): either nothing was learned, or (in social dilemmas) "
                 "the learned equilibrium pays less than random play; look at the task metric",
                 evidence)


def _metric_gain(trained: EvalResult, random: EvalResult, name: str | None) -> dict[str, float] | None:
    if not name or name not in trained.episode_metrics or name not in random.episode_metrics:
        return None
    a, b = trained.episode_metrics[name], random.episode_metrics[name]
    ci = Z95 * float(np.hypot(a.std(ddof=1) / np.sqrt(a.size), b.std(ddof=1) / np.sqrt(b.size)))
    return {"trained": float(a.mean()), "random": float(b.mean()), "gain": float(a.mean() - b.mean()),
            "ci95": ci}


def learning_curve(history: list[dict[str, Any]], roles: list[str]) -> Check:
    """The slope of the mean return per million env steps over the whole run, with its 95% CI.

    `history` is the log of the run (train.jsonl rows); a curriculum's stages one after the other
    (each counting its env steps from zero) are laid end to end, so the whole run is judged, not
    its last stage."""
    rows = [r for r in history if all(f"charts/return/{role}" in r for role in roles) and "env_steps" in r]
    if len(rows) < 3:
        return Check("learning_curve", "n/a", "fewer than 3 logged updates with finished episodes")
    x, stages = end_to_end(np.array([r["env_steps"] for r in rows], dtype=float))
    x = x / 1e6
    y = np.array([np.mean([r[f"charts/return/{role}"] for role in roles]) for r in rows])
    slope, ci = slope_ci(x, y)
    evidence = {"slope_per_million_steps": slope, "ci95": ci, "first": float(y[0]), "last": float(y[-1]),
                "points": len(rows), "stages": stages}
    over = f" over {stages} stages laid end to end" if stages > 1 else ""
    if slope > ci:
        return Check("learning_curve", "ok", f"the return rose by {slope:.3g} per million steps{over} "
                     f"(from {y[0]:.3g} to {y[-1]:.3g})", evidence)
    verdict = "warning" if abs(slope) <= ci else "fail"
    what = "did not rise measurably" if verdict == "warning" else "fell"
    return Check("learning_curve", verdict, f"the return {what} during training{over} "
                 f"(slope {slope:.3g} +/- {ci:.3g} per million steps)", evidence)
