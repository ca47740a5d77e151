"""The configuration space an experiment lets its engineers (and baselines) use.

A *level* is one assignment of every lever: structural params (map size, agent count: they
name a bucket) and knobs (hole and wait ratio: free inside a bucket). Each lever has a short list
of allowed values ordered from easy to hard, inside the spec's range; the engineers, uniform
domain randomization and prioritized replay all draw from exactly these values, so they search
the same space. Discrete values also keep the solved layout pools reusable (a pool is per config).

```python
space = ConfigSpace({"size": [3, 4, 5, 6]}, {"wait_ratio": [0.0, 0.25, 0.5, 0.75]}, {"n_agents": 3})
space.levels()          # every assignment, as param dicts
space.label({"size": 4, "n_agents": 3, ...})   # "size=4": the bucket's name
space.level_label({"size": 4, "wait_ratio": 0.5, ...})   # "size=4 wait_ratio=0.5": the whole level
```

A mixture may hold several levels of one structure (size 5 at wait ratio 0.5 and at 0.75): each
is its own bucket, and `labels` names them by the whole level where a structure repeats (the
short structural name alone would merge them), by the structure alone where it is unique (short,
and stable while a bucket's knobs move, so the guard and the history still know it).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gymwright.errors import GymwrightError
from gymwright.spec.loader import load_spec
from gymwright.spec.model import EnvSpec


@dataclass
class ConfigSpace:
    structural: dict[str, list[Any]]
    """bucket-naming params and their allowed values, easy to hard (e.g. size [3, 4, 5, 6])"""
    knobs: dict[str, list[float]]
    """free params of a bucket and their allowed values, easy to hard (e.g. wait_ratio [0, .25, .5])"""
    fixed: dict[str, Any] = field(default_factory=dict)
    """params every level has (e.g. view_radius, max_steps)"""
    meanings: dict[str, str] = field(default_factory=dict)
    """one line per lever: what it does (from the spec's param docs when not given)"""
    allowed: Callable[[dict[str, Any]], bool] | None = None
    """which assignments are levels (None: all): a space spanning a spec's declared ranges holds
    combinations the game cannot make (a wait needs two walkers; a tiny crowded lake has no layout
    that needs one), and no method may draw those"""

    def __post_init__(self) -> None:
        for name, values in {**self.structural, **self.knobs}.items():
            if not values:
                raise GymwrightError(f"lever {name!r} has no allowed values", path=f"space.{name}",
                                     hint="list at least one value, ordered from easy to hard")

    @classmethod
    def for_spec(cls, spec: Any, structural: dict[str, list[Any]], knobs: dict[str, list[float]],
                 fixed: dict[str, Any] | None = None) -> ConfigSpace:
        """A space checked against the spec's params (names and ranges), meanings from their docs."""
        loaded = spec if isinstance(spec, EnvSpec) else load_spec(spec)
        for name, values in {**structural, **knobs}.items():
            p = loaded.params.get(name)
            if p is None:
                raise GymwrightError(f"{name!r} is not a param of {loaded.name}", path=f"space.{name}",
                                     hint=f"one of {', '.join(loaded.params)}")
            bad = [v for v in values if (p.min is not None and v < p.min) or (p.max is not None and v > p.max)]
            if bad:
                raise GymwrightError(f"values {bad} of {name} are outside the spec's range [{p.min:g}, {p.max:g}]",
                                     path=f"space.{name}", hint="keep every allowed value inside the spec's range")
        meanings = {n: loaded.params[n].doc or n for n in {**structural, **knobs}}
        allowed: Callable[[dict[str, Any]], bool] | None = None
        if loaded.constraints:  # no method may draw an assignment that breaks the spec's `constraints`
            from gymwright.spec.checks.params import broken_constraints

            def meets(params: dict[str, Any]) -> bool:
                return not broken_constraints(loaded, params)
            allowed = meets
        space = cls({k: list(v) for k, v in structural.items()}, {k: list(v) for k, v in knobs.items()},
                    dict(fixed or {}), meanings, allowed)
        if allowed is not None and not space.levels():
            raise GymwrightError(f"no level of this space meets the constraints of {loaded.name}",
                                 path="space", hint="allow values that satisfy " + ", ".join(
                                     f"`{getattr(c, 'expr', c)}`" for c in loaded.constraints))
        return space

    # ------------------------------------------------------------------ names
    def label(self, params: dict[str, Any]) -> str:
        """A bucket's name: its structural params (`size=4 n_agents=3`)."""
        return " ".join(f"{k}={params[k]}" for k in self.structural if k in params) or "config"

    def level_label(self, params: dict[str, Any]) -> str:
        """A level's whole name: every lever, structural first (`size=5 n_agents=3 wait_ratio=0.5`),
        so two levels of one structure are told apart."""
        return " ".join(f"{k}={params[k]}" for k in [*self.structural, *self.knobs] if k in params) or "config"

    def labels(self, levels: list[dict[str, Any]]) -> list[str]:
        """Distinct bucket names for a mixture's levels (distinct by `key`): the structure alone
        (`label`) where only one level has it, the whole level (`level_label`) where several do."""
        counts = Counter(self.label(p) for p in levels)
        return [self.label(p) if counts[self.label(p)] == 1 else self.level_label(p) for p in levels]

    def key(self, params: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(params.get(k) for k in [*self.structural, *self.knobs])

    # ------------------------------------------------------------------ levels
    def shapes(self) -> list[dict[str, Any]]:
        """Every structural assignment, easy to hard (the last lever varies fastest)."""
        names = list(self.structural)
        return [dict(zip(names, vs, strict=True)) for vs in itertools.product(*self.structural.values())]

    def levels(self) -> list[dict[str, Any]]:
        """Every level (structural x knob values) as a full param dict."""
        knob_names = list(self.knobs)
        out = []
        for shape in self.shapes():
            for vs in itertools.product(*self.knobs.values()):
                out.append({**self.fixed, **shape, **dict(zip(knob_names, vs, strict=True))})
        return [p for p in out if self.allowed is None or self.allowed(p)]

    def difficulty(self, shape: dict[str, Any]) -> int:
        """The rank of a structural assignment: the sum of its values' positions (easy 0)."""
        return sum(self.structural[k].index(shape[k]) for k in self.structural if shape.get(k) in self.structural[k])

    def permits(self, params: dict[str, Any]) -> bool:
        """Whether `params` (with `fixed` under them) meets the spec's constraints (`allowed`)."""
        return self.allowed is None or self.allowed({**self.fixed, **params})

    def harder_shapes(self, shape: dict[str, Any], params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """The structural neighbours harder in one lever: its next value up that keeps the level
        (`params`, the bucket's whole assignment, with the new value) within the constraints."""
        out = []
        for k, values in self.structural.items():
            i = values.index(shape[k]) if shape.get(k) in values else -1
            if i < 0:
                continue
            for v in values[i + 1:]:  # a value the constraints refuse is skipped (n odd: 3 -> 5)
                if self.permits({**(params or {}), **shape, k: v}):
                    out.append({**shape, k: v})
                    break
        return out

    def knob_step(self, name: str, value: float, direction: int, params: dict[str, Any] | None = None) -> float:
        """The allowed value next to `value` (+1 harder, -1 easier), kept at the ends; with the
        level's other values `params`, the next one that keeps it within the constraints (none:
        `value`'s own)."""
        values = self.knobs[name]
        i = min(range(len(values)), key=lambda j: abs(values[j] - value))
        j = i + direction
        while 0 <= j < len(values):
            if params is None or self.permits({**params, name: values[j]}):
                return values[j]
            j += direction
        return values[i]

    def contains(self, params: dict[str, Any]) -> bool:
        return all(params.get(k) in v for k, v in {**self.structural, **self.knobs}.items())

    def nearest(self, params: dict[str, Any]) -> dict[str, Any]:
        """`params` with every lever moved to its nearest allowed value (a proposal kept in the space)."""
        out = {**self.fixed, **params}
        for k, values in {**self.structural, **self.knobs}.items():
            v = out.get(k, values[0])
            out[k] = min(values, key=lambda x: abs(float(x) - float(v))) if isinstance(v, int | float) else values[0]
        if self.allowed is not None and not self.allowed(out):  # the nearest level that is allowed
            levels = self.levels()
            if levels:
                return min(levels, key=lambda lv: sum(abs(float(lv[k]) - float(out[k])) for k in [*self.structural, *self.knobs]
                                                      if isinstance(out.get(k), int | float)))
        return out

    def to_prompt(self) -> str:
        lines = ["Levers you may use (allowed values, easy to hard):"]
        for k, v in self.structural.items():
            lines.append(f"- {k} (structural: names a bucket; add, drop or reweight buckets): {v}. {self.meanings.get(k, '')}")
        for k, v in self.knobs.items():
            lines.append(f"- {k} (a knob of each bucket): {v}. {self.meanings.get(k, '')}")
        if self.fixed:
            lines.append(f"Every bucket also has {self.fixed} (not a lever).")
        return "\n".join(lines)
