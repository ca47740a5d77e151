"""The variants library: the registry, applying a variant (verified), and which variants apply.

```python
from gymwright.engineer.variants import apply_variant, applicable
applicable("cake_negotiation")          # {"outside_option": None, "private_values": "every role's ...", ...}
edit = apply_variant("cake_negotiation", "outside_option")
edit.spec, edit.changed, edit.report.passed   # the new spec data, the spec paths written, True
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gymwright.compile.build import check
from gymwright.engineer.edits import SpecEdit
from gymwright.engineer.variants.bargaining import OUTSIDE_OPTION
from gymwright.engineer.variants.base import Draft, Variant, VariantRefused
from gymwright.engineer.variants.flavours import TWO_FLAVOURS
from gymwright.engineer.variants.grid import OBSTACLES
from gymwright.engineer.variants.observation import OBSERVATION_NOISE
from gymwright.engineer.variants.population import ONE_MORE_AGENT
from gymwright.engineer.variants.rewards import DISCOUNT, PRIVATE_VALUES
from gymwright.engineer.variants.spaces import SpaceMatch, same_spaces
from gymwright.errors import GymwrightError
from gymwright.spec.loader import library_names, load_spec
from gymwright.spec.model import EnvSpec
from gymwright.verify.report import VerificationReport
from gymwright.verify.verifier import DEFAULT_EPISODES, verify

VARIANTS: dict[str, Variant] = {v.name: v for v in (
    OUTSIDE_OPTION, TWO_FLAVOURS, PRIVATE_VALUES, OBSERVATION_NOISE, ONE_MORE_AGENT, OBSTACLES, DISCOUNT)}
"""In the heuristic engineer's order of preference: the most direct change of the game's incentives first."""

Source = EnvSpec | str | Path | dict[str, Any]


@dataclass
class Edit:
    """A variant applied to a spec: the new spec, what changed (for lineage) and its verification."""

    variant: str
    rationale: str
    parent: str  # the parent spec's name
    spec: dict[str, Any]  # the new spec, as data (`EnvSpec.model_validate(spec)` loads it)
    changed: list[str]  # the spec paths written, in order
    params: dict[str, Any] = field(default_factory=dict)  # param values the stage's buckets take with it
    report: VerificationReport | None = None
    spaces: SpaceMatch | None = None
    """whether every role keeps its observation and action space (else the stage restarts its policy)"""

    def to_dict(self) -> dict[str, Any]:
        """The lineage record (for `curriculum.jsonl` and the store's lineage reason)."""
        return {"variant": self.variant, "rationale": self.rationale, "parent": self.parent,
                "changed": list(self.changed), "params": dict(self.params),
                "verified": self.report.passed if self.report is not None else None,
                "same_spaces": self.spaces.same if self.spaces is not None else None,
                "space_changes": list(self.spaces.differences) if self.spaces is not None else []}

    @property
    def reason(self) -> str:
        """The lineage reason: the variant, its rationale and the spec paths it wrote."""
        return f"variant `{self.variant}`: {self.rationale} (changed {', '.join(self.changed)})"

    def as_spec_edit(self) -> SpecEdit:
        """This edit as the curriculum's spec edit (`gymwright.engineer.edits.realize_edit` stores it
        with lineage; its verification here stands, so it is not verified twice)."""
        return SpecEdit(self.reason, spec=self.spec, report=self.report)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.spec, sort_keys=False, allow_unicode=True)


def variant(name: str) -> Variant:
    if name not in VARIANTS:
        raise GymwrightError(f"no variant named `{name}`", path="variant", value=name,
                             hint=f"variants: {', '.join(VARIANTS)}")
    return VARIANTS[name]


def applicable(source: Source, params: dict[str, Any] | None = None) -> dict[str, str | None]:
    """Every variant's verdict on a spec: None where its precondition holds, else why not."""
    spec = source if isinstance(source, EnvSpec) else load_spec(source)
    cs = check(spec, params)
    data = _data(spec)
    return {name: v.refuse(data, cs) for name, v in VARIANTS.items()}


def apply_variant(source: Source, name: str, params: dict[str, Any] | None = None, *,
                  verify_it: bool = True, episodes: int = DEFAULT_EPISODES) -> Edit:
    """The spec with variant `name` applied, verified (`gymwright verify`'s pipeline) at `params`
    (with the variant's own param values). Raises `VariantRefused` when its precondition does not
    hold or the new spec does not verify (the report is the exception's `value`)."""
    v = variant(name)
    spec = source if isinstance(source, EnvSpec) else load_spec(source)
    params = dict(params or {})
    cs = check(spec, params)
    data = _data(spec)
    reason = v.refuse(data, cs)
    if reason is not None:
        others = [n for n, x in VARIANTS.items() if n != name and x.refuse(data, cs) is None]
        raise VariantRefused(f"variant `{name}` does not apply to {spec.name}: {reason}", path=f"variants.{name}",
                             hint=f"it needs {v.requires}; " + (f"variants that apply: {', '.join(others)}"
                                                                if others else "no other variant applies either"))
    draft = Draft(data)
    v.build(draft, cs, params)
    draft.set("doc", (data.get("doc", "").rstrip() + f"\nVariant `{name}`: {v.rationale}.").lstrip())
    edit = Edit(name, v.rationale, spec.name, draft.data, draft.changed, draft.params)
    if verify_it:
        edit.report = verify(draft.data, {**params, **draft.params}, episodes=episodes)
        if not edit.report.passed:
            first = next(d for d in edit.report.diagnostics if d.severity.value == "error")
            raise VariantRefused(f"variant `{name}` applied to {spec.name} did not verify: {first.path}: {first.message}",
                                 path=first.path, hint="the variant does not fit this spec; report it with the spec",
                                 value=edit.report)
    edit.spaces = same_spaces(spec, draft.data, params, {**params, **draft.params})
    return edit


def _data(spec: EnvSpec) -> dict[str, Any]:
    """A fresh copy of the spec as data (no object shared with the model)."""
    return spec.model_dump(by_alias=True, exclude_unset=True)


BEGIN, END = "<!-- variants:begin (generated: python -m gymwright.engineer.variants) -->", "<!-- variants:end -->"


def variants_table() -> str:
    """The variants as markdown: a table from their own names, rationales and preconditions, and
    which library specs each applies to (from their own preconditions)."""
    rows = ["| variant | what it adds, and why | applies to |", "| --- | --- | --- |"]
    rows += [f"| `{v.name}` | {v.rationale} | {v.requires} |" for v in VARIANTS.values()]
    rows += ["", "On the library's specs (yes: the precondition holds; the exhaustive test verifies each of them):", "",
             "| spec | " + " | ".join(f"`{n}`" for n in VARIANTS) + " |", "| --- |" + " --- |" * len(VARIANTS)]
    for spec in library_names():
        verdicts = applicable(spec)
        rows.append(f"| {spec} | " + " | ".join("yes" if verdicts[n] is None else "-" for n in VARIANTS) + " |")
    return "\n".join(rows)


def embed_table(doc: str) -> str:
    """`doc` with the text between the markers replaced by the current table."""
    head, _, rest = doc.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{variants_table()}\n{END}{tail}"
