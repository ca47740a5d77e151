"""Engineers: evidence in, the next stage's params (or mixture) out, with a rationale.

`propose(Evidence)` answers for one config; `propose_stage(StageEvidence)` for a stage's mixture
(per bucket its params, and the buckets' shares of the data).

- `FixedEngineer`: no change (the baseline: training on one fixed configuration).
- `HeuristicEngineer` (the offline default): steers the task metric into the target band by
  moving the knob whose measured effect is largest and significant, one step, in the direction
  the band asks for; no change inside the band. With `edits=True`, when the metric is above the
  band and no knob can move it there, it changes the game instead: the first verified variant of
  `gymwright.engineer.variants` that applies (the proposal's `edit`).
- `LLMEngineer`: a language model reads the evidence (failures, knob effects, history) and a
  guideline, and replies with params (typed and bounded by the spec) and a rationale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np
import yaml

from gymwright.design.templated import params_schema
from gymwright.diagnostic import shown
from gymwright.engineer.edits import MAX_PATCH_OPS, MAX_REASON_CHARS, SpecEdit, edit_from_reply
from gymwright.engineer.evidence import Evidence, Knob, StageEvidence
from gymwright.engineer.lever_rules import propose_levers
from gymwright.engineer.mixture import Bucket, Mixture, floor_shares
from gymwright.engineer.space import ConfigSpace
from gymwright.engineer.structural import propose_in_space
from gymwright.engineer.variants import Edit, pick_variant
from gymwright.errors import GymwrightError
from gymwright.llm.base import Message, Request
from gymwright.llm.client import LLM
from gymwright.llm.jsonreply import extract_json
from gymwright.spec.limits import REPLY, check_data
from gymwright.spec.loader import load_spec, read_data

GUIDELINE = (
    "Keep the trained policy's success inside the target band: make the environment harder when "
    "success is above the band, easier when below. Change few knobs at a time, by small steps, and "
    "prefer the knobs whose measured effect on success is largest. Stay inside every range."
)


GOAL_GUIDELINE = (
    "The objective is the validation result: the configurations the final policy is judged on. Put the "
    "training data where the policy still learns (success neither near 0 nor near 1); when the hardest "
    "bucket is mastered, open a harder one (a bigger map, more agents, higher ratios) toward the judged "
    "configurations; change little at a time, and keep what raised validation. The band is a heuristic, "
    "not the objective."
)


EDIT_GUIDE = """

You may also change the game itself when no lever above can make the training better (for example
a harder version once the agents do well: a new rule, a new action, a private type or value, a new
agent role): add "edit" to your reply, a JSON Patch (RFC 6902: op add, remove or replace; `path` a
JSON pointer into the spec below, `-` appends to a list, e.g. /actions/ROLE/-) with its reason. It
is verified, repaired if it fails, and the next stage trains on it; the policy keeps what persists
(observation features and actions matched by name). Give "edit": null to keep the game.
The spec:
```yaml
{spec}```"""
LEVER_GUIDE = """

You may also set the designer levers listed above (training scaffolding: they change the game the
policy trains on, never the one it is judged on): add "levers" to your reply, an object of lever
name -> strength (one of its allowed values; its first value is off). Leave a lever out to keep it
as it is."""
EDIT_SCHEMA: dict[str, Any] = {"anyOf": [{"type": "null"}, {
    "type": "object", "additionalProperties": False, "required": ["reason", "patch"],
    "properties": {"reason": {"type": "string", "maxLength": MAX_REASON_CHARS},
                   "patch": {"type": "array", "minItems": 1, "maxItems": MAX_PATCH_OPS, "items": {
                       "type": "object", "required": ["op", "path"],
                       "properties": {"op": {"enum": ["add", "remove", "replace"]}, "path": {"type": "string"},
                                      "value": {}}}}}}]}
"""The optional `edit` of an engineer's reply (`LLMEngineer(edits=True)`)."""


@dataclass
class Proposal:
    params: dict[str, Any]
    rationale: str
    engineer: str
    edit: SpecEdit | None = None
    """the spec edit for the next stage (`gymwright.engineer.edits.realize_edit` verifies and stores it); None: the spec stays"""
    variant: Edit | None = None
    """when the edit is a variant of the library: its record (spec paths written, params, verification, spaces)"""


