"""Spec edits: the engineer changes the game, and the edit must verify before a stage trains on it.

An edit (`SpecEdit`) is a reason plus either a JSON Patch (RFC 6902: `add`, `remove`, `replace`
with JSON-pointer paths such as `/actions/player/-`) of the spec paths it changes, or a whole
new spec. `realize_edit` applies it and verifies the result with the designer's verifier; a
result that fails goes through the designer's repair loop (the findings go back to the model,
at most `max_repairs` times) when a model is given. Every outcome is recorded: both specs in the
store, with a lineage edge from the parent to the child naming the reason and the evidence; an
edit that cannot be made to verify leaves the stage's spec as it was (`status` "failed").

A model's reply is untrusted data: `edit_from_reply` reads it within the spec's reading limits
(`gymwright.spec.limits`, as `REPLY`) and checks its shape; a patch's pointers are read by RFC
6901's grammar (an index is `0` or digits without a leading zero, `-` appends); a repair reply
that is no spec is sent back to the model as such. Whatever the reply, the outcome is an
`EditOutcome`, never an exception.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from gymwright.design.prompts import compact_json, load_prompts
from gymwright.design.session import SPEC_REPLY, DesignSession, ReplyUnusable
from gymwright.design.staged import render_repair_context
from gymwright.diagnostic import shown
from gymwright.errors import GymwrightError
from gymwright.llm.base import Message
from gymwright.llm.client import LLM
from gymwright.spec.limits import REPLY, check_data
from gymwright.spec.loader import parse
from gymwright.store import Store, spec_hash
from gymwright.verify.report import VerificationReport
from gymwright.verify.verifier import verify

OPS = ("add", "remove", "replace")
STATUSES = ("applied", "repaired", "failed")
MAX_PATCH_OPS = 20  # operations of one model's patch
MAX_REASON_CHARS = 400  # of an edit's reason (kept; the rest is cut)
INDEX = re.compile(r"0|[1-9][0-9]{0,8}")  # RFC 6901's array index (here below 10**9: no list is longer)


class PatchError(GymwrightError):
    """A patch operation that does not apply to the spec (a missing path, a bad op)."""


@dataclass
class SpecEdit:
    """What the engineer wants changed: `patch` (JSON Patch ops) or `spec` (a whole spec), and why."""

    reason: str
    patch: list[dict[str, Any]] | None = None
    spec: dict[str, Any] | None = None
    report: VerificationReport | None = None
    """the whole `spec`'s verification report when it was verified already (a library variant)"""

    def __post_init__(self) -> None:
        if (self.patch is None) == (self.spec is None):
            raise GymwrightError("a spec edit has either a `patch` or a whole `spec`, not both and not neither",
                                 path="edit", hint='give {"reason": ..., "patch": [{"op": ..., "path": ...}]}')

    def as_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "patch": self.patch, "spec": None if self.spec is None else "(a whole spec)"}


@dataclass
class EditOutcome:
    """The spec the next stage trains on and how it came about."""

    status: str  # one of STATUSES
    spec: dict[str, Any]  # the child when applied or repaired, else the parent as it was
    parent_sha: str
    spec_sha: str  # the sha of `spec`
    reason: str
    repairs: int = 0
    findings: list[str] = field(default_factory=list)  # why it failed, or what the repairs fixed
    design_id: int | None = None  # the store's record of the repair conversation

    @property
    def changed(self) -> bool:
        return self.status != "failed"

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "parent_sha": self.parent_sha, "spec_sha": self.spec_sha, "reason": self.reason,
                "repairs": self.repairs, "findings": self.findings, "design_id": self.design_id}


# ----------------------------------------------------------------------------- JSON Patch
def _tokens(path: Any, where: str) -> list[str]:
    if not isinstance(path, str) or not path.startswith("/"):
        raise PatchError(f"path {shown(repr(path))} is not a JSON pointer", path=where,
                         hint="paths start with `/`, e.g. `/actions/player/-` or `/params/rounds/default`")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _index(token: str, size: int, path: str, where: str, end: bool = False) -> int:
    """The list index `token` (RFC 6901: `0` or digits without a leading zero) below `size`, or
    up to `size` itself when `end` (an `add` may insert at the end)."""
    if INDEX.fullmatch(token) and int(token) <= size - (not end):
        return int(token)
    what = "is not a list index" if not INDEX.fullmatch(token) else "is outside the list"
    raise PatchError(f"{shown(path)}: {shown(token)} {what} of {size} (0 to {size - 1 + end})", path=where,
                     hint="an index is 0 or digits without a leading zero, below the list's length; use `-` to append")


