"""Behaviour cloning (`gymwright.train.imitation`): a cloned actor reproduces a teacher's actions
on real observations of a generated env, and its checkpoint warm-starts PPO."""

from __future__ import annotations

import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.errors import GymwrightError
from gymwright.train import TrainConfig, load_policy, train
from gymwright.train.imitation import Demos, clone

SPEC = "mapf_frozenlake"
PARAMS = {"size": 4, "n_agents": 2, "hole_density": 0.2, "max_steps": 12}


def teacher_demos(episodes: int = 40) -> Demos:
    """Real observations and masks of random play; the label is a fixed linear teacher's best legal action."""
    env = compile_spec(SPEC, PARAMS).parallel_env()
    rng = np.random.default_rng(0)
    obs_l, mask_l, act_l = [], [], []
    w = None
    for ep in range(episodes):
        obs, infos = env.reset(seed=ep)
        while env.agents:
            for a in env.agents:
                o, m = np.asarray(obs[a], np.float32), np.asarray(infos[a]["action_mask"], bool)
                w = rng.normal(size=(len(m), len(o))) if w is None else w
                obs_l.append(o)
                mask_l.append(m)
                act_l.append(int(np.argmax(np.where(m, w @ o, -np.inf))))
            obs, _, _, _, infos = env.step({a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"])))
                                            for a in env.agents})
    return Demos(np.stack(obs_l), np.stack(mask_l), np.array(act_l), env_steps=0, episodes=episodes)


def test_cloning_lowers_the_loss_and_the_saved_policy_plays_the_teachers_actions(tmp_path) -> None:
    demos = teacher_demos()
    res = clone(SPEC, PARAMS, demos, tmp_path / "bc.pt", epochs=20, batch=32)
    assert res.losses[-1] < 0.5 * res.losses[0]
    policy = load_policy(res.checkpoint, spec=SPEC)
    acted = policy.act(demos.obs[:, None], demos.masks[:, None], deterministic=True)[:, 0]
    assert (acted == demos.actions).mean() == pytest.approx(res.accuracy)
    assert res.accuracy > 0.9
    chance = np.mean([1 / m.sum() for m in demos.masks])
    assert chance < 0.5


def test_a_clone_warm_starts_ppo(tmp_path) -> None:
    res = clone(SPEC, PARAMS, teacher_demos(5), tmp_path / "bc.pt", epochs=2)
    run = train(TrainConfig(spec=SPEC, params=PARAMS, total_steps=256, num_envs=16, init_from=res.checkpoint,
                            out=tmp_path / "ppo"))
    assert run.env_steps == 256


def test_demos_whose_action_their_mask_forbids_are_refused() -> None:
    masks = np.array([[True, False], [False, True]])
    with pytest.raises(GymwrightError, match="sample 1 takes action 0, which its mask forbids"):
        Demos(np.zeros((2, 3), np.float32), masks, np.array([0, 0]))
    with pytest.raises(GymwrightError, match="2 observations, 2 masks, 3 actions"):
        Demos(np.zeros((2, 3), np.float32), masks, np.array([0, 1, 1]))


def agreement(checkpoint: str, demos: Demos) -> float:
    policy = load_policy(checkpoint, spec=SPEC)
    return float((policy.act(demos.obs[:, None], demos.masks[:, None], deterministic=True)[:, 0] == demos.actions).mean())


def test_demos_round_trip_through_their_file(tmp_path) -> None:
    demos = teacher_demos(3)
    demos.env_steps = 77
    back = Demos.load(demos.save(tmp_path / "d.npz"))
    assert (back.obs == demos.obs).all() and (back.masks == demos.masks).all() and (back.actions == demos.actions).all()
    assert (back.env_steps, back.episodes) == (77, 3)
    (tmp_path / "junk.npz").write_text("not numpy")
    with pytest.raises(GymwrightError, match="junk.npz: not a demonstrations file"):
        Demos.load(tmp_path / "junk.npz")


def test_ppo_with_an_imitation_loss_moves_toward_the_teacher_and_plain_ppo_does_not(tmp_path) -> None:
    demos = teacher_demos()
    path = demos.save(tmp_path / "demos.npz")
    common = {"spec": SPEC, "params": PARAMS, "total_steps": 4096, "num_envs": 32, "seed": 3}
    plain = train(TrainConfig(**common, out=tmp_path / "plain"))
    kept = train(TrainConfig(**common, demos=path, imitation_coef=1.0, out=tmp_path / "imitating"))
    assert kept.history[-1]["losses/imitation"] < 0.7 * kept.history[0]["losses/imitation"]
    assert "losses/imitation" not in plain.history[-1]
    assert agreement(kept.checkpoint, demos) > agreement(plain.checkpoint, demos) + 0.2


def test_demos_of_another_observation_width_or_without_a_weight_are_refused(tmp_path) -> None:
    demos = teacher_demos(2)
    narrow = Demos(demos.obs[:, :5], demos.masks, demos.actions).save(tmp_path / "narrow.npz")
    with pytest.raises(GymwrightError, match=r"observations and .* masks; this spec's are"):
        train(TrainConfig(spec=SPEC, params=PARAMS, total_steps=256, num_envs=16, demos=narrow, imitation_coef=1.0,
                          out=tmp_path / "a"))
    with pytest.raises(GymwrightError, match="give both demos"):
        train(TrainConfig(spec=SPEC, params=PARAMS, total_steps=256, num_envs=16, demos=narrow, out=tmp_path / "b"))
