"""The goal of a MAPF-FrozenLake-like spec (params `size`, `n_agents`, `wait_ratio`,
`hole_density`): the harder lakes of the engineer benchmark's in-distribution experiment (one and
two sizes bigger, hole ratio 0.3, wait ratio 0.5 and 0.75, at the task's agent count; held out:
each cell its own family of solved pools, `layout_seed`, that no stage trains on; validation: the
same configurations in the training pools' family, other episodes), with the configuration space
the engineer may use. A `GoalMaker` of `gymwright.curriculum.compare.GOALS`.

Why a family per held-out cell: a lazy pool's slot k is drawn from the stream (layout_seed, k) and
needs a wait exactly when k < round(wait_ratio * slots), so two pools of one family and one size
that differ only in wait ratio hold the same instance in most slots (with one family for all
cells, the 0.5 and 0.75 cells of a size played the same layout in about 74% of episodes, and the
judged "four cells" were barely more than two). Families `HELD_OUT_FAMILY + i` keep every cell's
instances independent of the others and of the pools trained and validated on (seed 0)."""

from __future__ import annotations

from typing import Any

from gymwright.curriculum.goal import Goal
from gymwright.engineer.space import ConfigSpace

HELD_OUT_POOL = 250
"""solved layouts per held-out cell (each solved once, when first drawn): 4 cells x 250 = 1,000
distinct judged layouts"""
HELD_OUT_FAMILY = 1
"""`layout_seed` of the first held-out cell's pool; cell i's is `HELD_OUT_FAMILY + i` (never 0: the
pools trained and validated on are seed 0, the default), so no judged instance was ever trained
on and no two cells share one"""
MAPF_LEVERS = ("size", "n_agents", "wait_ratio", "hole_density")


def held_out_pools(cells: list[str], slots: int = HELD_OUT_POOL, first: int = HELD_OUT_FAMILY) -> dict[str, dict[str, int]]:
    """The pool each held-out cell is judged on: `slots` solved layouts from its own family, cell i
    `layout_seed = first + i`; `first` must be above 0 (seed 0 is the training pools' family)."""
    if first < 1:
        raise ValueError(f"held-out families start at layout_seed {first}, but seed 0 is the pools trained and "
                         "validated on: start at 1 or above")
    return {cell: {"layout_pool": slots, "layout_seed": first + i} for i, cell in enumerate(cells)}


def mapf_goal(spec: str, loaded: Any, params: dict[str, Any]) -> Goal | None:
    """The goal for a spec with every one of `MAPF_LEVERS` at its task configuration `params`; None for another spec."""
    if not all(k in loaded.params for k in MAPF_LEVERS):
        return None
    config = {**{k: p.default for k, p in loaded.params.items()}, **params}
    top = int(loaded.params["size"].max or config["size"] + 2)
    size, agents = int(config["size"]), int(config["n_agents"])
    sizes = sorted({min(top, size + d) for d in (1, 2)})
    slots = min(HELD_OUT_POOL, int(config.get("layout_pool", HELD_OUT_POOL)))
    validation = {f"{agents} ag {s}x{s} w {w:.2f}": {**params, "size": s, "wait_ratio": w, "hole_density": 0.3}
                  for s in sizes for w in (0.5, 0.75)}  # the training pools' family: other episodes
    pools = held_out_pools(list(validation), slots)
    if "layout_seed" not in loaded.params:  # a spec without families: its one pool per config
        pools = {cell: {"layout_pool": slots} for cell in validation}
    held = {cell: {**p, **pools[cell]} for cell, p in validation.items()}
    start = {**params, **{k: config[k] for k in MAPF_LEVERS}}
    fixed = {k: v for k, v in params.items() if k not in MAPF_LEVERS}
    space = ConfigSpace.for_spec(spec, {"size": sorted({max(3, size - 1), size, *sizes}), "n_agents": [agents]},
                                 {"wait_ratio": [0.0, 0.25, 0.5, 0.75], "hole_density": [0.1, 0.2, 0.3]}, fixed)
    target = (f"{agents} walkers on {' and '.join(f'{s}x{s}' for s in sizes)} lakes, hole ratio 0.3, wait ratio 0.5 "
              "and 0.75; judged on the valid rate (every walker on its goal, no hole, no conflict)")
    secondary = ("optimal",) if "optimal" in loaded.metrics else ()
    return Goal(held, target, start, space, validation, secondary)
