"""The report's sections, in page order: each a function of the `Material`, returning `Html`.

A section whose evidence is missing says "not recorded" and what would record it; one that a
run cannot have (a code-mode run's recorded episodes, failure kinds, curriculum) says "not
applicable" and why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any

from gymwright.design.session import FITS
from gymwright.evaluate.failures import gather
from gymwright.evaluate.trajectories import Trajectory, select
from gymwright.report import charts
from gymwright.report.comparison import comparison_html
from gymwright.report.folder import RunFolder
from gymwright.report.markup import Html, img, join, num, pm, table, tag
from gymwright.report.spec_source import SpecText

MAX_STEPS_SHOWN = 30
MAX_GIF_BYTES = 4_000_000  # a GIF larger than this is left out (the page would get heavy)
VERDICT_CLASS = {"ok": "v-ok", "passed": "v-ok", "warning": "v-warning", "fail": "v-fail",
                 "failed": "v-fail", "error": "v-fail", "n/a": "v-na", "info": "v-na"}


@dataclass
class Material:
    """What the sections draw on: the folder, the spec found, the verification summary."""

    run: RunFolder
    spec: SpecText | None
    verification: dict[str, Any] | None
    verification_source: str
    x_key: str = "env_steps"  # the curves' axis: env_steps, or time_s (seconds of training)


@dataclass
class Section:
    id: str
    title: str
    render: Callable[[Material], Html]


# --------------------------------------------------------------------------- small pieces
def badge(verdict: str) -> Html:
    return tag("span", verdict, class_=f"badge {VERDICT_CLASS.get(verdict, 'v-na')}")


class NotRecorded(Html):
    """A section's whole content when its evidence is missing."""


def not_recorded(why: str) -> NotRecorded:
    return NotRecorded(tag("p", tag("em", "Not recorded"), f": {why}", class_="missing"))


class NotApplicable(NotRecorded):
    """A section's whole content when the run cannot have its evidence (counted as missing)."""


def not_applicable(why: str) -> NotApplicable:
    return NotApplicable(tag("p", badge("n/a"), " ", tag("em", "Not applicable"), f": {why}", class_="missing"))


CODE_NO_STEPS = ("a code-mode evaluation plays the module in sandbox workers, and only each episode's returns "
                 "and final metrics come back over the pipe, not its steps, so it records no trajectories.jsonl")
CODE_NO_PARAMS = "defaults (a code-mode module takes its params as keyword arguments of its class)"


def kv(pairs: list[tuple[str, Any]]) -> Html:
    """A two-column table of labels and values (values left as given: text or Html)."""
    return tag("table", *(tag("tr", tag("th", k), tag("td", v)) for k, v in pairs if v not in (None, "")),
               class_="kv")


def params_text(params: dict[str, Any] | None, code_mode: bool = False) -> str:
    return ", ".join(f"{k}={v}" for k, v in (params or {}).items()) or (CODE_NO_PARAMS if code_mode else "defaults")


def pre(text: str) -> Html:
    return tag("pre", text)


# --------------------------------------------------------------------------- the task
def design_verdicts(d: dict[str, Any]) -> list[tuple[str, Any]]:
    """The design's two verdicts, `verified` and `fits_task` (yes / no / unknown), and the review's
    findings when it does not fit; a design.json without them says unknown."""
    v = d.get("verified")
    verified = ("yes" if v else "no") if isinstance(v, bool) else "unknown"
    fits = d.get("fits_task") if d.get("fits_task") in FITS else "unknown"
    findings = [str(f) for f in d.get("findings") or []] if fits == "no" else []
    return [("verified", verified), ("fits the task", fits),
            ("does not fit", tag("ul", *(tag("li", f) for f in findings)) if findings else None)]


