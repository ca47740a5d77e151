"""The sections of a comparison page (`gymwright report RUN RUN ...`): the runs and their labels,
the learning curves of each group with 95% bands over its seeds, the evaluation table (IQM over
seeds with 95% stratified bootstrap intervals), every run's checks, and the hyperparameters of
the runs side by side with the differing ones marked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gymwright.errors import GymwrightError
from gymwright.report import charts
from gymwright.report.cohort import NOT_A_TREATMENT, Cohort
from gymwright.report.folder import RunFolder
from gymwright.report.markup import Html, join, num, table, tag
from gymwright.report.sections import badge, figure, not_recorded, params_text, whole_run_checks
from gymwright.report.stats import difference_interval, iqm_band, iqm_interval

GRID_POINTS = 100


@dataclass
class Measure:
    """One row of the evaluation table: a label and where its value is in an EvalResult dict."""

    label: str
    kind: str  # metrics | returns | length
    name: str = ""

    def value(self, result: dict[str, Any]) -> float | None:
        v = result.get(self.kind) if self.kind == "length" else (result.get(self.kind) or {}).get(self.name)
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


# --------------------------------------------------------------------------- the runs
def runs_section(c: Cohort, x_key: str) -> Html:
    by = "each run alone" if c.grouped_by == ["run"] else (", ".join(c.grouped_by) or "nothing (every run alike)")
    head = tag("p", f"{len(c.runs)} runs of {c.spec_name or 'one spec'} in {len(c.groups)} group"
               f"{'s' * (len(c.groups) != 1)}, labelled by {by}; the seeds of a group are pooled. "
               "Name the grouping with --group-by SETTING (a setting of the Hyperparameters table, or `run`).")
    rows = []
    for run, s, lab in zip(c.runs, c.settings, c.labels, strict=True):
        segs = [seg for seg in run.segments if seg.rows]
        card = run.scorecard or {}
        evaluated = (f"{(card.get('trained') or {}).get('episodes', '?')} episodes, {params_text(card.get('params'))}"
                     if card else "not evaluated")
        rows.append([tag("code", str(run.root)), lab, s.get("seed", ""), len(segs) or "",
                     f"{charts.ends(segs)[-1]:,.0f}" if segs else "",
                     f"{charts.ends(segs, 'time_s')[-1]:.1f}" if segs else "", evaluated])
    return join([head, table(["run folder", "group", "seed", "stages", "env steps", "training seconds",
                              "evaluated on"], rows, class_="numbers")])


# --------------------------------------------------------------------------- curves
def curves_section(c: Cohort, x_key: str) -> Html:
    x_label = charts.X_LABELS.get(x_key, x_key)
    figures = []
    for prefix, name, title in curve_keys(c):
        bands = {g: b for g, idx in c.groups.items() if (b := group_band(c, idx, prefix, name, x_key)) is not None}
        if bands:
            figures.append(figure(charts.band_chart(bands, title, x_label), title,
                                  f"{title}: per group, the IQM over its seeds (the line) and its 95% bootstrap band "
                                  f"(shaded), over {x_label} on the range every seed of the group covers."))
    if not figures:
        return not_recorded("no run has a train.jsonl with curves")
    return join(figures)


def curve_keys(c: Cohort) -> list[tuple[str, str, str]]:
    """(row prefix, name, title): the task metric, then each role's return."""
    metric = task_metric(c)
    roles = list(dict.fromkeys(k.removeprefix("charts/return/") for r in c.runs for s in r.segments
                               for row in s.rows[:1] for k in row if k.startswith("charts/return/")))
    keys = [("metrics/", metric, f"{metric} (task metric) while training")] if metric else []
    return keys + [("charts/return/", role, f"Return of {role}") for role in roles]


