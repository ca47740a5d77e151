"""Code mode's scenario checks (issue 42, point 11c): worked cases the model writes beside its
module, played by action index in the sandbox; a failed one is an error at `scenarios[i]` that
says what the module showed."""

from __future__ import annotations

from typing import Any

import pytest

from gymwright.codemode.checks import check_code
from gymwright.codemode.scenarios import ScenarioError, validate_scenarios
from tests.support.paths import ROOT

STAG = (ROOT / "benchmarks" / "data" / "stag_hunt_code.py").read_text()
STAG_ACT, HARE_ACT = 0, 1


def scenario(name: str, steps: list[dict[str, int]], **expect: Any) -> dict[str, Any]:
    return {"name": name, "seed": 0, "steps": steps, "expect": expect}


def test_scenarios_run_in_the_sandbox_and_a_wrong_one_says_what_the_module_showed() -> None:
    both_stag = scenario("both hunt the stag", [{"hunter_0": STAG_ACT, "hunter_1": STAG_ACT}],
                         rewards={"hunter_0": 4, "hunter_1": 4}, done=False)
    alone = scenario("a lone stag hunter gets nothing", [{"hunter_0": STAG_ACT, "hunter_1": HARE_ACT}],
                     rewards={"hunter_0": 0, "hunter_1": 3})
    twenty = scenario("twenty rounds end the episode", [{"hunter_0": HARE_ACT}] * 20,
                      returns={"hunter_0": 60}, done=True, terminated=True, truncated=False)
    wrong = scenario("hares pay the stag's reward", [{"hunter_0": HARE_ACT, "hunter_1": HARE_ACT}],
                     rewards={"hunter_0": 4})
    ends = scenario("the episode ends after one round", [{"hunter_0": HARE_ACT}], done=True)
    report, _ = check_code(STAG, episodes=2, scenarios=validate_scenarios([both_stag, alone, twenty, wrong, ends]))
    assert not report.passed and report.stopped_at == "scenarios"
    found = {d.path: d.message for d in report.diagnostics if d.severity.value == "error"}
    assert set(found) == {"scenarios[3]", "scenarios[4]"}, found
    assert "the reward at the last step of hunter_0 is 3, expected 4" in found["scenarios[3]"]
    assert "hares pay the stag's reward" in found["scenarios[3]"]
    assert "done is false, expected true" in found["scenarios[4]"]


def test_an_illegal_or_overlong_scenario_is_a_finding_not_a_crash() -> None:
    illegal = scenario("an action past the space", [{"hunter_0": 5}], done=False)
    overlong = scenario("past the end", [{"hunter_0": HARE_ACT}] * 21, done=True)
    report, _ = check_code(STAG, episodes=1, scenarios=validate_scenarios([illegal, overlong]))
    messages = [d.message for d in report.diagnostics if d.severity.value == "error"]
    assert any("action 5 is not legal for hunter_0 (legal: [0, 1])" in m for m in messages), messages
    assert any("the episode ended before step 21" in m for m in messages), messages


@pytest.mark.parametrize(("bad", "said"), [
    ([{"name": "x", "steps": [{"hunter_0": "stag"}], "expect": {"done": True}}], "steps must be a list"),
    ([{"name": "x", "steps": [], "expect": {"reward": {"a": 1}}}], "unknown keys ['reward']"),
    ([{"name": "x", "steps": [], "expect": {}}], "non-empty object"),
    ("all", 'must be a list'),
])
def test_a_malformed_scenario_is_refused_before_anything_runs(bad: Any, said: str) -> None:
    with pytest.raises(ScenarioError) as e:
        validate_scenarios(bad)
    assert said in str(e.value)