def task_section(m: Material) -> Html:
    d, ck, run = m.run.design, m.run.checkpoint or {}, m.run
    parts = []
    if d:
        parts.append(tag("blockquote", d.get("task", ""), class_="task"))
        parts.append(kv([("designed by", f"{d.get('model', '?')} ({d.get('mode', '?')} mode)"),
                         ("design", f"#{d['design_id']}, {d.get('status', '')}" if d.get("design_id") is not None
                          else d.get("status")),
                         *design_verdicts(d),
                         ("explanation", d.get("explanation")),
                         ("spec file", d.get("spec_path"))]))
    else:
        parts.append(not_recorded("no design.json in the folder: the spec was not designed from a task text "
                                  "here (or its design result was not saved)"))
    cfg = ck.get("config") or {}
    segs = [s for s in run.segments if s.rows]
    trained = None
    if segs:
        many = " over all stages" if len(segs) > 1 else ""
        trained = f"{charts.ends(segs)[-1]:,.0f} env steps in {sum(len(s.rows) for s in segs)} updates{many}"
    elif isinstance(ck.get("env_steps"), int):
        trained = f"{ck['env_steps']:,} env steps in {ck.get('update')} updates"
    parts.append(tag("h3", "The run"))
    parts.append(kv([("folder", str(run.root)),
                     ("spec", run.spec_name or "unknown"),
                     ("params", params_text(run.params, run.code_mode) + (" (the last stage)" if run.curriculum else "")),
                     ("algorithm", ck.get("algo")),
                     ("trained", trained),
                     ("stages", len(run.curriculum) if run.curriculum else None),
                     ("copies x rollout", f"{cfg['num_envs']} x {cfg['rollout_len']}"
                      if "num_envs" in cfg and "rollout_len" in cfg else None)]))
    return join(parts)


# --------------------------------------------------------------------------- the spec
def spec_section(m: Material) -> Html:
    if m.spec is None:
        tried = ", ".join(str(c) for c in _candidates(m)) or "nothing to go on"
        if m.run.code_mode:
            return not_recorded(f"the code-mode module was not found (tried: {tried}); a relative path is "
                                "relative to the folder training ran in: write the report from there, or keep "
                                "the module where training read it")
        return not_recorded(f"the spec was not found (tried: {tried})")
    if m.spec.code:
        return code_section(m.spec)
    lines = m.spec.text.count("\n") + 1
    parts = [tag("p", "From ", tag("code", m.spec.label), ".")]
    if m.spec.note:
        parts.append(tag("p", m.spec.note, class_="warn"))
    parts.append(tag("details", tag("summary", f"{m.spec.data.get('name', 'spec')} ({lines} lines of YAML)"),
                     pre(m.spec.text)))
    return join(parts)


def code_section(spec: SpecText) -> Html:
    """A code-mode design's module, as escaped text: the report reads it, never runs or imports it."""
    lines = spec.text.count("\n") + 1
    parts = [tag("p", "A code-mode design: the environment is this Python module (from ", tag("code", spec.label),
                 "), not a spec. It is shown as text; the report never imports or runs it (the checks run it "
                 "only in a sandbox worker).")]
    if spec.note:
        parts.append(tag("p", spec.note, class_="warn"))
    parts.append(tag("details", tag("summary", f"{spec.data.get('name', 'module')} ({lines} lines of Python)"),
                     pre(spec.text)))
    return join(parts)


def _candidates(m: Material) -> list[Any]:
    from gymwright.report.spec_source import candidates

    return candidates(m.run)


