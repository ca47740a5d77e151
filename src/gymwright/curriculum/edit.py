"""A spec edit the engineer proposed, realized for the next stage: verified (and repaired), the
child spec written into the stage's folder, and the policy carried over onto it."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import yaml

from gymwright.atomic import write_atomic
from gymwright.engineer.edits import realize_edit
from gymwright.engineer.engineers import Engineer, StageProposal
from gymwright.errors import GymwrightError
from gymwright.store import Store
from gymwright.train.carryover import carry_over

DIFF_CHARS = 20_000  # an edit's diff as recorded in curriculum.jsonl (the whole child is in stageK/spec.yaml)


def apply_edit(proposal: StageProposal, parent: dict[str, Any], checkpoint: str, store: Store | None,
                engineer: Engineer, folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Verify (and repair) the proposal's edit, write the child spec into the next stage's folder,
    and carry the policy over to it: (the edit's record, {"spec", "init_from"})."""
    assert proposal.edit is not None
    own = store is None
    store = store or Store.open(folder.parent / "store")
    try:
        outcome = realize_edit(parent, proposal.edit, store=store, llm=getattr(engineer, "llm", None),
                               evidence=proposal.rationale[:300])
    finally:
        if own:
            store.close()
    record: dict[str, Any] = {**outcome.as_dict(), "patch": proposal.edit.patch, "whole_spec": proposal.edit.spec is not None,
                              "variant": proposal.variant.to_dict() if proposal.variant is not None else None}
    if not outcome.changed:
        record["summary"] = "the edit did not verify; the stage keeps its spec (" + "; ".join(outcome.findings)[:300] + ")"
        return record, {}
    folder.mkdir(parents=True, exist_ok=True)
    try:  # a verified child the policy cannot be carried onto (e.g. params the spec refuses) keeps the stage too
        carried = carry_over(checkpoint, parent, outcome.spec, proposal.mixture.buckets[0].params, folder / "carried.pt")
    except GymwrightError as e:
        record.update(status="failed", spec_sha=outcome.parent_sha, findings=[*outcome.findings, str(e)],
                      summary=f"the policy could not be carried onto the edited spec; the stage keeps its spec ({e})"[:400])
        return record, {}
    text = yaml.safe_dump(outcome.spec, sort_keys=False, allow_unicode=True)
    write_atomic(folder / "spec.yaml", text)
    before = yaml.safe_dump(parent, sort_keys=False, allow_unicode=True)
    record["diff"] = "".join(difflib.unified_diff(before.splitlines(True), text.splitlines(True), "parent spec",
                                                  f"{folder.name}/spec.yaml", n=1))[:DIFF_CHARS]
    record["carry_over"], record["summary"] = carried.as_dict(), f"{outcome.reason[:200]}; {carried.summary()}"
    return record, {"spec": outcome.spec, "init_from": carried.checkpoint}
