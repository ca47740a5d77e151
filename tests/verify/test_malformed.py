"""A corpus of malformed specs, each with one defect: validate() must say where and what, plainly.

Every file in tests/data/malformed/ starts with a comment block:

    # expect-path: rewards.player[0].expr      (`{file}` stands for the spec file's path)
    # expect-message: undefined name `scroe`   (a substring of the message)
    # expect-hint: did you mean `score`?       (optional; a substring of the hint)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from gymwright.diagnostic import Diagnostic, Severity
from gymwright.verify.validate import validate
from tests.support.paths import DATA

CORPUS = DATA / "malformed"
FILES = sorted(CORPUS.glob("*.yaml"))

# Words that betray an internal error or a raw pydantic/YAML report instead of a diagnostic.
JARGON = ("Traceback", "pydantic", "type=", "errors.pydantic.dev", "For further information",
          "Field required", "Extra inputs are not permitted", "model_type", "union_tag",
          "function-after", "function-before", "Value error,", "validation error for",
          'File "', "<class ", "object at 0x")
# A spec path: dotted keys and [i] indices, or a file location for load errors.
PATH_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*|\[\d+\])*$")

MINIMAL = """\
gymwright: 1
name: minimal
params:
  max_steps: {default: 10, min: 1, max: 100, type: int, doc: episode length}
agents:
  player: {count: 2}
state:
  score: {type: int, init: 0, min: 0, max: 100}
actions:
  player:
    - {name: wait}
    - {name: bump, legal: "score < 100"}
step:
  - {when: "any(bump)", set: {score: "min(score + 1, 100)"}}
rewards:
  player:
    - {name: points, expr: "score / 100"}
metrics:
  final: {expr: score, reduce: last}
terminate: "score >= 100"
truncate: "t >= max_steps"
observe:
  player: [score]
probes:
  - name: one bump scores one point
    actions: [{player_0: bump}]
    expect: ["score == 1", "reward.player_0 == reward.player_1"]
"""


@dataclass(frozen=True)
class Expected:
    path: str
    message: str
    hint: str | None


def expected(spec: Path) -> Expected:
    """The expectation in the file's leading comment block."""
    head: dict[str, str] = {}
    for line in spec.read_text().splitlines():
        if not line.startswith("#"):
            break
        m = re.match(r"#\s*expect-(path|message|hint):\s?(.*)$", line)
        if m:
            head[m.group(1)] = m.group(2).rstrip()
    assert "path" in head and "message" in head, f"{spec.name} lacks expect-path/expect-message"
    return Expected(head["path"].replace("{file}", str(spec)), head["message"], head.get("hint"))


def errors_of(spec: Path) -> list[Diagnostic]:
    return [d for d in validate(str(spec)) if d.severity is Severity.error]


def show(diags: list[Diagnostic]) -> str:
    return "\n".join(d.format() for d in diags) or "(no errors)"


def test_corpus_is_large_enough() -> None:
    assert len(FILES) >= 40


@pytest.mark.parametrize("spec", FILES, ids=lambda p: p.stem)
def test_malformed_spec_gets_the_expected_diagnostic(spec: Path) -> None:
    want = expected(spec)
    errors = errors_of(spec)
    assert errors, f"{spec.name}: validate() found no error"
    at_path = [d for d in errors if d.path == want.path]
    assert at_path, f"no error at `{want.path}`; got:\n{show(errors)}"
    matching = [d for d in at_path if want.message in d.message]
    assert matching, f"no error at `{want.path}` says {want.message!r}; got:\n{show(at_path)}"
    if want.hint is not None:
        assert any(want.hint in d.hint for d in matching), (
            f"no hint says {want.hint!r}; got:\n{show(matching)}")


@pytest.mark.parametrize("spec", FILES, ids=lambda p: p.stem)
def test_diagnostics_are_plain_words(spec: Path) -> None:
    for d in errors_of(spec):
        text = f"{d.path}\n{d.message}\n{d.hint}"
        leaked = [w for w in JARGON if w in text]
        assert not leaked, f"diagnostic leaks {leaked}:\n{d.format()}"
        assert d.message.strip(), f"empty message at {d.path}"
        assert d.path.startswith(str(spec)) or PATH_RE.match(d.path), (
            f"path {d.path!r} is not a spec path:\n{d.format()}")


def declared_names(spec: Path) -> set[str]:
    """Names the spec file declares (params, consts, variables, choices, arguments)."""
    try:
        data = yaml.safe_load(spec.read_text())
    except yaml.YAMLError:
        return set()
    if not isinstance(data, dict):
        return set()
    names: set[str] = set()
    for section in ("params", "consts", "state", "agent_state"):
        if isinstance(data.get(section), dict):
            names |= set(data[section])
    for choices in (data.get("actions") or {}).values():
        for choice in choices or []:
            if isinstance(choice, dict):
                names.add(str(choice.get("name")))
                names |= set(choice.get("args") or {})
    return names


@pytest.mark.parametrize("spec", FILES, ids=lambda p: p.stem)
def test_one_defect_does_not_cascade_into_undefined_names(spec: Path) -> None:
    """A declared name is never reported as undefined because something else was wrong."""
    declared = declared_names(spec)
    for d in errors_of(spec):
        m = re.search(r"undefined name `(\w+)`", d.message)
        assert not (m and m.group(1) in declared), (
            f"`{m.group(1)}` is declared in the spec, yet:\n{d.format()}")


def test_minimal_valid_spec_has_no_errors() -> None:
    errors = [d for d in validate(MINIMAL) if d.severity is Severity.error]
    assert errors == [], show(errors)


def test_minimal_valid_spec_from_a_file(tmp_path: Path) -> None:
    spec = tmp_path / "minimal.yaml"
    spec.write_text(MINIMAL)
    errors = errors_of(spec)
    assert errors == [], show(errors)


def test_every_corpus_file_differs_from_the_minimal_spec() -> None:
    """Each file is the minimal spec (less its probes) with one edit, not a copy of it."""
    base = MINIMAL.split("probes:")[0]
    for spec in FILES:
        body = "\n".join(ln for ln in spec.read_text().splitlines() if not ln.startswith("#"))
        assert body.strip() != base.strip(), spec.name


def test_one_bad_action_argument_is_one_error() -> None:
    """The choice it refuses is not reported again where baselines and probes play it."""
    import copy

    from gymwright.spec.loader import read_data

    data, _ = read_data("cake_negotiation")
    data = copy.deepcopy(data)
    data["actions"]["bargainer"][0]["args"] = {"share": "linspace(0, 1, x11)"}
    errors = [d for d in validate(data) if d.severity == Severity.error]
    assert [d.path for d in errors] == ["actions.bargainer[0].args.share"], show(errors)