# --------------------------------------------------------------------------- verification
def verification_section(m: Material) -> Html:
    v = m.verification
    if v is None:
        return not_recorded(m.verification_source.removeprefix("not recorded: "))
    counts = v.get("counts") or {}
    head = tag("p", badge("passed" if v.get("passed") else "failed"), " ",
               ", ".join(f"{counts.get(s, 0)} {s}{'s' * (counts.get(s, 0) != 1)}" for s in ("error", "warning", "info")),
               f"; stopped at stage `{v['stopped_at']}`" if v.get("stopped_at") else "",
               tag("br"), tag("small", m.verification_source))
    timings = v.get("timings") or {}
    stages = table(["stage", "time"], [[s, f"{1000 * float(timings.get(s, 0)):.0f} ms"] for s in v.get("stages") or []],
                   class_="compact") if v.get("stages") else Html("")
    diags = v.get("diagnostics") or []
    whole = "<module>" if m.run.code_mode else "<spec>"
    rows = [[badge(str(d.get("severity", ""))), d.get("stage", ""), tag("code", d.get("path") or whole),
             join([d.get("message", ""), tag("br") if d.get("hint") else "",
                   tag("small", "fix: ", d["hint"]) if d.get("hint") else ""])] for d in diags]
    findings = table(["severity", "stage", "where", "finding"], rows) if rows else tag("p", "No findings.")
    return join([head, stages, findings])


# --------------------------------------------------------------------------- learning curves
CURVES = (  # (row key prefix, title, how to draw, caption)
    ("charts/return/", "Return per role", "line",
     "The mean episode return of each role's agents, over the episodes that ended in each update."),
    ("metrics/", "Metrics", "multiples",
     "The metrics, mean over the episodes that ended in each update."),
    ("losses/", "Losses", "multiples", "PPO's losses and diagnostics, per update."),
)


def curves_section(m: Material) -> Html:
    segs = [s for s in m.run.segments if s.rows]
    if not segs:
        return not_recorded("no train.jsonl (train into this folder with `gymwright train SPEC --out RUN`)")
    draw = {"line": charts.line_chart, "multiples": charts.small_multiples}
    figures = []
    for prefix, title, kind, caption in CURVES:
        c = charts.curves(segs, prefix, m.x_key)
        if c.series:
            cut = (f" The log has {len(c.left_out):,} more (at most {charts.MAX_SERIES} are drawn), e.g. "
                   f"{', '.join(sorted(c.left_out)[:3])}." if c.left_out else "")
            figures.append(figure(draw[kind](c, title), title, caption + cut))
        if prefix == "charts/return/" and not m.run.code_mode:
            figures += reward_term_figures(segs, m.x_key)
    note = (tag("p", f"{len(segs)} stages laid end to end; a dashed line marks where each stage begins.")
            if len(segs) > 1 else Html(""))
    if m.run.code_mode:
        note = join([note, tag("p", "No reward-term charts: a code-mode env's reward has no named terms (the "
                                    "trainer logs the reward itself as its one term). The metrics are those of "
                                    "the env's final infos.")])
    return join([note, *figures]) if figures else not_recorded("train.jsonl has no curves")


def reward_term_figures(segs: list[Any], x_key: str = "env_steps") -> list[Html]:
    """One chart per role: the mean value of each reward term per step."""
    c = charts.curves(segs, "reward_terms/", x_key)
    roles: dict[str, charts.Curves] = {}
    for key, xy in c.series.items():
        role, _, term = key.partition("/")
        roles.setdefault(role, charts.Curves(stage_starts=c.stage_starts, x_label=c.x_label)).series[term] = xy
    return [figure(charts.line_chart(rc, f"Reward terms: {role}"), f"Reward terms of {role}",
                   f"The mean value of each of {role}'s reward terms per step, before its weight.")
            for role, rc in roles.items()]


def figure(png: bytes, alt: str, caption: str) -> Html:
    return tag("figure", img("image/png", png, alt), tag("figcaption", caption))


