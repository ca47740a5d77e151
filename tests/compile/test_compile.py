"""The Python backend: params, seeding, turns, structure of the generated module."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from gymwright.compile import compile_spec, export_source
from gymwright.errors import SpecError
from tests.support.playing import random_legal_actions


def play(env, seed: int, policy_seed: int = 0, max_steps: int = 500) -> list:
    """A whole episode of random legal play; returns everything observed."""
    rng = np.random.default_rng(policy_seed)
    obs, infos = env.reset(seed=seed)
    trace = [{a: o.tolist() for a, o in obs.items()}]
    for _ in range(max_steps):
        if not env.agents:
            break
        actions = random_legal_actions(env, infos, rng)
        obs, rew, term, trunc, infos = env.step(actions)
        trace.append(({a: o.tolist() for a, o in obs.items()}, rew, term, trunc, env.state().tolist()))
    return trace


@pytest.mark.parametrize("name", ["mapf_frozenlake", "cake_negotiation"])
def test_same_seed_same_whole_episode(name: str) -> None:
    c = compile_spec(name, {"slip": 0.2} if name == "mapf_frozenlake" else None)
    assert play(c.parallel_env(), seed=7) == play(c.parallel_env(), seed=7)


def test_episodes_of_one_seed_differ_and_replay() -> None:
    c = compile_spec("mapf_frozenlake")
    env = c.parallel_env()
    first = env.reset(seed=3)[0]
    second = env.reset()[0]  # next episode of seed 3
    assert any(not np.array_equal(first[a], second[a]) for a in first)
    layouts = set()
    for _ in range(5):
        env.reset()
        layouts.add(env.v.tiles.tobytes() + env.v.pos.tobytes())
    assert len(layouts) > 1, "episodes of one seed should vary"
    env.reset(seed=3)
    assert all(np.array_equal(first[a], env.observe(a)) for a in first)


def test_param_validation_names_the_param() -> None:
    c = compile_spec("cake_negotiation")
    with pytest.raises(ValueError, match=r"param `discount` = 2.0 is out of its range \[0.5, 1.0\]"):
        c.parallel_env(discount=2.0)
    with pytest.raises(ValueError, match=r"unknown param\(s\) \['dicount'\]"):
        c.parallel_env(dicount=0.5)
    with pytest.raises(ValueError, match="param `max_rounds` must be an int"):
        c.parallel_env(max_rounds=2.5)
    env = c.parallel_env(discount=0.6)
    assert env.p.discount == 0.6


def test_structural_params_are_fixed_per_module() -> None:
    c = compile_spec("mapf_frozenlake")
    assert {"size", "n_agents", "view_radius"} <= c.checked.structural
    assert "hole_density" not in c.checked.structural
    with pytest.raises(ValueError, match="param `size` fixes shapes"):
        c.parallel_env(size=6)
    big = compile_spec("mapf_frozenlake", {"size": 8, "n_agents": 4})
    env = big.parallel_env()
    env.reset(seed=0)
    assert env.v.tiles.shape == (8, 8) and len(env.agents) == 4


def test_checked_params_out_of_range_is_a_spec_error() -> None:
    with pytest.raises(SpecError) as e:
        compile_spec("mapf_frozenlake", {"size": 11})
    d = e.value.diagnostics[0]
    assert d.path.startswith("params.size") and "out of its range [3, 10]" in d.message


def test_turn_based_masks_and_ignored_actions() -> None:
    env = compile_spec("cake_negotiation").parallel_env()
    _, infos = env.reset(seed=0)
    assert env.turn_agent() == "bargainer_0"
    assert not infos["bargainer_1"]["action_mask"].any()
    # bargainer_1 acting out of turn is ignored; bargainer_0 proposes 0.7
    _, _, _, _, infos = env.step({"bargainer_0": 7, "bargainer_1": 11})
    assert env.v.offer == pytest.approx(0.7) and not env.v.deal
    assert infos["bargainer_1"].get("illegal_action") is True
    assert env.turn_agent() == "bargainer_1"
    assert list(np.flatnonzero(infos["bargainer_1"]["action_mask"])) == [11, 12]


def test_aec_agent_selection_follows_active() -> None:
    env = compile_spec("cake_negotiation").aec_env()
    env.reset(seed=0)
    order = []
    for agent in env.agent_iter(max_iter=8):
        order.append(agent)
        obs, rew, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(info["action_mask"])
        # propose 5 (share 0.5) when proposing, reject when responding: roles alternate
        env.step(5 if 5 in legal else 12)
    assert order[:6] == ["bargainer_0", "bargainer_1", "bargainer_1", "bargainer_0", "bargainer_0", "bargainer_1"]


def test_generated_source_cites_spec_paths_and_parses() -> None:
    src = export_source("cake_negotiation")
    ast.parse(src)
    for path in ("step[0]", "step[0].first[2].set.round", "rewards.bargainer[0]", "terminate:", "observe.bargainer",
                 "actions.bargainer[0].legal", "turns.active"):
        assert f"# {path}" in src, path
    assert "import gymwright" not in src and "from gymwright" not in src


def test_reward_terms_and_metrics_in_infos() -> None:
    env = compile_spec("cake_negotiation").parallel_env()
    env.reset(seed=0)
    env.step({"bargainer_0": 6})
    _, rew, term, _, infos = env.step({"bargainer_1": 11})
    assert term["bargainer_0"] and infos["bargainer_1"]["reward_terms"] == {"cake": pytest.approx(0.4)}
    assert infos["bargainer_0"]["metrics"] == {"agreed": 1.0, "rounds": 0.0, "first_share": pytest.approx(0.6)}
    assert infos["bargainer_0"]["episode"] == {"l": 2, "r": pytest.approx(0.6)}  # as Gymnasium, SB3
    assert rew == {"bargainer_0": pytest.approx(0.6), "bargainer_1": pytest.approx(0.4)}
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step({})


def test_bad_actions_are_clear_errors() -> None:
    env = compile_spec("cake_negotiation").parallel_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action 99 of bargainer_0 is outside Discrete\(13\)"):
        env.step({"bargainer_0": 99})
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        env.step({"nobody": 0})
