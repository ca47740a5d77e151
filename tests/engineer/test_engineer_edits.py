"""Spec edits by the engineer (`gymwright.engineer.edits`): an edit that verifies, one that fails and
is repaired through the designer's repair loop, one that no repair fixes, one that does not apply."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from gymwright.engineer.edits import (
    PatchError,
    SpecEdit,
    apply_patch,
    edit_from_reply,
    realize_edit,
)
from gymwright.llm.client import LLM
from gymwright.llm.scripted import ScriptedProvider
from gymwright.spec.loader import read_data
from gymwright.store import Store, spec_hash

CAKE, _ = read_data("cake_negotiation")
GOOD = {"op": "add", "path": "/metrics/long_game", "value": {"expr": "round >= 2", "reduce": "last"}}
BROKEN = {"op": "add", "path": "/metrics/long_game", "value": {"expr": "roundz >= 2", "reduce": "last"}}


def fixed_cake() -> dict:
    spec = copy.deepcopy(CAKE)
    spec["metrics"]["long_game"] = {"expr": "round >= 2", "reduce": "last"}
    return spec


def model(tmp_path: Path, replies: list[dict]) -> tuple[LLM, ScriptedProvider]:
    script = tmp_path / "replies.yaml"
    script.write_text(yaml.safe_dump([{"json": r} for r in replies]))
    provider = ScriptedProvider(script)
    return LLM(provider, retries=0), provider


def test_an_edit_that_verifies_is_applied_with_lineage(tmp_path: Path) -> None:
    with Store.open(tmp_path / "store.db") as store:
        out = realize_edit(CAKE, SpecEdit("count games past the second round", [GOOD]), store=store,
                           evidence="agreed 1.0 above the band")
        assert out.status == "applied" and out.changed and out.repairs == 0
        assert out.spec["metrics"]["long_game"]["expr"] == "round >= 2" and "long_game" not in CAKE["metrics"]
        assert out.parent_sha == spec_hash(CAKE) and out.spec_sha == spec_hash(out.spec)
        (edge,) = store.lineage(out.spec_sha)
        assert edge.parent == out.parent_sha and "count games past the second round" in edge.reason
        assert "agreed 1.0 above the band" in edge.reason


def test_a_failed_edit_is_repaired_by_the_model(tmp_path: Path) -> None:
    llm, provider = model(tmp_path, [fixed_cake()])
    with Store.open(tmp_path / "store.db") as store:
        out = realize_edit(CAKE, SpecEdit("count long games", [BROKEN]), store=store, llm=llm)
        assert out.status == "repaired" and out.repairs == 1
        assert out.spec["metrics"]["long_game"]["expr"] == "round >= 2"
        assert any("roundz" in f for f in out.findings)  # what the repair fixed
        (request,) = provider.requests
        assert "roundz" in request.messages[-1].content  # the verifier's findings went to the model
        assert store.design(out.design_id).mode == "edit"


def test_an_edit_no_repair_fixes_keeps_the_parent(tmp_path: Path) -> None:
    broken = apply_patch(CAKE, [BROKEN])
    llm, provider = model(tmp_path, [broken, broken])
    with Store.open(tmp_path / "store.db") as store:
        out = realize_edit(CAKE, SpecEdit("count long games", [BROKEN]), store=store, llm=llm, max_repairs=2)
        assert out.status == "failed" and not out.changed and out.spec == CAKE and out.spec_sha == out.parent_sha
        assert len(provider.requests) == 2 and out.repairs == 2
        assert any("roundz" in f for f in out.findings) and "the stage keeps its spec" in out.findings[-1]


def test_without_a_model_a_failed_edit_is_not_repaired(tmp_path: Path) -> None:
    with Store.open(tmp_path / "store.db") as store:
        out = realize_edit(CAKE, SpecEdit("count long games", [BROKEN]), store=store)
        assert out.status == "failed" and out.findings[-1] == "no model to repair the edit with"


def test_a_patch_that_does_not_apply_fails_naming_the_op(tmp_path: Path) -> None:
    bad = {"op": "replace", "path": "/params/no_such_param/default", "value": 3}
    with Store.open(tmp_path / "store.db") as store:
        out = realize_edit(CAKE, SpecEdit("more rounds", [GOOD, bad]), store=store)
    assert out.status == "failed" and "edit.patch[1]" in out.findings[0] and "no_such_param" in out.findings[0]


def test_json_patch_ops() -> None:
    spec = apply_patch(CAKE, [
        {"op": "add", "path": "/actions/bargainer/-", "value": {"name": "walk_away", "legal": "phase == 1"}},
        {"op": "replace", "path": "/params/max_rounds/default", "value": 4},
        {"op": "remove", "path": "/baselines/greedy_agreeable"},
        {"op": "add", "path": "/step/0/first/0", "value": {"when": "False", "set": {"deal": False}}}])
    assert spec["actions"]["bargainer"][-1]["name"] == "walk_away" and spec["params"]["max_rounds"]["default"] == 4
    assert "greedy_agreeable" not in spec["baselines"] and spec["step"][0]["first"][0]["when"] == "False"
    assert CAKE["params"]["max_rounds"]["default"] == 10  # the parent is untouched
    with pytest.raises(PatchError, match="op 'move' is not one of"):
        apply_patch(CAKE, [{"op": "move", "path": "/x"}])
    with pytest.raises(PatchError, match="is not a JSON pointer"):
        apply_patch(CAKE, [{"op": "remove", "path": "metrics"}])
    with pytest.raises(PatchError, match="outside the list"):
        apply_patch(CAKE, [{"op": "replace", "path": "/actions/bargainer/9", "value": {}}])


def test_an_edit_reply_has_a_patch_or_a_spec() -> None:
    assert edit_from_reply(None) is None
    e = edit_from_reply({"reason": "x", "patch": [GOOD]})
    assert e is not None and e.patch == [GOOD] and e.spec is None
    from gymwright.errors import GymwrightError

    with pytest.raises(GymwrightError, match="either a `patch` or a whole `spec`"):
        edit_from_reply({"reason": "x"})
