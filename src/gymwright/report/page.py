"""The page: one self-contained HTML file (images inlined as data URIs, CSS and the one small
script inline) with a Content-Security-Policy that lets nothing else load or run."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gymwright.atomic import write_atomic
from gymwright.report.folder import RunFolder, read_run
from gymwright.report.markup import Html, join, tag
from gymwright.report.sections import SECTIONS, Material, NotRecorded
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


def render(run: RunFolder, *, run_verifier: bool = True, progress: Callable[[str], None] | None = None) -> tuple[str, list[str], list[str]]:
    """(the page, the sections with evidence, the sections not recorded)."""
    say = progress or (lambda _: None)
    spec = find_spec(run)
    if spec is not None and not (run.design or {}).get("report") and run_verifier:
        say(f"verifying {spec.label}")
    verdict, source = verification(run, spec, run_verifier)
    material = Material(run, spec, verdict, source)
    body, have, missing = [], [], []
    say("drawing the learning curves and writing the page")
    for s in SECTIONS:
        content = s.render(material)
        (missing if isinstance(content, NotRecorded) else have).append(s.title)
        body.append(tag("section", tag("h2", s.title), content, id=s.id))
    if run.notes:
        body.append(tag("section", tag("h2", "Notes"), tag("ul", *(tag("li", n) for n in run.notes)), id="notes"))
    title = f"gymwright report: {run.spec_name or run.root.name}"
    nav = tag("nav", *(tag("a", s.title, href=f"#{s.id}") for s in SECTIONS))
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = join([Html('<meta charset="utf-8">'),
                 Html(f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'),
                 Html('<meta name="viewport" content="width=device-width, initial-scale=1">'),
                 tag("title", title), Html(f"<style>{CSS}</style>")])
    main = tag("main", tag("h1", title), tag("p", f"Run folder {run.root.resolve()}; written {when}.", class_="sub"),
               nav, *body)
    page = f"<!doctype html>\n<html lang=\"en\">\n<head>{head}</head>\n<body>{main}\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    return page, have, missing


def write_report(run: str | Path | RunFolder, output: str | Path | None = None, *, run_verifier: bool = True,
                 progress: Callable[[str], None] | None = None) -> Report:
    """Read the run folder `run` (or take it read) and write its report to `output` (default
    `run/report.html`), atomically. Raises `ReportError` when `run` is not a run folder or holds
    nothing to report."""
    folder = run if isinstance(run, RunFolder) else read_run(Path(run))
    path = Path(output) if output is not None else folder.root / "report.html"
    page, have, missing = render(folder, run_verifier=run_verifier, progress=progress)
    write_atomic(path, page)
    return Report(path, len(page.encode("utf-8")), have, missing, list(folder.notes))
