"""Where a curriculum starts: the first stage's mixture and spec, and the task metric, once the
metric, its band and the knobs are checked against the spec."""

from __future__ import annotations

from typing import Any

from gymwright.compile import compile_spec
from gymwright.curriculum.options import CurriculumOptions
from gymwright.curriculum.training import lever_demonstrator
from gymwright.engineer.levers import Lever, levers_for
from gymwright.engineer.mixture import Mixture
from gymwright.errors import GymwrightError
from gymwright.evaluate.difficulty import check_band
from gymwright.evaluate.scorecard import default_task_metric
from gymwright.spec.loader import read_data


def start_of(spec: str | dict[str, Any], params: dict[str, Any] | Mixture,
             opts: CurriculumOptions) -> tuple[str | dict[str, Any], dict[str, Any], Mixture, str, dict[str, Lever]]:
    """(the spec, its data, the first stage's mixture with its lever strengths, the task metric, the
    designer levers the engineer may use); `GymwrightError` unless the metric is one of the spec's,
    the band two finite numbers (the lower first), the knobs its params and the levers its own."""
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
    menu = levers_for(raw, opts.levers)
    if "imitation" in menu:
        lever_demonstrator(opts, raw)  # refused before any training, not when the lever first turns on
    if not mixture.levers and menu:
        mixture = mixture.with_levers(first_strengths(opts.levers, menu))
    return spec, raw, mixture, metric, menu


def first_strengths(asked: dict[str, float | None], menu: dict[str, Lever]) -> dict[str, float]:
    """Every lever of `menu` at its first-stage strength: the one asked for it by name (an allowed
    value), else off (None, or a family name such as `weight`: its levers start off)."""
    out = {name: lever.off for name, lever in menu.items()}
    for name, value in asked.items():
        lever = menu.get(name)
        if lever is None or value is None:
            continue
        if value not in lever.values:
            raise GymwrightError(f"lever {name!r} cannot start at {value!r}", path=f"levers.{name}",
                                 hint=f"one of its allowed strengths: {', '.join(f'{v:g}' for v in lever.values)}")
        out[name] = float(value)
    return out
