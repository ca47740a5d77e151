"""`gymwright.curriculum.mapf_demos` and the BC-init variants of `engineer.py --bounds`: CBS plans become legal,
conflict-free demonstrations that bring every walker home, and a clone of them warm-starts PPO.

Run with `pytest benchmarks/test_mapf_demos.py` (not part of the main suite).
"""

from __future__ import annotations

from pathlib import Path

import engineer
import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.curriculum import mapf_demos
from gymwright.mapf.cbs import find_conflicts, solve
from gymwright.train import TrainConfig, load_policy, train
from gymwright.train.imitation import clone

# a 3x3 lake, holes at (0, 1) and (2, 1): the middle row is the only way between the columns;
# walker 0 goes (1, 0) -> (0, 2) through (1, 2); walker 1 goes (2, 2) -> (1, 2), on walker 0's only
# route: parked there at once it would cut walker 0 off, so the optimal plan has it wait
HOLES = np.array([[0, 1, 0], [0, 0, 0], [0, 1, 0]], dtype=bool)
STARTS, GOALS = np.array([[1, 0], [2, 2]]), np.array([[0, 2], [1, 2]])
NAMES = mapf_demos.action_names(engineer.SPEC)
STEP = {"left": (0, -1), "down": (1, 0), "right": (0, 1), "up": (-1, 0), "wait": (0, 0)}
SMALL = {**engineer.TRAIN_FIXED, "size": 4, "n_agents": 2, "hole_density": 0.2, "wait_ratio": 0.5, "layout_pool": 50}


def test_a_hand_built_plan_becomes_actions_that_walk_it_without_conflict() -> None:
    plan = solve(HOLES, STARTS, GOALS)
    assert find_conflicts(plan.paths) == []
    positions = plan.positions()
    actions = mapf_demos.plan_actions(positions, NAMES)
    walked = [STARTS.copy()]
    for joint in actions:
        walked.append(walked[-1] + np.array([STEP[NAMES[a]] for a in joint]))
    assert np.array_equal(np.array(walked), positions)
    assert np.array_equal(walked[-1], GOALS)
    assert plan.needs_wait and [NAMES[a] for a in actions[:2, 1]] == ["wait", "wait"]  # walker 0 passes first


def test_replayed_plans_bring_every_walker_home_through_the_real_env() -> None:
    demos = mapf_demos.make_demos(engineer.SPEC, SMALL, 20, seed=11)  # raises unless every replay is valid
    assert demos.episodes == 20 and demos.env_steps >= 20
    assert demos.masks[np.arange(len(demos.actions)), demos.actions].all()
    assert (demos.masks.sum(1) > 1).all()  # only walkers with a choice are recorded
    env = compile_spec(engineer.SPEC, SMALL).parallel_env()
    blocked = np.asarray(compile_spec(engineer.SPEC, SMALL).module.GRID_BLOCKED, dtype=bool)
    homes = [mapf_demos.demo_episode(env, blocked, NAMES, seed, [])[1] for seed in range(11, 16)]
    assert all(homes) and bool(np.asarray(env.v.reached).all())


def test_the_clone_reproduces_the_demonstrations_and_the_variant_builds(tmp_path) -> None:
    demos = mapf_demos.make_demos(engineer.SPEC, SMALL, 60, seed=3)
    res = clone(engineer.SPEC, SMALL, demos, tmp_path / "bc.pt", epochs=20, batch=64)
    assert res.losses[-1] < res.losses[0]
    acted = load_policy(res.checkpoint).act(demos.obs[:, None], demos.masks[:, None], deterministic=True)[:, 0]
    assert (acted == demos.actions).mean() > 0.7
    names = engineer.pick_variants("fixed + bc,oracle + bc")
    assert names == ("fixed", "fixed + BC init (CBS demos)", "oracle + BC init (CBS demos of the judged cells)")
    spec, params, steps, extra = engineer.bound_setup(names[2], 1000)
    assert isinstance(params, list) and extra == {"imitate": engineer.DEMO_EPISODES} and steps == 1000
    bc = engineer.imitate(engineer.SPEC, SMALL, 8, 0, tmp_path)
    assert bc["demo_env_steps"] > 0 and bc["samples"] > 0
    run = train(TrainConfig(spec=engineer.SPEC, params=SMALL, total_steps=256, num_envs=16, init_from=bc["checkpoint"],
                            out=tmp_path / "ppo"))
    assert run.env_steps == 256


def test_the_oracle_with_bc_is_paired_with_fixed_and_with_the_fixed_learner_with_bc() -> None:
    names = engineer.pick_variants("fixed + bc,oracle + bc")
    rows = [{"variant": v, "seed": s, "valid": 0.4 + 0.1 * k + 0.01 * s * k, "optimal": 0.1}
            for k, v in enumerate(names) for s in (0, 1)]
    oracle = engineer.paired(rows, names[2], ["fixed", engineer.PAIRED_WITH[names[2]]])
    assert oracle["minus_fixed"][0] == pytest.approx(0.21) and oracle["minus_fixed_bc"][0] == pytest.approx(0.105)
    assert oracle["optimal_minus_fixed_bc"] == (0.0, 0.0)