# --------------------------------------------------------------------------- evaluation
def evaluation_section(m: Material) -> Html:
    card = m.run.scorecard
    if not card:
        return not_recorded("no eval/scorecard.json (run `gymwright evaluate SPEC --policy RUN`)")
    tr, rd = card.get("trained") or {}, card.get("random") or {}
    scripted = card.get("scripted") or {}  # the spec's scripted baselines: one column each, after gain
    checks = {c.get("name"): c for c in card.get("checks") or []}
    learn = (checks.get("learnability") or {}).get("evidence") or {}
    diff = (checks.get("difficulty") or {}).get("evidence") or {}
    rows = []
    for role, mean in (tr.get("returns") or {}).items():
        gain = ((learn.get("returns") or {}).get(role) or {})
        rows.append([f"return of {role}", pm(mean, (tr.get("ci95") or {}).get(role)),
                     pm((rd.get("returns") or {}).get(role), (rd.get("ci95") or {}).get(role)),
                     pm(gain.get("gain"), gain.get("ci95")),
                     *[pm((sc.get("returns") or {}).get(role), (sc.get("ci95") or {}).get(role)) for sc in scripted.values()]])
    metric = card.get("task_metric")
    for name, mean in (tr.get("metrics") or {}).items():
        is_task = name == metric
        gain = (learn.get("task_metric") or {}) if is_task else {}
        rows.append([join([name, " ", tag("small", "(task metric)") if is_task else ""]),
                     pm(mean, diff.get("ci95") if is_task else None),
                     num((rd.get("metrics") or {}).get(name)), pm(gain.get("gain"), gain.get("ci95")),
                     *[num((sc.get("metrics") or {}).get(name)) for sc in scripted.values()]])
    rows.append(["episode length", num(tr.get("length")), num(rd.get("length")), "",
                 *[num(sc.get("length")) for sc in scripted.values()]])
    n = f"{tr.get('episodes', '?')} episodes each"
    head = tag("p", "Verdict: ", badge(str(card.get("verdict", "n/a"))), f" on {card.get('spec', '?')} "
               f"with {params_text(card.get('params'), m.run.code_mode)}; task metric: {metric or 'none'}; {n}. "
               "± is the 95% confidence half-width over episodes.")
    if m.run.code_mode:
        head = join([head, tag("p", "A code-mode design: trained and random legal play ran in sandbox workers; the "
                                    "checks that read a spec are n/a (below, with why).")])
    check_rows = [[c.get("name", ""), badge(str(c.get("verdict", "n/a"))), c.get("message", "")]
                  for c in whole_run_checks(m.run, card)]
    columns = ["", "trained", "random legal", "gain", *[f"scripted {name}" for name in scripted]]
    return join([head, table(columns, rows, class_="numbers"),
                 tag("h3", "Checks"), table(["check", "verdict", "finding"], check_rows)])


def whole_run_checks(run: RunFolder, card: dict[str, Any]) -> list[dict[str, Any]]:
    """The scorecard's checks, with `learning_curve` judged again on every stage of a curriculum
    (the scorecard may have judged the evaluated stage's log alone)."""
    checks = list(card.get("checks") or [])
    segs = [s for s in run.segments if s.rows]
    roles = list((card.get("trained") or {}).get("returns") or {})
    if len(segs) < 2 or not roles:
        return checks
    from gymwright.evaluate.learnability import learning_curve

    whole = learning_curve([row for s in segs for row in s.rows], roles).to_dict()
    whole["message"] += f" (judged on the train.jsonl of all {len(segs)} stages while this report was written)"
    return [whole if c.get("name") == "learning_curve" else c for c in checks]