def _step(node: Any, token: str, path: str, where: str) -> Any:
    if isinstance(node, dict) and token in node:
        return node[token]
    if isinstance(node, list):
        return node[_index(token, len(node), path, where)]
    raise PatchError(f"{shown(path)} does not exist in the spec (no `{shown(token)}`)", path=where,
                     hint="patch only paths that exist, or `add` the missing parent first")


def _apply_op(data: Any, op: dict[str, Any], where: str) -> None:
    kind, path = op.get("op"), op.get("path", "")
    if kind not in OPS:
        raise PatchError(f"op {shown(repr(kind))} is not one of {', '.join(OPS)}", path=where,
                         hint="use add, remove or replace (RFC 6902)")
    *parents, last = _tokens(path, where)
    node = data
    for t in parents:
        node = _step(node, t, path, where)
    if kind != "remove" and "value" not in op:
        raise PatchError(f"`{kind}` needs a `value`", path=where)
    if isinstance(node, list):
        _apply_to_list(node, kind, last, op.get("value"), path, where)
    elif isinstance(node, dict):
        _apply_to_dict(node, kind, last, op.get("value"), path, where)
    else:
        raise PatchError(f"{shown(path)}: its parent is a value, not a list or a mapping", path=where)


def _apply_to_list(node: list[Any], kind: str, last: str, value: Any, path: str, where: str) -> None:
    if kind == "add" and last == "-":
        node.append(value)
        return
    i = _index(last, len(node), path, where, end=kind == "add")
    if kind == "add":
        node.insert(i, value)
    elif kind == "remove":
        node.pop(i)
    else:
        node[i] = value


def _apply_to_dict(node: dict[str, Any], kind: str, last: str, value: Any, path: str, where: str) -> None:
    if kind != "add" and last not in node:
        raise PatchError(f"{shown(path)} does not exist in the spec", path=where,
                         hint="`add` a new key; `remove` and `replace` need an existing one")
    if kind == "remove":
        del node[last]
    else:
        node[last] = value


def apply_patch(spec: dict[str, Any], patch: list[dict[str, Any]]) -> dict[str, Any]:
    """A copy of `spec` with the JSON Patch `patch` applied (raises `PatchError` naming the op)."""
    if not isinstance(patch, list):
        raise PatchError("the patch is not a list of operations", path="edit.patch",
                         hint='give [{"op": "add", "path": "/actions/player/-", "value": {...}}]')
    out = copy.deepcopy(spec)
    for i, op in enumerate(patch):
        if not isinstance(op, dict):
            raise PatchError(f"an operation is a JSON object, got {shown(op)}", path=f"edit.patch[{i}]",
                             hint='give {"op": "add", "path": "/actions/player/-", "value": {...}}')
        _apply_op(out, op, f"edit.patch[{i}]")
    return out


# ----------------------------------------------------------------------------- verify and repair
def _first_errors(report: VerificationReport, n: int = 3) -> list[str]:
    return [f"{d.path}: {d.message}" for d in report.diagnostics if d.severity.value == "error"][:n]


def _repair(candidate: dict[str, Any], report: VerificationReport, edit: SpecEdit, llm: LLM, store: Store,
            max_repairs: int, verify_episodes: int
            ) -> tuple[dict[str, Any] | None, VerificationReport | None, int, int, str]:
    """The designer's repair loop on a failed edit: (the verified spec or None, its report, repairs,
    design id, why the loop stopped early: the model's error, else "")."""
    prompts = load_prompts()
    task = f"An edit of the spec `{candidate.get('name', '?')}` by the environment engineer: {edit.reason}"
    design_id = store.start_design(task, model=llm.label, mode="edit", template_hash=prompts.hash,
                                   settings={"max_repairs": max_repairs, "verify_episodes": verify_episodes})
    session = DesignSession(store=store, design_id=design_id, prompts=prompts, llm=llm, max_repairs=max_repairs - 1,
                            verify_episodes=verify_episodes, progress=lambda e: None, task=task, review=False)
    base = [session.system(), Message("user", render_repair_context(prompts, task, {})),
            Message("assistant", compact_json(candidate)),
            Message("user", prompts.render("repair", report=report.to_prompt(), reply=SPEC_REPLY))]

    try:
        spec, last = session.repair_loop("spec", base, None, lambda text: session.parse_reply(text, _as_spec))
        unusable = session.attempts[-1].parse_error if spec is None and session.attempts else None
        stopped = f"the model's last reply was no usable spec: {shown(unusable, 300)}" if unusable else ""
    except GymwrightError as e:  # the model failed (no reply, a budget, a provider error): the edit fails
        spec, last, stopped = None, None, f"the repair stopped: {type(e).__name__}: {e.message}"
    repairs = sum(1 for a in session.attempts if a.spec_sha)
    store.finish_design(design_id, status="passed" if spec is not None else "failed",
                        spec_sha=spec_hash(spec) if spec is not None else None,
                        result={"repairs": repairs, **({"error": stopped} if stopped else {})}, usage=session.usage,
                        wall_s=sum(a.wall_s for a in session.attempts))
    return spec, last, repairs, design_id, stopped