@dataclass
class StageProposal:
    mixture: Mixture
    rationale: str
    engineer: str
    edit: SpecEdit | None = None
    """the spec edit for the next stage (`gymwright.engineer.edits.realize_edit` verifies and stores it; `mixture`
    already has the params it needs); None: the spec stays"""
    variant: Edit | None = None
    """when the edit is a variant of the library: its record (spec paths written, params, verification, spaces)"""


class Engineer(Protocol):
    name: str

    def propose(self, evidence: Evidence) -> Proposal: ...

    def propose_stage(self, evidence: StageEvidence) -> StageProposal: ...


def current_mixture(evidence: StageEvidence) -> Mixture:
    """The mixture the evidence stands for, with the lever strengths it trained with."""
    return Mixture([b for b, _ in evidence.buckets], dict(evidence.levers))


class FixedEngineer:
    name = "fixed"
    reads_knob_effects = False

    def propose(self, evidence: Evidence) -> Proposal:
        return Proposal(dict(evidence.params), "fixed environment (the baseline): no change", self.name)

    def propose_stage(self, evidence: StageEvidence) -> StageProposal:
        return StageProposal(current_mixture(evidence), "fixed environment (the baseline): no change", self.name)


class HeuristicEngineer:
    """`edits`: when the task metric is above the band and no knob can move it toward the band,
    propose a verified variant of the spec (`gymwright.engineer.variants`, tried in the order of
    `variants`, default the whole library) instead of no change. Off by default: a curriculum turns
    it on (`gymwright evolve --edits`)."""

    name = "heuristic"

    def __init__(self, edits: bool = False, variants: Sequence[str] | None = None, toward_targets: bool = True) -> None:
        self.edits = edits
        self.variants = tuple(variants) if variants is not None else None
        self.toward_targets = toward_targets  # knobs in a space move toward the judged values (False: the band alone)

    def propose(self, evidence: Evidence) -> Proposal:
        p, stuck = self._knob_step(evidence)
        if stuck and self.edits:
            return self._edit(evidence.spec, evidence.params, p.rationale, evidence.success > evidence.band[1])
        return replace(p, rationale=f"{p.rationale}: no change") if stuck else p

    def _knob_step(self, evidence: Evidence) -> tuple[Proposal, bool]:
        """The knob move for one config, and whether the metric is outside the band with no knob to
        move it (then the rationale says why, and the caller says what it does instead)."""
        lo, hi = evidence.band
        s, m = evidence.success, evidence.task_metric
        if lo <= s <= hi:
            return Proposal(dict(evidence.params), f"{m} {s:.3f} is inside the band [{lo:g}, {hi:g}]: no change",
                            self.name), False
        want = -1.0 if s > hi else 1.0  # harder (lower success) or easier
        usable = [k for k in evidence.knobs if k.measurable and _can_move(k, want)]
        if not usable:
            return Proposal(dict(evidence.params), f"{m} {s:.3f} is {'above' if want < 0 else 'below'} the band, "
                            "but no knob had a measurable effect in the needed direction", self.name), True
        k = max(usable, key=lambda k: abs(k.effect))
        new_value = k.moved(want)
        why = (f"{m} {s:.3f} is {'above' if want < 0 else 'below'} the band [{lo:g}, {hi:g}]; {k.name} moves it most "
               f"({k.effect:+.3f} +/- {k.ci95:.3f} per step up), so {k.name} {k.value:g} -> {new_value:g} "
               f"to make the task {'harder' if want < 0 else 'easier'}")
        return Proposal({**evidence.params, k.name: new_value}, why, self.name), False

    def propose_stage(self, evidence: StageEvidence) -> StageProposal:
        """The levels (`_propose_levels`), then the designer levers by their rule
        (`gymwright.engineer.lever_rules`: on where the failures call for them, annealed when they no
        longer do); a lever setting the guardrail undid before is not proposed again."""
        p = self._propose_levels(evidence)
        if not evidence.lever_menu:
            return p
        settings, why = propose_levers(evidence)
        mixture = p.mixture.with_levers(settings)
        if settings != evidence.levers and any(mixture.same_as(r) for r in evidence.rejected):
            mixture, why = p.mixture.with_levers(evidence.levers), [*why, "but the guardrail undid this lever "
                                                                         "setting before: the levers stay"]
        return replace(p, mixture=mixture, rationale="; ".join([p.rationale, "levers: " + "; ".join(why)]))

    def _propose_levels(self, evidence: StageEvidence) -> StageProposal:
        """Each bucket as `propose` would move it; data shares move toward the buckets with the
        lowest task metric (weight share * exp(2 (band middle - success)), at least 5% each).
        With a configuration space (`evidence.space`) the structural rule of
        `gymwright.engineer.structural` decides instead: buckets opened, dropped and reweighted.
        With `edits`, when buckets are outside the band and no knob moves any of them (or the knob
        move is one the guardrail undid before), the spec changes instead (`_edit`)."""
        if evidence.space is not None:
            mixture, why = propose_in_space(evidence, toward_targets=self.toward_targets)
            return StageProposal(mixture, why, self.name)
        lo, hi = evidence.band
        mid = (lo + hi) / 2
        params, shares, why, said = {}, {}, [], []
        outside = moved = False
        for b, e in evidence.buckets:
            p, stuck = self._knob_step(e)
            outside, moved = outside or stuck, moved or p.params != e.params
            params[b.label] = p.params
            shares[b.label] = b.share * float(np.exp(2.0 * (mid - e.success)))
            said.append(f"[{b.label}] {p.rationale}")
            why.append(said[-1] + (": no change" if stuck else ""))
        shares = floor_shares(shares)
        if len(shares) > 1:
            why.append("data shares " + ", ".join(f"{b.label} {b.share:.2f}->{shares[b.label]:.2f}"
                                                  for b, _ in evidence.buckets)
                       + " (more data where success is lowest)")
        mixture = current_mixture(evidence).with_changes(params, shares)
        undone = moved and any(mixture.same_as(r) for r in evidence.rejected)
        if self.edits and ((outside and not moved) or undone):
            stuck = "; ".join(said) + ("; but the guardrail undid this knob move before" if undone else "")
            above = any(e.success > hi for _, e in evidence.buckets)
            p = self._edit(evidence.spec, evidence.buckets[0][0].params, stuck, above)
            if p.variant is None:
                return StageProposal(current_mixture(evidence), p.rationale, self.name)
            changed = {b.label: {**b.params, **p.variant.params} for b, _ in evidence.buckets}
            return StageProposal(current_mixture(evidence).with_changes(changed), p.rationale, self.name, p.edit,
                                 p.variant)
        return StageProposal(mixture, "; ".join(why), self.name)

    def _edit(self, spec: Any, params: dict[str, Any], stuck: str, above: bool) -> Proposal:
        """A verified variant of the spec for a task no knob can steer; only for a task above the
        band: every variant of the library makes a game harder, none makes one easier."""
        if not above:
            return Proposal(dict(params), f"{stuck}; every variant of the library makes a task harder, none "
                            "easier: no change", self.name)
        pick = pick_variant(spec, params, self.variants)
        if pick.edit is None:
            return Proposal(dict(params), f"{stuck}; {pick.describe()}: no change", self.name)
        spaces = pick.edit.spaces.describe() if pick.edit.spaces is not None else ""
        return Proposal({**params, **pick.edit.params},
                        f"{stuck}; so the game changes instead of a knob: {pick.describe()}; the new spec verified; "
                        f"{spaces}", self.name, pick.edit.as_spec_edit(), pick.edit)


