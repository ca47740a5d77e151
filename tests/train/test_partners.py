"""Partners (`gymwright.train.partners`, the `partners` designer lever): which copies and agents a
partner plays, that the planner partner follows the optimal joint plan, and that its steps reach
the env but stay out of the losses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gymwright.errors import GymwrightError
from gymwright.spec.loader import read_data
from gymwright.train import TrainConfig, ppo
from gymwright.train.partners import PARTNER, Partners
from gymwright.train.policy import roles_of
from gymwright.train.rollout import make_env

MAPF = read_data("mapf_frozenlake")[0]


def test_the_planner_partner_alone_walks_the_optimal_plan_of_every_layout() -> None:
    """With one walker per copy and every copy partnered, the partner is the whole team: each
    episode it plays ends on its goal in the optimal number of steps."""
    params = [{"size": 5, "n_agents": 1, "view_radius": 2, "hole_density": 0.3}]
    benv = make_env(MAPF, params, 16)
    benv.reset(seed=3)
    partners = Partners(benv, 1.0, "planner", MAPF, roles_of(benv), seed=0)
    assert partners.slots.all()
    v = benv.v
    start_goal = [(tuple(v.pos[b, 0]), tuple(v.goal[b, 0]), int(v.optimal_cost[b])) for b in range(16)]
    taken = np.zeros(16, dtype=int)
    live = np.ones(16, dtype=bool)
    while live.any():
        acts = partners.act(benv.obs_buf, benv.masks)
        _, _, term, trunc, _ = benv.step(acts)
        taken[live] += 1
        assert not (np.reshape(trunc, (16, -1)).any(1) & live).any()
        live &= ~np.reshape(term, (16, -1)).all(1)
    assert [int(t) for t in taken] == [c for _, _, c in start_goal]  # each in its optimal number of steps


def test_partners_play_the_last_walker_of_a_share_of_the_copies_and_their_steps_leave_the_losses(
        tmp_path: Path) -> None:
    cfg = TrainConfig(spec="mapf_frozenlake", params=[{"size": 4, "n_agents": 3, "view_radius": 2},
                                                      {"size": 5, "n_agents": 2, "view_radius": 2}],
                      num_envs=16, total_steps=16 * 8 * 2, rollout_len=8, out=str(tmp_path / "run"), partners=0.25, seed=1)
    run = ppo._setup(cfg)
    assert run.partners is not None
    slots = run.partners.slots
    assert slots.any(1).sum() == 4 and (slots.sum(1) <= 1).all()
    counts = np.array([3 if p["n_agents"] == 3 else 2 for p in (cfg.param_list()[c] for c in run.copies.of_copy)])
    rows = np.nonzero(slots.any(1))[0]
    assert (np.nonzero(slots[rows])[1] == counts[rows] - 1).all()  # the last walker of its own copy
    sent: list[np.ndarray] = []
    step = run.benv.step
    run.benv.step = lambda a: (sent.append(np.array(a)), step(a))[1]  # type: ignore[method-assign]
    want = [run.partners.act(run.benv.obs_buf, run.benv.masks)]
    ppo._rollout(run, 1)
    assert (sent[0][slots] == want[0][slots]).all()  # the env got the partner's actions
    marked = (run.buf.actions == PARTNER).cpu().numpy()
    assert (marked == slots[None]).all()  # and the rollout marks every partner step, and nothing else
    # an update runs on a rollout with partner steps (the losses mask PARTNER; not checked value by value here)
    adv, ret = ppo._advantages(run)
    stats = ppo.ppo_update(run.model, run.optimizer, run.norms, run.trained, run.buf, adv, ret, cfg, run.imitation)
    assert np.isfinite(np.mean(stats["value_loss"]))


def test_a_share_out_of_range_or_a_planner_for_a_spec_without_solved_layouts_is_refused() -> None:
    benv = make_env(MAPF, [{"size": 4, "n_agents": 2}], 8)
    benv.reset(seed=0)
    with pytest.raises(GymwrightError, match="a share of the copies"):
        Partners(benv, 1.5, "planner", MAPF, roles_of(benv), seed=0)
    grid = MAPF | {"name": "no_solver", "grid": {**MAPF["grid"]}}
    grid["grid"].pop("solve")
    with pytest.raises(GymwrightError, match="needs a grid spec with solved layouts"):
        Partners(benv, 0.5, "planner", grid, roles_of(benv), seed=0)
    scripted = Partners(benv, 0.5, "straight_to_goal", MAPF, roles_of(benv), seed=0)
    acts = scripted.act(benv.obs_buf, benv.masks)
    assert (acts[scripted.slots] >= 0).all() and (acts[~scripted.slots] == -1).all()
