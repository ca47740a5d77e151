"""The designer end to end with the scripted provider: stages, repairs, budgets, retries, cache.

Each test writes a script of model replies, runs `design()` on a real SQLite store in tmp_path,
and checks the outcome, the requests the model received and what the store recorded.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gymwright.design import DesignOptions, design
from gymwright.llm.scripted import ScriptedProvider
from gymwright.store import Store

BUTTON: dict[str, Any] = yaml.safe_load("""
gymwright: 1
name: button_coordination
description: Two agents are paid when both press the button at the same step.
tags: [coordination, two-player]
params:
  horizon: {default: 5, min: 1, max: 20, type: int, doc: steps per episode}
agents: {presser: {count: 2}}
state:
  together: {type: int, init: 0, min: 0, max: horizon}
actions:
  presser:
    - {name: press}
    - {name: wait}
step:
  - {when: "sum(press) == 2", set: {together: "together + 1"}}
truncate: "t >= horizon"
rewards:
  presser:
    - {name: together, expr: "1.0 * (sum(press) == 2)"}
metrics:
  together: {expr: together, reduce: last}
observe:
  presser: [together, "t / horizon"]
probes:
  - name: pressing together pays both
    actions: [{presser_0: press, presser_1: press}]
    expect: ["reward.presser_0 == 1.0", "together == 1"]