# --------------------------------------------------------------------------- failures
def failures_section(m: Material) -> Html:
    metric = (m.run.scorecard or {}).get("task_metric")
    if not m.run.trajectories and m.run.code_mode and m.run.scorecard:
        return not_applicable(f"{CODE_NO_STEPS}. A failure's kind is read from a failed episode's steps and "
                              "metrics, so there is none to sort; the evaluation above counts failed episodes in "
                              "`hacking.reward_in_failures`.")
    if not m.run.trajectories:
        return not_recorded("no eval/trajectories.jsonl (run `gymwright evaluate SPEC --policy RUN`)")
    if not metric:
        return not_recorded("the spec has no task metric, so no episode counts as failed")
    marked = [name for name, x in ((m.spec.data if m.spec is not None else {}).get("metrics") or {}).items()
              if isinstance(x, dict) and x.get("kind") == "failure"]
    ev = gather({"recorded": m.run.trajectories}, metric, max_steps(m), marked)
    b = ev.buckets["recorded"]
    failed = b["episodes"] - b["successes"]
    head = tag("p", f"{b['successes']} of {b['episodes']} recorded episodes reached the task ({metric} > 0); "
               f"{failed} failed. A failure's kind is the first "
               f"{'failure metric' if marked else 'other metric'} that is nonzero in it, else timeout "
               "(cut at the step limit), else other.")
    rows = [[kind, count, f"{count / failed:.0%}"] for kind, count in b["kinds"].most_common()]
    return join([head, table(["kind", "episodes", "share of failures"], rows, class_="numbers")]) if rows else head


def max_steps(m: Material) -> int | None:
    value = m.run.params.get("max_steps")
    if value is None and m.spec is not None:
        value = ((m.spec.data.get("params") or {}).get("max_steps") or {}).get("default")
    return int(value) if isinstance(value, int | float) else None


# --------------------------------------------------------------------------- trajectories
def trajectories_section(m: Material) -> Html:
    trajs = m.run.trajectories
    if not trajs and not m.run.gifs and m.run.code_mode and m.run.scorecard:
        return not_applicable(f"{CODE_NO_STEPS}, and a code-mode env draws no frames over the pipe (no GIFs). "
                              "`gymwright play MODULE.py --policy RUN` plays episodes and prints their returns "
                              "and metrics.")
    if not trajs and not m.run.gifs:
        return not_recorded("no eval/trajectories.jsonl (run `gymwright evaluate SPEC --policy RUN`)")
    picked = select(trajs, (m.run.scorecard or {}).get("task_metric")) if trajs else {}
    named: list[tuple[str, Trajectory | None]] = [("best", picked.get("best")), ("worst", picked.get("worst"))]
    named += [(f"failure{i}", tr) for i, tr in enumerate(picked.get("failures") or [])]
    named += [(name, None) for name in m.run.gifs if name not in dict(named)]
    blocks = [episode_block(name, tr, m) for name, tr in named if tr is not None or name in m.run.gifs]
    intro = tag("p", f"{len(trajs)} episodes were recorded; shown: the best and the worst by total return, "
                "and typical failures (nearest the failed episodes' median return).")
    return join([intro, *blocks])


TITLES = {"best": "Best episode", "worst": "Worst episode"}


def episode_block(name: str, tr: Trajectory | None, m: Material) -> Html:
    title = TITLES.get(name, f"Typical failure {name.removeprefix('failure')}" if name.startswith("failure") else name)
    facts = ""
    if tr is not None:
        rets = ", ".join(f"{a} {num(r)}" for a, r in tr.returns.items())
        mets = ", ".join(f"{k}={num(v)}" for k, v in tr.metrics.items())
        facts = f" — seed {tr.seed}, {len(tr.steps)} steps; returns {rets}; {mets}"
    body = [gif(name, m)]
    if tr is not None:
        body.append(pre(episode_text(tr)))
    return tag("details", tag("summary", tag("strong", title), facts), tag("div", *body, class_="episode"),
               open=name == "best")


def gif(name: str, m: Material) -> Html:
    path = m.run.gifs.get(name)
    if path is None:
        return Html("")
    data = path.read_bytes()
    if len(data) > MAX_GIF_BYTES:
        return tag("p", f"{path.name} is {len(data) / 1e6:.1f} MB; left out of the page (open it beside it)",
                   class_="missing")
    return join([img("image/gif", data, f"{name} episode, animated", class_="gif"), colour_legend(m)])


