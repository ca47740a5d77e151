"""`engineer.py --bounds`: the learner variants change what benchmarks/README.md says they change.

Run with `pytest benchmarks/test_engineer_bounds.py` (not part of the main suite).
"""

from __future__ import annotations

import engineer
import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.spec.loader import read_data

MOVES = {0: (0, -1), 1: (1, 0), 2: (0, 1), 3: (-1, 0)}  # left, down, right, up, as the spec lists them
WAIT = 4


def _free_move(pos: np.ndarray, other: np.ndarray, size: int) -> int:
    for action, (dr, dc) in MOVES.items():
        r, c = int(pos[0]) + dr, int(pos[1]) + dc
        if 0 <= r < size and 0 <= c < size and (r, c) != tuple(int(x) for x in other):
            return action
    raise AssertionError("no free move")


def test_the_memory_input_counts_the_steps_a_walker_has_not_moved_capped_at_4() -> None:
    env = compile_spec(engineer.memory_spec(), {"hole_density": 0.0, "n_agents": 2, "size": 4}).parallel_env()
    obs, _ = env.reset(seed=3)
    assert obs["walker_0"][-1] == 0.0 and obs["walker_1"][-1] == 0.0
    for _ in range(2):
        obs, *_ = env.step({"walker_0": WAIT, "walker_1": WAIT})
    assert obs["walker_0"][-1] == 0.5 and obs["walker_1"][-1] == 0.5
    move = _free_move(env.v.pos[0], env.v.pos[1], 4)
    before = env.v.pos[0].copy()
    obs, *_ = env.step({"walker_0": move, "walker_1": WAIT})
    assert not np.array_equal(env.v.pos[0], before)
    assert obs["walker_0"][-1] == 0.0 and obs["walker_1"][-1] == 0.75
    for _ in range(3):
        obs, *_ = env.step({"walker_0": WAIT, "walker_1": WAIT})
    assert obs["walker_0"][-1] == 0.75 and obs["walker_1"][-1] == 1.0  # capped at 4 steps


def test_the_team_variant_weights_everybody_home_2_instead_of_0_5() -> None:
    def team(data: dict) -> float:
        return next(t["weight"] for t in data["rewards"]["walker"] if t["name"] == "team")

    assert team(read_data(engineer.SPEC)[0]) == 0.5
    assert team(engineer.team_spec(2.0)) == 2.0


def test_variants_are_picked_by_a_word_and_fixed_always_comes_first() -> None:
    assert engineer.pick_variants("mappo,memory") == ("fixed", "centralized critic (mappo)",
                                                      "memory input (steps not moved)")
    assert engineer.pick_variants("oracle with") == ("fixed", "oracle with the memory input")
    assert engineer.pick_variants(None) == engineer.BOUND_VARIANTS
    with pytest.raises(SystemExit, match="no variant 'lstm'.*the variants: fixed"):
        engineer.pick_variants("lstm")


def _in_way(pos: np.ndarray, goal: np.ndarray, me: int) -> bool:
    """My goal within the rectangle spanned by another walker's position and goal."""
    g = goal[me]
    return any(min(pos[j, 0], goal[j, 0]) <= g[0] <= max(pos[j, 0], goal[j, 0])
               and min(pos[j, 1], goal[j, 1]) <= g[1] <= max(pos[j, 1], goal[j, 1])
               for j in range(len(pos)) if j != me)


def test_the_goal_in_the_way_input_says_whether_my_goal_is_on_a_shortest_route_of_another() -> None:
    env = compile_spec(engineer.goal_in_way_spec(), {"hole_density": 0.0, "n_agents": 3, "size": 5}).parallel_env()
    seen = set()
    for seed in range(12):
        obs, _ = env.reset(seed=seed)
        pos, goal = np.asarray(env.v.pos), np.asarray(env.v.goal)
        for i, agent in enumerate(env.agents):
            want = _in_way(pos, goal, i)
            assert obs[agent][-1] == float(want), (seed, agent, pos.tolist(), goal.tolist())
            seen.add(want)
    assert seen == {True, False}
    obs, _ = env.reset(seed=3)  # by hand: goals (3, 0), (4, 0), (4, 4) from (2, 1), (1, 0), (2, 3)
    assert np.asarray(env.v.goal).tolist() == [[3, 0], [4, 0], [4, 4]]
    assert [obs[a][-1] for a in env.agents] == [1.0, 0.0, 0.0]  # (3, 0) is on walker 1's way down column 0


def test_the_parking_cost_charges_a_walker_that_arrives_on_anothers_way_and_only_then() -> None:
    params = {"hole_density": 0.0, "n_agents": 2, "size": 3}
    plain = compile_spec(engineer.goal_in_way_spec(), params).parallel_env()
    charged = compile_spec(engineer.goal_in_way_spec(0.5), params).parallel_env()
    cases = set()
    for seed in range(60):
        plain.reset(seed=seed)
        pos, goal = np.asarray(plain.v.pos), np.asarray(plain.v.goal)
        step = goal[0] - pos[0]
        if abs(step).sum() != 1 or (goal[0] == pos[1]).all():  # walker 0 one move from its goal
            continue
        move = next(a for a, d in MOVES.items() if d == tuple(int(x) for x in step))
        in_way = _in_way(pos, goal, 0)
        charged.reset(seed=seed)
        _, r_plain, *_ = plain.step({"walker_0": move, "walker_1": WAIT})
        _, r_charged, *_ = charged.step({"walker_0": move, "walker_1": WAIT})
        assert plain.v.reached[0] and charged.v.reached[0]
        assert r_charged["walker_0"] - r_plain["walker_0"] == pytest.approx(-0.5 if in_way else 0.0), seed
        assert r_charged["walker_1"] == r_plain["walker_1"]
        cases.add(in_way)
    assert cases == {True, False}


