"""Engineers: evidence in, the next stage's params out, with a rationale.

- `FixedEngineer`: no change (the baseline: training on one fixed configuration).
- `HeuristicEngineer` (the offline default): steers the task metric into the target band by
  moving the knob whose measured effect is largest and significant, one step, in the direction
  the band asks for; no change inside the band.
- `LLMEngineer`: a language model reads the evidence (failures, knob effects, history) and a
  guideline, and replies with params (typed and bounded by the spec) and a rationale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from gymwright.design.templated import params_schema
from gymwright.engineer.evidence import Evidence, Knob
from gymwright.llm.base import Message, Request
from gymwright.llm.client import LLM
from gymwright.llm.jsonreply import extract_json
from gymwright.spec.loader import load_spec

GUIDELINE = (
    "Keep the trained policy's success inside the target band: make the environment harder when "
    "success is above the band, easier when below. Change few knobs at a time, by small steps, and "
    "prefer the knobs whose measured effect on success is largest. Stay inside every range."
)


@dataclass
class Proposal:
    params: dict[str, Any]
    rationale: str
    engineer: str


class Engineer(Protocol):
    name: str

    def propose(self, evidence: Evidence) -> Proposal: ...


class FixedEngineer:
    name = "fixed"

    def propose(self, evidence: Evidence) -> Proposal:
        return Proposal(dict(evidence.params), "fixed environment (the baseline): no change", self.name)


class HeuristicEngineer:
    name = "heuristic"

    def propose(self, evidence: Evidence) -> Proposal:
        lo, hi = evidence.band
        s, m = evidence.success, evidence.task_metric
        if lo <= s <= hi:
            return Proposal(dict(evidence.params), f"{m} {s:.3f} is inside the band [{lo:g}, {hi:g}]: no change", self.name)
        want = -1.0 if s > hi else 1.0  # harder (lower success) or easier
        usable = [k for k in evidence.knobs if abs(k.effect) > k.ci95 and _can_move(k, want)]
        if not usable:
            return Proposal(dict(evidence.params), f"{m} {s:.3f} is {'above' if want < 0 else 'below'} the band, "
                            "but no knob had a measurable effect in the needed direction: no change", self.name)
        k = max(usable, key=lambda k: abs(k.effect))
        direction = want * (1.0 if k.effect > 0 else -1.0)
        new = min(k.high, max(k.low, k.value + direction * k.step))
        new_value: int | float = int(round(new)) if k.integer else round(new, 6)
        why = (f"{m} {s:.3f} is {'above' if want < 0 else 'below'} the band [{lo:g}, {hi:g}]; {k.name} moves it most "
               f"({k.effect:+.3f} +/- {k.ci95:.3f} per step up), so {k.name} {k.value:g} -> {new_value:g} "
               f"to make the task {'harder' if want < 0 else 'easier'}")
        return Proposal({**evidence.params, k.name: new_value}, why, self.name)


def _can_move(k: Knob, want: float) -> bool:
    up = want * k.effect > 0  # moving up helps
    return k.value < k.high if up else k.value > k.low


class LLMEngineer:
    name = "llm"

    def __init__(self, llm: LLM, guideline: str = GUIDELINE, with_history: bool = True) -> None:
        self.llm = llm
        self.guideline = guideline
        self.with_history = with_history

    def propose(self, evidence: Evidence) -> Proposal:
        spec = load_spec(evidence.spec)
        schema = params_schema(spec)
        schema["properties"]["rationale"] = {"type": "string", "maxLength": 600}
        schema["required"] = ["params", "rationale"]
        shown = evidence if self.with_history else _without_history(evidence)
        prompt = (f"You are the environment engineer of a training curriculum.\nGuideline: {self.guideline}\n\n"
                  f"{shown.to_prompt()}\n\nPropose the next stage's params (all of them) and a one-paragraph "
                  'rationale. Reply with JSON: {"params": {...}, "rationale": "..."}')
        reply = self.llm.complete(Request((Message("user", prompt),), schema=schema, schema_name="proposal",
                                          max_tokens=800))
        data = extract_json(reply.text)
        given = data.get("params", {}) if isinstance(data, dict) else {}
        params, notes = {}, []
        for name, value in given.items():
            p = spec.params.get(name)
            if p is None or not isinstance(value, bool | int | float):
                notes.append(f"ignored {name}={value!r} (not a param of {spec.name})")
                continue
            low = p.min if p.min is not None else value
            high = p.max if p.max is not None else value
            params[name] = min(max(value, low), high)
            if params[name] != value:
                notes.append(f"clamped {name} {value} to {params[name]}")
        rationale = str(data.get("rationale", "")) if isinstance(data, dict) else ""
        return Proposal({**evidence.params, **params}, "; ".join([rationale, *notes]).strip("; "), self.name)


def _without_history(e: Evidence) -> Evidence:
    return Evidence(e.spec, e.params, e.task_metric, e.success, e.band, e.failures, e.knobs, [])
