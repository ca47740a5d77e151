"""An RLlib run's folder is a built-in run folder: its policy is RLlib's modules exported to the
built-in format (same action probabilities, masks included), `evaluate`, `report` and `play` read
it, and `evolve` trains its stages on RLlib with the policy carried over (issue 19, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from typer.testing import CliRunner, Result

from gymwright.cli import app
from gymwright.compile import compile_spec
from gymwright.errors import GymwrightError
from gymwright.train import TrainConfig, load_policy, train
from gymwright.train import checkpoint as ck
from gymwright.train.rllib import ActingAgentsEnv, mixture_config
from gymwright.train.rllib_export import (
    export_policy,
    from_builtin,
    policy_layout,
    to_builtin,
    warm_weights,
)
from gymwright.train.rllib_settings import settings_of
from tests.support.rllib_probs import assert_same_probabilities, observations

runner = CliRunner()
RAY_WARNING = "ignore:.*Overriding environment rllib-multi-agent-env-v0"


def invoke(*args: object) -> Result:
    return runner.invoke(app, [str(a) for a in args])


def rllib_modules(spec: str, params: dict, hidden: tuple[int, ...] = (64, 64), seed: int = 0) -> dict:
    """One freshly built masked RLlib PPO module per role (no Ray cluster), with random weights
    large enough that the probabilities are far from uniform."""
    pytest.importorskip("ray.rllib")
    from gymwright.train.rllib import _ray_classes

    cls = _ray_classes()["MaskedPPOTorchRLModule"]
    env = ActingAgentsEnv(compile_spec(spec, params).parallel_env())
    torch.manual_seed(seed)
    modules = {}
    for agent in env.possible_agents:
        role = agent.rsplit("_", 1)[0]
        if role not in modules:
            module = cls(observation_space=env.observation_space(agent), action_space=env.action_space(agent),
                         model_config={"fcnet_hiddens": list(hidden), "fcnet_activation": "tanh", "vf_share_layers": False},
                         inference_only=False)
            for p in module.parameters():
                torch.nn.init.normal_(p, std=0.5)
            modules[role] = module.eval()
    return modules


def tiny_builtin(out: Path, **changes: object) -> Path:
    cfg = TrainConfig(spec="cake_negotiation", total_steps=64, num_envs=8, rollout_len=8, minibatches=1, epochs=1,
                      activation="tanh", out=out, **changes)  # type: ignore[arg-type]
    return Path(train(cfg).checkpoint)


# --------------------------------------------------------------------------- export, without a Ray cluster
def test_the_exported_policy_gives_the_modules_probabilities_for_two_roles(tmp_path: Path) -> None:
    spec, params = "speaker_listener", {}  # two roles of different observation and action sizes
    modules = rllib_modules(spec, params)
    export_policy(tmp_path, spec, params, {r: m.state_dict() for r, m in modules.items()}, hidden=(64, 64),
                  activation="tanh", history=[], env_steps=0, iterations=0, config={"backend": "rllib"})
    policy = load_policy(tmp_path, spec)
    assert [r.name for r in policy.roles] == ["speaker", "listener"]
    assert_same_probabilities(policy, modules, observations(spec, params, episodes=3))


def test_a_built_in_policy_warm_starts_rllib_modules_values_and_all(tmp_path: Path) -> None:
    """The other way: a built-in IPPO checkpoint into RLlib modules, its value norm folded in."""
    path = tiny_builtin(tmp_path / "builtin")
    saved = ck.load(path)
    norm = saved["value_norms"][0]
    assert abs(float(norm["mean"])) > 1e-4 and abs(float(norm["var"]) - 1) > 1e-4  # a norm that matters
    modules = rllib_modules("cake_negotiation", {})
    roles, _, _ = policy_layout("cake_negotiation", {})
    for role, weights in warm_weights(path, "cake_negotiation", roles, hidden=(64, 64), activation="tanh").items():
        modules[role].load_state_dict({**modules[role].state_dict(), **weights})
    policy = load_policy(path)
    rows = observations("cake_negotiation", {}, episodes=4)
    assert assert_same_probabilities(policy, modules, rows) > 0
    from ray.rllib.core.columns import Columns

    net = policy.model.nets[0]
    x = torch.as_tensor(rows["bargainer_0"])
    with torch.no_grad():
        theirs = modules["bargainer"].compute_values({Columns.OBS: x})
        ours = net.value(x[:, :4]) * torch.sqrt(norm["var"]).float() + norm["mean"].float()
    np.testing.assert_allclose(theirs.numpy(), ours.numpy(), rtol=1e-5, atol=1e-5)


def test_weights_survive_the_round_trip() -> None:
    roles, _, _ = policy_layout("cake_negotiation", {})
    modules = {"bargainer": {k: torch.randn(v.shape) for k, v in rllib_modules("cake_negotiation", {}, (16,))["bargainer"]
                             .state_dict().items()}}
    identity = [{"mean": torch.tensor(0.0, dtype=torch.float64), "var": torch.tensor(1.0, dtype=torch.float64),
                 "count": torch.tensor(1.0, dtype=torch.float64)}]
    back = from_builtin(to_builtin(modules, roles, 1), identity, roles, 1)["bargainer"]
    assert set(back) == {k for k in modules["bargainer"] if "log_std_clip" not in k}
    for key, value in back.items():
        assert torch.equal(value, modules["bargainer"][key]), key


@pytest.mark.parametrize(("changes", "why"), [({"algo": "mappo"}, "is a mappo policy"),
                                              ({"agent_index": True}, "with agent_index")])
def test_rllib_refuses_to_start_from_a_policy_it_cannot_hold(tmp_path: Path, changes: dict, why: str) -> None:
    path = tiny_builtin(tmp_path, **changes)
    roles, _, _ = policy_layout("cake_negotiation", {})
    with pytest.raises(ck.CheckpointError, match=why):
        warm_weights(path, "cake_negotiation", roles, hidden=(64, 64), activation="tanh")


def test_rllib_refuses_another_shape_or_spec(tmp_path: Path) -> None:
    path = tiny_builtin(tmp_path)
    roles, _, _ = policy_layout("cake_negotiation", {})
    with pytest.raises(ck.CheckpointError, match=r"hidden layers \[64, 64\] \(tanh\); this RLlib run has \[32\] \(tanh\)"):
        warm_weights(path, "cake_negotiation", roles, hidden=(32,), activation="tanh")
    other, _, _ = policy_layout("stag_hunt", {})
    with pytest.raises(ck.CheckpointError, match="was trained on spec cake_negotiation"):
        warm_weights(path, "stag_hunt", other, hidden=(64, 64), activation="tanh")


# --------------------------------------------------------------------------- mixtures
MIX = [{"size": 4, "n_agents": 2}, {"size": 4, "n_agents": 2}, {"size": 4, "n_agents": 3}]


def test_a_mixture_declares_every_agent_and_builds_each_source_once() -> None:
    mix = mixture_config("mapf_frozenlake", MIX)
    assert mix["agents"] == ["walker_0", "walker_1", "walker_2"]
    assert [c for c, _ in mix["copies"]] == [0, 0, 1] and len(mix["sources"]) == 2
    env = ActingAgentsEnv(compile_spec("mapf_frozenlake", MIX[0]).parallel_env(), copy=1, agents=mix["agents"])
    assert env.possible_agents == mix["agents"]
    assert env.observation_space("walker_2") == env.observation_space("walker_0")
    obs, _ = env.reset(seed=0)
    assert set(obs) <= {"walker_0", "walker_1"}  # the declared third walker never acts in a two-walker copy
    while env.agents:
        obs, _, _, _, infos = env.step({a: int(np.flatnonzero(o[-5:])[0]) for a, o in obs.items()})
    assert {i["copy"] for i in infos.values()} == {1} and set(infos) == {"walker_0", "walker_1"}


def test_a_mixture_whose_configs_change_a_roles_spaces_is_refused() -> None:
    with pytest.raises(GymwrightError, match=r"params \{'offer_levels': 5\} give role bargainer .* one RLlib module per "
                                             "role needs the same spaces in every config"):
        mixture_config("cake_negotiation", [{"offer_levels": 11}, {"offer_levels": 5}])


# --------------------------------------------------------------------------- settings
def test_rllib_settings_take_train_config_names_and_refuse_built_in_ones() -> None:
    s = settings_of({"lr": 1e-3, "gae_lambda": 0.9, "hidden": (32, 32), "num_envs": 4, "minibatches": 2})
    assert s.ppo == {"lr": 1e-3, "lambda_": 0.9} and s.hidden == (32, 32) and s.num_envs == 4
    with pytest.raises(GymwrightError, match="does not take anneal_lr, device: those are settings of the built-in"):
        settings_of({"anneal_lr": False, "device": "cpu"})
    with pytest.raises(GymwrightError, match="algo must be 'ippo', not 'mappo'"):
        settings_of({"algo": "mappo"})


def test_evolve_and_demo_refuse_a_built_in_setting_on_rllib(tmp_path: Path) -> None:
    for command in (["evolve", "cake_negotiation"], ["demo"]):
        result = invoke(*command, "--backend", "rllib", "--anneal-lr", "--out", tmp_path / command[0])
        assert result.exit_code == 1, result.output
        assert "--backend rllib does not take --anneal-lr" in result.output and "Traceback" not in result.output
        result = invoke(*command, "--backend", "tpu", "--out", tmp_path / command[0])
        assert result.exit_code == 1 and "unknown --backend 'tpu'; choose one of builtin, rllib" in result.output


# --------------------------------------------------------------------------- with Ray (slow)
@pytest.mark.slow
@pytest.mark.filterwarnings(RAY_WARNING)
def test_train_on_rllib_takes_the_shared_settings_and_prints_a_summary(tmp_path: Path) -> None:
    pytest.importorskip("ray.rllib")
    import yaml

    run = tmp_path / "cake"
    result = invoke("train", "cake_negotiation", "--backend", "rllib", "--steps", 512, "--lr", "0.001",
                    "--hidden", "32,32", "--out", run)
    assert result.exit_code == 0, result.output
    assert "trained with RLlib" in result.stdout and "built-in format" in result.stdout
    saved = yaml.safe_load((run / "config.yaml").read_text())
    assert saved["lr"] == 0.001 and list(saved["hidden"]) == [32, 32]


@pytest.mark.slow
@pytest.mark.filterwarnings(RAY_WARNING)
def test_an_rllib_run_is_evaluated_reported_and_played(tmp_path: Path) -> None:
    pytest.importorskip("ray.rllib")
    run = tmp_path / "cake"
    result = invoke("train", "cake_negotiation", "--backend", "rllib", "--steps", 512, "--out", run, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["checkpoint"] == str(run / "checkpoint.pt")
    result = invoke("evaluate", "cake_negotiation", "--policy", run, "--episodes", 20, "--json")
    assert result.exit_code == 0, result.output
    card = json.loads(result.stdout)
    assert (run / "eval" / "scorecard.json").exists()
    assert any(c["name"] == "learning_curve" for c in card["checks"])
    result = invoke("report", run)
    assert result.exit_code == 0, result.output
    page = (run / "report.html").read_text()
    assert "rllib" in page and "not recorded" not in page.split("Training config")[1][:400]
    result = invoke("play", "cake_negotiation", "--policy", run, "--episodes", 3, "--json")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)) == 3


@pytest.mark.slow
@pytest.mark.filterwarnings(RAY_WARNING)
def test_evolve_trains_its_stages_on_rllib(tmp_path: Path) -> None:
    pytest.importorskip("ray.rllib")
    out = tmp_path / "evolve"
    result = invoke("evolve", "cake_negotiation", "--backend", "rllib", "--stages", 2, "--steps", 1000,
                    "--lr", 1e-3, "--out", out, "--json")
    assert result.exit_code == 0, result.output
    stages = json.loads(result.stdout)["stages"]
    assert [s["checkpoint"] for s in stages] == [str(out / f"stage{k}" / "checkpoint.pt") for k in (0, 1)]
    for k in (0, 1):
        assert (out / f"stage{k}" / "train.jsonl").exists() and (out / f"stage{k}" / "rllib_checkpoint").is_dir()
    second = yaml.safe_load((out / "stage1" / "config.yaml").read_text())
    assert second["init_from"] == str(out / "stage0" / "checkpoint.pt")  # the policy carried over
    assert second["lr"] == 1e-3 and second["seed"] == 1
    assert yaml.safe_load((out / "config.yaml").read_text())["activation"] == "tanh"  # RLlib's settings, resolved
    assert invoke("report", out).exit_code == 0


@pytest.mark.slow
@pytest.mark.filterwarnings(RAY_WARNING)
def test_warm_start_puts_the_policy_into_the_learner_and_the_env_runner(tmp_path: Path) -> None:
    pytest.importorskip("ray.rllib")
    from gymwright.train.rllib import build_config, ray_session, warm_start

    path = tiny_builtin(tmp_path)
    roles, _, _ = policy_layout("cake_negotiation", {})
    weights = warm_weights(path, "cake_negotiation", roles, hidden=(64, 64), activation="tanh")
    compiled = compile_spec("cake_negotiation", {})
    with ray_session():
        algo = build_config(compiled.source, "cake_negotiation", compiled.params, ["bargainer"], seed=0,
                            num_env_runners=0, steps=256).build_algo()
        try:
            warm_start(algo, weights)
            learner = algo.learner_group.get_weights()["bargainer"]
            runner_module = algo.env_runner.module["bargainer"].state_dict()
        finally:
            algo.stop()
    acting = [k for k in weights["bargainer"] if k.startswith(("encoder.actor_encoder.", "pi."))]
    assert len(acting) == 6  # two hidden layers and the head, weights and biases
    for key, value in weights["bargainer"].items():  # the learner trains from all of it
        assert np.allclose(np.asarray(learner[key]), value.numpy()), key
    for key in acting:  # the env runner samples with the actor (RLlib sends it the inference-only part)
        assert torch.allclose(runner_module[key], weights["bargainer"][key]), key


@pytest.mark.slow
@pytest.mark.filterwarnings(RAY_WARNING)
def test_a_curriculum_of_mixtures_of_agent_counts_trains_on_rllib(tmp_path: Path) -> None:
    """Buckets of 2 and 3 walkers spread over RLlib's envs; the policy carries over; the log has
    each copy's figures, which the curriculum's training evidence reads."""
    pytest.importorskip("ray.rllib")
    from gymwright.curriculum import CurriculumOptions, evolve
    from gymwright.engineer import FixedEngineer
    from gymwright.engineer.mixture import Mixture
    from gymwright.train.logger import read_log

    opts = CurriculumOptions(stages=2, steps_per_stage=256, num_envs=4, eval_episodes=10, record_episodes=2, knobs=(),
                             backend="rllib", train={"rollout_len": 16})
    records = evolve("mapf_frozenlake", Mixture.over("n_agents", [2, 3], {"size": 4}), FixedEngineer(), tmp_path, opts)
    assert [len(r.trained_mixture) for r in records] == [2, 2]
    rows = read_log(tmp_path / "stage1")
    assert {f"config{c}/metrics/valid" for c in range(4)} <= set().union(*rows)  # copies 0-1: 2 walkers, 2-3: 3
    assert yaml.safe_load((tmp_path / "stage1" / "config.yaml").read_text())["init_from"] == records[0].checkpoint
    policy = load_policy(records[1].checkpoint)
    assert policy.n_agents == 2 and all(np.isfinite(r.success) for r in records)


@pytest.mark.slow
@pytest.mark.long(117)  # seconds alone on the slow host (pytest --durations)
@pytest.mark.filterwarnings(RAY_WARNING)
def test_the_demo_trains_on_rllib(tmp_path: Path) -> None:
    pytest.importorskip("ray.rllib")
    out = tmp_path / "demo"
    result = invoke("demo", "--backend", "rllib", "--stages", 1, "--steps", 1000, "--episodes", 10, "--out", out,
                    "--store", tmp_path / "store", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["checkpoint"] == str(out / "stage0" / "checkpoint.pt")
    for folder in (out / "stage0", out / "baseline" / "stage0"):  # the engineer's arm and the fixed one
        assert (folder / "rllib_checkpoint").is_dir() and (folder / "train.jsonl").exists()
    assert Path(data["report"]).exists()
