"""One more agent of a role whose count is a param (the rules are written for any count)."""

from __future__ import annotations

from typing import Any

from gymwright.engineer.variants.base import Draft, Variant
from gymwright.spec.checked import CheckedSpec


def growable(data: dict[str, Any], params: dict[str, Any]) -> tuple[str, str, int] | None:
    """The first role whose count is an int param below its max: (role, param, current count)."""
    declared = data.get("params", {})
    for r, spec in data.get("agents", {}).items():
        count = spec.get("count", 1)
        p = declared.get(count) if isinstance(count, str) else None
        if p is None or p.get("type", "int") != "int":
            continue
        now = int(params.get(count, p["default"]))
        if p.get("max") is None or now < p["max"]:
            return r, count, now
    return None


def _counts(data: dict[str, Any]) -> str:
    return ", ".join(f"{r}: {spec.get('count', 1)}" for r, spec in data.get("agents", {}).items())


def refuse(data: dict[str, Any], cs: CheckedSpec) -> str | None:
    if growable(data, cs.params) is None:
        return (f"no role's count is a param below its max ({_counts(data)}): a fixed count means the rules "
                "are written for exactly that many agents")
    return None


def build(draft: Draft, cs: CheckedSpec, params: dict[str, Any]) -> None:
    found = growable(draft.data, {**cs.params, **params})
    assert found is not None
    r, name, now = found
    draft.set(f"params.{name}.default", now + 1)
    draft.params[name] = now + 1
    draft.pin_probes({name: now})
    draft.append("probes", None, {"name": f"one more {r} takes part", "expect": [f"n_{r} == {now + 1}"]})


ONE_MORE_AGENT = Variant(
    "one_more_agent",
    "one more agent of a role joins (its count param raised by one): more agents to coordinate with or to "
    "compete against, with the same rules",
    "a role whose count is an int param below its max",
    refuse, build)