def _can_move(k: Knob, want: float) -> bool:
    up = want * k.effect > 0  # moving up helps
    return k.value < k.high if up else k.value > k.low


class LLMEngineer:
    """A language model as the engineer. The context ablation of the experiment turns parts of
    the prompt off: `with_guideline` (the guideline) and `with_history` (earlier stages); the
    evidence of the current stage (task metric, failure breakdown, knob effects) is always there."""

    name = "llm"

    def __init__(self, llm: LLM, guideline: str = GUIDELINE, with_history: bool = True,
                 with_guideline: bool = True, steps: bool = False, edits: bool = False) -> None:
        self.llm = llm
        self.guideline = guideline
        self.with_history = with_history
        self.with_guideline = with_guideline
        self.steps = steps
        """answer a mixture in bounded steps (per bucket: harder, easier or keep, which knob, more
        or less data), applied one knob step at a time; for small models, which copy numbers back"""
        self.edits = edits
        """the reply may also edit the spec (`EDIT_GUIDE`): a JSON Patch with its reason, which the
        curriculum verifies and repairs (`gymwright.engineer.edits`) before the next stage"""
        self._spec_shown: Any = None  # the spec an edit would patch (set per proposal)
        self._edit_reply: Any = None
        self._menu: dict[str, Any] = {}  # the designer levers the reply may set (set per proposal)
        self._levers_reply: Any = None

    def propose_stage(self, evidence: StageEvidence) -> StageProposal:
        self._spec_shown, self._edit_reply = (evidence.spec if self.edits else None), None
        self._menu, self._levers_reply = dict(evidence.lever_menu), None
        proposal = self._with_levers(self._propose_stage(evidence), evidence)
        if self._edit_reply is None:
            return proposal
        try:
            edit = edit_from_reply(self._edit_reply, "the reply's edit")
        except (GymwrightError, ValueError) as e:  # a malformed edit: the mixture still stands
            return replace(proposal, rationale=f"{proposal.rationale}; the edit was not usable ({e})")
        if edit is None:
            return proposal
        return replace(proposal, edit=edit, rationale=f"{proposal.rationale}; edit: {edit.reason}")

    def _with_levers(self, proposal: StageProposal, evidence: StageEvidence) -> StageProposal:
        """The proposal with the reply's lever strengths (each moved to its nearest allowed value);
        levers the reply leaves out, and every lever of a failed or empty reply, stay as they were."""
        if not self._menu:
            return proposal
        settings, notes = dict(evidence.levers), []
        given = self._levers_reply if isinstance(self._levers_reply, dict) else {}
        for name, value in given.items():
            lever = self._menu.get(name)
            if lever is None or not _finite(value) or isinstance(value, bool):
                notes.append(f"ignored lever {shown(repr(name))}={shown(repr(value))} (not a lever with a number)")
                continue
            settings[name] = lever.nearest(float(value))
            if settings[name] != value:
                notes.append(f"lever {name} {value} moved to the nearest allowed {settings[name]:g}")
        changed = [f"{k} {evidence.levers.get(k, self._menu[k].off):g} -> {v:g}" for k, v in settings.items()
                   if v != evidence.levers.get(k, self._menu[k].off)]
        said = ["levers: " + ", ".join(changed)] if changed else []
        return replace(proposal, mixture=proposal.mixture.with_levers(settings),
                       rationale="; ".join([proposal.rationale, *said, *notes]).strip("; "))

    def _intro(self, guideline: str | None = None) -> str:
        text = self.guideline if guideline is None or self.guideline != GUIDELINE else guideline
        guide = f"Guideline: {text} Keep what already works.\n\n" if self.with_guideline else ""
        return f"You are the environment engineer of a training curriculum.\n{guide}"

    def _ask(self, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        tokens = 1200
        if self._spec_shown is not None:
            data, _ = read_data(self._spec_shown)
            prompt += EDIT_GUIDE.format(spec=yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))
            schema = {**schema, "properties": {**schema["properties"], "edit": EDIT_SCHEMA}}
            tokens = 3000  # room for a patch
        if self._menu:
            prompt += LEVER_GUIDE
            levers = {"type": "object", "additionalProperties": False,
                      "properties": {k: {"enum": list(lv.values)} for k, lv in self._menu.items()}}
            schema = {**schema, "properties": {**schema["properties"], "levers": levers}}
        reply = self.llm.complete(Request((Message("user", prompt),), schema=schema, schema_name="proposal",
                                          max_tokens=tokens))
        try:
            data = extract_json(reply.text)
        except ValueError:  # a number past Python's 4,300 digits
            raise GymwrightError("the engineer's reply holds a number too long to read", path="the reply",
                                 hint="numbers in a reply have at most a few dozen digits") from None
        check_data(data, "the engineer's reply", REPLY)
        if not isinstance(data, dict):
            return {}
        if self._spec_shown is not None:
            self._edit_reply = data.get("edit")
        self._levers_reply = data.get("levers")
        return data

    def propose(self, evidence: Evidence) -> Proposal:
        spec = load_spec(evidence.spec)
        movable = {k.name for k in evidence.knobs}
        schema = params_schema(spec)
        schema["properties"]["params"] = _only(schema["properties"]["params"], movable)
        schema["properties"]["rationale"] = {"type": "string", "maxLength": 600}
        schema["required"] = ["params", "rationale"]
        shown = evidence if self.with_history else _without_history(evidence)
        which = f"the knobs {', '.join(sorted(movable))}; the others stay" if movable else "all of them"
        prompt = (f"{self._intro()}{shown.to_prompt()}\n\nPropose the next stage's params ({which}) and a "
                  'one-paragraph rationale. Reply with JSON: {"params": {...}, "rationale": "..."}')
        data = self._ask(prompt, schema)
        params, notes = _bounded(spec, data.get("params", {}), set(spec.params) - movable if movable else set())
        return Proposal({**evidence.params, **params}, "; ".join([str(data.get("rationale", "")), *notes]).strip("; "),
                        self.name)

    def _propose_stage(self, evidence: StageEvidence) -> StageProposal:
        if evidence.space is not None and not self.steps:
            return self._propose_in_space(evidence)
        if self.steps:
            return self._propose_steps(evidence)
        if len(evidence.buckets) == 1:
            b, e = evidence.buckets[0]
            p = self.propose(e)
            return StageProposal(Mixture([replace(b, params=p.params)]), p.rationale, self.name)
        spec = load_spec(evidence.spec)
        movable = {k.name for _, e in evidence.buckets for k in e.knobs}
        one = _only(params_schema(spec)["properties"]["params"], movable)
        bucket = {"type": "object", "properties": {"params": one, "share": {"type": "number", "minimum": 0, "maximum": 1}},
                  "required": ["params", "share"], "additionalProperties": False}
        may = f"the knobs you may set: {', '.join(sorted(movable))}; " if movable else ""
        prompt = (f"{self._intro()}{evidence.to_prompt(with_history=self.with_history)}\n\nPropose the next "
                  f"stage's mixture: for every bucket its params ({may}the others stay as they are) and its share "
                  "of the training data (shares sum to 1), and a one-paragraph rationale. Reply "
                  'with JSON: {"buckets": {"LABEL": {"params": {...}, "share": 0.25}, ...}, "rationale": "..."}')
        rows, said = self._ask_buckets(evidence, prompt, bucket, 900)
        params, shares, notes = {}, {}, []
        for (b, _), row in zip(evidence.buckets, rows, strict=True):
            keep = set(spec.params) - movable if movable else set(spec_structural(evidence, b))
            params[b.label], bucket_notes = _bounded(spec, row.get("params", {}), keep)
            notes += [f"[{b.label}] {n}" for n in bucket_notes]
            shares[b.label] = _share(row.get("share"), b.share)
        rationale = "; ".join([said, *notes]).strip("; ")
        return StageProposal(current_mixture(evidence).with_changes(params, floor_shares(shares)), rationale, self.name)


    def _propose_in_space(self, evidence: StageEvidence) -> StageProposal:
        """The next mixture as a list of buckets, each one level of the space (an allowed value for
        every lever): buckets may be added, dropped and reweighted, and one structure may have
        several buckets at different knob values (each keeps its own). Rows naming the same level
        are one bucket, their shares added, and the rationale says so."""
        space = evidence.space
        levers = [*space.structural, *space.knobs]
        most = _most_buckets(space)
        example = ", ".join(f'"{k}": ...' for k in levers)
        prompt = (f"{self._intro(GOAL_GUIDELINE)}{evidence.to_prompt(with_history=self.with_history)}\n\nPropose the "
                  f"next stage's mixture: a list of buckets (at most {most}), each with a value for every lever and its "
                  "share of the training data (shares sum to 1). Any number of buckets per structure: each bucket is "
                  "one level (a value for every lever); rows with the same values for every lever are merged. Keep a "
                  "bucket by listing it, drop it by leaving it out, add one by listing a new level. Reply with JSON: "
                  '{"buckets": [{' + example + ', "share": 0.5}, ...], "rationale": "..."}')
        data = self._ask(prompt, _space_schema(space, most))
        said, given = str(data.get("rationale", "")), data.get("buckets")
        levels, notes = _levels_of(space, evidence.buckets[0][0].params, given if isinstance(given, list) else [])
        if not levels or sum(share for _, share in levels) <= 0:
            return StageProposal(current_mixture(evidence), "; ".join([said, "the reply named no bucket with a positive "
                                 "share: the stage is kept"]).strip("; "), self.name)
        labels = space.labels([params for params, _ in levels])
        shares = floor_shares({label: share for label, (_, share) in zip(labels, levels, strict=True)})
        mixture = Mixture([Bucket(params, shares[label], label) for label, (params, _) in zip(labels, levels, strict=True)])
        return StageProposal(mixture, "; ".join([said, *notes]).strip("; "), self.name)

    def _propose_steps(self, evidence: StageEvidence) -> StageProposal:
        knobs = sorted({k.name for _, e in evidence.buckets for k in e.knobs})
        bucket = {"type": "object", "additionalProperties": False, "required": ["change", "knob", "data"],
                  "properties": {"change": {"enum": ["harder", "easier", "keep"]}, "knob": {"enum": knobs or ["none"]},
                                 "data": {"enum": ["more", "same", "less"]}}}
        prompt = (f"{self._intro()}{evidence.to_prompt(with_history=self.with_history)}\n\nFor every bucket decide: "
                  "make its environment harder, easier or keep it; which knob to move (one step, in the direction "
                  "its measured effect says); and whether it gets more, the same or less of the training data. "
                  'Reply with JSON: {"buckets": {"LABEL": {"change": "harder", "knob": "NAME", "data": "more"}, ...}, '
                  '"rationale": "..."}')
        rows, said = self._ask_buckets(evidence, prompt, bucket, 600)
        params, shares, notes = {}, {}, []
        for (b, e), row in zip(evidence.buckets, rows, strict=True):
            params[b.label], note = _step(e, row.get("change"), row.get("knob"))
            notes += [f"[{b.label}] {note}"] if note else []
            shares[b.label] = b.share * {"more": 1.5, "less": 1 / 1.5}.get(row.get("data"), 1.0)
        rationale = "; ".join([said, *notes]).strip("; ")
        return StageProposal(current_mixture(evidence).with_changes(params, floor_shares(shares)), rationale, self.name)


    def _ask_buckets(self, evidence: StageEvidence, prompt: str, bucket: dict[str, Any],
                     max_rationale: int) -> tuple[list[dict[str, Any]], str]:
        """Ask for `{"buckets": {LABEL: bucket, ...}, "rationale": ...}`; one reply row per bucket
        of the evidence (empty where the reply has none) and the rationale."""
        labels = [b.label for b, _ in evidence.buckets]
        schema = {"type": "object", "additionalProperties": False, "required": ["buckets", "rationale"],
                  "properties": {"buckets": {"type": "object", "properties": {k: bucket for k in labels},
                                             "required": labels, "additionalProperties": False},
                                 "rationale": {"type": "string", "maxLength": max_rationale}}}
        data = self._ask(prompt, schema)
        given = data.get("buckets") if isinstance(data.get("buckets"), dict) else {}
        rows = [given[k] if isinstance(given.get(k), dict) else {} for k in labels]
        return rows, str(data.get("rationale", ""))


