"""The MAPF goal's held-out cells are independent instances: each cell draws from its own family
of solved pools (`layout_seed`), none of them the training family (0), so no layout is judged
twice (in two cells)."""

from __future__ import annotations

import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.curriculum.compare import goal_for
from gymwright.curriculum.mapf_goal import HELD_OUT_FAMILY, HELD_OUT_POOL, held_out_pools
from gymwright.mapf.bake import pool_of

TASK = {"size": 4, "n_agents": 3, "max_steps": 12, "view_radius": 1}


def layouts(params: dict) -> list[bytes]:
    """Every layout (holes, starts, goals) of the pool an env of `params` draws from, as the env
    finds its pool (`grid.solve`: config, `layout_pool` slots, `layout_seed` family)."""
    env = compile_spec("mapf_frozenlake", params).parallel_env()
    holes, starts, goals, _ = pool_of(env.unwrapped).whole()
    return [np.asarray(h).tobytes() + np.asarray(s).tobytes() + np.asarray(g).tobytes()
            for h, s, g in zip(holes, starts, goals, strict=True)]


def test_every_held_out_cell_has_its_own_family_never_the_training_one() -> None:
    goal = goal_for("mapf_frozenlake", TASK)
    seeds = [c["layout_seed"] for c in goal.held_out.values()]
    assert seeds == [HELD_OUT_FAMILY + i for i in range(4)] and 0 not in seeds
    assert all(c["layout_pool"] == HELD_OUT_POOL == 250 for c in goal.held_out.values())
    assert goal.validation is not None
    assert all("layout_seed" not in c for c in goal.validation.values()), "validation: the training family (0)"
    with pytest.raises(ValueError, match="seed 0 is the pools trained and validated on"):
        held_out_pools(["a"], first=0)


def test_no_layout_is_judged_in_two_held_out_cells() -> None:
    """Small pools (the task's `layout_pool` caps them), the same seeding: with one family for every
    cell, the 0.5 and 0.75 wait cells of a size shared 15 of their 20 slots (slot k is one stream,
    wait-needing below round(wait ratio x slots): 10 and 15)."""
    slots = 20
    goal = goal_for("mapf_frozenlake", {**TASK, "layout_pool": slots})
    drawn = {cell: layouts(params) for cell, params in goal.held_out.items()}
    assert all(len(d) == slots for d in drawn.values())
    every = [key for d in drawn.values() for key in d]
    assert len(set(every)) == len(goal.held_out) * slots, "a layout appears in two cells (or twice in one)"
