"""The page: one self-contained HTML file (images inlined as data URIs, CSS and the one small
script inline) with a Content-Security-Policy that lets nothing else load or run."""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gymwright.atomic import write_atomic
from gymwright.report import charts
from gymwright.report.cohort import Cohort, read_cohort
from gymwright.report.compared import SECTIONS as COMPARED
from gymwright.report.folder import RunFolder, read_run
from gymwright.report.markup import Html, join, tag
from gymwright.report.sections import SECTIONS, Material, NotApplicable, NotRecorded
from gymwright.report.spec_source import find_spec, verification

CSS = """
:root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); }
main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 40px 0 12px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 20px 0 8px; }
nav { margin: 12px 0 8px; font-size: 14px; }
nav a { margin-right: 14px; color: #0969da; text-decoration: none; }
.sub, small, figcaption { color: var(--muted); }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 14px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
thead th { background: var(--soft); }
table.kv th { background: var(--soft); font-weight: 600; white-space: nowrap; }
table.numbers td { font-variant-numeric: tabular-nums; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 10px;
      overflow-x: auto; font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
details { margin: 8px 0; }
summary { cursor: pointer; }
blockquote.task { margin: 8px 0 16px; padding: 8px 14px; border-left: 4px solid #0969da; background: var(--soft); }
figure { margin: 12px 0 20px; }
figure img { max-width: 100%; border: 1px solid var(--line); }
img.gif { image-rendering: pixelated; min-width: 128px; border: 1px solid var(--line); margin: 6px 0; }
.episode { padding-left: 12px; }
.episode pre { max-height: 520px; overflow-y: auto; }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 13px; font-weight: 600; }
.v-ok { background: #dafbe1; color: #116329; }
.v-warning { background: #fff8c5; color: #7d4e00; }
.v-fail { background: #ffebe9; color: #a40e26; }
.v-na { background: var(--soft); color: var(--muted); }
.missing { color: var(--muted); }
.warn { color: #7d4e00; }
img.broken { outline: 3px solid #a40e26; }
.differs { color: #7d4e00; font-size: 12px; font-weight: 600; white-space: nowrap; }
.legend { font-size: 13px; margin: 2px 0 8px; }
.legend .key { white-space: nowrap; margin-right: 12px; }
img.swatch { width: 12px; height: 12px; margin: 0 4px 0 0; vertical-align: -1px; }
div.wide { overflow-x: auto; }
"""

# Marks the page once loaded: data-images-ok="true" when every image decoded (tests read it).
SCRIPT = """
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images);
  var broken = images.filter(function (i) { return !(i.complete && i.naturalWidth > 0); });
  broken.forEach(function (i) { i.classList.add("broken"); });
  document.body.dataset.images = String(images.length);
  document.body.dataset.imagesOk = String(broken.length === 0);
});
"""


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


CSP = (f"default-src 'none'; img-src data:; style-src '{_sha256(CSS)}'; script-src '{_sha256(SCRIPT)}'; "
       "base-uri 'none'; form-action 'none'")


@dataclass
class Report:
    """A written report: where, how big, which sections had evidence and which did not."""

    path: Path
    bytes: int
    sections: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    not_applicable: list[str] = field(default_factory=list)  # of `missing`, those the run cannot have (code mode)


def render(run: RunFolder, *, run_verifier: bool = True, progress: Callable[[str], None] | None = None,
           x: str = "steps") -> tuple[str, list[str], list[str]]:
    """(the page, the sections with evidence, the sections not recorded); `x` is the curves' axis
    (`steps`: env steps, `time`: seconds of training)."""
    page, have, missing, _ = render_run(run, run_verifier=run_verifier, progress=progress, x=x)
    return page, have, missing


def render_run(run: RunFolder, *, run_verifier: bool = True, progress: Callable[[str], None] | None = None,
               x: str = "steps") -> tuple[str, list[str], list[str], list[str]]:
    """`render`, and of the sections not recorded those not applicable to the run."""
    say = progress or (lambda _: None)
    spec = find_spec(run)
    if spec is not None and not (run.design or {}).get("report") and run_verifier:
        say(f"verifying {spec.label}")
    verdict, source = verification(run, spec, run_verifier)
    material = Material(run, spec, verdict, source, charts.X_KEYS[x])
    body, have, missing, na = [], [], [], []
    say("drawing the learning curves and writing the page")
    for s in SECTIONS:
        content = s.render(material)
        (missing if isinstance(content, NotRecorded) else have).append(s.title)
        if isinstance(content, NotApplicable):
            na.append(s.title)
        body.append(tag("section", tag("h2", s.title), content, id=s.id))
    title = f"gymwright report: {run.spec_name or run.root.name}"
    sub = f"Run folder {run.root.resolve()}" + (" (a code-mode design)" if run.code_mode else "")
    return shell(title, sub, [(s.id, s.title) for s in SECTIONS], body, run.notes), have, missing, na


