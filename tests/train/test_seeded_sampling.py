"""An evaluation samples a trained policy's actions from torch's stream seeded by its episode seed
(`seeded_sampling`): its result depends on the policy, the configs and the seed alone, and the
caller's stream is left where it was. And a batch of many configs is built without a module per
config (`make_env` reads each config's agent count from the checked spec)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

from gymwright.compile import batch
from gymwright.errors import GymwrightError
from gymwright.train import TrainConfig, load_policy, play_episodes, train
from gymwright.train.episodes import EvalResult, seeded_sampling
from gymwright.train.padded import PaddedBatchEnv
from gymwright.train.rollout import make_env

LAKE = {"size": 4, "n_agents": 2, "hole_density": 0.2, "max_steps": 12}


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> object:
    out = tmp_path_factory.mktemp("run")
    res = train(TrainConfig(spec="mapf_frozenlake", params=LAKE, total_steps=2048, num_envs=64, rollout_len=16,
                            out=out, seed=0))
    return load_policy(res.checkpoint)


def outcome(r: EvalResult) -> tuple[list[float], list[float]]:
    return r.episode_returns.ravel().tolist(), r.episode_metrics["valid"].tolist()


def test_the_policy_samples(policy: object) -> None:
    """The premise of the tests below: the same observations give other actions on other draws."""
    env = make_env("mapf_frozenlake", [LAKE], 64)
    obs, masks = env.reset(seed=1)
    torch.manual_seed(0)
    a = policy.act(obs, masks)  # type: ignore[attr-defined]
    torch.manual_seed(1)
    b = policy.act(obs, masks)  # type: ignore[attr-defined]
    assert (a != b).any()


def test_an_evaluation_does_not_depend_on_what_the_process_drew_before(policy: object) -> None:
    torch.manual_seed(11)
    first = play_episodes("mapf_frozenlake", LAKE, policy, episodes=60, seed=500)  # type: ignore[arg-type]
    torch.rand(12345)  # what a training run or another evaluation would draw in between
    again = play_episodes("mapf_frozenlake", LAKE, policy, episodes=60, seed=500)  # type: ignore[arg-type]
    assert outcome(first) == outcome(again)
    torch.manual_seed(999)
    third = play_episodes("mapf_frozenlake", LAKE, policy, episodes=60, seed=500)  # type: ignore[arg-type]
    assert outcome(first) == outcome(third)


def test_an_evaluation_leaves_the_callers_stream_where_it_was(policy: object) -> None:
    torch.manual_seed(5)
    expected = torch.rand(4)
    torch.manual_seed(5)
    play_episodes("mapf_frozenlake", LAKE, policy, episodes=20, seed=3)  # type: ignore[arg-type]
    assert torch.equal(torch.rand(4), expected)


def test_seeded_sampling_seeds_and_restores() -> None:
    torch.manual_seed(0)
    with seeded_sampling(42):
        inside = torch.rand(3)
    after = torch.rand(3)
    torch.manual_seed(42)
    assert torch.equal(inside, torch.rand(3))
    torch.manual_seed(0)
    assert torch.equal(after, torch.rand(3))


def test_a_mixture_of_many_configs_generates_one_module_per_structure(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight configs on two map sizes: two generated modules (the mixed batch's groups), none per
    config for its agent count. Before, each distinct config had a module of its own generated
    (about 0.16 s each: 48 for a domain-randomization stage)."""
    monkeypatch.setattr(batch, "_SOURCES", OrderedDict())
    made: list[int] = []
    real = batch.generate_batch
    monkeypatch.setattr(batch, "generate_batch", lambda cs: made.append(1) or real(cs))
    configs = [{**LAKE, "size": s, "wait_ratio": w, "hole_density": h}
               for s in (4, 5) for w in (0.0, 0.5) for h in (0.1, 0.2)]
    env = make_env("mapf_frozenlake", configs, 16)
    assert len(made) == 2
    obs, masks = env.reset(seed=0)
    assert obs.shape[:2] == (16, 2)


def test_agent_counts_still_split_a_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "_SOURCES", OrderedDict())
    configs = [LAKE, {**LAKE, "n_agents": 3}, {**LAKE, "wait_ratio": 0.5}]
    env = make_env("mapf_frozenlake", configs, 6)
    assert isinstance(env, PaddedBatchEnv) and env.N_AGENTS == 3
    _, masks = env.reset(seed=0)
    legal = masks.any(-1)  # (copies, agents): the third walker is padding in the 2-walker copies
    assert np.array_equal(legal[:, 2], [False, False, True, True, False, False])


def test_a_bad_config_in_a_mixture_is_a_clear_error() -> None:
    with pytest.raises(GymwrightError) as info:
        make_env("mapf_frozenlake", [LAKE, {**LAKE, "size": 99}], 4)
    assert "size" in str(info.value)


class Recorder:
    """An actor that draws torch's uniforms as a trained policy does and plays by a rule of its own."""

    def __init__(self, pick: str) -> None:
        self.pick, self.draws = pick, []

    def act(self, obs: np.ndarray, masks: np.ndarray, deterministic: bool = False) -> np.ndarray:
        u = torch.rand(masks.shape)
        self.draws.append(u)
        score = np.where(masks != 0, u.numpy() if self.pick == "max" else -u.numpy(), -np.inf)
        return np.where((masks != 0).any(-1), score.argmax(-1), -1)


def test_two_policies_judged_on_the_same_episodes_draw_the_same_numbers() -> None:
    a, b = Recorder("max"), Recorder("min")
    play_episodes("mapf_frozenlake", LAKE, a, episodes=30, seed=77)
    torch.rand(999)
    play_episodes("mapf_frozenlake", LAKE, b, episodes=30, seed=77)
    steps = min(len(a.draws), len(b.draws))
    assert steps >= 2
    for x, y in zip(a.draws[:steps], b.draws[:steps], strict=True):
        assert torch.equal(x, y)