def colour_legend(m: Material) -> Html:
    """Which colour is which agent (and its role) and which tile kind, from the scorecard (the
    GIFs `gymwright evaluate` writes carry the same legend under their frames). Each swatch is a
    small SVG image (the page's CSP allows no inline styles)."""
    entries = [e for e in (m.run.scorecard or {}).get("legend") or [] if isinstance(e, dict)]
    items = []
    for e in entries:
        rgb = [max(0, min(255, int(c))) for c in (e.get("rgb") or []) if isinstance(c, int | float)][:3]
        colour = "#" + "".join(f"{c:02x}" for c in (rgb + [0, 0, 0])[:3])
        shape = (f'<circle cx="6" cy="6" r="5" fill="{colour}" stroke="#5a5a5a"/>' if e.get("shape") == "disc"
                 else f'<rect x="0.5" y="0.5" width="11" height="11" fill="{colour}" stroke="#5a5a5a"/>')
        svg = f'<svg xmlns="http://www.w3.org/2000/svg" width="12" height="12">{shape}</svg>'.encode()
        kind = "agent" if e.get("shape") == "disc" else "tile"
        items.append(tag("span", img("image/svg+xml", svg, f"{kind} colour {colour}", class_="swatch"),
                         e.get("label", ""), class_="key"))
    return tag("p", tag("small", "Colours: "), *items, class_="legend") if items else Html("")


MAX_NOTE = 300


def said(step: Any) -> str:
    """What a language model replied for each agent it played this step (the reasoning behind the
    action on the line above), cut to MAX_NOTE characters."""
    return "".join(f"\n  {a} replied: {' '.join(n.split())[:MAX_NOTE]}" for a, n in step.notes.items())


def episode_text(tr: Trajectory) -> str:
    shown = tr.steps[:MAX_STEPS_SHOWN]
    lines = [(s.text.rstrip() or f"t={s.t}: " + ", ".join(f"{a}={x}" for a, x in s.actions.items())) + said(s)
             for s in shown]
    if len(tr.steps) > len(shown):
        lines.append(f"... {len(tr.steps) - len(shown)} more steps (all of them are in trajectories.jsonl)")
    return "\n\n".join(lines)


# --------------------------------------------------------------------------- training config
def config_section(m: Material) -> Html:
    """The hyperparameters the (last) policy was trained with, from its checkpoint; the values
    that differ from `TrainConfig`'s defaults in bold."""
    config = (m.run.checkpoint or {}).get("config")
    if not isinstance(config, dict):
        return not_recorded("no checkpoint.pt with its training config (`gymwright train` writes one)")
    from gymwright.train.config import TrainConfig

    defaults = {f.name: f.default for f in fields(TrainConfig) if f.default is not MISSING}
    rows = []
    for name, value in config.items():
        if name in ("spec", "params"):  # shown with the task and the spec
            continue
        default = defaults.get(name, MISSING)
        same = default is not MISSING and _plain(value) == _plain(default)
        rows.append([tag("code", name), tag("code", _plain(value)) if same else tag("strong", tag("code", _plain(value))),
                     "" if default is MISSING else tag("code", _plain(default))])
    which = "the last stage's run" if m.run.curriculum else "this run"
    head = tag("p", f"The TrainConfig of {which} (from its checkpoint); values that differ from the defaults are in bold. "
               "`gymwright train` and `evolve` also save it as config.yaml in the run folder, which `--config` reads back.")
    return join([head, table(["field", "value", "default"], rows, class_="kv")])


