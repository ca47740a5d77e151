"""A review that reviews (issue 42, point 4): a failed review call is a failure with its reason;
every baseline plays several seeds with means and 95% intervals; a baseline that leaves a role
out is played; the verifier's warnings reach the model; the verdict follows the checks; a
verified spec is never lost. Scripted replies on a real store in tmp_path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gymwright.design import DesignOptions, design
from gymwright.llm.scripted import ScriptedProvider
from gymwright.store import Store
from tests.compile.test_baseline_fallback import RPSLS
from tests.design.test_design import BUTTON, FITS, PLANS, TASK, UNFIT, run, script
from tests.design.test_design_review import paid_alone


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store.open(tmp_path / "store") as st:
        yield st


def button_with_baselines() -> dict[str, Any]:
    spec = copy.deepcopy(BUTTON)
    spec["baselines"] = {"always_press": {"presser": [{"action": "press"}]},
                         "never_press": {"presser": [{"action": "wait"}]}}
    return spec


def review_prompt(provider: Any) -> str:
    return next(r for r in provider.requests if r.schema_name == "review").messages[-1].content


# ----------------------------------------------------------------------------- (a) a failed call
def test_a_review_with_no_usable_reply_is_a_failure_with_its_reason(tmp_path: Path, store: Store) -> None:
    result, _ = run(tmp_path, [*PLANS, {"json": BUTTON}, "not json", "still not json"], store, max_repairs=1)
    assert result.status == "review_failed" and not result.passed
    assert result.verified and result.fits_task == "unknown"
    assert "the task-fit review failed" in result.explanation and "no usable reply" in result.explanation
    data = result.to_json_dict()
    assert data["status"] == "review_failed" and "no usable reply" in data["review_error"]
    assert result.spec == BUTTON and result.spec_path.exists()  # the verified spec is kept
    assert yaml.safe_load(result.spec_path.read_text()) == BUTTON
    rec = store.design(result.design_id)
    assert rec.status == "review_failed" and rec.result["review_error"] == data["review_error"]


def test_a_review_call_the_server_fails_exits_non_zero_with_the_reason(tmp_path: Path) -> None:
    from gymwright.cli import app

    path = script(tmp_path, [*PLANS, {"json": BUTTON}, "not json", "not json either"])
    res = CliRunner().invoke(app, ["design", TASK, "--model", f"scripted:{path}", "--json", "--max-repairs", "1",
                                   "--store", str(tmp_path / "st"), "--no-cache"])
    assert res.exit_code == 1, res.output
    data = json.loads(res.stdout)
    assert data["status"] == "review_failed" and data["verified"] is True and not data["passed"]
    assert "no usable reply" in data["review_error"] and "review failed" in data["explanation"]
    assert data["spec_path"] and Path(data["spec_path"]).exists()


def test_a_design_with_no_review_says_it_was_not_reviewed(tmp_path: Path) -> None:
    from gymwright.cli import app

    path = script(tmp_path, [*PLANS, {"json": BUTTON}])
    res = CliRunner().invoke(app, ["design", TASK, "--model", f"scripted:{path}", "--no-review",
                                   "--store", str(tmp_path / "st"), "--no-cache", "--out", str(tmp_path / "b.yaml")])
    assert res.exit_code == 0, res.output
    assert "fits the task: unknown (not reviewed: --no-review)" in res.output


def test_a_review_call_the_server_fails_is_a_failure_with_the_servers_reason(tmp_path: Path,
                                                                             store: Store) -> None:
    result, _ = run(tmp_path, [*PLANS, {"json": BUTTON}, {"error": "connection"}], store, retries=0)
    assert result.status == "review_failed" and result.verified and not result.passed
    assert "connection" in result.review_error and "connection" in result.explanation
    assert result.spec == BUTTON and result.spec_path.exists()


# ----------------------------------------------------------------------------- (b) (c) (d) the prompt
def test_the_review_prompt_has_each_baseline_over_several_seeds_with_intervals(tmp_path: Path,
                                                                              store: Store) -> None:
    spec = button_with_baselines()
    result, provider = run(tmp_path, [*PLANS, {"json": spec}, FITS], store)
    assert result.passed, result.explanation
    prompt = review_prompt(provider)
    for who in ("random legal actions", "`always_press`", "`never_press`"):
        assert who in prompt
    assert "Over 30 episodes" in prompt and "95%" in prompt and "±" in prompt
    assert "`always_press`: presser_0 return 5 ± 0, presser_1 return 5 ± 0" in prompt  # 5 steps, all paid
    assert "`never_press`: presser_0 return 0 ± 0" in prompt
    assert prompt.count("step 1:") == 1  # one sample trace, not one per player


def test_a_baseline_that_leaves_a_role_out_is_played_in_the_review(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [*PLANS, {"json": RPSLS}, FITS], store)
    assert result.verified, result.explanation
    prompt = review_prompt(provider)
    assert "could not play" not in prompt
    assert "`rock`" in prompt and "`beat_last`" in prompt
    assert "`rock`: player_0 return 0 ± 0" in prompt  # rock against rock: a tie every round
    assert "a rule applied on 100% of the agent-steps of player; judge left out" in prompt
    assert "a rule applied on 0% of the agent-steps of player" in prompt  # beat_last: every rule misses


def test_the_verifiers_warnings_reach_the_review_prompt(tmp_path: Path, store: Store) -> None:
    _, provider = run(tmp_path, [*PLANS, {"json": RPSLS}, FITS], store)
    prompt = review_prompt(provider)
    assert "# The verifier's warnings" in prompt
    assert "baselines.beat_last.player" in prompt and "rewards.judge" in prompt


# ----------------------------------------------------------------------------- (e) verdict and checks
FITS_BUT_A_CHECK_FAILS = {"json": {"checks": [
    {"aspect": "agents", "fits": True},
    {"aspect": "metrics", "fits": False, "problem": "no metric counts missed presses",
     "fix": "metrics.missed: count steps where exactly one pressed"}], "fits_task": True}}
UNFIT_WITHOUT_A_FAILED_CHECK = {"json": {"checks": [{"aspect": "agents", "fits": True}], "fits_task": False}}


def with_missed() -> dict[str, Any]:
    spec = copy.deepcopy(BUTTON)
    spec["metrics"]["missed"] = {"expr": "sum(press) == 1", "reduce": "sum"}
    return spec


def test_the_verdict_follows_the_checks_and_the_repair_quotes_them(tmp_path: Path, store: Store) -> None:
    items = [*PLANS, {"json": BUTTON}, FITS_BUT_A_CHECK_FAILS, {"json": with_missed()}, FITS]
    result, provider = run(tmp_path, items, store)
    assert result.passed and result.fits_task == "yes"
    repair = next(r for r in provider.requests if r.schema_name == "repair").messages[-1].content
    assert "metrics: no metric counts missed presses" in repair and "metrics.missed" in repair
    assert "does not do what the task asks" not in repair
    assert "1 of its 2 checks" in repair and "fits_task" in repair  # the disagreement, said so


def test_a_verdict_of_unfit_that_names_no_failed_check_is_asked_again(tmp_path: Path, store: Store) -> None:
    items = [*PLANS, {"json": BUTTON}, UNFIT_WITHOUT_A_FAILED_CHECK, FITS]
    result, provider = run(tmp_path, items, store)
    assert result.passed and result.fits_task == "yes"
    again = [r for r in provider.requests if r.schema_name == "review"][1].messages[-1].content
    assert "every check fits" in again


def test_an_unfit_design_lists_the_failing_checks(tmp_path: Path, store: Store) -> None:
    items = [*PLANS, {"json": BUTTON}, FITS_BUT_A_CHECK_FAILS]
    result, _ = run(tmp_path, items, store, max_repairs=0)
    assert result.status == "unfit" and result.fits_task == "no"
    assert "metrics: no metric counts missed presses" in result.explanation


# ----------------------------------------------------------------------------- (f) never lost
def test_a_verified_spec_is_kept_when_the_repair_after_the_review_fails(tmp_path: Path, store: Store) -> None:
    items = [*PLANS, {"json": paid_alone()}, UNFIT, {"error": "connection"}]
    result, _ = run(tmp_path, items, store, retries=0)
    assert result.status == "unfit" and result.verified and result.fits_task == "no"
    assert result.spec == paid_alone() and result.spec_path is not None and result.spec_path.exists()
    assert "connection" in result.explanation and "rewards: the task pays only" in result.explanation
    assert store.design(result.design_id).spec_sha == result.spec_sha


def test_a_verified_spec_is_kept_when_the_budget_ends_the_repair(tmp_path: Path, store: Store) -> None:
    items = [*PLANS, {"json": paid_alone()}, UNFIT, {"json": BUTTON}, FITS]
    result, _ = run(tmp_path, items, store, max_calls=5)
    assert result.status == "unfit" and result.spec == paid_alone() and result.spec_path.exists()
    assert "budget" in result.explanation


# ----------------------------------------------------------------------------- point 3: params
def test_the_review_checks_that_stated_numbers_are_params_with_full_ranges(tmp_path: Path,
                                                                           store: Store) -> None:
    narrow = {"json": {"checks": [{"aspect": "params", "fits": False,
                                   "problem": "horizon is capped at 20 though any horizon of 1 or more is a game",
                                   "fix": "params.horizon.max: 1000"}], "fits_task": False}}
    items = [*PLANS, {"json": BUTTON}, narrow, {"json": with_missed()}, FITS]
    result, provider = run(tmp_path, items, store)
    assert result.passed, result.explanation
    prompt = review_prompt(provider)
    assert "- params: every number the task states that sizes or tunes the game" in prompt
    assert "span every value that still makes a valid game" in prompt
    repair = next(r for r in provider.requests if r.schema_name == "repair").messages[-1].content
    assert "params: horizon is capped at 20" in repair and "params.horizon.max" in repair


@pytest.mark.parametrize("template", ["review.md", "code_review.md"])
def test_every_check_a_review_prompt_asks_for_is_an_aspect_the_reply_may_name(template: str) -> None:
    import re
    import typing

    from gymwright.design.plans import FitCheck
    from tests.support.paths import ROOT

    text = (ROOT / "src" / "gymwright" / "design" / "prompts" / template).read_text()
    asked = re.findall(r"^- ([a-z_]+):", text, flags=re.M)
    aspects = set(typing.get_args(FitCheck.model_fields["aspect"].annotation))
    assert len(asked) >= 7 and set(asked) <= aspects, set(asked) - aspects


def test_a_task_of_several_lines_stays_a_comment_of_the_written_spec(tmp_path: Path, store: Store) -> None:
    from gymwright.spec.loader import load_spec

    out = tmp_path / "button.yaml"
    path = script(tmp_path, [*PLANS, {"json": BUTTON}, FITS])
    task = TASK + "\ngoal: press together\rname: other"
    result = design(task, DesignOptions(retry_backoff=0.0), store=store, provider=ScriptedProvider(path), out=out)
    assert result.passed, result.explanation
    assert load_spec(out).name == BUTTON["name"]  # no `goal` key, no second `name`
    assert "# goal: press together\n# name: other\n" in out.read_text()