def task_metric(c: Cohort) -> str | None:
    """The scorecards' task metric, else the spec's (`kind: task`, else its first metric)."""
    named = next((str(r.scorecard["task_metric"]) for r in c.runs if r.scorecard and r.scorecard.get("task_metric")),
                 None)
    return named if named is not None else _spec_task_metric(c.runs[0])


def _spec_task_metric(run: RunFolder) -> str | None:
    from gymwright.evaluate.scorecard import task_metric_of
    from gymwright.report.spec_source import find_spec
    from gymwright.spec.loader import load_spec

    spec = find_spec(run)
    try:
        return task_metric_of(load_spec(spec.data)) if spec is not None else None
    except GymwrightError:
        return None


def group_band(c: Cohort, idx: list[int], prefix: str, name: str, x_key: str) -> charts.Band | None:
    """The group's runs' curves of `prefix+name` on a common grid, and their IQM with its band."""
    xy = [charts.curves([s for s in c.runs[i].segments if s.rows], prefix, x_key).series.get(name) for i in idx]
    xy = [(np.asarray(x), np.asarray(y)) for x, y in (p for p in xy if p and len(p[0]) > 0)]
    if not xy:
        return None
    lo, hi = max(float(x[0]) for x, _ in xy), min(float(x[-1]) for x, _ in xy)
    grid = xy[0][0] if len(xy) == 1 or hi <= lo else np.linspace(lo, hi, GRID_POINTS)
    center, low, high = iqm_band(np.stack([np.interp(grid, x, y) for x, y in xy]))
    return charts.Band(grid.tolist(), center.tolist(), low.tolist(), high.tolist(), len(xy))


# --------------------------------------------------------------------------- evaluation
def measures(c: Cohort) -> list[Measure]:
    metric = task_metric(c)
    roles = list(dict.fromkeys(role for r in c.runs for role in ((r.scorecard or {}).get("trained") or {}).get("returns") or {}))
    out = [Measure(f"{metric} (task metric)", "metrics", metric)] if metric else []
    return out + [Measure(f"return of {role}", "returns", role) for role in roles] + [Measure("episode length", "length")]


def strata_of(runs: list[RunFolder], m: Measure, side: str = "trained") -> list[np.ndarray]:
    """Per params a run was evaluated with, the runs' scorecard `side` (trained or random) values of `m`."""
    strata: dict[str, list[float]] = {}
    for run in runs:
        card = run.scorecard or {}
        v = m.value(card.get(side) or {})
        if v is not None:
            strata.setdefault(params_text(card.get("params")), []).append(v)
    return [np.array(v) for v in strata.values()]


def evaluation_section(c: Cohort) -> Html:
    evaluated = [r for r in c.runs if r.scorecard]
    if not evaluated:
        return not_recorded("no run has an eval/scorecard.json (run `gymwright evaluate SPEC --policy RUN` on each)")
    configs = {params_text((r.scorecard or {}).get("params")) for r in evaluated}
    names = list(c.groups)
    rows = []
    for m in measures(c):
        per_group = [strata_of([c.runs[i] for i in idx], m) for idx in c.groups.values()]
        cells: list[Any] = [join([iqm_interval(st).text(), tag("br"),
                                  tag("small", ", ".join(num(v) for s in st for v in s))]) if st else "not evaluated"
                            for st in per_group]
        if len(names) >= 2:
            cells.append(difference_cell(per_group[0], per_group[1], names[0], names[1]))
        rand = strata_of(evaluated, m, "random")
        rows.append([m.label, *cells, iqm_interval(rand).text() if rand else ""])
    seeds = [sum(1 for i in idx if c.runs[i].scorecard) for idx in c.groups.values()]
    rows.append(["seeds evaluated", *seeds, *([""] if len(names) >= 2 else []), len(evaluated)])
    head = tag("p", "Each cell: the interquartile mean (IQM) over the group's seeds of each run's evaluation mean, "
               "with its 95% stratified bootstrap interval [low, high] (runs resampled within each evaluation "
               "configuration, 10,000 times; rliable's estimators); below it, the seeds' own values. With one "
               "seed there is no interval: evaluate more seeds to back a claim. Evaluated on: "
               f"{'; '.join(sorted(configs))}.")
    diff = [f"{names[0]} - {names[1]}"] if len(names) >= 2 else []
    parts = [head, table(["", *names, *diff, "random legal (all runs)"], rows, class_="numbers")]
    if len(configs) > 1:
        parts.append(tag("p", "The runs were evaluated on different configurations; each is a stratum of the "
                              "bootstrap, but groups evaluated on different ones are not directly comparable.",
                         class_="warn"))
    return join(parts)