def test_an_excluded_layout_is_passed_over() -> None:
    compiled = compile_spec(engineer.SPEC, SMALL)
    env, blocked = compiled.parallel_env(), np.asarray(compiled.module.GRID_BLOCKED, dtype=bool)
    env.reset(seed=7)
    key = mapf_demos.layout_key(*mapf_demos.layout(env, blocked))
    samples: list = []
    assert mapf_demos.demo_episode(env, blocked, NAMES, 7, samples, frozenset({key})) == (0, False) and samples == []
    kept = mapf_demos.make_demos(engineer.SPEC, SMALL, 1, seed=7, exclude=frozenset({key}))
    assert kept.episodes == 1
    obs, _ = env.reset(seed=8)
    assert np.array_equal(kept.obs[0], obs["walker_0"])  # the next seed's layout was demonstrated instead
    assert len(engineer.held_out_layouts()) > 0


def test_cbs_plans_demonstrate_a_mixture_by_share_and_the_imitating_variants_keep_their_demos(tmp_path) -> None:
    from gymwright.curriculum.demonstrations import demonstrate
    from gymwright.engineer.mixture import Bucket, Mixture
    from gymwright.train.imitation import Demos

    options = engineer.imitation_options({"imitate": 9, "imitation_coef": 0.1})
    assert options == {"demonstrator": mapf_demos.make_demos, "demo_episodes": 9, "imitation_coef": 0.1}
    assert engineer.imitation_options({"imitate": 0}) == {}
    mix = Mixture([Bucket(SMALL, 2 / 3, "a"), Bucket({**SMALL, "size": 4}, 1 / 3, "b")])
    demos = demonstrate(engineer.SPEC, mix, options["demonstrator"], 9, 5, tmp_path / "d.npz")
    assert demos.episodes == 9 and demos.env_steps > 0
    assert len(Demos.load(tmp_path / "d.npz").actions) == len(demos.actions)
    (name,) = [v for v in engineer.BOUND_VARIANTS if v.startswith("oracle + BC init and imitation loss 0.1")]
    assert engineer.bound_setup(name, 1000)[3] == {"imitate": engineer.DEMO_EPISODES, "keep": 0.1}
    assert engineer.PAIRED_WITH[name] == "fixed + BC init and imitation loss 0.1"
    assert Path(engineer.imitate(engineer.SPEC, SMALL, 4, 0, tmp_path)["demos"]).exists()


def test_the_expert_waits_before_parking_on_another_s_only_way_and_gives_up_once_it_parked() -> None:
    # hand-worked on the 3x3 lake above: from the start walker 0 goes right and walker 1 waits for it
    plan = mapf_demos.expert_plan(HOLES, STARTS, GOALS, np.array([False, False]))
    assert plan is not None
    assert [mapf_demos.MOVES[tuple(d)] for d in (plan[1] - plan[0]).tolist()] == ["right", "wait"]
    # walker 1 already parked on (1, 2): walker 0 is cut off, no plan is left, no label
    assert mapf_demos.expert_plan(HOLES, np.array([[1, 0], [1, 2]]), GOALS, np.array([False, True])) is None
    # walker 0 parked on its goal: walker 1 walks its shortest way, one step up, and walker 0 stays
    plan = mapf_demos.expert_plan(HOLES, np.array([[0, 2], [2, 2]]), GOALS, np.array([True, False]))
    assert plan is not None and plan.tolist() == [[[0, 2], [2, 2]], [[0, 2], [1, 2]]]
    # nobody left to move: nothing to label
    assert mapf_demos.expert_plan(HOLES, GOALS, GOALS, np.array([True, True])) is None


def test_relabelled_play_is_the_policy_s_own_with_the_expert_s_labels(tmp_path: Path) -> None:
    bc = engineer.imitate(engineer.SPEC, SMALL, 8, 0, tmp_path)  # a weak clone: it strays from the plans
    demos = mapf_demos.relabel_demos(engineer.SPEC, SMALL, 12, 40, bc["checkpoint"])
    assert demos.episodes == 12 and demos.env_steps >= 12
    assert demos.masks[np.arange(len(demos.actions)), demos.actions].all() and (demos.masks.sum(1) > 1).all()
    # the states are the policy's own: some were never visited by the expert's replays of the same resets
    expert = mapf_demos.make_demos(engineer.SPEC, SMALL, 12, seed=40)
    seen = {row.tobytes() for row in expert.obs}
    assert any(row.tobytes() not in seen for row in demos.obs)
    again = mapf_demos.relabel_demos(engineer.SPEC, SMALL, 12, 40, bc["checkpoint"])
    assert np.array_equal(again.obs, demos.obs) and np.array_equal(again.actions, demos.actions)  # seeded


def test_a_slippery_or_short_lake_gives_demonstrations_up_to_where_the_replay_leaves_the_plan() -> None:
    """Slip moves walkers off the plan and a short step limit cuts it: both are levels a curriculum over the
    declared ranges trains on, and the imitation lever demonstrates them without stopping the run."""
    slippery = {"size": 5, "n_agents": 3, "hole_density": 0.2, "slip": 0.5, "view_radius": 2}
    demos = mapf_demos.make_demos("mapf_frozenlake", slippery, 30, seed=0)
    assert demos.episodes == 30 and 0 < demos.env_steps and len(demos.actions) > 0
    short = {"size": 6, "n_agents": 3, "hole_density": 0.2, "max_steps": 4, "view_radius": 2}
    demos = mapf_demos.make_demos("mapf_frozenlake", short, 30, seed=0)
    assert demos.env_steps <= 30 * 4 and len(demos.actions) > 0
