"""Levers only a designer has: training scaffolding that changes how the game teaches, not which
levels are drawn.

A sampler (domain randomization, prioritized replay) can only choose levels. An environment
designer can also change the game the policy trains on: charge for a behaviour the evidence
names, weigh a reward term up or down, keep an imitation loss on a planner's demonstrations.
Each lever here is such a change with a strength (0: off). The levers of a stage are part of its
training environment (`Mixture.levers`), so the guardrails judge, revert and roll back a lever
change as they do a change of levels; and they are *training scaffolding only*: validation, the
evidence and the held-out judgment always play the unedited game (`scaffolded` is applied to the
training spec alone).

`levers_for(spec, names)` builds the levers a spec supports, each derived from the spec itself:

- `weight:TERM` for every reward term (`weight:team` for MAPF's "everybody home"): the term's
  weight times the strength (1: as designed);
- `park_cost` for a grid spec with goals and `arrived`/`reached` agent state (MAPF): a cost for a
  walker that arrives on its goal while that goal lies on a shortest route of another walker still
  on its way, the failure behind most held-out timeouts (benchmarks/results/2026-12-01-engineer-bounds.md);
- `end_on:METRIC` for every failure metric (`kind: failure`) that is nonzero on the step a failure
  happens (`reduce` sum, max or mean; MAPF's `conflicts`): a *training-only rule*, a training episode
  ends at the first such step (the task is already failed there; ending it takes away every reward
  still to come, where the game as designed lets a walker collect its goal after a conflict);
- `partners` for a spec with solved layouts (MAPF's form): the share of training copies in which
  one walker is a fixed partner following its part of the optimal joint plan
  (`gymwright.train.partners`), so the learners meet a walker that lets them pass or goes first as
  an optimal team would; the partner's steps stay out of the losses;
- `imitation` where the curriculum has a demonstrator (a planner's plans; for a MAPF spec the
  built-in CBS demonstrator): the weight of an imitation loss on demonstrations of the stage's
  buckets during PPO (the first stage with it on also starts from their clone); every
  demonstration env step is charged to the stage's budget.

```python
menu = levers_for(spec_data, ("park_cost", "weight:team"))
train_spec = scaffolded(spec_data, {"park_cost": 0.5, "weight:team": 2.0})
```
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gymwright.errors import GymwrightError
from gymwright.mapf.spec_form import is_mapf_form

Apply = Callable[[dict[str, Any], float], None]
"""edits a copy of the spec's data for training at a strength above 0 (in place)"""


@dataclass(frozen=True)
class Lever:
    """One designer lever of a spec: its name, what it does, its allowed strengths (off first)."""

    name: str
    meaning: str
    values: tuple[float, ...]
    """allowed strengths, ordered; `off` (the first) leaves the game as designed"""
    default: float
    """the strength an engineer turns it on at"""
    apply: Apply | None = None
    """how it edits the training spec (None: it acts on the trainer, e.g. `imitation`, `partners`)"""
    signal: str = ""
    """the failure kind whose share calls for it (the heuristic's evidence; "" none)"""
    called_at: float = 0.0
    """a share of the recorded episodes with the signal's kind that calls for it whatever the other failures
    (0: only the heuristic's general rule; a rule that acts only where its failure happens costs nothing
    elsewhere, so it is worth keeping while that failure is still seen)"""

    @property
    def off(self) -> float:
        return self.values[0]

    def nearest(self, value: float) -> float:
        """The allowed strength nearest to `value` (a model's reply kept in range)."""
        return min(self.values, key=lambda v: abs(v - value))

    def describe(self, value: float) -> str:
        return f"{self.name} = {value:g} ({'off' if value == self.off else 'on'}; allowed {list(self.values)}): {self.meaning}"


# ----------------------------------------------------------------------------- the levers
GOAL_IN_WAY = ("any((goal[me, 0] - pos[:, 0]) * (goal[me, 0] - goal[:, 0]) <= 0 and "
               "(goal[me, 1] - pos[:, 1]) * (goal[me, 1] - goal[:, 1]) <= 0 and not reached and "
               "arange(n_agents) != me)")
"""My goal lies in the rectangle between another walker still on its way and that walker's goal
(on a shortest route of it, ignoring holes)."""


def _park_cost(data: dict[str, Any]) -> Lever | None:
    state = data.get("agent_state") or {}
    grid = data.get("grid") or {}
    if not ({"arrived", "reached"} <= set(state) and grid and grid.get("goals", "random") != "none"):
        return None
    apply = functools.partial(_add_park_cost, list(data.get("rewards") or {}))
    return Lever("park_cost", "a cost paid by a walker that arrives on its goal while that goal lies on a shortest "
                 "route of another walker still on its way (it blocks that walker for good); teaches waiting before "
                 "parking", (0.0, 0.25, 0.5, 1.0), 0.5, apply, signal="timeout")


def _add_park_cost(roles: list[str], spec: dict[str, Any], value: float) -> None:
    for role in roles:
        spec["rewards"][role].append({"name": "park_in_way", "expr": f"-{value!r} * (arrived[me] and {GOAL_IN_WAY})",
                                      "doc": "training scaffolding: parked on the way of a walker still on its way"})


