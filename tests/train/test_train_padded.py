"""Batches of several agent counts (`PaddedBatchEnv`): each copy plays exactly the env of its own
params, the padding never acts or earns, and a shared-role policy trains across the counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gymwright.compile.batch import compile_batch
from gymwright.train import TrainConfig, load_policy, train
from gymwright.train.checkpoint import CheckpointError, load
from gymwright.train.padded import PaddedBatchEnv
from gymwright.train.rollout import make_env

TWO = {"size": 3, "n_agents": 2, "max_steps": 12}
THREE = {"size": 4, "n_agents": 3, "max_steps": 12}


@pytest.mark.slow
def test_each_copy_replays_its_own_env_and_the_padding_never_acts() -> None:
    params = [TWO, THREE, TWO, THREE]
    padded = make_env("mapf_frozenlake", params, 4)
    assert isinstance(padded, PaddedBatchEnv) and padded.N_AGENTS == 3
    alone = [compile_batch("mapf_frozenlake", p, batch_size=1) for p in params]
    obs, masks = padded.reset(seed=7)
    solo = [env.reset(seed=7 + b) for b, env in enumerate(alone)]
    rng = np.random.default_rng(0)
    for _ in range(15):
        for b, p in enumerate(params):
            n = p["n_agents"]
            assert np.array_equal(obs[b, :n], solo[b][0][0]) and np.array_equal(masks[b, :n], solo[b][1][0])
            assert not obs[b, n:].any() and not masks[b, n:].any()  # the padding sees zeros, has no legal action
        actions = rng.integers(0, 5, size=(4, 3))
        obs, rewards, term, trunc, infos = padded.step(actions)
        masks = padded.masks
        for b, (p, env) in enumerate(zip(params, alone, strict=True)):
            n = p["n_agents"]
            o, r, te, tr, _ = env.step(actions[b:b + 1, :n])
            solo[b] = (o, env.masks)
            assert np.allclose(rewards[b, :n], r[0]) and not rewards[b, n:].any()
            assert (term[b] == te[0, 0]).all() and (trunc[b] == tr[0, 0]).all()  # the padding ends with its copy


@pytest.mark.slow
def test_a_shared_role_policy_trains_across_agent_counts_and_warm_starts_onto_another(tmp_path: Path) -> None:
    mixed = train(TrainConfig(spec="mapf_frozenlake", params=[TWO, THREE], total_steps=2048, num_envs=32,
                              out=tmp_path / "mixed"))
    saved = load(mixed.checkpoint)
    assert saved["roles"][0][2] == 3  # the widest count
    assert any(k.endswith("/positive_advantage") for k in mixed.history[-1])  # PLR's level score, per config
    policy = load_policy(mixed.checkpoint)
    for p in (TWO, THREE):
        env = compile_batch("mapf_frozenlake", p, batch_size=8)
        obs, masks = env.reset(seed=0)
        assert policy.act(obs, masks).shape == (8, p["n_agents"])
    onto = train(TrainConfig(spec="mapf_frozenlake", params=TWO, total_steps=1024, num_envs=32,
                             init_from=mixed.checkpoint, out=tmp_path / "two"))
    assert load(onto.checkpoint)["roles"][0][2] == 2
    with pytest.raises(CheckpointError, match="roles"):  # an agent index ties the networks to one count
        train(TrainConfig(spec="mapf_frozenlake", params=TWO, total_steps=1024, num_envs=32, agent_index=True,
                          init_from=mixed.checkpoint, out=tmp_path / "indexed"))
