"""Docs that are generated from the code stay current; the README's commands are CI's."""

from __future__ import annotations

from pathlib import Path

from gymwright.spec.expr.functions import FUNCTIONS
from gymwright.spec.reference import BEGIN, END, embed, reference_markdown

ROOT = Path(__file__).resolve().parent.parent


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
