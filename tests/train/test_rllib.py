"""The RLlib adapter: turns and masks for RLlib, and PPO iterations on a local Ray (loopback)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from gymwright.cli.config_options import BY_NAME, read_config_file
from gymwright.compile import compile_spec
from gymwright.errors import GymwrightError
from gymwright.train import load_policy
from gymwright.train.logger import read_log
from gymwright.train.rllib import ActingAgentsEnv, role_of, train_rllib
from tests.support.rllib_probs import assert_same_probabilities, observations

RESULT_KEYS = {"agent_steps_per_second", "env_steps_per_second", "final_return", "metrics",
               "checkpoint", "rllib_checkpoint", "log", "config", "iterations"}
# what every train.jsonl row of an RLlib run holds, in the built-in trainer's (CleanRL-style) names
ROW_KEYS = {"update", "updates_total", "env_steps", "time_s", "charts/sps", "charts/agent_sps", "charts/learning_rate",
            "time/env_s", "time/network_s", "charts/episodes", "losses/policy_loss", "losses/value_loss",
            "losses/entropy", "losses/approx_kl", "losses/explained_variance"}


def test_role_of_maps_agent_ids_to_roles():
    assert role_of("bargainer_1") == "bargainer"
    assert role_of("red_team_12", None) == "red_team"


def test_acting_agents_env_asks_only_the_agent_whose_turn_it_is():
    env = ActingAgentsEnv(compile_spec("cake_negotiation", {"max_rounds": 2}).parallel_env())
    space = env.observation_space("bargainer_0")
    assert space.shape == (4 + 13,)
    obs, infos = env.reset(seed=0)
    assert list(obs) == ["bargainer_0"] and list(infos) == ["bargainer_0"]
    assert space.contains(obs["bargainer_0"])
    assert obs["bargainer_0"][4:].tolist() == [1.0] * 11 + [0.0, 0.0]  # propose only
    assert "action_mask" not in infos["bargainer_0"]

    obs, rewards, terms, truncs, infos = env.step({"bargainer_0": 5})  # propose(0.5)
    assert list(obs) == ["bargainer_1"]
    assert set(rewards) == set(terms) == {"bargainer_0", "bargainer_1"}  # rewards for all
    assert obs["bargainer_1"][4:].tolist() == [0.0] * 11 + [1.0, 1.0]  # accept or reject

    obs, rewards, terms, truncs, infos = env.step({"bargainer_1": 11})  # accept
    assert all(terms.values())
    assert set(obs) == {"bargainer_0", "bargainer_1"}  # every agent closes its episode
    assert rewards == {"bargainer_0": 0.5, "bargainer_1": 0.5}
    assert infos["bargainer_0"]["metrics"]["agreed"] == 1.0


def test_acting_agents_env_keeps_every_agent_in_simultaneous_games():
    env = ActingAgentsEnv(compile_spec("stag_hunt", {"rounds": 2}).parallel_env())
    obs, _ = env.reset(seed=0)
    assert set(obs) == {"hunter_0", "hunter_1"}
    obs, *_ = env.step({"hunter_0": 0, "hunter_1": 1})
    assert set(obs) == {"hunter_0", "hunter_1"}
    assert np.all(obs["hunter_0"][-2:] == 1.0)


def test_missing_ray_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(GymwrightError, match=r"pip install 'gymwright\[rllib\]'"):
        train_rllib("cake_negotiation", {}, steps=64, out=tmp_path)


@pytest.mark.slow
def test_unreachable_cluster_is_a_clear_error(tmp_path):
    pytest.importorskip("ray")
    with pytest.raises(GymwrightError, match="cannot reach the Ray cluster at '127.0.0.1:1'"):
        train_rllib("cake_negotiation", {}, steps=64, out=tmp_path, ray_address="127.0.0.1:1")


def _check_result(result: dict, roles: set[str], out: Path) -> None:
    assert RESULT_KEYS <= set(result)
    assert result["iterations"] >= 1
    assert result["env_steps_per_second"] > 0 and result["agent_steps_per_second"] > 0
    assert set(result["final_return"]) == roles
    assert all(np.isfinite(v) for v in result["final_return"].values())
    rllib_checkpoint = Path(result["rllib_checkpoint"])
    assert rllib_checkpoint.is_dir() and rllib_checkpoint.is_relative_to(out)
    assert (rllib_checkpoint / "rllib_checkpoint.json").exists()
    assert Path(result["checkpoint"]) == out / "checkpoint.pt"


def _check_run_folder(result: dict, spec: str, params: dict, roles: set[str], metric: str, out: Path) -> None:
    """The folder a built-in run writes: train.jsonl, tb/, config.yaml, checkpoint.pt; the policy
    in it gives the trained RLlib modules' action probabilities."""
    rows = read_log(out)
    assert [r["update"] for r in rows] == list(range(1, result["iterations"] + 1))
    assert ROW_KEYS <= set(rows[-1]), ROW_KEYS - set(rows[-1])
    assert rows[-1]["env_steps"] == result["env_steps"]
    ended = [r for r in rows if r["charts/episodes"]]
    assert ended and {f"charts/return/{r}" for r in roles} | {f"metrics/{metric}"} <= set(ended[-1])
    assert any(k.startswith("reward_terms/") for k in ended[-1])
    assert list((out / "tb").glob("events.out.tfevents.*"))
    values = read_config_file(out / "config.yaml", tuple(BY_NAME), "train")  # TrainConfig's names and kinds
    assert values["total_steps"] == 512 and values["seed"] == 1 and values["params"] == params
    assert (values["algo"], values["agent_index"], values["activation"], values["hidden"]) == ("ippo", False, "tanh", (64, 64))
    policy = load_policy(out, spec)  # the built-in format, trained on this spec
    assert policy.info["env_steps"] == result["env_steps"] and policy.info["algo"] == "ippo"
    from ray.rllib.core.rl_module.rl_module import RLModule

    modules = {r: RLModule.from_checkpoint(Path(result["rllib_checkpoint"]) / "learner_group" / "learner" / "rl_module" / r)
               for r in roles}
    masked = assert_same_probabilities(policy, modules, observations(spec, params, episodes=4))
    assert masked > 0 or spec == "stag_hunt"  # every stag-hunt action is always legal


@pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env-v0")
@pytest.mark.parametrize(
    ("spec", "params", "roles", "metric"),
    [
        # over 5 s each on a local Ray, so CI's slow run; the default suite keeps RLlib's modules,
        # weights, warm starts and refusals (tests/train/test_rllib_runs.py)
        pytest.param("cake_negotiation", {"discount": 0.5}, {"bargainer"}, "agreed",  # turn-based, masked
                     marks=pytest.mark.slow),
        pytest.param("stag_hunt", {"rounds": 5}, {"hunter"}, "stag_success_rate",  # simultaneous
                     marks=pytest.mark.slow),
    ],
)
def test_rllib_ppo_runs_on_local_ray(spec, params, roles, metric, tmp_path):
    pytest.importorskip("ray.rllib")
    seen: list[dict] = []
    result = train_rllib(spec, params, steps=512, out=tmp_path, seed=1, progress=seen.append, tensorboard=True)
    _check_result(result, roles, tmp_path)
    assert result["iterations"] == len(seen) >= 1
    assert result["env_steps"] >= 512
    assert metric in result["metrics"]
    _check_run_folder(result, spec, params, roles, metric, tmp_path)
