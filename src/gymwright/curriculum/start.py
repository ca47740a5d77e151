"""Where a curriculum starts: the first stage's mixture and spec, and the task metric, once the
metric, its band and the knobs are checked against the spec."""

from __future__ import annotations

from typing import Any

from gymwright.compile import compile_spec
from gymwright.curriculum.options import CurriculumOptions
from gymwright.engineer.mixture import Mixture
from gymwright.errors import GymwrightError
from gymwright.evaluate.difficulty import check_band
from gymwright.evaluate.scorecard import default_task_metric
from gymwright.spec.loader import read_data


def start_of(spec: str | dict[str, Any], params: dict[str, Any] | Mixture,
             opts: CurriculumOptions) -> tuple[str | dict[str, Any], dict[str, Any], Mixture, str]:
    """(the spec, its data, the first stage's mixture, the task metric); `GymwrightError` unless the
    metric is one of the spec's, the band two finite numbers (the lower first) and the knobs its params."""
    mixture = params if isinstance(params, Mixture) else Mixture.single(params)
    compiled = compile_spec(spec, mixture.buckets[0].params)
    metric = opts.task_metric or default_task_metric(compiled)
    if metric is None:
        raise GymwrightError(f"{spec} has no metrics: a curriculum needs a task metric", path="metrics",
                             hint="give the spec a metric that measures the task (`metrics:`)")
    checked = compiled.checked.spec
    if metric not in checked.metrics:
        raise GymwrightError(f"task metric {metric!r} is not a metric of {checked.name}", path="task_metric",
                             hint=f"the spec's metrics: {', '.join(checked.metrics)}")
    check_band(opts.band, "band", metric)
    unknown = [k for k in opts.knobs or () if k not in checked.params]
    if unknown:
        raise GymwrightError(f"knob {unknown[0]!r} is not a param of {checked.name}", path="knobs",
                             hint=f"the spec's params: {', '.join(checked.params) or 'none'}")
    raw, _ = read_data(spec)
    return spec, raw, mixture, metric