def test_the_learner_v2_variants_train_with_v2s_rate_and_copies_and_pair_with_each_other(
        monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """The frozen learner is v3 (lr 1e-3, 512 copies); the v2 variants undo exactly those two, and
    the v2 oracle is paired with the v2 fixed run as well as with `fixed`."""
    assert engineer.LEARNER["lr"] == 1e-3 and engineer.NUM_ENVS == 512
    fixed_v2, oracle_v2 = engineer.pick_variants("fixed with learner v2,oracle with learner v2")[1:]
    assert engineer.bound_setup(fixed_v2, 1000)[3] == {"lr": 3e-4, "num_envs": 256}
    assert engineer.bound_setup(oracle_v2, 1000)[1] == engineer.bound_setup("oracle: trained on the judged cells", 1000)[1]
    seen = []

    class Stop(Exception):
        pass

    def record(cfg):  # the config the variant trains with; no training
        seen.append(cfg)
        raise Stop

    monkeypatch.setattr("gymwright.train.train", record)
    with pytest.raises(Stop):
        engineer.bound_one(fixed_v2, 0, {"steps": 1000, "out": str(tmp_path)})
    assert seen[0].lr == 3e-4 and seen[0].num_envs == 256 and seen[0].hidden == (64, 64)
    rows = [{"variant": v, "seed": s, "valid": x, "optimal": 0.0} for s in range(2)
            for v, x in (("fixed", 0.4), (fixed_v2, 0.38 + s / 100), (oracle_v2, 0.45))]
    summary = engineer.paired(rows, oracle_v2, ["fixed", engineer.PAIRED_WITH[oracle_v2]])
    assert summary["minus_fixed_v2"][0] == pytest.approx(0.065)


def test_the_budget_and_distribution_variants_train_what_their_names_say() -> None:
    """`fixed 4x`, `oracle 4x`, `dr` and `dr 4x`: the start configuration, the judged cells or every
    level of the space, for the budget or four times it."""
    exp = engineer.EXPERIMENTS["in_distribution"]
    levels = exp.space().levels()
    judged = engineer.bound_setup("oracle: trained on the judged cells", 1000)[1]
    picked = engineer.pick_variants("fixed 4x,oracle 4x,dr,dr 4x")
    assert picked[0] == "fixed" and len(picked) == 5
    setups = {name: engineer.bound_setup(name, 1000) for name in picked}
    assert [s[2] for s in setups.values()] == [1000, 4000, 4000, 1000, 4000]
    assert setups[picked[1]][1] == exp.start
    assert setups[picked[2]][1] == judged and len(judged) == len(exp.held_out)
    assert setups[picked[3]][1] == setups[picked[4]][1] == levels and len(levels) == 48


def test_no_held_out_instance_comes_from_a_pool_any_method_trains_or_validates_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The held-out cells are judged on pools of other families (`layout_seed`, one a cell) than the
    levels of the space and the validation cells (seed 0: the default), in both experiments and in
    the bounds; every pool the experiments fill is one of these."""
    seeds = {name: {cell: p["layout_seed"] for cell, p in pools.items()} for name, pools in engineer.HELD_OUT_POOL.items()}
    every = [s for name, by_cell in seeds.items() for s in by_cell.values()
             if not engineer.EXPERIMENTS[name].judged_like]  # declared_ranges is judged on in_distribution's pools
    assert 0 not in every and len(set(every)) == len(every), "a family of its own for every cell"
    assert engineer.HELD_OUT_POOL["declared_ranges"] == engineer.HELD_OUT_POOL["in_distribution"]
    assert all(p["layout_pool"] == 250 for pools in engineer.HELD_OUT_POOL.values() for p in pools.values())
    judged: list[dict] = []

    class Result:
        episode_metrics = {k: np.zeros(2) for k in ("valid", "optimal", "holes", "conflicts")}

    monkeypatch.setattr("gymwright.train.load_policy", lambda _: None)
    monkeypatch.setattr("gymwright.train.play_episodes", lambda spec, params, *a, **k: judged.append(params) or Result())
    for name, exp in engineer.EXPERIMENTS.items():
        assert all(p.get("layout_seed", 0) == 0 for p in exp.space().levels())
        assert all(p.get("layout_seed", 0) == 0 and p["layout_pool"] == 1000 for p in engineer.validation_cells(exp).values())
        judged.clear()
        engineer.held_out(engineer.Run(name, "fixed", 0), exp, "unused", 2)
        assert [p["layout_seed"] for p in judged] == list(seeds[name].values())
        assert all(p["layout_pool"] == 250 for p in judged)
        keys = engineer.pool_keys([name])
        assert {k[-1] for k in keys} == {0, *seeds[name].values()}
        assert all(k[-2] == 250 for k in keys if k[-1] != 0)
        assert all(engineer.held_out_pool(p) == engineer.HELD_OUT_POOL[name][cell] for cell, p in exp.held_out.items())
    cells = []
    monkeypatch.setattr("gymwright.engineer.measure_validation",
                        lambda spec, c, *a, **k: cells.append(c) or type("V", (), {"mean": 0.0, "ci95": 0.0,
                                                                                      "secondary": {"optimal": 0.0}})())
    engineer._judged(engineer.SPEC, None, {"validation_episodes": 1})
    assert {cell: p["layout_seed"] for cell, p in cells[0].items()} == seeds["in_distribution"]