def render_comparison(cohort: Cohort, *, x: str = "steps",
                      progress: Callable[[str], None] | None = None) -> tuple[str, list[str], list[str]]:
    """The comparison page of `cohort`: (the page, the sections with evidence, those not recorded)."""
    say = progress or (lambda _: None)
    body, have, missing = [], [], []
    say(f"comparing {len(cohort.runs)} runs in {len(cohort.groups)} groups (bootstrap intervals, curves)")
    for sid, title, draw in COMPARED:
        content = draw(cohort, charts.X_KEYS[x])
        (missing if isinstance(content, NotRecorded) else have).append(title)
        body.append(tag("section", tag("h2", title), content, id=sid))
    title = f"gymwright comparison: {cohort.spec_name or 'runs'}, {' vs '.join(cohort.groups)}"
    sub = f"{len(cohort.runs)} run folders: {', '.join(str(r.root) for r in cohort.runs)}"
    return shell(title, sub, [(sid, t) for sid, t, _ in COMPARED], body, cohort.notes), have, missing


def shell(title: str, sub: str, nav: list[tuple[str, str]], body: list[Html], notes: list[str]) -> str:
    """The whole self-contained page around the sections: head, CSP, title, nav, notes, script."""
    if notes:
        body = [*body, tag("section", tag("h2", "Notes"), tag("ul", *(tag("li", n) for n in notes)), id="notes")]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = join([Html('<meta charset="utf-8">'),
                 Html(f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'),
                 Html('<meta name="viewport" content="width=device-width, initial-scale=1">'),
                 tag("title", title), Html(f"<style>{CSS}</style>")])
    main = tag("main", tag("h1", title), tag("p", f"{sub}; written {when}.", class_="sub"),
               tag("nav", *(tag("a", t, href=f"#{sid}") for sid, t in nav)), *body)
    return f"<!doctype html>\n<html lang=\"en\">\n<head>{head}</head>\n<body>{main}\n<script>{SCRIPT}</script>\n</body>\n</html>\n"


def write_report(run: str | Path | RunFolder, output: str | Path | None = None, *, run_verifier: bool = True,
                 progress: Callable[[str], None] | None = None, x: str = "steps") -> Report:
    """Read the run folder `run` (or take it read) and write its report to `output` (default
    `run/report.html`), atomically. Raises `ReportError` when `run` is not a run folder or holds
    nothing to report."""
    folder = run if isinstance(run, RunFolder) else read_run(Path(run))
    path = Path(output) if output is not None else folder.root / "report.html"
    page, have, missing, na = render_run(folder, run_verifier=run_verifier, progress=progress, x=x)
    write_atomic(path, page)
    return Report(path, len(page.encode("utf-8")), have, missing, list(folder.notes), na)


def write_comparison(runs: list[str | Path] | Cohort, output: str | Path | None = None, *,
                     group_by: list[str] | None = None, x: str = "steps",
                     progress: Callable[[str], None] | None = None) -> Report:
    """Compare the run folders `runs` (seeds pooled by label, `group_by` to name the grouping) on
    one page, written to `output` (default: comparison.html in the runs' common folder)."""
    cohort = runs if isinstance(runs, Cohort) else read_cohort([Path(r) for r in runs], group_by)
    path = Path(output) if output is not None else default_comparison_path([r.root for r in cohort.runs])
    page, have, missing = render_comparison(cohort, x=x, progress=progress)
    write_atomic(path, page)
    return Report(path, len(page.encode("utf-8")), have, missing, list(cohort.notes))


def default_comparison_path(roots: list[Path]) -> Path:
    """comparison.html in the deepest folder that holds every run folder."""
    return Path(os.path.commonpath([str(r.resolve()) for r in roots])) / "comparison.html"
