"""A curriculum whose engineer edits the spec (`gymwright evolve --edits`): the heuristic's variant, a
model's patch that verifies after a repair, and one that no repair fixes; each stage's line says
which spec it trained on and how it came about, and the policy carries over by name."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from gymwright.curriculum import CurriculumOptions, evolve
from gymwright.engineer import HeuristicEngineer, LLMEngineer
from gymwright.llm.client import LLM
from gymwright.llm.scripted import ScriptedProvider
from gymwright.spec.loader import read_data
from gymwright.store import Store, spec_hash
from gymwright.train import load_policy

CAKE, _ = read_data("cake_negotiation")
PIE = {"max_rounds": 10, "discount": 0.9}
BROKEN = {"op": "add", "path": "/metrics/long_game", "value": {"expr": "roundz >= 2", "reduce": "last"}}


def quick(**kw: object) -> CurriculumOptions:
    return CurriculumOptions(**{"stages": 2, "steps_per_stage": 512, "num_envs": 16, "eval_episodes": 10,
                                "record_episodes": 2, "band": (0.4, 0.8), "knobs": ("discount",), **kw})


def lines(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "curriculum.jsonl").read_text().splitlines()]


@pytest.mark.slow  # each test here runs a two-stage curriculum (10-25 s on 2 shared cores)
def test_a_stuck_pie_game_trains_on_the_heuristics_variant(tmp_path: Path) -> None:
    # `agreed` sits above the band and the discount does not move it: the heuristic adds the outside option
    run = tmp_path / "run"
    with Store.open(tmp_path / "store") as store:
        opts = quick(guard=True, validation={"pie": PIE}, validation_episodes=10)
        records = evolve("cake_negotiation", PIE, HeuristicEngineer(edits=True), run, opts, store=store)
        first, second = records
        assert second.guard == ""  # not judged against a stage of another game (a guarded stage says keep)
        assert first.edit is None and second.edit is not None and second.edit["status"] == "applied"
        assert second.edit["variant"]["variant"] == "outside_option"
        child = yaml.safe_load((run / "stage1" / "spec.yaml").read_text())
        assert any(c["name"] == "take_outside" for c in child["actions"]["bargainer"])
        assert second.edit["spec_sha"] == spec_hash(child) and second.edit["parent_sha"] == spec_hash(CAKE)
        edges = [e for e in store.lineage(second.edit["spec_sha"]) if e.child == second.edit["spec_sha"]]
        (edge,) = [e for e in edges if e.reason.startswith("engineer edit")]  # and the stage's own edge
        assert edge.parent == spec_hash(CAKE) and "engineer edit (applied): variant `outside_option`" in edge.reason
    carried = second.edit["carry_over"]
    assert carried["restart"] is None and carried["roles"][0]["new_actions"] == ["take_outside"]
    assert load_policy(second.checkpoint).roles[0].n_actions == load_policy(first.checkpoint).roles[0].n_actions + 1
    assert [x["edit"] is None for x in lines(run)] == [True, False]  # the JSONL carries it too
    assert "+    - name: take_outside" in second.edit["diff"] or "+  - name: take_outside" in second.edit["diff"]
    from gymwright.report import write_report

    page = write_report(run, run_verifier=False).path.read_text()
    assert "Spec lineage" in page and "variant outside_option" in page and "take_outside" in page


def script(tmp_path: Path, replies: list[object]) -> tuple[LLM, ScriptedProvider]:
    path = tmp_path / "replies.yaml"
    path.write_text(yaml.safe_dump([{"json": r} for r in replies]))
    provider = ScriptedProvider(path)
    return LLM(provider, retries=0), provider


def proposal(edit: dict | None) -> dict:
    return {"params": {"discount": 0.9}, "rationale": "agreement is already certain: change the game", "edit": edit}


@pytest.mark.slow
def test_a_models_edit_that_fails_is_repaired_and_trained_on(tmp_path: Path) -> None:
    fixed = copy.deepcopy(CAKE)
    fixed["metrics"]["long_game"] = {"expr": "round >= 2", "reduce": "last"}
    llm, provider = script(tmp_path, [proposal({"reason": "count long games", "patch": [BROKEN]}), fixed])
    records = evolve("cake_negotiation", PIE, LLMEngineer(llm, edits=True), tmp_path / "run", quick())
    assert len(provider.requests) == 2  # the proposal, then one repair; none after the last stage
    assert "JSON Patch" in provider.requests[0].messages[-1].content and "roundz" in provider.requests[1].messages[-1].content
    edit = records[1].edit
    assert edit is not None and edit["status"] == "repaired" and edit["repairs"] == 1
    assert edit["spec_sha"] == spec_hash(fixed) and edit["carry_over"]["roles"][0]["new_actions"] == []
    assert (tmp_path / "run" / "store").is_dir()  # no store given: the run keeps its own record of the repair


@pytest.mark.slow
def test_an_edit_no_repair_fixes_leaves_the_spec_as_it_was(tmp_path: Path) -> None:
    from gymwright.engineer.edits import apply_patch

    broken = apply_patch(CAKE, [BROKEN])
    llm, _ = script(tmp_path, [proposal({"reason": "count long games", "patch": [BROKEN]}), broken, broken])
    records = evolve("cake_negotiation", PIE, LLMEngineer(llm, edits=True), tmp_path / "run", quick())
    edit = records[1].edit
    assert edit is not None and edit["status"] == "failed" and "keeps its spec" in edit["summary"]
    assert edit["spec_sha"] == edit["parent_sha"] == spec_hash(CAKE)
    assert not (tmp_path / "run" / "stage1" / "spec.yaml").exists()
    n_actions = load_policy(records[0].checkpoint).roles[0].n_actions
    assert load_policy(records[1].checkpoint).roles[0].n_actions == n_actions  # still the plain game's actions


@pytest.mark.slow
def test_a_model_that_keeps_the_game_makes_no_edit(tmp_path: Path) -> None:
    llm, _ = script(tmp_path, [proposal(None)])
    records = evolve("cake_negotiation", PIE, LLMEngineer(llm, edits=True), tmp_path / "run", quick())
    assert records[1].edit is None and records[0].rationale.startswith("agreement is already certain")


@pytest.mark.slow
def test_cli_evolve_edits_trains_on_the_variant_and_says_so(tmp_path: Path) -> None:
    """`gymwright evolve SPEC --edits` from the command line: the second stage trains on the heuristic's
    variant; each stage's JSON line carries `spec_sha` and `edit` (null when the spec stayed)."""
    from typer.testing import CliRunner

    from gymwright.cli import app

    run = tmp_path / "run"
    result = CliRunner().invoke(app, ["evolve", "cake_negotiation", "--edits", "-k", "2", "--steps", "1024",
                                      "--knob", "discount", "--band", "0.4", "0.8", "-p", "max_rounds=10",
                                      "--num-envs", "16", "-o", str(run), "--json"])
    assert result.exit_code == 0, result.output
    first, second = lines(run)
    assert first["edit"] is None and first["spec_sha"] == spec_hash(CAKE)
    assert second["edit"]["status"] == "applied" and second["edit"]["variant"]["variant"] == "outside_option"
    assert second["spec_sha"] == second["edit"]["spec_sha"] != first["spec_sha"]
    assert (run / "stage1" / "spec.yaml").exists()
    fixed = CliRunner().invoke(app, ["evolve", "cake_negotiation", "--edits", "-e", "fixed", "-o", str(tmp_path / "x")])
    assert fixed.exit_code == 1 and "--edits needs an engineer that proposes" in fixed.output
