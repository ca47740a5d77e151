"""The design-quality benchmark's code mode (issue 20, item 7): `MODEL@code` designs through the
same `design()` as `gymwright design --mode code`, and a verified module is judged by the task's
hand-worked scenarios, played in a sandbox worker by action indices (`benchmarks/code_scenarios.py`);
what a module cannot show is counted as not checkable, never as passed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.design.test_design import FITS, PLANS
from tests.support.paths import ROOT

BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))

import code_scenarios as cs  # noqa: E402
import design_quality as dq  # noqa: E402
import scenarios as sc  # noqa: E402

TICTACTOE = (BENCH / "behaviour" / "reference" / "off-tic-tac-toe.py").read_text()
STAG = (BENCH / "data" / "stag_hunt_code.py").read_text()
USAGE = {"prompt_tokens": 100, "completion_tokens": 20}
TASK = next(t for t in dq.load_tasks() if t.id == "off-tic-tac-toe")


def reply(code: str) -> dict[str, Any]:
    return {"json": {"name": "tic_tac_toe", "class": "TicTacToe", "code": code}, "usage": USAGE}


def script(path: Path, codes: list[str]) -> Path:
    plans = [{**p, "usage": USAGE} for p in PLANS]
    path.write_text(yaml.safe_dump([*plans, *(reply(c) for c in codes), {**FITS, "usage": USAGE}], sort_keys=False))
    return path


def kinds(results: list[sc.ScenarioResult]) -> list[str]:
    return [r.kind for r in results]


def test_a_good_module_and_a_refused_one_give_their_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two scripted code-mode designers through the benchmark's own command line: one model
    replies with a good module, the other three times with one the vetting refuses."""
    good = script(tmp_path / "good.yaml", [TICTACTOE])
    refused = script(tmp_path / "refused.yaml", ["import os\n" + TICTACTOE] * (dq.MAX_REPAIRS + 1))
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(yaml.safe_dump({"tasks": [{"id": TASK.id, "task": TASK.task, "spec_subset": True}]}))
    code = dq.main(["--designers", f"scripted:{good}@code,scripted:{refused}@code", "--tasks-file", str(tasks),
                    "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    rows = {r["designer"]: r for r in out["rows"]}
    outcomes = {o["designer"]: o for o in out["outcomes"]}
    ok, bad = rows[f"scripted:{good} --mode code"], rows[f"scripted:{refused} --mode code"]
    assert ok["mode"] == "code" and ok["tasks"] == 1 and ok["off_library"] == 1
    assert (ok["off_verified"], ok["verified_total"], ok["fits"]) == (1, 1, "1/0/0")  # reviewed: it fits
    assert ok["right_template"] is None
    assert (ok["calls"], ok["tokens"]) == (5, 5 * 120)  # three plans, the module and its review
    assert ok["behaviour"] == {"designs": 1, "designs_right": 1, "lib_passed": 0, "lib_total": 0,
                               "off_passed": 5, "off_total": 5, "unmatched": 0, "wrong": 0, "no_spec": 0,
                               "not_checkable": 0}
    assert (bad["off_verified"], bad["verified_total"], bad["errors"]) == (0, 0, 0)
    assert (bad["calls"], bad["tokens"]) == (3 + dq.MAX_REPAIRS + 1, (3 + dq.MAX_REPAIRS + 1) * 120)
    assert bad["behaviour"]["no_spec"] == 5 and bad["behaviour"]["off_total"] == 5
    assert bad["behaviour"]["off_passed"] == 0
    failed = outcomes[bad["designer"]]
    assert failed["status"] == "failed" and not failed["verified"] and "import of `os`" in failed["explanation"]
    assert dq.failure_reason(dq.Outcome(**failed)) is not None
    assert dq.failure_reason(dq.Outcome(**outcomes[ok["designer"]])) is None
    # the tables print them
    table = dq.behaviour_table([dq.score("good", "code", [dq.Outcome(**outcomes[ok["designer"]])])]).splitlines()
    assert table[2] == ("| good | 1/1 (100%) | 1/0/0 | - | 5/5 (100%) | 1/1 (100%) "
                        "| 0 / 0 / 0 | 0 |")
    row = dq.markdown_table([dq.score("bad", "code", [dq.Outcome(**failed)])]).splitlines()[2]
    assert row.startswith("| bad | 1 | - | n/a | n/a | n/a | n/a | 0/1 (0%) | 0/0/0 |")


def test_the_reference_module_passes_and_a_broken_rule_fails_that_scenario_only() -> None:
    scenarios, layout = sc.load_scenarios(TASK.id), cs.load_code_actions(TASK.id)
    assert kinds(cs.run_code_scenarios(TICTACTOE, scenarios, layout)) == [sc.PASSED] * 5
    no_diagonal = TICTACTOE.replace(", (2, 4, 6))", ")")
    results = cs.run_code_scenarios(no_diagonal, scenarios, layout)
    assert kinds(results) == [sc.PASSED, sc.PASSED, sc.WRONG, sc.PASSED, sc.PASSED]
    assert results[2].reason == "failed after 6 steps: `terminated` is false"
    assert kinds(cs.run_code_scenarios(None, scenarios, layout)) == [sc.NO_SPEC] * 5


def test_what_a_module_cannot_show_is_not_checkable_with_the_reason() -> None:
    layout = {"hunter": [cs.parse_action("stag"), cs.parse_action("hare")]}
    both = [{"hunter_0": "stag", "hunter_1": "stag"}]
    cases = [
        ({"name": "sets state", "start": {"round": 3}, "expect": ["terminated"]}, cs.NOT_CHECKABLE, "sets `start`"),
        ({"name": "reads a metric", "actions": both, "expect": ["metric.welfare > 0"]}, cs.NOT_CHECKABLE,
         "`metric.welfare` is not something a code module exposes"),
        ({"name": "reads state", "actions": both, "expect": ["stags == 2"]}, cs.NOT_CHECKABLE, "`stags`"),
        # hunter_1 is left out: with stag the hunt succeeds, with hare it fails
        ({"name": "left out", "actions": [{"hunter_0": "stag"}], "expect": ["reward.hunter_0 == 4"]},
         cs.NOT_CHECKABLE, "which it plays changes the outcome"),
        ({"name": "both stag", "actions": both, "expect": ["reward.hunter_0 == 4", "ret.hunter_1 == 4",
                                                          "not terminated", "mask.hunter_0.hare"]}, sc.PASSED, ""),
        ({"name": "hare pays 3", "actions": [{"hunter_0": "hare", "hunter_1": "stag"}],
          "expect": ["reward.hunter_0 == 3", "reward.hunter_1 == 4"]}, sc.WRONG, "`reward.hunter_1 == 4` is false"),
        ({"name": "a sixth hunter", "actions": [{"hunter_5": "stag"}], "expect": ["terminated"]}, sc.UNMATCHED,
         "the module has no agent `hunter_5` (its agents: hunter_0, hunter_1)"),
    ]
    results = cs.run_code_scenarios(STAG, [s for s, _, _ in cases], layout)
    for (s, kind, why), r in zip(cases, results, strict=True):
        assert (r.kind, why in r.reason) == (kind, True), (s["name"], r)
    # no layout for the role, or one of another size: which index is which action is not known
    assert {r.kind for r in cs.run_code_scenarios(STAG, [cases[4][0]], {})} == {cs.NOT_CHECKABLE}
    kuhn = cs.run_code_scenarios(TICTACTOE, sc.load_scenarios("off-kuhn-poker"), cs.load_code_actions("off-kuhn-poker"))
    assert kinds(kuhn) == [cs.NOT_CHECKABLE] * 6
    assert "the module has 9 actions for player_0, the file's layout for `player` 4" in kuhn[0].reason


def test_not_checkable_scenarios_are_counted_apart() -> None:
    def outcome(*k: str) -> dq.Outcome:
        return dq.Outcome("d", "t", None, {}, passed=True, scenarios=[{"name": f"s{i}", "kind": x, "reason": "why"}
                                                                       for i, x in enumerate(k)])

    b = dq.behaviour([outcome(sc.PASSED, cs.NOT_CHECKABLE), outcome(sc.PASSED, sc.WRONG)])
    assert (b.off_passed, b.off_total, b.not_checkable, b.wrong) == (2, 3, 1, 1)
    assert b.designs_right == 0  # a scenario left unchecked is not passed
    assert dq.failure_reason(outcome(sc.PASSED, cs.NOT_CHECKABLE)) is None
    assert dq.failure_reason(outcome(sc.WRONG, cs.NOT_CHECKABLE)) == \
        "1 of 2 scenarios failed (1 not checkable on the module): s0 (wrong: why)"


def test_code_designers_parse_and_take_the_spec_subset() -> None:
    d = dq.parse_designer("openai:m@code[2]")
    assert (d.model, d.mode, d.limit, d.label) == ("openai:m", "code", 2, "openai:m --mode code")
    tasks = dq.load_tasks()
    assert d.tasks(tasks, None) == [t for t in tasks if t.spec_subset][:2]
    with pytest.raises(SystemExit, match="mode must be template, spec or code"):
        dq.parse_designer("openai:m@python")


def test_every_scenario_action_of_a_code_layout_is_in_it() -> None:
    """A file's `code_actions` name every action its scenarios play (else the file is broken)."""
    laid_out = [f for f in sorted(sc.SCENARIO_DIR.glob("*.yaml")) if cs.load_code_actions(f.stem)]
    assert {f.stem for f in laid_out} == {"off-tic-tac-toe", "off-kuhn-poker"}
    for f in laid_out:
        layout = cs.load_code_actions(f.stem)
        for s in sc.load_scenarios(f.stem):
            for step in s.get("actions") or []:
                for agent, action in step.items():
                    assert any(cs.same_action(cs.parse_action(action), a) for a in layout[cs.role_of(agent)]), \
                        (f.name, s["name"], action)
