"""Verification plays every scripted baseline (issue 42, point 5): a few seeded episodes each on
the instrumented env, every check of random play applied, a finding naming the baseline; a
baseline whose rules never apply is a warning, and one whose rules all miss plays random legal
actions instead of crashing."""

from __future__ import annotations

import copy
from typing import Any

from gymwright.diagnostic import Severity
from gymwright.verify.verifier import verify
from tests.compile.test_baseline_fallback import RPSLS


def streaky() -> dict[str, Any]:
    """RPSLS with a rock streak declared at most 7: random play never gets 8 rocks in a row
    (5^-8 a step), a baseline that always plays rock gets there in 8 steps."""
    spec = copy.deepcopy(RPSLS)
    spec["params"]["rounds"]["default"] = 12
    spec["state"] = {"streak": {"type": "int", "init": 0, "min": 0, "max": 7}}
    spec["step"].append({"set": {"streak": "streak + 1 if m[0] == 0 else 0"}})
    spec["observe"]["judge"] = ["t", "streak / 7"]
    return spec


def test_verification_reports_a_bound_that_only_a_baseline_breaks_naming_the_baseline() -> None:
    report = verify(streaky(), episodes=20)
    assert not report.passed and report.stopped_at == "dynamic"
    bad = [d for d in report.of(Severity.error) if "streak" in d.message]
    assert bad and "baseline `rock`" in bad[0].message, report.to_prompt()
    assert "seed" in bad[0].message


def test_a_baseline_whose_rules_never_apply_is_played_and_warned_about() -> None:
    report = verify(RPSLS, episodes=5)
    assert report.passed, report.to_prompt()
    (warn,) = [d for d in report.diagnostics if d.path == "baselines.beat_last.player"]
    assert warn.severity.value == "warning" and "no rule" in warn.message
    assert not [d for d in report.diagnostics if d.path.startswith("baselines.rock")]
