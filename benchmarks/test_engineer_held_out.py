"""`engineer.py`'s held-out cells are independent instances: every cell is judged on its own family
of solved pools, so the 4 in_distribution cells are 4 x 250 = 1,000 distinct layouts (with one
family for every cell, the two wait ratios of a size played the same layout in about 74% of
episodes), and the demo's comparison judges the same cells on the same pools.

Run with `pytest benchmarks/test_engineer_held_out.py` (not part of the main suite). The first run
solves the pools with CBS (about 15 s on one core); they are cached on disk
(`gymwright.mapf.cache.cache_dir`) and load in milliseconds after.
"""

from __future__ import annotations

import engineer
import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.curriculum.compare import goal_for
from gymwright.curriculum.mapf_demos import layout_key
from gymwright.mapf.bake import pool_of


def layouts(params: dict) -> list[bytes]:
    """Every layout (holes, starts, goals) of the pool an env of `params` draws from, found as the
    env finds it (`grid.solve`: config, `layout_pool` slots, `layout_seed` family)."""
    env = compile_spec(engineer.SPEC, params).parallel_env()
    holes, starts, goals, _ = pool_of(env.unwrapped).whole()
    return [layout_key(*x) for x in zip(holes, starts, goals, strict=True)]


def played_cells(monkeypatch: pytest.MonkeyPatch, name: str) -> list[dict]:
    """The params `engineer.held_out` plays each held-out cell of experiment `name` with."""
    played: list[dict] = []

    class Result:
        episode_metrics = {k: np.zeros(2) for k in ("valid", "optimal", "holes", "conflicts")}

    monkeypatch.setattr("gymwright.train.load_policy", lambda _: None)
    monkeypatch.setattr("gymwright.train.play_episodes", lambda spec, params, *a, **k: played.append(params) or Result())
    exp = engineer.EXPERIMENTS[name]
    engineer.held_out(engineer.Run(name, "fixed", 0), exp, "unused", 2)
    return played


def test_the_in_distribution_cells_are_a_thousand_distinct_layouts(monkeypatch: pytest.MonkeyPatch) -> None:
    cells = played_cells(monkeypatch, "in_distribution")
    assert len(cells) == 4 and all(p["layout_pool"] == 250 for p in cells)
    drawn = [layouts(p) for p in cells]
    every = [key for d in drawn for key in d]
    assert len(every) == 4 * 250
    assert len(set(every)) == 4 * 250, "a layout appears in two cells (or twice in one)"
    assert engineer.held_out_layouts() == set(every), "what --imitate keeps out of its demonstrations: the judged pools"


def test_the_demo_judges_the_in_distribution_cells_on_the_same_pools() -> None:
    """mapf_goal's cells for the in_distribution task (3 walkers, from 4x4) are the benchmark's:
    the same configurations, each on the same family, so the two report on the same instances."""
    exp = engineer.EXPERIMENTS["in_distribution"]
    goal = goal_for(engineer.SPEC, {**exp.start, "max_steps": 40})
    pools = engineer.HELD_OUT_POOL["in_distribution"]
    assert list(goal.held_out) == list(exp.held_out)
    for cell, params in goal.held_out.items():
        assert {k: params[k] for k in ("layout_pool", "layout_seed")} == pools[cell]
    drawn = [layouts(p) for p in goal.held_out.values()]
    assert len({key for d in drawn for key in d}) == 4 * 250
