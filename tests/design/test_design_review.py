"""The task-fit review, the prompts' sizes and contents, the offline fit check, the default
designer and the progress display (issue 17): scripted replies on a real store in tmp_path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gymwright.design import DesignEvent, DesignOptions, design
from gymwright.design.plans import PROSE_MAX, DynamicsPlan, RewardsPlan
from gymwright.design.prompts import load_prompts, planning_shapes, spec_keys
from gymwright.design.staged import render_repair_context, render_spec_prompt
from gymwright.spec.model import EnvSpec
from gymwright.store import Store
from tests.design.test_design import BUTTON, FITS, PLANS, TASK, UNFIT, run


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store.open(tmp_path / "store") as st:
        yield st


def paid_alone() -> dict[str, Any]:
    """BUTTON that verifies but pays each press on its own: not the task."""
    spec = copy.deepcopy(BUTTON)
    spec["rewards"]["presser"][0]["expr"] = "1.0 * press[me]"
    spec["probes"][0]["expect"] = ["reward.presser_0 == 1.0"]
    return spec


# ----------------------------------------------------------------------------- the review
def test_a_review_that_accepts_makes_the_design_pass(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [*PLANS, {"json": BUTTON}, FITS], store)
    assert result.passed and result.verified and result.fits_task == "yes"
    review = provider.requests[4].messages[-1].content
    assert TASK in review and "button_coordination" in review  # the task and the spec (YAML)
    assert "## A sample episode of random legal actions" in review and "ended after 5 steps (truncated)" in review
    assert "press" in review and "returns:" in review
    for aspect in ("agents", "actions", "params", "rewards", "observations", "ends", "metrics"):
        assert f"- {aspect}:" in review
    assert "fits_task" in json.dumps(provider.requests[4].schema)


def test_a_review_that_rejects_sends_its_findings_to_the_repair_loop(tmp_path: Path,
                                                                      store: Store) -> None:
    items = [*PLANS, {"json": paid_alone()}, UNFIT, {"json": BUTTON}, FITS]
    result, provider = run(tmp_path, items, store)
    assert result.passed and result.fits_task == "yes", result.explanation
    assert [a.stage for a in result.attempts][3:] == ["spec", "review", "repair", "review"]
    repair = provider.requests[5].messages
    assert "rewards: the task pays only pressing at the same time" in repair[-1].content
    assert "rewards.presser[0].expr" in repair[-1].content
    assert "press[me]" in repair[-2].content and repair[-2].role == "assistant"
    assert result.spec == BUTTON
    (edge,) = store.lineage(result.spec_sha)
    assert edge.parent == result.attempts[3].spec_sha


def test_a_design_the_review_keeps_rejecting_is_verified_but_unfit(tmp_path: Path,
                                                                   store: Store) -> None:
    items = [*PLANS, {"json": paid_alone()}, UNFIT, {"json": paid_alone()}, UNFIT]
    result, _ = run(tmp_path, items, store, max_repairs=1)
    assert result.status == "unfit" and not result.passed
    assert result.verified and result.fits_task == "no"
    assert "does not do what the task asks" in result.explanation
    assert result.spec == paid_alone() and result.spec_path.name.endswith(".unfit.yaml")
    rec = store.design(result.design_id)
    assert rec.status == "unfit" and rec.verified is True and rec.fits_task == "no"
    assert rec.result["findings"] == result.findings


def test_an_unusable_review_is_a_failed_review_with_fits_task_unknown(tmp_path: Path, store: Store) -> None:
    items = [*PLANS, {"json": BUTTON}, *["not json"] * 2]
    result, _ = run(tmp_path, items, store, max_repairs=1)  # issue 42: no longer "passed"
    assert result.status == "review_failed" and result.verified and result.fits_task == "unknown"


def test_no_review_makes_no_call_and_says_unknown(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [*PLANS, {"json": BUTTON}], store, review=False)
    assert result.passed and result.fits_task == "unknown" and len(provider.requests) == 4


def test_template_and_offline_designs_report_fits_task_unknown(tmp_path: Path, store: Store) -> None:
    cake = {"json": {"template": "cake_negotiation", "reason": "alternating offers"}}
    result, _ = run(tmp_path, [cake, {"json": {"params": {}}}], store, mode="template")
    assert result.passed and result.fits_task == "unknown"
    offline = design("two robots divide a pie by taking turns making offers", store=store)
    assert offline.passed and offline.fits_task == "unknown" and offline.verified
    data = offline.to_json_dict()
    assert data["verified"] is True and data["fits_task"] == "unknown"


def test_a_store_from_before_the_review_reads_fits_task_unknown(store: Store) -> None:
    old = store.start_design("t", model="m", mode="offline", template_hash="h", settings={})
    store.finish_design(old, status="passed", spec_sha=None, result={"explanation": "x"},
                        usage=__import__("gymwright.llm.base", fromlist=["Usage"]).Usage(),
                        wall_s=0.1)
    rec = store.design(old)
    assert rec.status == "passed" and rec.verified is True and rec.fits_task == "unknown"


# ----------------------------------------------------------------------------- the prompts
PLANS_TEXT = {stage: json.dumps(p["json"]) for stage, p in zip(("roles", "dynamics", "rewards"), PLANS, strict=True)}
GRID_PLANS = {**PLANS_TEXT, "dynamics": json.dumps({**PLANS[1]["json"], "mechanics": ["grid"]})}


def test_the_spec_prompt_of_a_non_grid_task_fits_25_kb_with_readable_examples() -> None:
    prompts = load_prompts()
    for task in ("two robots divide a pie by taking turns making offers",
                 "Cournot duopoly: two firms choose quantities", TASK):
        user, examples = render_spec_prompt(prompts, task, PLANS_TEXT)
        system = prompts.render("system")
        assert len((system + user).encode()) <= 25_000, (task, len(user))
        assert "### `Grid`" not in user and "### `Channel`" not in user and "manhattan(" not in user
        assert "mapf_frozenlake" not in examples and "predator_prey" not in examples
        assert "\nagents:\n" in user and '{"gymwright"' not in user  # block YAML, not minified JSON
        repair = render_repair_context(prompts, task, PLANS_TEXT)
        spec_json = json.dumps(BUTTON)
        assert len(repair) + len(spec_json) + 2000 <= len(user)  # a repair is smaller


def test_a_grid_plan_gets_the_grid_reference_and_grid_examples() -> None:
    user, examples = render_spec_prompt(load_prompts(), "four robots cross an icy grid", GRID_PLANS)
    assert "### `Grid`" in user and "manhattan(" in user and "### `Channel`" not in user
    assert "mapf_frozenlake" in examples


def test_the_spec_prompt_names_every_key_and_the_plans_cover_the_spec() -> None:
    user, _ = render_spec_prompt(load_prompts(), TASK, PLANS_TEXT)
    assert spec_keys() in user
    for key in ("turns", "consts", "baselines", "text", "doc"):
        assert key in EnvSpec.model_fields and f", {key}," in f", {spec_keys()},"
    assert {"observations", "mechanics", "consts"} <= set(DynamicsPlan.model_fields)
    assert {"success_metric", "baselines"} <= set(RewardsPlan.model_fields)
    assert "shape" in DynamicsPlan.model_json_schema()["$defs"]["VarPlan"]["properties"]


def test_the_planning_prompts_show_the_shapes_and_the_length_limits(tmp_path: Path,
                                                                    store: Store) -> None:
    _, provider = run(tmp_path, [*PLANS, {"json": BUTTON}, FITS], store)
    for request in provider.requests[:3]:
        assert f"every prose field to {PROSE_MAX}" in request.messages[-1].content
    assert planning_shapes() in provider.requests[1].messages[-1].content
    assert "Var: type?" in planning_shapes() and "shape?" in planning_shapes()


def test_every_reply_budget_fits_its_reply(tmp_path: Path, store: Store) -> None:
    items = [*PLANS, {"json": paid_alone()}, UNFIT, {"json": BUTTON}, FITS]
    _, provider = run(tmp_path, items, store)
    budgets = {r.schema_name: r.max_tokens for r in provider.requests}
    assert budgets["spec"] == budgets["repair"] == 8192 and budgets["review"] >= 1000
    size = {r.schema_name: sum(len(m.content) for m in r.messages) for r in provider.requests}
    assert size["repair"] <= size["spec"]  # a repair never re-sends more than the spec prompt


# ----------------------------------------------------------------------------- offline fit check
@pytest.mark.parametrize(("task", "left_out"), [
    ("Three drones must cover a 5x5 grid without colliding", "coverage ('cover a')"),
    ("capture the flag on a grid: two teams of predators chase each other",
     "teams against each other"),
    ("hide and seek where hiders lock boxes to build shelters", "building with tools"),
])
def test_offline_refuses_a_template_that_leaves_out_what_the_task_asks(task: str, left_out: str,
                                                                       store: Store) -> None:
    result = design(task, store=store)
    assert result.status == "failed" and result.spec is None and not result.verified
    assert "leaves out what the task asks for" in result.explanation
    assert left_out in result.explanation and result.best_match in result.explanation


# ----------------------------------------------------------------------------- progress
def test_the_spinner_shows_the_stage_attempt_seconds_and_tokens() -> None:
    from gymwright.cli.design import Waiting

    now = [100.0]
    waiting = Waiting("spec: asking openai:x (attempt 2)", 12_345, clock=lambda: now[0])
    now[0] += 42.4
    assert str(waiting) == "spec: asking openai:x (attempt 2) - 42 s, 12,345 tokens so far"


def test_progress_events_carry_the_tokens_used_so_far(tmp_path: Path, store: Store) -> None:
    from gymwright.llm.scripted import ScriptedProvider
    from tests.design.test_design import script

    events: list[DesignEvent] = []
    provider = ScriptedProvider(script(tmp_path, [*PLANS, {"json": BUTTON}, FITS]))
    design(TASK, DesignOptions(retry_backoff=0.0), store=store, provider=provider,
           progress=events.append)
    asks = [e.tokens for e in events if e.kind == "ask"]
    assert asks[0] == 0 and asks == sorted(asks) and asks[-1] > 0


def test_the_help_texts_say_what_really_runs_by_default() -> None:
    from typer.testing import CliRunner

    from gymwright.cli import app

    raw = CliRunner().invoke(app, ["design", "--help"], env={"COLUMNS": "400"}).stdout
    text = " ".join(raw.replace("│", " ").split())
    assert "else the offline designer" in text and "a local model runs only when named" in text
    assert "--no-review" in text


def test_an_unknown_key_valid_elsewhere_is_not_told_to_rename_itself() -> None:
    from gymwright.verify.verifier import verify

    spec = copy.deepcopy(BUTTON)
    spec["rewards"]["presser"][0]["reduce"] = "sum"
    report = verify(spec, episodes=1)
    text = report.to_prompt()
    assert "unknown key `reduce`" in text and "did you mean `reduce`" not in text
    assert "`reduce` is a key of `Metric`" in text


def test_the_spec_written_for_an_unfit_design_is_yaml_that_loads(tmp_path: Path, store: Store) -> None:
    items = [*PLANS, {"json": paid_alone()}, UNFIT]
    result, _ = run(tmp_path, items, store, max_repairs=0)
    assert yaml.safe_load(result.spec_path.read_text()) == paid_alone()
