"""The hand-written baselines: PettingZoo's API tests, and the same dynamics as the specs.

Run with `pytest benchmarks/test_handwritten.py` (not part of the main suite).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from handwritten import cake, mapf, public_goods
from pettingzoo.test import parallel_api_test, parallel_seed_test

from gymwright.compile import compile_spec

HAND: dict[str, Callable[[], Any]] = {
    "cake": cake.parallel_env,
    "mapf": lambda: mapf.parallel_env(size=8, n_agents=4),
    "public_goods": public_goods.parallel_env,
}


@pytest.mark.parametrize("name", sorted(HAND))
def test_parallel_api(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PettingZoo reports contract smells as warnings
        parallel_api_test(HAND[name](), num_cycles=1000)


@pytest.mark.parametrize("name", sorted(HAND))
def test_parallel_seed(name: str) -> None:
    parallel_seed_test(HAND[name], num_cycles=200)


@pytest.mark.parametrize("name", sorted(HAND))
def test_random_legal_play_stays_in_spaces(name: str) -> None:
    env = HAND[name]()
    rng = np.random.default_rng(1)
    obs, infos = env.reset(seed=3)
    for _ in range(500):
        if not env.agents:
            obs, infos = env.reset()
        for a, o in obs.items():
            assert env.observation_space(a).contains(o), (a, o)
        actions = {a: _legal(infos[a]["action_mask"], rng) for a in env.agents}
        obs, _, _, _, infos = env.step(actions)


def _legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(mask)
    return int(rng.choice(legal)) if len(legal) else 0


def _same_obs(h_obs: dict, g_obs: dict, h_info: dict, g_info: dict, check_masks: bool) -> None:
    assert h_obs.keys() == g_obs.keys()
    for a in g_obs:
        np.testing.assert_allclose(h_obs[a], g_obs[a], rtol=0, atol=1e-6, err_msg=a)
        if check_masks:
            np.testing.assert_array_equal(h_info[a]["action_mask"], g_info[a]["action_mask"])


def _same_step(hand: tuple, gen: tuple, check_masks: bool) -> None:
    (h_obs, h_rew, h_term, h_trunc, h_info), (g_obs, g_rew, g_term, g_trunc, g_info) = hand, gen
    _same_obs(h_obs, g_obs, h_info, g_info, check_masks)
    assert h_rew.keys() == g_rew.keys() == h_term.keys() == g_term.keys()
    for a in g_rew:
        assert h_rew[a] == pytest.approx(g_rew[a], abs=1e-12), a
        assert (h_term[a], h_trunc[a]) == (g_term[a], g_trunc[a]), a


def _play_against_spec(hand: Any, gen: Any, episodes: int, seed: int,
                       sync: Callable[[Any, Any], None] | None = None) -> int:
    """Play both envs with the same random legal actions; return the steps compared."""
    rng = np.random.default_rng(seed)
    steps = 0
    for ep in range(episodes):
        h_obs, h_info = hand.reset(seed=seed + ep)
        g_obs, g_info = gen.reset(seed=seed + ep)
        if sync is not None:
            sync(hand, gen)
            h_obs = hand._observations()
        _same_obs(h_obs, g_obs, h_info, g_info, check_masks=True)
        while gen.agents:
            assert hand.agents == gen.agents
            actions = {a: _legal(g_info[a]["action_mask"], rng) for a in gen.agents}
            h = hand.step(dict(actions))
            g = gen.step(dict(actions))
            g_info = g[4]
            _same_step(h, g, check_masks=bool(gen.agents))
            steps += 1
        assert not hand.agents
    return steps


def test_cake_plays_like_the_spec() -> None:
    gen = compile_spec("cake_negotiation").parallel_env()
    assert _play_against_spec(cake.parallel_env(), gen, episodes=300, seed=0) > 600


def test_cake_missing_proposal_offers_zero_like_the_spec() -> None:
    gen = compile_spec("cake_negotiation").parallel_env()
    hand = cake.parallel_env()
    gen.reset(seed=0)
    hand.reset(seed=0)
    for actions in ({}, {"bargainer_1": 11}):  # nobody proposes, then the responder accepts
        _same_step(hand.step(actions), gen.step(actions), check_masks=False)
    assert not hand.agents and not gen.agents


def test_public_goods_plays_like_the_spec() -> None:
    gen = compile_spec("public_goods").parallel_env()
    assert _play_against_spec(public_goods.parallel_env(), gen, episodes=20, seed=0) == 500


def _copy_mapf_layout(hand: mapf.MapfFrozenLakeEnv, gen: Any) -> None:
    v = gen.v
    hand.set_layout(v.tiles == 1, [tuple(p) for p in v.pos.tolist()],
                    [tuple(g) for g in v.goal.tolist()])


@pytest.mark.parametrize("density", [0.2, 0.5])
def test_mapf_plays_like_the_spec(density: float) -> None:
    params = {"size": 8, "n_agents": 4, "hole_density": density}
    gen = compile_spec("mapf_frozenlake", params).parallel_env()
    hand = mapf.parallel_env(**params)
    assert _play_against_spec(hand, gen, episodes=300, seed=0, sync=_copy_mapf_layout) > 1000


def test_mapf_layouts_keep_goals_reachable() -> None:
    env = mapf.parallel_env(size=8, n_agents=4, hole_density=0.6)
    for seed in range(50):
        env.reset(seed=seed)
        assert len(set(env.pos)) == 4 and len(set(env.goals)) == 4
        for s, g in zip(env.pos, env.goals, strict=True):
            assert s != g and not env.holes[s] and g in mapf.reachable(env.holes, s)
