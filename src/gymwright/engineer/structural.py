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
3. **Knobs move one allowed value at a time, toward the judged configurations**: a bucket above
   the band gets one knob one value harder, below the band one knob one value easier. Harder
   goes first to a knob still short of the values the final policy is judged on (then by the
   largest measured effect, else the least advanced), and past them only when every knob has
   reached them; a bucket inside the band is left alone unless its knobs are as many steps short
   of the judged values as there are stages left (then one step toward them, as part 2 does for
   structure), so training ends on the judged knob values, not only where the band put them.
   With `toward_targets=False` (`heuristic-band`, the ablation) knobs follow the band alone.

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


def propose_in_space(ev: StageEvidence, max_buckets: int = MAX_BUCKETS,
                     toward_targets: bool = True) -> tuple[Mixture, str]:
    space: ConfigSpace = ev.space
    lo, hi = ev.band
    params: dict[str, dict[str, Any]] = {}
    weights: dict[str, float] = {}
    why: list[str] = []
    goal = _knob_targets(space, ev.targets) if toward_targets else {}
    stages_left = ev.stages - ev.stage - 1 if ev.stages else 0
    for b, e in ev.buckets:
        params[b.label], note = _knob_move(space, b, e, lo, hi, goal, stages_left)
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


def _knob_targets(space: ConfigSpace, targets: list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """Per knob, the lowest and highest value the judged configurations use (knobs they leave out: none)."""
    out = {}
    for k in space.knobs:
        vals = [float(t[k]) for t in targets if isinstance(t.get(k), int | float)]
        if vals:
            out[k] = (min(vals), max(vals))
    return out


def _short(space: ConfigSpace, k: str, value: Any, goal: dict[str, tuple[float, float]]) -> int:
    """Allowed values knob `k` at `value` is below the lowest judged value (0 at or past it, or no goal)."""
    if k not in goal:
        return 0
    values = space.knobs[k]
    return max(0, _index(values, goal[k][0]) - _index(values, value))


def _knob_move(space: ConfigSpace, b: Bucket, e: Evidence, lo: float, hi: float,
               goal: dict[str, tuple[float, float]] | None = None, stages_left: int = 0) -> tuple[dict[str, Any], str]:
    s, goal = e.success, goal or {}
    values = {k: space.knobs[k] for k in space.knobs}
    now = {k: b.params.get(k, values[k][0]) for k in values}
    short = {k: _short(space, k, now[k], goal) for k in values}
    if not space.knobs or (lo <= s <= hi and not (goal and 0 < stages_left <= sum(short.values()))):
        return dict(b.params), f"success {s:.3f} inside the band [{lo:g}, {hi:g}]: knobs kept"
    direction = 1 if s >= lo else -1  # above the band, or inside it with the judged values still ahead
    pos = {k: _index(values[k], now[k]) for k in values}
    level = {**b.params, **now}
    movable = [k for k in values if space.knob_step(k, now[k], direction, level) != values[k][pos[k]]]  # within the constraints
    if direction > 0 and any(short.values()):
        movable = [k for k in movable if short[k]]  # the judged values first
    if not movable:
        held = " or held there by the spec's constraints" if space.allowed is not None else ""
        return dict(b.params), f"success {s:.3f} {'above' if direction > 0 else 'below'} the band, every knob at its end{held}"
    effect = {kn.name: abs(kn.effect) if kn.measurable else 0.0 for kn in e.knobs}
    # the largest measured effect; else the least advanced knob (harder) or the most advanced (easier)
    pick = max(movable, key=lambda k: (effect.get(k, 0.0), -direction * pos[k]))
    new = space.knob_step(pick, now[pick], direction, level)
    word = "harder" if direction > 0 else "easier"
    if lo <= s <= hi:
        reason = (f"success {s:.3f} inside the band, but the knobs are {sum(short.values())} step(s) short of the "
                  f"judged values with {stages_left} stage(s) left")
    else:
        reason = f"success {s:.3f} {'above' if direction > 0 else 'below'} the band [{lo:g}, {hi:g}]"
    toward = " toward the judged values" if direction > 0 and short[pick] else ""
    return {**b.params, pick: new}, f"{reason}: {pick} {b.params.get(pick)} -> {new} ({word}{toward})"


def _index(values: list[Any], v: Any) -> int:
    return min(range(len(values)), key=lambda i: abs(float(values[i]) - float(v)))


def _shape(space: ConfigSpace, params: dict[str, Any]) -> dict[str, Any]:
    return {k: params.get(k) for k in space.structural}


def _open_harder(ev: StageEvidence, space: ConfigSpace, params: dict[str, dict[str, Any]],
                 hi: float) -> tuple[str, dict[str, Any], str] | None:
    hardest_b, hardest_e = max(ev.buckets, key=lambda x: space.difficulty(_shape(space, x[0].params)))
    open_labels = {b.label for b, _ in ev.buckets}
    shape = _shape(space, hardest_b.params)
    base = params[hardest_b.label]  # the bucket's level after this stage's knob move: the new bucket's knobs
    candidates = [c for c in space.harder_shapes(shape, base) if space.label({**hardest_b.params, **c}) not in open_labels]
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
