"""The goal of a MAPF-FrozenLake-like spec (params `size`, `n_agents`, `wait_ratio`,
`hole_density`): the harder lakes of the engineer benchmark's in-distribution experiment (one and
two sizes bigger, hole ratio 0.3, wait ratio 0.5 and 0.75, at the task's agent count; held out: a
family of solved pools, `layout_seed`, that no stage trains on; validation: the same
configurations in the training pools' family, other episodes), with the configuration space the
engineer may use. A `GoalMaker` of `gymwright.curriculum.compare.GOALS`."""

from __future__ import annotations

from typing import Any

from gymwright.curriculum.goal import Goal
from gymwright.engineer.space import ConfigSpace

HELD_OUT_POOL = 200
"""solved layouts per held-out cell (each solved once, when first drawn)"""
HELD_OUT_FAMILY = 1
"""`layout_seed` of the held-out pools: another family than the pools trained and validated on
(seed 0, the default), so no judged instance was ever trained on"""
MAPF_LEVERS = ("size", "n_agents", "wait_ratio", "hole_density")


def mapf_goal(spec: str, loaded: Any, params: dict[str, Any]) -> Goal | None:
    """The goal for a spec with every one of `MAPF_LEVERS` at its task configuration `params`; None for another spec."""
    if not all(k in loaded.params for k in MAPF_LEVERS):
        return None
    config = {**{k: p.default for k, p in loaded.params.items()}, **params}
    top = int(loaded.params["size"].max or config["size"] + 2)
    size, agents = int(config["size"]), int(config["n_agents"])
    sizes = sorted({min(top, size + d) for d in (1, 2)})
    pool = min(HELD_OUT_POOL, int(config.get("layout_pool", HELD_OUT_POOL)))
    family = {"layout_seed": HELD_OUT_FAMILY} if "layout_seed" in loaded.params else {}
    validation = {f"{agents} ag {s}x{s} w {w:.2f}": {**params, "size": s, "wait_ratio": w, "hole_density": 0.3}
                  for s in sizes for w in (0.5, 0.75)}  # the training pools' family: other episodes
    held = {cell: {**p, "layout_pool": pool, **family} for cell, p in validation.items()}
    start = {**params, **{k: config[k] for k in MAPF_LEVERS}}
    fixed = {k: v for k, v in params.items() if k not in MAPF_LEVERS}
    space = ConfigSpace.for_spec(spec, {"size": sorted({max(3, size - 1), size, *sizes}), "n_agents": [agents]},
                                 {"wait_ratio": [0.0, 0.25, 0.5, 0.75], "hole_density": [0.1, 0.2, 0.3]}, fixed)
    target = (f"{agents} walkers on {' and '.join(f'{s}x{s}' for s in sizes)} lakes, hole ratio 0.3, wait ratio 0.5 "
              "and 0.75; judged on the valid rate (every walker on its goal, no hole, no conflict)")
    secondary = ("optimal",) if "optimal" in loaded.metrics else ()
    return Goal(held, target, start, space, validation, secondary)