""")
TASK = "Two agents are paid only when both press a button at the same time."
ROLES = {"roles": [{"name": "presser", "count": 2, "goal": "press together"}],
         "turns": "simultaneous", "success": ["steps pressed together"]}
DYNAMICS = {"params": [{"name": "horizon", "default": 5}], "state": [{"name": "together"}],
            "actions": [{"role": "presser", "name": "press"}, {"role": "presser", "name": "wait"}],
            "observations": [{"role": "presser", "sees": "how often both pressed, and the time"}],
            "end": "after horizon steps", "max_steps": 5}
REWARDS = {"terms": [{"role": "presser", "name": "together", "expr": "both pressed"}],
           "hacking_risks": ["none: the only reward is the task"], "expected_behaviour": "always press",
           "metrics": [{"name": "together", "expr": "together", "kind": "task"}],
           "success_metric": "together"}
PLANS = [{"json": ROLES}, {"json": DYNAMICS}, {"json": REWARDS}]
# the task-fit review after verification: it fits / it does not (the pressers are paid alone)
FITS = {"json": {"checks": [{"aspect": "agents", "fits": True}, {"aspect": "rewards", "fits": True}],
                 "fits_task": True}}
UNFIT = {"json": {"checks": [{"aspect": "agents", "fits": True},
                             {"aspect": "rewards", "fits": False,
                              "problem": "the task pays only pressing at the same time",
                              "fix": "rewards.presser[0].expr: pay only when sum(press) == 2"}],
                  "fits_task": False}}


def broken_button() -> dict[str, Any]:
    """BUTTON with a misspelled variable in a step rule (an undefined name)."""
    spec = copy.deepcopy(BUTTON)
    spec["step"][0]["set"]["together"] = "togther + 1"
    return spec


def script(tmp_path: Path, items: list[Any], name: str = "model") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(items, sort_keys=False))
    return path


def run(tmp_path: Path, items: list[Any], store: Store, **opts: Any) -> tuple[Any, ScriptedProvider]:
    provider = ScriptedProvider(script(tmp_path, items))
    options = DesignOptions(**{"retry_backoff": 0.0, **opts})
    return design(TASK, options, store=store, provider=provider), provider


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store.open(tmp_path / "store") as st:
        yield st


# ----------------------------------------------------------------------------- spec mode
def test_first_try_success_runs_four_stages_and_records_them(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [*PLANS, {"json": BUTTON}, FITS], store)
    assert result.passed and result.status == "passed", result.explanation
    assert result.verified and result.fits_task == "yes"
    assert [a.stage for a in result.attempts] == ["roles", "dynamics", "rewards", "spec", "review"]
    assert len(provider.requests) == 5 and result.provider_calls == 5
    # each stage's plan is carried into the next prompt; the spec prompt has the reference
    assert '"presser"' in provider.requests[1].messages[-1].content
    assert "both pressed" in provider.requests[3].messages[-1].content
    assert "### `EnvSpec`" in provider.requests[3].messages[-1].content
    assert provider.requests[3].schema == {"type": "object"}  # the reference describes the rest
    assert yaml.safe_load(result.spec_path.read_text()) == BUTTON
    rec = store.design(result.design_id)
    assert rec.status == "passed" and rec.spec_sha == result.spec_sha
    assert [a.stage for a in rec.attempts] == ["roles", "dynamics", "rewards", "spec", "review"]
    assert rec.verified is True and rec.fits_task == "yes"
    assert rec.attempts[3].report["passed"] is True and rec.attempts[3].parsed == BUTTON
    assert rec.template_hash == result.template_hash and len(rec.template_hash) == 64
    assert store.get_spec(result.spec_sha) == BUTTON


def test_undefined_name_is_repaired_on_the_second_attempt(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [*PLANS, {"json": broken_button()}, {"json": BUTTON}, FITS], store)
    assert result.passed, result.explanation
    assert [a.stage for a in result.attempts][-3:] == ["spec", "repair", "review"]
    first = store.design(result.design_id).attempts[3]
    assert first.passed is False and first.report["stopped_at"] == "static"
    repair_prompt = provider.requests[4].messages
    assert repair_prompt[-2].role == "assistant" and "togther" in repair_prompt[-2].content
    assert "step[0].set.together" in repair_prompt[-1].content
    assert "undefined name `togther`" in repair_prompt[-1].content


def test_a_reply_that_is_not_json_is_asked_again(tmp_path: Path, store: Store) -> None:
    chatty = "Sure! I would model this as a coordination game with two pressers."
    result, provider = run(tmp_path, [*PLANS, chatty, {"json": BUTTON}, FITS], store)
    assert result.passed, result.explanation
    bad = result.attempts[3]
    assert bad.stage == "spec" and bad.parse_error and bad.reply == chatty
    assert "one JSON object" in provider.requests[4].messages[-1].content
    assert store.design(result.design_id).attempts[3].parse_error == bad.parse_error


def test_a_plan_that_does_not_match_its_schema_is_asked_again(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [{"json": {"roles": []}}, *PLANS, {"json": BUTTON}, FITS], store)
    assert result.passed, result.explanation
    assert result.attempts[0].parse_error and "roles" in result.attempts[0].parse_error
    assert "roles" in provider.requests[1].messages[-1].content


def test_repairs_stop_at_max_repairs_and_keep_the_last_spec(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [*PLANS, *[{"json": broken_button()}] * 2], store,
                           max_repairs=1)
    assert result.status == "failed" and not result.passed
    assert len(provider.requests) == 5
    assert "undefined name" in result.explanation
    assert result.spec_path is not None and result.spec_path.name.endswith(".failed.yaml")
    assert store.design(result.design_id).status == "failed"


def test_budget_exhausted_stops_clearly_and_keeps_the_attempts(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [*PLANS, {"json": BUTTON}], store, max_calls=2)
    assert result.status == "error" and not result.passed
    assert "budget" in result.explanation and "--max-calls" in result.explanation
    assert len(provider.requests) == 2
    rec = store.design(result.design_id)
    assert rec.status == "error" and [a.stage for a in rec.attempts] == ["roles", "dynamics"]


def test_429_is_retried_then_succeeds(tmp_path: Path, store: Store) -> None:
    items = [{"error": 429, "retry_after": 0}, *PLANS, {"json": BUTTON}, FITS]
    result, provider = run(tmp_path, items, store)
    assert result.passed
    assert result.provider_calls == 6 and len(provider.requests) == 6
    assert len(result.attempts) == 5  # the retry is not an attempt of its own


def test_timeouts_past_the_retries_end_the_design_with_a_clear_error(tmp_path: Path, store: Store) -> None:
    items = [{"error": "timeout", "retry_after": 0}] * 3
    result, provider = run(tmp_path, items, store, retries=2)
    assert result.status == "error" and "timeout" in result.explanation.lower()
    assert "3 tries" in result.explanation or "3 attempts" in result.explanation
    assert len(provider.requests) == 3
    assert store.design(result.design_id).status == "error"


def test_a_repeated_design_is_served_from_the_cache(tmp_path: Path, store: Store) -> None:
    first, _ = run(tmp_path, [*PLANS, {"json": BUTTON}, FITS], store)
    again, provider = run(tmp_path, [], store)  # an empty script: any call would fail
    assert again.passed and len(provider.requests) == 0 and again.provider_calls == 0
    assert all(a.cached for a in again.attempts) and again.spec_sha == first.spec_sha
    assert again.design_id != first.design_id


def test_no_cache_asks_the_model_again(tmp_path: Path, store: Store) -> None:
    run(tmp_path, [*PLANS, {"json": BUTTON}, FITS], store)
    again, provider = run(tmp_path, [*PLANS, {"json": BUTTON}, FITS], store, use_cache=False)
    assert again.passed and len(provider.requests) == 5


# ----------------------------------------------------------------------------- template mode
CAKE = {"json": {"template": "cake_negotiation", "reason": "alternating offers over a cake"}}


def test_template_mode_picks_a_library_spec_then_sets_its_params(tmp_path: Path, store: Store) -> None:
    params = {"json": {"params": {"discount": 0.8, "max_rounds": 6}}}
    result, provider = run(tmp_path, [CAKE, params], store, mode="template")
    assert result.passed, result.explanation
    assert [a.stage for a in result.attempts] == ["template", "params"]
    assert result.spec["name"] == "cake_negotiation"
    assert result.spec["params"]["discount"]["default"] == 0.8
    assert result.spec["params"]["max_rounds"]["default"] == 6
    choice_schema = json.dumps(provider.requests[0].schema)
    assert "cake_negotiation" in choice_schema and "mapf_frozenlake" in choice_schema
    # the params schema has exactly the template's params, typed and bounded
    inner = provider.requests[1].schema["properties"]["params"]
    from gymwright.spec.loader import load_spec

    assert set(inner["properties"]) == set(load_spec("cake_negotiation").params)
    assert not inner["additionalProperties"] and set(inner["required"]) == set(inner["properties"])
    assert inner["properties"]["max_rounds"] == {"type": "integer", "minimum": 1, "maximum": 50}
    assert "share of the cake left" in provider.requests[1].messages[-1].content


def test_template_mode_repairs_an_unknown_param(tmp_path: Path, store: Store) -> None:
    wrong = {"json": {"params": {"rounds": 6}}}
    right = {"json": {"params": {"max_rounds": 6}}}
    result, provider = run(tmp_path, [CAKE, wrong, right], store, mode="template")
    assert result.passed, result.explanation
    assert "has no param rounds" in provider.requests[2].messages[-1].content
    assert "max_rounds" in provider.requests[2].messages[-1].content


def test_template_mode_repairs_a_param_out_of_range(tmp_path: Path, store: Store) -> None:
    wrong = {"json": {"params": {"discount": 3.0}}}
    right = {"json": {"params": {"discount": 0.9}}}
    result, provider = run(tmp_path, [CAKE, wrong, right], store, mode="template")
    assert result.passed, result.explanation
    assert result.attempts[1].passed is False
    assert "params.discount" in provider.requests[2].messages[-1].content


# ----------------------------------------------------------------------------- offline designer
def test_offline_designer_is_the_default_and_says_what_it_did(store: Store) -> None:
    result = design("two robots divide a pie by taking turns making offers, ten rounds at most",
                    store=store)
    assert result.passed and result.mode == "offline" and result.template == "cake_negotiation"
    assert "retrieval" in result.explanation and "no language model" in result.explanation
    assert result.spec["params"]["max_rounds"]["default"] == 10
    assert result.model_source.startswith("default")
    rec = store.design(result.design_id)
    assert rec.mode == "offline" and "retrieval" in rec.result["explanation"]
    assert rec.attempts[0].parsed["template"] == "cake_negotiation"


def test_offline_designer_refuses_a_task_no_template_fits(store: Store) -> None:
    result = design("a Cournot duopoly: two firms choose production quantities", store=store)
    assert not result.passed and result.spec is None and result.spec_path is None
    assert "model is needed" in result.explanation or "--model" in result.explanation
    assert result.score is not None and f"{result.score:.2f}" in result.explanation
    assert store.design(result.design_id).status == "failed"


def test_spec_mode_without_a_model_is_a_clear_error(store: Store) -> None:
    from gymwright.errors import GymwrightError

    with pytest.raises(GymwrightError, match="needs a language model") as e:
        design(TASK, DesignOptions(mode="spec"), store=store)
    assert e.value.path == "--mode"


def test_gymwright_model_env_picks_the_model(tmp_path: Path, store: Store,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = script(tmp_path, [{"json": {"template": "stag_hunt", "reason": "r"}},
                             {"json": {"params": {}}}])
    monkeypatch.setenv("GYMWRIGHT_MODEL", f"scripted:{path}")
    result = design("two hunters choose a stag or a hare", DesignOptions(mode="template"), store=store)
    assert result.passed and result.model_source == "GYMWRIGHT_MODEL"
    assert result.model.startswith("scripted:")


# ----------------------------------------------------------------------------- designed library specs
@pytest.mark.slow  # about 8 s: designs and verifies every library spec at changed params
def test_changed_params_are_pinned_in_the_probes_written_for_the_old_defaults() -> None:
    from gymwright.design.session import with_defaults
    from gymwright.spec.loader import read_data
    from gymwright.verify.verifier import verify

    data, _ = read_data("public_goods")
    spec = with_defaults(data, {"n_players": 64, "multiplier": 3.0})
    assert spec["params"]["n_players"]["default"] == 64
    assert all(p["params"]["n_players"] == 8 for p in spec["probes"])
    assert data["params"]["n_players"]["default"] == 8  # the library data is not touched
    report = verify(spec, episodes=2)
    assert report.passed, report.to_prompt()
    skipped = [d for d in report.diagnostics if "skipped" in d.message]
    assert len(skipped) == len(spec["probes"])
    assert "written for n_players=8; this build has n_players=64" in skipped[0].message


@pytest.mark.slow
@pytest.mark.long(116)  # seconds alone on the slow host (pytest --durations)
@pytest.mark.parametrize("end", ["min", "max"])
def test_every_library_spec_still_verifies_with_its_params_at_an_end_of_their_range(end: str) -> None:
    """What the offline and template designers do: write chosen params in as defaults."""
    from gymwright.design.session import with_defaults
    from gymwright.spec.loader import library_names, load_spec, read_data
    from gymwright.verify.verifier import verify

    for name in library_names():
        spec, (data, _) = load_spec(name), read_data(name)
        params = {p: (int if v.type == "int" else float)(getattr(v, end))
                  for p, v in spec.params.items() if v.type != "bool" and getattr(v, end) is not None}
        report = verify(with_defaults(data, params), episodes=3)
        assert report.passed, (name, params, report.to_prompt())


def test_lineage_links_a_repaired_spec_to_the_one_it_repairs(tmp_path: Path, store: Store) -> None:
    result, _ = run(tmp_path, [*PLANS, {"json": broken_button()}, {"json": BUTTON}, FITS], store)
    broken_sha = result.attempts[3].spec_sha
    (edge,) = store.lineage(result.spec_sha)
    assert edge.parent == broken_sha and edge.child == result.spec_sha
    assert "repair" in edge.reason and "togther" in edge.reason
    assert edge.design_id == result.design_id


def test_lineage_links_a_template_design_to_its_library_spec(store: Store) -> None:
    from gymwright.spec.loader import read_data
    from gymwright.store import spec_hash

    result = design("two robots divide a pie by taking turns making offers, six rounds", store=store)
    (edge,) = store.lineage(result.spec_sha)
    assert edge.parent == spec_hash(read_data("cake_negotiation")[0])
    assert "library template cake_negotiation with max_rounds=6" in edge.reason


def test_a_short_context_model_gets_the_compact_reference_and_one_example(tmp_path: Path,
                                                                          store: Store) -> None:
    from gymwright.spec.reference import SECTIONS, compact_reference

    provider = ScriptedProvider(script(tmp_path, [*PLANS, {"json": BUTTON}, FITS]))
    provider.context_tokens = 4096  # type: ignore[attr-defined]
    result = design(TASK, DesignOptions(retry_backoff=0.0), store=store, provider=provider)
    assert result.passed, result.explanation
    prompt = provider.requests[3].messages[-1].content
    assert compact_reference() in prompt and "### `EnvSpec`" not in prompt
    assert prompt.count("\n## ") == 1 and len(prompt) < 9000  # one example; about 2k tokens
    assert all(f"{m.__name__}: " in compact_reference() for m in SECTIONS)
    assert all(r.max_tokens <= 1500 for r in provider.requests)


def test_template_mode_lets_the_model_say_no_template_fits(tmp_path: Path, store: Store) -> None:
    none = {"json": {"template": "public_goods", "same_kind": False, "reason": "a Cournot duopoly is not in the library"}}
    result, provider = run(tmp_path, [none], store, mode="template")
    assert result.status == "failed" and result.spec is None
    assert "no library template that fits" in result.explanation and "Cournot" in result.explanation
    assert "the nearest, public_goods" in result.explanation
    assert "same_kind" in json.dumps(provider.requests[0].schema)


def test_a_repair_identical_to_the_failed_spec_is_told_so(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [*PLANS, *[{"json": broken_button()}] * 3], store, max_repairs=2)
    assert not result.passed
    assert "identical to your previous one" not in provider.requests[4].messages[-1].content
    assert "identical to your previous one" in provider.requests[5].messages[-1].content
