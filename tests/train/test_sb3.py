"""Stable-Baselines3 on generated envs: `gymwright.train.sb3` (masks for sb3-contrib's
MaskablePPO through SuperSuit, illegal actions counted, seeded SB3 runs; issue 19, item 3), and an
exported module trained through SuperSuit alone, with no gymwright installed in the chain.

The env is an exported module, written to a file and imported from there as a user of
`gymwright export` would; SB3, SuperSuit and sb3-contrib are the real libraries.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
ss = pytest.importorskip("supersuit")
sb3_contrib = pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.utils import set_random_seed  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

from gymwright.compile import compile_spec, export_source  # noqa: E402
from gymwright.errors import GymwrightError  # noqa: E402
from gymwright.train.sb3 import NoActionWhenNoneLegal, sb3_vec_env  # noqa: E402

PPO_ARGS = {"n_steps": 64, "batch_size": 128, "n_epochs": 2, "verbose": 0, "device": "cpu"}


def exported(spec: str, params: dict, tmp_path: Path):
    """`spec` exported to `tmp_path/exported_<spec>.py` and imported from that file."""
    path = tmp_path / f"exported_{spec}.py"
    path.write_text(export_source(spec, params))
    mod_spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules[path.stem] = module  # dataclasses and pickling look modules up by name
    try:
        mod_spec.loader.exec_module(module)
    finally:
        sys.modules.pop(path.stem, None)
    return module


def test_maskable_ppo_trains_with_zero_illegal_actions_where_ppo_makes_many(tmp_path):
    torch.set_num_threads(1)
    module = exported("cake_negotiation", {"discount": 0.5}, tmp_path)
    counts = {}
    for algo, steps in ((sb3_contrib.MaskablePPO, 3072), (PPO, 1024)):
        venv = sb3_vec_env(module.parallel_env(), copies=4)
        model = algo("MlpPolicy", venv, seed=0, **PPO_ARGS)
        model.learn(total_timesteps=steps)
        assert model.num_timesteps >= steps
        assert len(model.ep_info_buffer) > 0  # episodes reach SB3's logger (info["episode"])
        counts[algo.__name__] = venv.illegal_actions
        venv.close()
    assert counts["MaskablePPO"] == 0
    assert counts["PPO"] >= 200  # hundreds (docs/interop.md): the counter sees what plain PPO does


def test_action_masks_are_the_envs_masks_padded_to_the_shared_action_space():
    env = compile_spec("speaker_listener").parallel_env()  # speaker: 3 actions, listener: 4
    venv = sb3_vec_env(env, copies=2)
    venv.seed(3)
    venv.reset()
    masks = venv.action_masks()
    assert masks.shape == (4, 4) and masks.dtype == bool
    _, infos = compile_spec("speaker_listener").parallel_env().reset(seed=3)
    assert masks[0].tolist() == infos["speaker_0"]["action_mask"].astype(bool).tolist() + [False]
    assert masks[1].tolist() == infos["listener_0"]["action_mask"].astype(bool).tolist()
    assert [m.tolist() for m in venv.env_method("action_masks", indices=[1, 2])] == masks[1:3].tolist()
    assert sb3_contrib.common.maskable.utils.is_masking_supported(venv)


def test_ppo_seed_makes_a_run_repeatable_on_the_vec_env():
    torch.set_num_threads(1)
    weights = []
    for _ in range(2):
        venv = sb3_vec_env(compile_spec("stag_hunt", {"rounds": 10}).parallel_env(), copies=2)
        model = PPO("MlpPolicy", venv, seed=7, **PPO_ARGS)
        model.learn(total_timesteps=256)
        weights.append(torch.cat([p.detach().ravel() for p in model.policy.parameters()]))
    assert torch.equal(weights[0], weights[1])


def test_seed_reaches_every_copy_of_the_env():
    venv = sb3_vec_env(compile_spec("mapf_frozenlake").parallel_env(), copies=3)
    venv.seed(11)
    obs = venv.reset()
    env = compile_spec("mapf_frozenlake").parallel_env()
    for copy in range(3):
        first, _ = env.reset(seed=11 + copy)
        n = len(env.possible_agents)
        np.testing.assert_array_equal(obs[copy * n:(copy + 1) * n], np.stack([first[a] for a in env.possible_agents]))


def test_supersuits_own_sb3_wrapper_still_fails_on_seed():
    """The crash docs/interop.md describes (SuperSuit 3.11, Gymnasium 1.x): if this starts to
    pass, SuperSuit fixed it and the docs' workaround note can go."""
    import supersuit as ss

    env = ss.pettingzoo_env_to_vec_env_v1(compile_spec("stag_hunt").parallel_env())
    venv = ss.concat_vec_envs_v1(env, 1, num_cpus=0, base_class="stable_baselines3")
    with pytest.raises(AttributeError, match="seed"):
        PPO("MlpPolicy", venv, seed=0, **PPO_ARGS)


