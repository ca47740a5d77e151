"""RoleVectorEnv: one role of a batch env as a Gymnasium VectorEnv."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import VectorEnv

from gymwright.compile.batch import compile_batch
from gymwright.compile.vector import RoleVectorEnv, random_legal


@pytest.mark.parametrize(("name", "role"), [("mapf_frozenlake", "walker"), ("predator_prey", "prey"),
                                            ("predator_prey", "predator"), ("cake_negotiation", "bargainer")])
def test_role_vector_env_steps_within_its_spaces(name: str, role: str) -> None:
    venv = RoleVectorEnv(compile_batch(name, batch_size=8), role)
    assert isinstance(venv, VectorEnv)
    obs, info = venv.reset(seed=3)
    assert obs.shape == (venv.num_envs, venv.single_observation_space.shape[0])
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(80):
        assert venv.observation_space.contains(obs)
        actions = random_legal(obs, info["action_mask"], rng)
        actions[actions < 0] = 0  # rows with no legal action (not their turn): any action is ignored
        obs, rew, term, trunc, info = venv.step(actions)
        assert rew.shape == term.shape == trunc.shape == (venv.num_envs,)
        if "_final_obs" in info:
            done = term | trunc
            np.testing.assert_array_equal(info["_final_obs"], done)
            ended += int(done.sum())
    assert ended > 0, "episodes should end and reset within 80 steps"


def test_unknown_role_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown role 'wolf'; roles: \['predator', 'prey'\]"):
        RoleVectorEnv(compile_batch("predator_prey", batch_size=2), "wolf")


def test_same_seed_same_rollout() -> None:
    def rollout() -> np.ndarray:
        venv = RoleVectorEnv(compile_batch("public_goods", batch_size=4), "citizen")
        obs, info = venv.reset(seed=9)
        rng = np.random.default_rng(1)
        total = np.zeros(venv.num_envs)
        for _ in range(20):
            obs, rew, *_rest, info = venv.step(random_legal(obs, info["action_mask"], rng))
            total += rew
        return total

    np.testing.assert_array_equal(rollout(), rollout())
