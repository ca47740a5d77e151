"""The report's comparison of curricula (`comparison.json`, written by `gymwright demo` through
`gymwright.curriculum.compare`): each curriculum's stages, its training curve of the task metric
next to the others', and the held-out table with 95% intervals and the difference."""

from __future__ import annotations

import math
from typing import Any

from gymwright.report import charts
from gymwright.report.markup import Html, img, join, num, pm, table, tag


def comparison_html(data: dict[str, Any], segments: dict[str, list[Any]]) -> Html:
    """The whole section: what was compared, the held-out table, the curves, the stages."""
    arms: dict[str, dict[str, Any]] = data.get("arms") or {}
    metric = str(data.get("task_metric", "the task metric"))
    head = tag("p", f"Every curriculum trained for the same budget ({int(data.get('env_steps', 0)):,} env steps) "
               f"from the same start; each final policy played {data.get('episodes', '?')} episodes in every "
               "held-out configuration, with the same episode seeds for every curriculum.")
    parts = [head, held_out_table(arms, data.get("held_out") or {}, metric), difference_line(arms)]
    curve = curves_figure(segments, metric)
    if curve is not None:
        parts.append(curve)
    for name, arm in arms.items():
        parts += [tag("h3", f"{name}: the {arm.get('engineer', '')} engineer's stages"), stages_table(arm)]
    return join(parts)


def held_out_table(arms: dict[str, dict[str, Any]], cells: dict[str, Any], metric: str) -> Html:
    rows = [[cell, *(num((a.get("cells") or {}).get(cell)) for a in arms.values())] for cell in cells]
    rows.append([tag("strong", f"mean {metric}"), *(pm(a.get("mean"), a.get("ci95")) for a in arms.values())])
    for extra in next(iter(arms.values()), {}).get("secondary") or {}:
        rows.append([f"mean {extra}", *(num((a.get("secondary") or {}).get(extra)) for a in arms.values())])
    return table(["held-out configuration", *arms], rows, class_="numbers")


def difference_line(arms: dict[str, dict[str, Any]]) -> Html:
    """The first curriculum against each other one, with whether it is beyond the noise."""
    if len(arms) < 2:
        return Html("")
    (a, x), *others = list(arms.items())
    lines = []
    for b, y in others:
        diff = float(x.get("mean", 0.0)) - float(y.get("mean", 0.0))
        ci = math.hypot(float(x.get("ci95", 0.0)), float(y.get("ci95", 0.0)))
        verdict = ("inside the noise: no measurable difference" if abs(diff) <= ci
                   else f"{a} is better" if diff > 0 else f"{b} is better")
        lines.append(tag("p", tag("strong", f"{a} - {b}: {diff:+.3f} ± {ci:.3f}"),
                         f" (95%, the two intervals combined): {verdict}."))
    return join(lines)


def curves_figure(segments: dict[str, list[Any]], metric: str) -> Html | None:
    """The task metric of the episodes that ended while training, per curriculum, over env steps."""
    c = charts.Curves()
    for name, segs in segments.items():
        xy = charts.curves([s for s in segs if s.rows], "metrics/").series.get(metric)
        if xy is not None:
            c.series[name] = xy
    if not c.series:
        return None
    png = charts.line_chart(c, f"{metric} while training")
    return tag("figure", img("image/png", png, f"{metric} while training, per curriculum"),
               tag("figcaption", f"The {metric} of the training episodes (sampled actions, the environment each "
                                 "curriculum trained on at the time), stages laid end to end."))


def stages_table(arm: dict[str, Any]) -> Html:
    rows = []
    for s in arm.get("stages") or []:
        trained = join([join([tag("code", f"{b.get('label', '')} {float(b.get('share', 0)):.0%}"), tag("br")])
                        for b in s.get("trained") or []])
        guard = s.get("guard") or ""
        rows.append([s.get("index", ""), trained, num(s.get("success")), num(s.get("validation")),
                     join([tag("strong", guard) if guard not in ("", "keep") else guard,
                           tag("br") if guard else "", s.get("guard_reason", "")]), s.get("rationale", "")])
    return table(["stage", "trained on (bucket, share)", "success", "validation", "guardrail", "the engineer's reason"],
                 rows)