def test_an_agent_without_a_legal_action_takes_none():
    env = NoActionWhenNoneLegal(compile_spec("cake_negotiation").parallel_env())
    _, infos = env.reset(seed=0)
    assert not infos["bargainer_1"]["action_mask"].any()  # not its turn
    *_, infos = env.step({"bargainer_0": 5, "bargainer_1": 0})  # 0 would be illegal for bargainer_1
    assert not any(info.get("illegal_action") for info in infos.values())
    assert env.unwrapped._last == [5, -1]  # bargainer_1 took no action


def test_bad_copies_is_a_clear_error():
    with pytest.raises(GymwrightError, match=r"copies must be an int >= 1, got 0"):
        sb3_vec_env(compile_spec("stag_hunt").parallel_env(), copies=0)


def test_missing_sb3_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "supersuit", None)
    with pytest.raises(GymwrightError, match=r"pip install 'gymwright\[sb3\]'"):
        sb3_vec_env(compile_spec("stag_hunt").parallel_env())


# --------------------------------------------------------------------------- SuperSuit alone
def supersuit_vec_env(parallel_env, copies: int):
    """SuperSuit parameter sharing as a user without gymwright writes it: pad spaces, one vec env
    over all agents of all copies.

    The padding wrappers are no-ops for one-role specs and make roles with different spaces
    share one network. `black_death_v3` is not needed (compiled envs keep every agent until the
    episode ends) and would add a zero step after each episode's last. VecMonitor writes SB3's own
    `info["episode"] = {"r", "l", "t"}` over the env's `info["episode"] = {"length", "return"}`,
    which SB3's logger would otherwise misread.
    """
    env = ss.pad_observations_v0(parallel_env)
    env = ss.pad_action_space_v0(env)
    env = ss.pettingzoo_env_to_vec_env_v1(env)
    venv = ss.concat_vec_envs_v1(env, copies, num_cpus=0, base_class="stable_baselines3")
    return VecMonitor(venv)


@pytest.mark.filterwarnings("ignore:The `render_mode` attribute is not defined")
@pytest.mark.parametrize(
    ("spec", "params"),
    [  # stag_hunt: docs/interop.md's `sb3-exported` recipe (tests/docs/test_interop_docs.py)
        ("public_goods", {}),
        ("cake_negotiation", {"discount": 0.5}),
    ],
)
def test_sb3_ppo_trains_on_an_exported_env_through_supersuit_alone(spec, params, tmp_path):
    torch.set_num_threads(1)
    module = exported(spec, params, tmp_path)
    assert module.__file__ == str(tmp_path / f"exported_{spec}.py")
    venv = supersuit_vec_env(module.parallel_env(**params), copies=4)
    set_random_seed(0)  # PPO(seed=...) fails on SuperSuit's ConcatVecEnv (it has no `seed`)
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=128, n_epochs=2, verbose=0, device="cpu")
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    action, _ = model.predict(venv.reset(), deterministic=True)
    assert action.shape == (venv.num_envs,)
    venv.close()