MOST_BUCKETS = 48
"""The most buckets a reply in a space may list: every level of a small space, a bound on a large
one (each bucket takes at least one env copy, and the prompt and reply grow with it)."""


def _most_buckets(space: ConfigSpace) -> int:
    """How many buckets a reply may list: one per level of the space, at most `MOST_BUCKETS`."""
    return max(1, min(len(space.levels()), MOST_BUCKETS))


def _space_schema(space: ConfigSpace, most: int) -> dict[str, Any]:
    """The reply's schema: up to `most` buckets, each an allowed value per lever and a share."""
    levers = {k: {"enum": list(v)} for k, v in {**space.structural, **space.knobs}.items()}
    item = {"type": "object", "additionalProperties": False, "required": [*levers, "share"],
            "properties": {**levers, "share": {"type": "number", "minimum": 0, "maximum": 1}}}
    return {"type": "object", "additionalProperties": False, "required": ["buckets", "rationale"],
            "properties": {"buckets": {"type": "array", "items": item, "minItems": 1, "maxItems": most},
                           "rationale": {"type": "string", "maxLength": 900}}}


def _levels_of(space: ConfigSpace, base: dict[str, Any], rows: list[Any]) -> tuple[list[tuple[dict[str, Any], float]], list[str]]:
    """The reply's rows as levels with their shares, in the reply's order, each lever moved to its
    nearest allowed value; rows that give one level (every lever equal, after that move) become one,
    shares added: each merge is noted, so the rationale shows what the model's list became."""
    levers = [*space.structural, *space.knobs]
    levels: dict[tuple[Any, ...], tuple[dict[str, Any], float]] = {}
    notes: list[str] = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        params = space.nearest({**base, **{k: row[k] for k in levers if k in row}})
        if any(params[k] != row.get(k) for k in levers):
            notes.append(f"moved {({k: row.get(k) for k in levers})} to the nearest allowed values")
        share, key = _share(row.get("share"), 0.0), space.key(params)
        if key in levels:
            levels[key] = (levels[key][0], levels[key][1] + share)
            notes.append(f"merged a row repeating the level {space.level_label(params)} into its bucket, "
                         "their shares added")
            continue
        levels[key] = (params, share)
    return list(levels.values()), notes