def _reweigh(name: str, spec: dict[str, Any], value: float) -> None:
    for terms in spec["rewards"].values():
        for t in terms:
            if t.get("name") == name:
                t["weight"] = float(t.get("weight", 1.0)) * value


def _weights(data: dict[str, Any]) -> list[Lever]:
    out: dict[str, Lever] = {}
    for role, terms in (data.get("rewards") or {}).items():
        for term in terms or []:
            name = term.get("name")
            if not name or f"weight:{name}" in out:
                continue
            apply = functools.partial(_reweigh, name)
            doc = term.get("doc") or term.get("expr", "")
            out[f"weight:{name}"] = Lever(f"weight:{name}", f"multiplies the weight of reward term `{name}` ({doc}) of "
                                          f"role {role} and every role that has it", (1.0, 0.0, 0.5, 2.0, 4.0), 2.0, apply)
    return list(out.values())


def _imitation(data: dict[str, Any]) -> Lever:
    return Lever("imitation", "the weight of an imitation loss on the demonstrator's plans of the stage's buckets, "
                 "kept during PPO (the first stage with it on starts from their clone); the plans show what the "
                 "reward does not teach (e.g. waiting for another walker); their env steps come out of the "
                 "stage's budget", (0.0, 0.05, 0.1, 0.2, 0.5), 0.1, None, signal="timeout")


FAILURE_AT_A_STEP = ("sum", "max", "mean")
"""reductions under which a failure metric that is nonzero on one step is nonzero for the episode (a
`last` metric's value on one step need not be its value at the end; `min` says nothing)"""


END_ON_CALLED_AT = 0.05
"""an `end_on` rule is called for while its failure is seen in at least this share of the recorded episodes:
it changes nothing in an episode without that failure"""


def _end_on(data: dict[str, Any]) -> list[Lever]:
    out = []
    for name, m in (data.get("metrics") or {}).items():
        if not isinstance(m, dict) or m.get("kind") != "failure" or m.get("reduce", "last") not in FAILURE_AT_A_STEP:
            continue
        apply = functools.partial(_end_episode_on, str(m["expr"]))
        out.append(Lever(f"end_on:{name}", f"training-only rule: a training episode ends on the first step where failure "
                         f"`{name}` ({m.get('doc') or m['expr']}) happens; the task is failed there already, and ending "
                         "it takes away every reward still to come, so the failure costs what the episode could "
                         "still have earned", (0.0, 1.0), 1.0, apply, signal=name, called_at=END_ON_CALLED_AT))
    return out


def _end_episode_on(expr: str, spec: dict[str, Any], value: float) -> None:
    before = spec.get("terminate")
    spec["terminate"] = f"({before}) or ({expr}) != 0" if before else f"({expr}) != 0"


def _partners(data: dict[str, Any]) -> list[Lever]:
    if not is_mapf_form(data):
        return []
    return [Lever("partners", "the share of training copies in which one walker is a fixed partner that follows its part "
                  "of the optimal joint plan of the layout (a shortest route of its own once pushed off it); the "
                  "learners meet a walker that waits or goes first as an optimal team would; the partner is not "
                  "trained and never plays at validation or judgment", (0.0, 0.125, 0.25, 0.5), 0.25, None,
                  signal="timeout")]


LeverMaker = Callable[[dict[str, Any]], Iterable[Lever]]
LEVERS: dict[str, LeverMaker] = {
    "park_cost": lambda d: [lv] if (lv := _park_cost(d)) is not None else [],
    "weight": _weights,
    "end_on": _end_on,
    "imitation": lambda d: [_imitation(d)],
    "partners": _partners,
}
"""lever families by name, each making the levers a spec supports (none where it has nothing to act on)"""


def levers_for(data: dict[str, Any], names: Iterable[str]) -> dict[str, Lever]:
    """The levers `names` of the spec's data (`weight` or `weight:TERM` for reward weights). A name
    the spec cannot support is an error that says why and which it can."""
    every = {lv.name: lv for make in LEVERS.values() for lv in make(data)}
    out: dict[str, Lever] = {}
    for name in names:
        family = [lv for lv in every.values() if lv.name == name or lv.name.startswith(f"{name}:")]
        if not family:
            raise GymwrightError(f"lever {name!r} is not available for spec {data.get('name', '?')!r}", path="levers",
                                 hint=f"levers this spec supports: {', '.join(every) or 'none'}")
        out.update({lv.name: lv for lv in family})
    return out


def scaffolded(data: dict[str, Any], settings: dict[str, float], menu: dict[str, Lever]) -> dict[str, Any]:
    """A copy of the spec's data with every spec lever of `settings` that is on applied: the game a
    stage trains on (validation and judgment play `data` itself)."""
    out = copy.deepcopy(data)
    for name, value in sorted(settings.items()):
        lever = menu.get(name)
        if lever is None:
            raise GymwrightError(f"lever {name!r} is not one this curriculum may use", path="levers",
                                 hint=f"the levers it may use: {', '.join(menu) or 'none'}")
        if lever.apply is not None and value != lever.off:
            lever.apply(out, float(value))
    return out


def spec_levers_on(settings: dict[str, float], menu: dict[str, Lever]) -> bool:
    """Whether any lever that edits the spec is on (then the stage trains on a scaffolded copy)."""
    return any(menu[n].apply is not None and v != menu[n].off for n, v in settings.items() if n in menu)
