"""Observation noise: every scalar float reading an agent observes is off by a fresh uniform error."""

from __future__ import annotations

from typing import Any

from gymwright.engineer.variants.base import Draft, Variant, declared
from gymwright.spec.checked import CheckedSpec

ERROR = "obs_error"


def noisy_features(cs: CheckedSpec) -> dict[str, list[int]]:
    """Per role, the indices of its scalar float features that are not constant."""
    out: dict[str, list[int]] = {}
    for r in cs.roles:
        idx = [i for i, f in enumerate(r.features)
               if f.size == 1 and f.expr.info.dtype == "float" and not f.expr.info.const]
        if idx:
            out[r.name] = idx
    return out


def refuse(data: dict[str, Any], cs: CheckedSpec) -> str | None:
    if not noisy_features(cs):
        return "no role observes a scalar float reading (a quantity such as an offer, a stock or a distance) to blur"
    taken = {ERROR, "obs_noise"} & declared(data, cs)
    if taken:
        return f"it already declares `{sorted(taken)[0]}` (observation noise was added before)"
    return None


def build(draft: Draft, cs: CheckedSpec, params: dict[str, Any]) -> None:
    features = noisy_features(cs)
    k = max(len(v) for v in features.values())
    draw = f"uniform(-obs_noise, obs_noise, shape={k})"
    draft.add("params", "obs_noise", {
        "default": 0.1, "min": 0.0, "max": 0.5,
        "doc": "every scalar float reading an agent observes is off by a uniform error in [-obs_noise, obs_noise], "
               "drawn afresh every step (0: exact readings)"})
    draft.add("agent_state", ERROR, {"type": "float", "shape": [k], "init": draw, "min": "-obs_noise",
                                     "max": "obs_noise", "private": True,
                                     "doc": "the errors of my noisy readings this step"})
    draft.append("step", None, {"set": {ERROR: draw}, "doc": "fresh observation errors every step"})
    draft.pin_probes({"obs_noise": 0.0})
    for r, idx in features.items():
        for j, i in enumerate(idx):
            feature = _feature(draft.data["observe"][r][i])
            feature["expr"] = f"({feature['expr']}) + {ERROR}[me, {j}]"
            for bound, sign in (("low", "-"), ("high", "+")):
                if bound in feature:
                    feature[bound] = f"({feature[bound]}) {sign} obs_noise"
            draft.set(f"observe.{r}[{i}]", feature)
    draft.append("probes", None, {
        "name": "the observation errors are drawn within the noise (and are not all zero)",
        "params": {"obs_noise": 0.5}, "actions": [],
        "expect": [f"all(abs({ERROR}) <= obs_noise)", f"any({ERROR} != 0)"]})


def _feature(entry: Any) -> dict[str, Any]:
    return dict(entry) if isinstance(entry, dict) else {"expr": entry}


OBSERVATION_NOISE = Variant(
    "observation_noise",
    "the agents' scalar readings (offers, stocks, distances) come with a fresh random error: a policy must act "
    "well on what it cannot see exactly",
    "a role that observes a scalar float feature that is not constant",
    refuse, build)
