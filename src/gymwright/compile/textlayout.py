"""The text view's layout of a checked spec: the plain data `runtime/textview.py` renders.

One source for every text form of an environment: gymwright's text games (`gymwright.textgame`)
build it here, and a generated module carries the same dict as `TEXT_LAYOUT` (so an exported env
plays as text with no gymwright installed). Everything in it comes from the spec: its
description and doc, each role's doc, reward terms, observation features (named, shaped, with
their docs, or the doc of the variable a feature reads) and actions (named as `_action_text`
names them).
"""

from __future__ import annotations

import re
from typing import Any

from gymwright.runtime.textview import TV_INVALID_RULES, tv_action_name
from gymwright.spec.checked import CFeature, CheckedSpec, CRole

INVALID_DEFAULT = "random"
"""What a reply that names no legal action becomes unless the caller declares otherwise: a
uniformly random legal action (the baseline every evaluation compares against), counted invalid."""

_PATH_INDEX = re.compile(r"\[(\d+)\]$")
_READS = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[me\])?$")


def text_layout(cs: CheckedSpec, invalid: str = INVALID_DEFAULT) -> dict[str, Any]:
    """The layout of `cs` (plain data: str, int, float, tuples, lists and dicts only)."""
    if invalid not in TV_INVALID_RULES:
        raise ValueError(f"invalid-reply rule {invalid!r}: use one of {', '.join(TV_INVALID_RULES)}")
    spec = cs.spec
    return {
        "name": spec.name,
        "description": spec.description,
        "doc": spec.doc,
        "agents": list(cs.agent_ids),
        "role_of": [cs.role_of(i).name for i in range(len(cs.agent_ids))],
        "invalid": invalid,
        "params": [(k, _plain(cs.params.get(k, p.default)), p.doc) for k, p in spec.params.items()],
        "roles": {r.name: _role(cs, r) for r in cs.roles},
    }


def _role(cs: CheckedSpec, r: CRole) -> dict[str, Any]:
    spec_role = cs.spec.agents[r.name]
    return {
        "doc": spec_role.doc,
        "count": r.count,
        "features": [_feature(cs, r, f) for f in r.features],
        "actions": [tv_action_name(c.name, combo) for c in r.choices for combo in c.combos()],
        "choices": [(c.name, c.doc, {a.name: [float(x) for x in a.values.ravel()] for a in c.args}) for c in r.choices],
        "rewards": [(t.name, t.expr.source, float(t.weight), _term_doc(cs, r, t.name)) for t in r.terms],
    }


def _feature(cs: CheckedSpec, r: CRole, f: CFeature) -> tuple[str, tuple[int, ...], str, str]:
    """(name, shape, kind, doc) of one observation feature."""
    info = f.expr.info
    kind = info.dtype if info.dtype in ("bool", "int") else "float"
    return (f.name, tuple(int(n) for n in info.shape), kind, _feature_doc(cs, r, f))


def _feature_doc(cs: CheckedSpec, r: CRole, f: CFeature) -> str:
    """The feature's own doc, else the doc of the variable it reads (`phase`, `pos[me]`)."""
    m = _PATH_INDEX.search(f.path)
    feats = cs.spec.observe.get(r.name) or []
    if m is not None and int(m.group(1)) < len(feats):
        doc = getattr(feats[int(m.group(1))], "doc", "")
        if doc:
            return str(doc)
    read = _READS.match(f.expr.source.strip())
    if read is None:
        return ""
    var = next((v for v in cs.state + cs.agent_state if v.name == read.group(1)), None)
    return var.doc if var is not None else ""


def _term_doc(cs: CheckedSpec, r: CRole, name: str) -> str:
    terms = cs.spec.rewards.get(r.name) or []
    return next((t.doc for t in terms if t.name == name), "")


def _plain(value: Any) -> Any:
    """A param's value as a plain bool, int or float (a numpy scalar's Python value)."""
    return value.item() if hasattr(value, "item") else value