def _as_spec(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict) or "agents" not in data:
        got = f"a JSON object with the keys {shown(sorted(map(str, data)))}" if isinstance(data, dict) \
            else f"a JSON {type(data).__name__}"
        raise ReplyUnusable(f"the reply is not a whole spec (a JSON object with `agents`, `actions`, ...): got {got}")
    return data


def realize_edit(parent: dict[str, Any], edit: SpecEdit, *, store: Store, llm: LLM | None = None,
                 max_repairs: int = 2, verify_episodes: int = 4, evidence: str = "") -> EditOutcome:
    """Apply `edit` to `parent`, verify it, repair it through `llm` if it fails; record lineage.

    Never raises for a bad edit: a patch that does not apply, or a spec that no repair makes
    verify, gives status "failed" and the parent spec, with the findings."""
    parent_sha = store.put_spec(parent, name=str(parent.get("name", "")))
    failed = EditOutcome("failed", parent, parent_sha, parent_sha, edit.reason)
    try:
        candidate = apply_patch(parent, edit.patch) if edit.patch is not None else copy.deepcopy(edit.spec)
    except PatchError as e:
        failed.findings = [str(e)]
        return failed
    if not isinstance(candidate, dict):
        failed.findings = [f"edit.spec: a whole spec is a mapping (`gymwright: 1`, `name`, `agents`, ...), got a "
                           f"{type(candidate).__name__}"]
        return failed
    given = edit.report if edit.spec is not None and edit.report is not None and edit.report.passed else None
    report = given or verify(candidate, episodes=verify_episodes)
    status, repairs, design_id = "applied", 0, None
    if not report.passed:
        failed.findings = _first_errors(report)
        if llm is None or max_repairs < 1:
            failed.findings.append("no model to repair the edit with" if llm is None else "repairs are off")
            return failed
        fixed, last, repairs, design_id, stopped = _repair(candidate, report, edit, llm, store, max_repairs,
                                                           verify_episodes)
        failed.repairs, failed.design_id = repairs, design_id
        if fixed is None:
            failed.findings = (_first_errors(last) if last is not None else failed.findings) + ([stopped] if stopped else []) + [
                f"still failing after {repairs} repair(s): the stage keeps its spec"]
            return failed
        candidate, status = fixed, "repaired"
    sha = store.put_spec(candidate, name=str(candidate.get("name", "")))
    note = f"engineer edit ({status}): {edit.reason}" + (f" | evidence: {evidence}" if evidence else "")
    if sha != parent_sha:
        store.add_lineage(parent_sha, sha, note[:500], design_id)
    return EditOutcome(status, candidate, parent_sha, sha, edit.reason, repairs,
                       [] if status == "applied" else failed.findings, design_id)


def edit_from_reply(data: Any, where: str = "edit") -> SpecEdit | None:
    """The `edit` of an engineer's reply (None when it proposes none), read within the spec's
    reading limits and checked for shape; `GymwrightError` (a `SpecError` for a limit) naming `where`."""
    if data is None:
        return None
    check_data(data, where, REPLY)
    if not isinstance(data, dict) or not isinstance(data.get("reason", ""), str):
        raise GymwrightError("not an object with a `reason`", path=where,
                             hint='give {"reason": "...", "patch": [...]} or null')
    patch, spec = data.get("patch"), data.get("spec")
    if isinstance(spec, str):  # a whole spec sent as text: read as a spec file is
        spec = parse(spec, f"{where}.spec", REPLY)
    if (patch is None) == (spec is None):
        raise GymwrightError("an edit has either a `patch` or a whole `spec`, not both and not neither", path=where,
                             hint='give {"reason": ..., "patch": [{"op": ..., "path": ...}]}, or null for no edit')
    if patch is not None and (not isinstance(patch, list) or not 1 <= len(patch) <= MAX_PATCH_OPS):
        raise GymwrightError(f"a patch is a list of 1 to {MAX_PATCH_OPS} operations, got {shown(patch)}",
                             path=f"{where}.patch", hint='give [{"op": "add", "path": "/actions/ROLE/-", "value": {...}}]')
    if spec is not None and not isinstance(spec, dict):
        raise GymwrightError(f"a whole spec is a mapping, got {shown(spec)}", path=f"{where}.spec",
                             hint="give a JSON Patch (`patch`) of the paths that change instead")
    return SpecEdit(str(data.get("reason", ""))[:MAX_REASON_CHARS], patch, spec)
