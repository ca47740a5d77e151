"""Failure evidence: the episodes that failed the task, grouped by kind, counted per config.

A failed episode is one whose task metric is 0. Its kind comes from the spec's own metrics: the
first metric marked `kind: failure` that is nonzero in it names the kind (MAPF: `holes` -> fell
in a hole, `conflicts` -> a vertex or swap conflict, `suboptimal` -> valid but not optimal;
negotiation: `breakdown`, `late_deal`), else `timeout` when the episode was cut at the step
limit, else `other`. A spec that marks no failure metric falls back on its first other nonzero
metric (a guess, which counts any nonzero statistic as a kind). The evidence the engineer reads is the count
of each kind per config bucket, a few failed episodes in compact text, and the config's stats.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gymwright.evaluate.trajectories import Trajectory


@dataclass
class FailureEvidence:
    """Per config bucket (a label such as `size=4`): episodes, successes, failure kinds."""

    task_metric: str
    buckets: dict[str, dict[str, Any]] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)

    def to_prompt(self, max_examples: int = 3) -> str:
        lines = [f"Task metric: {self.task_metric}. Failures by config and kind:"]
        for label, b in self.buckets.items():
            kinds = ", ".join(f"{k} {n}" for k, n in b["kinds"].most_common()) or "none"
            lines.append(f"- {label}: {b['successes']}/{b['episodes']} succeeded; failures: {kinds}")
        lines += ["Example failed episodes:", *self.examples[:max_examples]]
        return "\n".join(lines)


def failure_metrics(spec: Any) -> list[str]:
    """The metrics of a spec (an `EnvSpec`) marked `kind: failure`, in order."""
    return [name for name, m in spec.metrics.items() if m.kind == "failure"]


def failure_kind(tr: Trajectory, task_metric: str, max_steps: int | None,
                 failures: Sequence[str] = ()) -> str:
    names = list(failures) or [n for n in tr.metrics if n != task_metric and n not in ("length", "rounds", "steps")]
    for name in names:
        if tr.metrics.get(name):
            return name
    if max_steps is not None and len(tr.steps) >= max_steps:
        return "timeout"
    return "other"


def compact(tr: Trajectory, max_steps: int = 6) -> str:
    """An episode in a few lines: the actions of each step and the final metrics."""
    steps = [f"t={s.t}: " + ", ".join(f"{a}={x}" for a, x in s.actions.items()) for s in tr.steps[:max_steps]]
    more = [f"... {len(tr.steps) - max_steps} more steps"] if len(tr.steps) > max_steps else []
    metrics = ", ".join(f"{k}={v:g}" for k, v in tr.metrics.items())
    return "\n".join([f"episode seed {tr.seed} ({len(tr.steps)} steps; {metrics})", *steps, *more])


def gather(episodes: dict[str, list[Trajectory]], task_metric: str,
           max_steps: int | None = None, failures: Sequence[str] = ()) -> FailureEvidence:
    """`episodes` maps a bucket label to the trajectories recorded in that config; `failures`
    are the spec's failure metrics (`failure_metrics`)."""
    ev = FailureEvidence(task_metric)
    for label, trajs in episodes.items():
        failed = [tr for tr in trajs if not tr.metrics.get(task_metric)]
        ev.buckets[label] = {"episodes": len(trajs), "successes": len(trajs) - len(failed),
                             "kinds": Counter(failure_kind(tr, task_metric, max_steps, failures) for tr in failed)}
        ev.examples += [f"[{label}] {compact(tr)}" for tr in failed[:2]]
    return ev