def _step(e: Evidence, change: Any, knob: Any) -> tuple[dict[str, Any], str]:
    """One step of `knob` making the bucket `change` ("harder"/"easier"), by its measured effect."""
    if change not in ("harder", "easier"):
        return {}, ""
    k = next((k for k in e.knobs if k.name == knob), None)
    if k is None or not k.measurable:
        return {}, f"{change} asked, but {knob!r} has no measurable effect (beyond its 95% interval): no change"
    value = k.moved(-1.0 if change == "harder" else 1.0)
    return {k.name: value}, f"{change}: {k.name} {k.value:g} -> {value:g}"


def _only(params: dict[str, Any], names: set[str]) -> dict[str, Any]:
    """A params object schema cut down to `names` (all when empty)."""
    if not names:
        return params
    props = {k: v for k, v in params["properties"].items() if k in names}
    return {**params, "properties": props, "required": list(props)}


def spec_structural(evidence: StageEvidence, bucket: Any) -> list[str]:
    """The params a bucket keeps: those that differ between buckets (its identity, e.g. size)."""
    keys = set().union(*(b.params for b, _ in evidence.buckets))
    return [k for k in keys if len({repr(b.params.get(k)) for b, _ in evidence.buckets}) > 1]


def _share(x: Any, default: float) -> float:
    """A bucket's share as the reply gives it: a finite number >= 0, else `default`."""
    return float(x) if _finite(x) and not isinstance(x, bool) and x >= 0 else default


