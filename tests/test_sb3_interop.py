"""Interop: an exported environment trains with Stable-Baselines3 PPO through SuperSuit.

The exported module is plain Python (numpy, gymnasium, pettingzoo): it is written to a file and
imported from there, as a user of `gymwright export` would, then SuperSuit turns its
ParallelEnv into one vector env over all agents (parameter sharing) for SB3.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("stable_baselines3")
ss = pytest.importorskip("supersuit")

import torch  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.utils import set_random_seed  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

from gymwright.compile import export_source  # noqa: E402


def import_exported(spec: str, params: dict, tmp_path: Path):
    """Export `spec` to `tmp_path/<name>.py` and import that file as a module."""
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


def sb3_vec_env(parallel_env, copies: int):
    """SuperSuit parameter sharing: pad spaces, one vec env over all agents of all copies.

    The padding wrappers are no-ops for one-role specs and make roles with different spaces
    share one network. `black_death_v3` is not needed (compiled envs keep every agent until the
    episode ends) and would add a zero step after each episode's last. VecMonitor writes SB3's own `info["episode"] = {"r", "l", "t"}` over the env's
    `info["episode"] = {"length", "return"}`, which SB3's logger would otherwise misread.
    """
    env = ss.pad_observations_v0(parallel_env)
    env = ss.pad_action_space_v0(env)
    env = ss.pettingzoo_env_to_vec_env_v1(env)
    venv = ss.concat_vec_envs_v1(env, copies, num_cpus=0, base_class="stable_baselines3")
    return VecMonitor(venv)


@pytest.mark.filterwarnings("ignore:The `render_mode` attribute is not defined")
@pytest.mark.parametrize(
    ("spec", "params"),
    [
        ("stag_hunt", {"rounds": 10}),
        ("public_goods", {}),
        ("cake_negotiation", {"discount": 0.5}),
    ],
)
def test_sb3_ppo_trains_on_exported_env(spec, params, tmp_path):
    torch.set_num_threads(1)
    module = import_exported(spec, params, tmp_path)
    assert module.__file__ == str(tmp_path / f"exported_{spec}.py")
    venv = sb3_vec_env(module.parallel_env(**params), copies=4)
    set_random_seed(0)  # PPO(seed=...) fails on SuperSuit's ConcatVecEnv (it has no `seed`)
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=128, n_epochs=2, verbose=0, device="cpu")
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    action, _ = model.predict(venv.reset(), deterministic=True)
    assert action.shape == (venv.num_envs,)
    venv.close()
