"""MAPF-FrozenLake and the grid module end to end: moves, conflicts, holes, goals, transfer."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from gymwright.compile import compile_spec
from gymwright.spec.loader import LIBRARY_DIR
from gymwright.verify.validate import validate

BASE = yaml.safe_load((LIBRARY_DIR / "mapf_frozenlake.yaml").read_text())
LEFT, DOWN, RIGHT, UP, WAIT = range(5)


def unsolved(spec: dict) -> dict:
    """The spec without `grid.solve`, and without the metrics that read its `optimal_cost`."""
    spec["grid"].pop("solve")
    for name in [n for n, m in spec["metrics"].items() if "optimal_cost" in m["expr"]]:
        del spec["metrics"][name]
    return spec


def fixed(rows: list[str], starts: list[list[int]], goals: list[list[int]]) -> dict:
    spec = copy.deepcopy(BASE)
    spec["grid"].update(map=rows, starts=starts, goals=goals)
    unsolved(spec)  # a fixed map is not drawn from the solver's pools
    spec["params"]["size"]["default"] = len(rows)
    spec["params"]["n_agents"]["default"] = len(starts)
    spec["probes"] = []
    return spec


def make(rows: list[str], starts: list[list[int]], goals: list[list[int]], **params):
    env = compile_spec(fixed(rows, starts, goals)).parallel_env(render_mode="ansi", **params)
    env.reset(seed=0)
    return env


def test_reaching_goals_ends_the_episode_with_the_team_bonus() -> None:
    env = make(["...", "...", "..."], [[0, 0], [2, 2]], [[0, 1], [2, 1]])
    _, rew, term, _, infos = env.step({"walker_0": RIGHT, "walker_1": LEFT})
    assert term == {"walker_0": True, "walker_1": True}
    assert rew["walker_0"] == pytest.approx(1.5)  # goal 1 + team 0.5, no time cost once home
    assert infos["walker_0"]["metrics"]["all_reached"] == 1.0
    assert infos["walker_0"]["reward_terms"] == {"goal": 1.0, "hole": 0.0, "conflict": 0.0, "time": 0.0, "team": 1.0}


def test_vertex_conflict_blocks_both_moves() -> None:
    env = make(["...", "...", "..."], [[0, 0], [0, 2]], [[2, 0], [2, 2]])
    _, rew, _, _, infos = env.step({"walker_0": RIGHT, "walker_1": LEFT})
    assert env.v.pos.tolist() == [[0, 0], [0, 2]]
    assert env.v.conflict.tolist() == [True, True]
    assert infos["walker_0"]["reward_terms"]["conflict"] == -1.0  # conflict_cost 1.0
    assert rew["walker_0"] == pytest.approx(-1.0 - 0.01)


def test_swap_conflict_blocks_both_moves() -> None:
    env = make(["...", "...", "..."], [[1, 0], [1, 1]], [[2, 2], [0, 0]])
    env.step({"walker_0": RIGHT, "walker_1": LEFT})
    assert env.v.pos.tolist() == [[1, 0], [1, 1]]
    assert env.v.conflict.all()


def test_following_is_allowed() -> None:
    env = make(["...", "...", "..."], [[1, 0], [1, 1]], [[0, 0], [0, 2]])
    env.step({"walker_0": RIGHT, "walker_1": RIGHT})
    assert env.v.pos.tolist() == [[1, 1], [1, 2]]
    assert not env.v.conflict.any()


def test_falling_into_a_hole_is_final_and_costs() -> None:
    env = make([".H.", "...", "..."], [[0, 0], [2, 2]], [[1, 0], [2, 1]])
    _, rew, term, _, infos = env.step({"walker_0": RIGHT, "walker_1": WAIT})
    assert env.v.fell.tolist() == [True, False]
    assert rew["walker_0"] == pytest.approx(-1.0)
    assert not term["walker_0"]
    assert infos["walker_0"]["action_mask"].tolist() == [0, 0, 0, 0, 1]  # only wait is left
    _, _, term, _, infos = env.step({"walker_0": WAIT, "walker_1": LEFT})
    assert term["walker_1"] and infos["walker_1"]["metrics"]["holes"] == 1.0
    assert infos["walker_1"]["metrics"]["all_reached"] == 0.0


def test_walls_of_the_grid_keep_agents_inside() -> None:
    env = make(["...", "...", "..."], [[0, 0], [2, 2]], [[1, 1], [1, 2]])
    env.step({"walker_0": UP, "walker_1": DOWN})
    assert env.v.pos.tolist() == [[0, 0], [2, 2]] and not env.v.moved.any()


def test_truncation_at_max_steps() -> None:
    env = make(["...", "...", "..."], [[0, 0], [2, 2]], [[1, 1], [1, 2]], max_steps=4)
    for _ in range(4):
        _, _, term, trunc, _ = env.step({"walker_0": WAIT, "walker_1": WAIT})
    assert trunc["walker_0"] and not term["walker_0"] and env.agents == []


def test_unsolvable_fixed_map_is_a_diagnostic() -> None:
    spec = fixed([".H.", "HH.", "..."], [[0, 0], [2, 2]], [[2, 0], [0, 2]])
    errors = [d for d in validate(spec) if d.severity.value == "error"]
    assert errors and errors[0].path == "grid.map"
    assert "not reachable" in errors[0].message


def test_egocentric_observations_transfer_across_sizes_and_agent_counts() -> None:
    dims = set()
    for size, n in [(4, 2), (6, 3), (8, 4), (10, 5), (3, 1)]:
        env = compile_spec("mapf_frozenlake", {"size": size, "n_agents": n}).parallel_env()
        obs, _ = env.reset(seed=size)
        dims |= {o.shape for o in obs.values()}
        assert len(obs) == n
    assert dims == {(59,)}  # 6 windows of 3x3 (holes, edges, agents, headings, parked), 2 + 1 + 2


@pytest.mark.slow  # over 5 s; the suite's time budget (CI runs it with -m slow)
def test_generated_layouts_keep_goals_reachable() -> None:
    from gymwright.mechanics.grid.runtime import bfs_distance

    env = compile_spec("mapf_frozenlake", {"size": 8, "n_agents": 4}).parallel_env(hole_density=0.6)
    for seed in range(20):
        env.reset(seed=seed)
        free = env.v.tiles != env.p.hole
        for i in range(4):
            assert bfs_distance(free, env.v.pos[i], env.v.goal[i]) >= 0


def test_slip_is_seeded_and_moves_sideways() -> None:
    env = compile_spec(fixed(["....."] * 5, [[2, 2]], [[0, 0]])).parallel_env(slip=0.5)
    ends = []
    for seed in range(40):
        env.reset(seed=seed)
        env.step({"walker_0": UP})
        ends.append(tuple(env.v.pos[0]))
    assert {(1, 2), (2, 1), (2, 3)} <= set(ends)
    env.reset(seed=5)
    env.step({"walker_0": UP})
    assert tuple(env.v.pos[0]) == ends[5]


def test_rgb_and_ansi_rendering() -> None:
    env = compile_spec("mapf_frozenlake").parallel_env(render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.shape == (4 * 16, 4 * 16, 3) and img.dtype == np.uint8
    text = make(["...", ".H.", "..."], [[0, 0], [2, 2]], [[0, 2], [2, 0]]).render()
    assert "0.a\n.H.\nb.1" in text


def test_layout_pool_draws_from_a_fixed_set_and_fresh_mode_does_not() -> None:
    plain = unsolved(copy.deepcopy(BASE))  # plain random layouts, which may be fresh
    plain["params"]["layout_pool"]["min"] = 0
    c = compile_spec(plain)
    pooled, fresh = c.parallel_env(layout_pool=3), c.parallel_env(layout_pool=0)
    seen_pooled, seen_fresh = set(), set()
    for seed in range(30):
        for env, seen in ((pooled, seen_pooled), (fresh, seen_fresh)):
            env.reset(seed=seed)
            seen.add(env.v.tiles.tobytes() + env.v.pos.tobytes() + env.v.goal.tobytes())
    assert len(seen_pooled) <= 3 and len(seen_fresh) > 10
    other = compile_spec(plain).parallel_env(layout_pool=3)
    other.reset(seed=5)
    pooled.reset(seed=5)
    assert np.array_equal(other.v.tiles, pooled.v.tiles), "a pool is the same for every env of a config"


def test_nearby_walkers_heading_and_parked_are_observed() -> None:
    # walker 0 at (1, 1) heading down-right; walker 1 at (0, 1) already on its goal (parked)
    env = make(["...", "...", "..."], [[1, 1], [0, 0]], [[2, 2], [0, 1]])
    obs, *_ = env.step({"walker_0": WAIT, "walker_1": RIGHT})
    o = obs["walker_0"]
    rows, cols, parked = o[27:36].reshape(3, 3), o[36:45].reshape(3, 3), o[45:54].reshape(3, 3)
    assert rows[1, 1] == 1 and cols[1, 1] == 1  # itself, at the centre: its goal is down and right
    assert parked[0, 1] == 1 and rows[0, 1] == 0 and cols[0, 1] == 0  # the parked one, above it
    assert parked.sum() == 1


def test_agents_view_of_needs_one_value_per_agent() -> None:
    spec = copy.deepcopy(BASE)
    spec["observe"]["walker"].append({"name": "bad", "expr": "agents_view_of(pos[me], 1, goal)"})
    errors = [d for d in validate(spec) if d.severity.value == "error"]
    assert errors and "one value per agent" in errors[0].message
    assert "observe.walker" in str(errors[0].path)