def _plain(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(value).lower() if isinstance(value, bool) or value is None else str(value)


# --------------------------------------------------------------------------- curriculum
def curriculum_section(m: Material) -> Html:
    recs = m.run.curriculum
    if not recs and m.run.code_mode:
        return not_applicable("`gymwright evolve` refuses a code-mode design: it has no params for the engineer "
                              "to move and no spec for it to edit")
    if not recs:
        return not_recorded("no curriculum.jsonl: this run was a single stage (`gymwright evolve` records one)")
    rows = []
    for r in recs:
        fails = ", ".join(f"{k} {n}" for k, n in sorted((r.get("failures") or {}).items(), key=lambda kv: -kv[1]))
        rets = ", ".join(f"{k} {num(v)}" for k, v in (r.get("returns") or {}).items())
        trained, proposal = _stage_configs(r)
        rows.append([r.get("index", ""), trained, num(r.get("success")),
                     rets, fails or "none", r.get("engineer", ""),
                     join([proposal, tag("br"), r.get("rationale", "")]),
                     tag("code", str(r.get("spec_sha") or "")[:12])])
    metric = (m.run.scorecard or {}).get("task_metric")
    head = tag("p", f"Each stage trains on its config (the policy carries over), is judged on {metric or 'the task metric'}, "
               "and the engineer proposes the next stage's config, with its rationale.")
    success = f"success ({metric})" if metric else "success"
    return join([head, table(["stage", "trained on", success, "returns", "failures", "engineer",
                              "proposal for the next stage, and why", "spec sha256"], rows), spec_lineage(recs)])


def spec_lineage(recs: list[dict[str, Any]]) -> Html:
    """The edits of the game (`evolve --edits`): per edited stage the reason, the outcome, what the
    policy kept, and the diff from the previous stage's spec."""
    edited = [r for r in recs if r.get("edit")]
    if not edited:
        return join([])
    blocks = [tag("h3", "Spec lineage: the engineer's edits of the game")]
    for r in edited:
        e = r["edit"]
        variant = (e.get("variant") or {}).get("variant")
        blocks += [tag("p", f"Stage {int(r.get('index', 0)) + 1} ({e.get('status')}): {e.get('reason', '')}"
                   + (f" [variant {variant}]" if variant else "")),
                   kv([("spec", f"{str(e.get('parent_sha', ''))[:12]} -> {str(e.get('spec_sha', ''))[:12]}"),
                       ("repairs", e.get("repairs", 0)), ("outcome", e.get("summary", ""))])]
        if e.get("diff"):
            blocks.append(pre(e["diff"]))
    return join(blocks)


def _stage_configs(r: dict[str, Any]) -> tuple[Html, Html]:
    """A stage's config and the proposal: the params, or per bucket of a mixture its share and params."""
    mix, nxt = r.get("mixture") or [], r.get("proposed_mixture") or []
    if r.get("params") or len(mix) <= 1:
        return tag("code", params_text(r.get("params"))), tag("code", params_text(r.get("proposal")))

    def rows(buckets: list[dict[str, Any]], with_success: bool) -> Html:
        return join([join([tag("code", f"{b.get('label', '')} {float(b.get('share', 0)):.0%}: {params_text(b.get('params'))}"),
                           f" → {num(b.get('success'))}" if with_success else "", tag("br")]) for b in buckets])

    return rows(mix, True), rows(nxt, False)


# --------------------------------------------------------------------------- curricula compared
def comparison_section(m: Material) -> Html:
    if not m.run.comparison and m.run.code_mode:
        return not_applicable("`gymwright demo` judges the engineer's curriculum against the fixed environment, "
                              "and a code-mode design can have no curriculum (see above)")
    if not m.run.comparison:
        return not_recorded("no comparison.json: `gymwright demo` trains the engineer's curriculum and, for the "
                            "same budget, the fixed environment, and judges both on held-out configurations")
    return comparison_html(m.run.comparison, m.run.arm_segments)


SECTIONS = (
    Section("task", "The task", task_section),
    Section("spec", "The spec", spec_section),
    Section("verification", "Verification", verification_section),
    Section("curves", "Learning curves", curves_section),
    Section("config", "Training config", config_section),
    Section("evaluation", "Evaluation", evaluation_section),
    Section("failures", "Failure kinds", failures_section),
    Section("trajectories", "Trajectories", trajectories_section),
    Section("curriculum", "Curriculum lineage", curriculum_section),
    Section("comparison", "Engineer against the baselines", comparison_section),
)