def _finite(x: Any) -> bool:
    """A finite int or float (an int too large for a float is not)."""
    try:
        return isinstance(x, int | float) and math.isfinite(x)
    except OverflowError:
        return False


def _bounded(spec: Any, given: Any, keep: set[str]) -> tuple[dict[str, Any], list[str]]:
    """The model's params clamped into the spec's ranges; unknown names, values that are not
    finite numbers (NaN, infinities) and `keep` are ignored."""
    params: dict[str, Any] = {}
    notes: list[str] = []
    for name, value in (given.items() if isinstance(given, dict) else []):
        p = spec.params.get(name)
        if p is None or isinstance(value, bool) != (p.type == "bool") or not isinstance(value, bool | int | float):
            notes.append(f"ignored {name}={shown(repr(value))} (not a param of {spec.name})")
            continue
        if not _finite(value):
            notes.append(f"ignored {name}={shown(repr(value))} (not a finite number)")
            continue
        if name in keep:
            continue
        low = p.min if p.min is not None else value
        high = p.max if p.max is not None else value
        params[name] = min(max(value, low), high)
        if p.type == "int":
            params[name] = int(round(params[name]))
        if params[name] != value:
            notes.append(f"clamped {name} {value} to {params[name]}")
    return params, notes


def _without_history(e: Evidence) -> Evidence:
    return Evidence(e.spec, e.params, e.task_metric, e.success, e.band, e.failures, e.knobs, [])