def difference_cell(a: list[np.ndarray], b: list[np.ndarray], name_a: str, name_b: str) -> Any:
    """The first group's IQM minus the second's, its 95% interval (each group's seeds resampled
    apart) and whether it excludes zero."""
    if not a or not b:
        return ""
    d = difference_interval(a, b)
    if d.runs < 2:
        return join([d.text(), tag("br"), tag("small", "no interval: a group has one seed")])
    verdict = (f"{name_a} is higher" if d.low > 0 else f"{name_b} is higher" if d.high < 0
               else "inside the noise (the interval holds 0)")
    return join([d.text(), tag("br"), tag("small", verdict)])


# --------------------------------------------------------------------------- checks
def checks_section(c: Cohort) -> Html:
    evaluated = [(i, r) for i, r in enumerate(c.runs) if r.scorecard]
    if not evaluated:
        return not_recorded("no run has an eval/scorecard.json with its checks")
    by_run = [{ch.get("name"): ch for ch in whole_run_checks(r, r.scorecard or {})} for _, r in evaluated]
    names = list(dict.fromkeys(n for checks in by_run for n in checks))
    rows = [[name, *(_verdict(checks.get(name)) for checks in by_run)] for name in names]
    header = ["check", *(join([tag("code", r.root.name), tag("br"), tag("small", c.labels[i])]) for i, r in evaluated)]
    return join([tag("p", "Each run's scorecard; hover a verdict for its finding."), table(header, rows)])


def _verdict(check: dict[str, Any] | None) -> Html:
    if not check:
        return Html("")
    return tag("span", badge(str(check.get("verdict", "n/a"))), title=str(check.get("message", "")))


# --------------------------------------------------------------------------- hyperparameters
def hyperparameters_section(c: Cohort) -> Html:
    keys = list(dict.fromkeys(k for s in c.settings for k in s))
    rows = []
    for k in keys:
        values = [_plain(s.get(k)) for s in c.settings]
        differs = len(set(values)) > 1
        mark = ("" if not differs else "differs" if k not in NOT_A_TREATMENT else "differs (not grouped)")
        shown = [tag("strong", v) if differs else v for v in values]
        rows.append([tag("code", k), tag("span", mark, class_="differs") if mark else "", *shown])
    header = ["setting", "", *(join([tag("code", r.root.name), tag("br"), tag("small", lab)])
                               for r, lab in zip(c.runs, c.labels, strict=True))]
    head = tag("p", "The resolved config of each run (config.yaml in its folder, else its checkpoint's), its params "
               "and, for a curriculum, its engineer; settings whose values differ between the runs are marked and in "
               "bold. The seed and bookkeeping settings (" + ", ".join(NOT_A_TREATMENT) + ") do not label a group.")
    return join([head, tag("div", table(header, rows, class_="kv"), class_="wide")])


def _plain(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return params_text(value)
    return "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


SECTIONS = (  # (id, title, render(cohort, x_key))
    ("runs", "Runs compared", runs_section),
    ("curves", "Learning curves", curves_section),
    ("evaluation", "Evaluation", lambda c, x: evaluation_section(c)),
    ("checks", "Checks", lambda c, x: checks_section(c)),
    ("config", "Hyperparameters", lambda c, x: hyperparameters_section(c)),
)

