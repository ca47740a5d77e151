"""Docs that are generated from the code stay current; the README's commands are CI's."""

from __future__ import annotations

import re
from pathlib import Path

from gymwright.spec.expr.functions import FUNCTIONS
from gymwright.spec.reference import BEGIN, END, embed, reference_markdown
from tests.support.paths import ROOT


def test_spec_language_reference_is_current() -> None:
    doc = (ROOT / "docs" / "spec-language.md").read_text()
    assert BEGIN in doc and END in doc
    assert embed(doc) == doc, "run: python -m gymwright.spec.reference --write docs/spec-language.md"


def test_reference_lists_every_function_and_section() -> None:
    ref = reference_markdown()
    for f in FUNCTIONS.values():
        assert f"`{f.signature}`" in ref
    for section in ("EnvSpec", "Param", "Var", "Choice", "Rule", "RewardTerm", "Metric", "Grid", "Channel", "Probe"):
        assert f"### `{section}`" in ref


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text().splitlines()
    commands = [ln.strip() for ln in readme if ln.strip().startswith("python3 -m venv")]
    assert len(commands) == 2, "the README opens with two commands: main job, tests"
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci


def _readme_block(after: str) -> list[str]:
    """The lines of the first code block after the line `after` in the README."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(after))
    first = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    end = next(i for i in range(first + 1, len(lines)) if lines[i].startswith("```"))
    return lines[first + 1:end]


def test_the_readme_command_list_is_the_cli() -> None:
    import typer

    from gymwright.cli import app

    listed = {ln.split()[1] for ln in _readme_block("- **The CLI**") if ln.startswith("gymwright ")}
    assert listed == set(typer.main.get_command(app).commands)


def test_the_readme_layout_names_every_module_and_nothing_else() -> None:
    import re

    src = ROOT / "src" / "gymwright"
    block = _readme_block("## Layout")
    sections: dict[str, str] = {}
    current = ""
    for ln in block[1:]:
        m = re.match(r"  (\w+)/ ", ln)
        if m:
            current = m.group(1)
        elif re.match(r"  \S|\S", ln):  # a top-level module, or tests/ and benchmarks/
            current = ""
        sections[current] = sections.get(current, "") + " " + ln
    packages = sorted(p.name for p in src.iterdir() if (p / "__init__.py").exists())
    assert sorted(k for k in sections if k) == packages
    for pkg in packages:
        text = sections[pkg]
        for f in sorted((src / pkg).glob("*.py")):
            stem = f.stem
            wild = any(stem.startswith(w) for w in re.findall(r"(\w+_)\*", text))
            assert stem in ("__init__", "__main__") or wild or re.search(rf"\b{stem}\b", text), \
                f"{pkg}/{f.name} is not in the README"
        for name in re.findall(r"\b(\w+)\.py\b", text):
            assert (src / pkg / f"{name}.py").exists() or list((src / pkg).glob(f"*/{name}.py")), f"{pkg}/{name}.py"
    top = " ".join(sections.get("", "").split())
    for f in sorted(src.glob("*.py")):
        assert f.name == "__init__.py" or f.name in top, f.name


_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "benchmarks").rglob("*.md"))]


def _prose(path: Path) -> list[str]:
    """The file's lines, those inside fenced code blocks blanked out (numbers stay the file's)."""
    lines, fenced = [], False
    for line in path.read_text().splitlines():
        fence = line.lstrip().startswith("```")
        fenced ^= fence
        lines.append("" if fenced or fence else line)
    return lines


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub makes for the file's headings (github-slugger: lower case, punctuation
    but `-` and `_` dropped, spaces to `-`, a repeated slug numbered -1, -2, ...)."""
    repeats: dict[str, int] = {}
    anchors = set()
    for line in _prose(path) if path.suffix == ".md" else []:
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        heading = m.group(1)
        text = _LINK.sub(lambda link: link.group(1), heading)
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        repeats[slug] = repeats.get(slug, -1) + 1
        anchors.add(f"{slug}-{repeats[slug]}" if repeats[slug] else slug)
    return anchors


def test_every_relative_link_and_anchor_in_the_docs_resolves() -> None:
    broken = []
    for doc in _markdown_files():
        for number, line in enumerate(_prose(doc), 1):
            for match in _LINK.finditer(re.sub(r"`[^`]*`", "``", line)):  # not in code spans
                target = match.group(2)
                if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check
                    continue
                file_part, _, anchor = target.partition("#")
                path = (doc.parent / file_part).resolve() if file_part else doc
                where = f"{doc.relative_to(ROOT)}:{number}: ({target})"
                if not path.exists():
                    broken.append(f"{where}: no file {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
                elif anchor and anchor not in _anchors(path):
                    broken.append(f"{where}: no heading in {path.relative_to(ROOT)} makes the anchor #{anchor}")
    assert not broken, "links that lead nowhere (fix the link, or the heading it names):\n" + "\n".join(broken)
