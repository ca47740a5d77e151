"""The heuristic engineer's rule for structural levers (buckets named by map size, agent count).

Three parts, each with its reason (docs/engineer.md):

1. **Data goes where the learning signal is.** A bucket's weight is `s (1 - s)` of its success
   `s` (at least 0.05): for a success/failure outcome that is the variance of the reward, so the
   policy gradient's signal is largest near 0.5 and vanishes on buckets always solved or never
   solved (the "intermediate difficulty" criterion of goal-generation curricula, Florensa et al.
   2018, and the intuition behind prioritized level replay).
2. **Open the next harder bucket when the hardest is mastered, has stopped improving, or the
   budget runs out.** The next harder structural neighbour (one value up in one lever, the one
   nearest to the configurations the final policy is judged on) is added when the hardest open
   bucket's success reaches the band's top (mastered), when it rose by less than `PLATEAU` since
   the stage before (more of it teaches little: the learning-progress criterion of teacher-student
   curricula, Matiisen et al. 2017), or when the structural steps still to go to the nearest judged
   configuration are as many as the stages left (so training ends on what is judged). Past
   `max_buckets` the easiest mastered bucket is dropped (mastered buckets keep the 5% floor until then).
3. **Knobs move one allowed value at a time**: a bucket above the band gets one knob one value
   harder, below the band one knob one value easier (the knob with the largest measured effect,
   else the least advanced one); inside the band it is left alone.

A proposal equal to one the guardrail undid is not made again: the stage is kept instead.
"""

from __future__ import annotations

from typing import Any

from gymwright.engineer.evidence import Evidence, StageEvidence
from gymwright.engineer.mixture import Bucket, Mixture, floor_shares
from gymwright.engineer.space import ConfigSpace

MAX_BUCKETS = 4
PLATEAU = 0.05
"""success gained by the hardest bucket over one stage below which it counts as no longer improving"""


def propose_in_space(ev: StageEvidence, max_buckets: int = MAX_BUCKETS) -> tuple[Mixture, str]:
    space: ConfigSpace = ev.space
    lo, hi = ev.band
    params: dict[str, dict[str, Any]] = {}
    weights: dict[str, float] = {}
    why: list[str] = []
    for b, e in ev.buckets:
        params[b.label], note = _knob_move(space, b, e, lo, hi)
        weights[b.label] = max(e.success * (1 - e.success), 0.05)
        why.append(f"[{b.label}] {note}")
    buckets = [Bucket(params[b.label], weights[b.label], b.label) for b, _ in ev.buckets]
    opened = _open_harder(ev, space, params, hi)
    if opened is not None:
        label, new_params, note = opened
        buckets.append(Bucket(new_params, sum(weights.values()) / len(weights), label))
        why.append(note)
        if len(buckets) > max_buckets:
            dropped = _easiest_mastered(ev, space, hi)
            if dropped is not None:
                buckets = [x for x in buckets if x.label != dropped]
                why.append(f"dropped {dropped} (mastered, the easiest; at most {max_buckets} buckets)")
    shares = floor_shares({x.label: x.share for x in buckets})
    mixture = Mixture([Bucket(x.params, shares[x.label], x.label) for x in buckets])
    why.append("data shares " + ", ".join(f"{x.label} {x.share:.2f}" for x in mixture.buckets)
               + " (weight s(1-s): most data where success is nearest 0.5)")
    if any(mixture.same_as(r) for r in ev.rejected):
        current = Mixture([b for b, _ in ev.buckets])
        return current, "this proposal was undone by the guardrail before: keeping the stage"
    return mixture, "; ".join(why)


