"""What a variant is: a typed spec transform with a precondition, and the record of one applied.

A `Variant` has a name, a one-line rationale, its precondition in words (`requires`) and two
functions: `refuse(spec, checked)` says why the precondition does not hold (None: it holds), and
`build(draft, checked, params)` writes the new rules into a `Draft` of the spec. The draft records
every spec path it adds or changes, for lineage. Every param a variant adds has a *neutral* value
at which the variant changes nothing; the spec's own probes are pinned to it (they were written
for the rules before the variant), and the variant adds probes of its own that show the new rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gymwright.errors import GymwrightError
from gymwright.spec.checked import CheckedSpec, CRole


class VariantRefused(GymwrightError):
    """A variant's precondition does not hold for a spec, or its result did not verify."""


@dataclass
class Draft:
    """A spec's data being transformed; `changed` lists the spec paths written, in order."""

    data: dict[str, Any]
    changed: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    """param values the stage's buckets take with the edit (e.g. the new agent count)"""

    def _mark(self, path: str) -> None:
        if path not in self.changed:
            self.changed.append(path)

    def section(self, key: str) -> Any:
        return self.data.setdefault(key, {} if key not in ("step", "probes") else [])

    def add(self, key: str, name: str, value: Any) -> None:
        """A new entry `name` of a mapping section (params, state, agent_state, metrics)."""
        sec = self.section(key)
        if name in sec:
            raise VariantRefused(f"the spec already declares `{key}.{name}`", path=f"{key}.{name}",
                                 hint="this variant was applied already, or the name is taken")
        sec[name] = value
        self._mark(f"{key}.{name}")

    def append(self, key: str, role: str | None, value: Any) -> None:
        """A new last entry of a list section (step, probes) or of a role's list (actions, rewards, observe)."""
        sec = self.section(key)
        items = sec if role is None else sec.setdefault(role, [])
        items.append(value)
        self._mark(f"{key}[{len(items) - 1}]" if role is None else f"{key}.{role}[{len(items) - 1}]")

    def set(self, path: str, value: Any) -> None:
        """Replace the value at a dotted spec path (`rewards.bargainer[0].expr`, `terminate`)."""
        *parents, last = _parts(path)
        node: Any = self.data
        for p in parents:
            node = node[p]
        node[last] = value
        self._mark(path)

    def pin_probes(self, neutral: dict[str, Any]) -> None:
        """The spec's own probes run at the added params' neutral values (the rules they were written for)."""
        probes = self.data.get("probes", [])
        for p in probes:
            p["params"] = {**neutral, **p.get("params", {})}
        if probes:
            self._mark("probes[*].params")


def _parts(path: str) -> list[str | int]:
    out: list[str | int] = []
    for piece in path.split("."):
        name, _, rest = piece.partition("[")
        out.append(name)
        for index in rest.rstrip("]").split("][") if rest else []:
            out.append(int(index))
    return out


Refuse = Callable[[dict[str, Any], CheckedSpec], "str | None"]
Build = Callable[[Draft, CheckedSpec, dict[str, Any]], None]


@dataclass(frozen=True)
class Variant:
    name: str
    rationale: str
    """one line: what the variant adds and why it makes a mastered task harder"""
    requires: str
    """the precondition in words"""
    refuse: Refuse
    build: Build


def task_term(terms: list[dict[str, Any]]) -> int:
    """The index of a role's task term: the one marked `kind: task`, else the first."""
    return next((i for i, t in enumerate(terms) if t.get("kind") == "task"), 0)


def declared(data: dict[str, Any], cs: CheckedSpec) -> set[str]:
    """Every name the spec declares or the language builds in (params, variables, choices, metrics, ...)."""
    names = set(cs.symbols) | set(cs.choice_names) | set(cs.arg_names)
    for key in ("params", "consts", "state", "agent_state", "metrics"):
        names |= set(data.get(key, {}))
    return names


def role(cs: CheckedSpec, name: str) -> CRole:
    return next(r for r in cs.roles if r.name == name)


def split_choice(data: dict[str, Any]) -> tuple[str, int, list[str]] | None:
    """A bargaining game's split: (role, index of the choice, its argument names) of the first role
    with both a choice with arguments (the split) and an `accept` choice; None if there is none."""
    for name, choices in data.get("actions", {}).items():
        if not any(c.get("name") == "accept" for c in choices):
            continue
        for i, c in enumerate(choices):
            if c.get("args"):
                return name, i, list(c["args"])
    return None


def already_declared(data: dict[str, Any], cs: CheckedSpec, names: tuple[str, ...], what: str) -> str | None:
    """Why a variant that adds `names` does not apply again (None: none of them is declared yet)."""
    taken = sorted(set(names) & declared(data, cs))
    return f"it already declares {', '.join(f'`{n}`' for n in taken)} ({what} before)" if taken else None