def _knob_move(space: ConfigSpace, b: Bucket, e: Evidence, lo: float, hi: float) -> tuple[dict[str, Any], str]:
    s = e.success
    if lo <= s <= hi or not space.knobs:
        return dict(b.params), f"success {s:.3f} inside the band [{lo:g}, {hi:g}]: knobs kept"
    direction = 1 if s > hi else -1
    values = {k: space.knobs[k] for k in space.knobs}
    pos = {k: _index(values[k], b.params.get(k, values[k][0])) for k in values}
    movable = [k for k in values if 0 <= pos[k] + direction < len(values[k])]
    if not movable:
        return dict(b.params), f"success {s:.3f} {'above' if direction > 0 else 'below'} the band, every knob at its end"
    effect = {kn.name: abs(kn.effect) if kn.measurable else 0.0 for kn in e.knobs}
    # the largest measured effect; else the least advanced knob (harder) or the most advanced (easier)
    pick = max(movable, key=lambda k: (effect.get(k, 0.0), -direction * pos[k]))
    new = space.knob_step(pick, b.params.get(pick, values[pick][0]), direction)
    word = "harder" if direction > 0 else "easier"
    return ({**b.params, pick: new},
            f"success {s:.3f} {'above' if direction > 0 else 'below'} the band [{lo:g}, {hi:g}]: {pick} "
            f"{b.params.get(pick)} -> {new} ({word})")


def _index(values: list[Any], v: Any) -> int:
    return min(range(len(values)), key=lambda i: abs(float(values[i]) - float(v)))


def _shape(space: ConfigSpace, params: dict[str, Any]) -> dict[str, Any]:
    return {k: params.get(k) for k in space.structural}


def _open_harder(ev: StageEvidence, space: ConfigSpace, params: dict[str, dict[str, Any]],
                 hi: float) -> tuple[str, dict[str, Any], str] | None:
    hardest_b, hardest_e = max(ev.buckets, key=lambda x: space.difficulty(_shape(space, x[0].params)))
    open_labels = {b.label for b, _ in ev.buckets}
    shape = _shape(space, hardest_b.params)
    candidates = [c for c in space.harder_shapes(shape) if space.label({**hardest_b.params, **c}) not in open_labels]
    if not candidates:
        return None
    pick = min(candidates, key=lambda c: _distance(space, c, ev.targets))
    before = _previous_success(ev, hardest_b.label)
    s = hardest_e.success
    stages_left = ev.stages - ev.stage - 1 if ev.stages else 0
    if s >= hi:
        why = f"the hardest bucket {hardest_b.label} is mastered ({s:.3f} >= {hi:g})"
    elif before is not None and s - before < PLATEAU:
        why = f"the hardest bucket {hardest_b.label} stopped improving ({before:.3f} -> {s:.3f}, less than {PLATEAU:g})"
    elif ev.targets and 0 < stages_left <= _distance(space, shape, ev.targets):
        why = (f"{_distance(space, shape, ev.targets)} structural step(s) to the judged configurations and "
               f"{stages_left} stage(s) left")
    else:
        return None
    new_params = {**params[hardest_b.label], **pick}
    label = space.label(new_params)
    return label, new_params, f"opened {label}: {why}; the next harder bucket nearest to the judged configurations"


def _previous_success(ev: StageEvidence, label: str) -> float | None:
    """The bucket's success in the latest earlier stage that trained it (None: a new bucket)."""
    for h in reversed(ev.history):
        for row in h.get("mixture", []):
            if row.get("label") == label:
                return float(row.get("success", 0.0))
    return None


def _distance(space: ConfigSpace, shape: dict[str, Any], targets: list[dict[str, Any]]) -> int:
    """Steps (allowed values) from `shape` to the nearest target configuration's structure."""
    if not targets:
        return 0
    return min(sum(abs(_index(v, shape[k]) - _index(v, t.get(k, shape[k]))) for k, v in space.structural.items()
                   if isinstance(t.get(k, shape[k]), int | float)) for t in targets)


def _easiest_mastered(ev: StageEvidence, space: ConfigSpace, hi: float) -> str | None:
    mastered = [(space.difficulty(_shape(space, b.params)), b.label) for b, e in ev.buckets if e.success >= hi]
    return min(mastered)[1] if mastered else None
