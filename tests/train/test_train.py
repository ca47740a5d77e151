"""The built-in PPO trainer: masks, GAE, learning, checkpoints and resume, mixed configs, MAPPO."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from gymwright.errors import GymwrightError
from gymwright.train import (
    CheckpointError,
    TrainConfig,
    load_policy,
    play_episodes,
    ppo,
    random_legal_policy,
    train,
)
from gymwright.train import checkpoint as ck
from gymwright.train.policy import ActorCritic, Policy, Role
from gymwright.train.ppo import TIME_KEYS
from gymwright.train.rollout import gae, make_env

torch.set_num_threads(1)

# stag is dominant with threshold 1 (4 > 3): random play earns 3.5 a round, the best 4
EASY = {"spec": "stag_hunt", "params": {"threshold": 1, "rounds": 2}}


def small(tmp_path: Path, **kw: object) -> TrainConfig:
    base = dict(spec="cake_negotiation", num_envs=32, rollout_len=8, total_steps=32 * 8 * 3,
                checkpoint_every=1, out=tmp_path / "run")
    base.update(kw)
    return TrainConfig(**base)  # type: ignore[arg-type]


def same_rows(a: list[dict], b: list[dict]) -> bool:
    strip = [{k: v for k, v in row.items() if k not in TIME_KEYS} for row in (*a, *b)]
    return strip[: len(a)] == strip[len(a):]


# --------------------------------------------------------------------------- masks
def test_policy_never_samples_an_illegal_action() -> None:
    torch.manual_seed(0)
    roles = [Role("a", 0, 3, 5, 7)]
    policy = Policy(ActorCritic(roles, 4, (16,), centralized=False), 3)
    rng = np.random.default_rng(0)
    masks = (rng.random((4096, 3, 7)) < 0.3).astype(np.int8)
    masks[:100] = 0  # no legal action at all: -1
    obs = rng.normal(size=(4096, 3, 5)).astype(np.float32)
    for deterministic in (False, True):
        acts = policy.act(obs, masks, deterministic)
        legal = np.take_along_axis(masks, np.maximum(acts, 0)[..., None], -1)[..., 0] == 1
        none = ~masks.any(-1)
        assert (acts[none] == -1).all()
        assert legal[~none].all()


def test_training_sends_only_legal_actions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = {"illegal": 0, "steps": 0, "no_action": 0}

    def spying_make_env(*args, **kw):
        benv = make_env(*args, **kw)
        step = benv.step

        def spy(actions):
            out = step(actions)
            seen["illegal"] += int(out[4]["illegal"].sum())
            seen["no_action"] += int((actions == -1).sum())
            seen["steps"] += 1
            return out

        benv.step = spy
        return benv

    monkeypatch.setattr(ppo, "make_env", spying_make_env)
    train(small(tmp_path))
    assert seen["steps"] == 3 * 8
    assert seen["illegal"] == 0
    assert seen["no_action"] == 3 * 8 * 32  # turn-based: one of the two bargainers waits each step


# --------------------------------------------------------------------------- GAE
def test_gae_matches_a_hand_computation() -> None:
    g, lam = 0.9, 0.8
    r = torch.tensor([[1.0], [0.0], [2.0], [0.5]])
    v = torch.tensor([[0.5], [1.0], [1.5], [0.2]])
    last = torch.tensor([0.7])
    done = torch.tensor([[False], [True], [False], [True]])  # ends at t=1 (terminated) and t=3 (truncated)
    boot = torch.tensor([[0.0], [0.0], [0.0], [0.9]])  # the value of t=3's final observation
    adv, ret = gae(r, v, last, done, boot, g, lam)
    d3 = 0.5 + g * 0.9 - 0.2
    d2 = 2.0 + g * 0.2 - 1.5
    d1 = 0.0 + g * 0.0 - 1.0
    d0 = 1.0 + g * 1.0 - 0.5
    a3 = d3
    a2 = d2 + g * lam * a3
    a1 = d1
    a0 = d0 + g * lam * a1
    assert torch.allclose(adv[:, 0], torch.tensor([a0, a1, a2, a3]))
    assert torch.allclose(ret, adv + v)


def test_turn_based_gae_runs_on_each_agents_own_timeline() -> None:
    # two agents take turns (agent 0 at even steps, agent 1 at odd ones); the first episode is
    # truncated after step 3 (agent 0 waiting there), the second runs past the rollout
    g, lam = 0.9, 0.8
    r = torch.tensor([[1.0, 0.5], [2.0, -1.0], [0.0, 0.25], [3.0, 1.5], [0.5, 0.0], [1.0, 2.0]])
    v = torch.tensor([[0.4, 0.1], [0.3, 0.6], [0.8, 0.2], [0.7, 0.9], [0.1, 0.5], [0.6, 0.3]])
    acted = torch.tensor([[True, False], [False, True]] * 3)
    done = torch.tensor([[False] * 2, [False] * 2, [False] * 2, [True] * 2, [False] * 2, [False] * 2])
    boot = torch.zeros(6, 2)
    boot[3] = torch.tensor([0.35, 0.45])  # values of the truncated episode's final observation
    last = torch.tensor([0.2, 0.7])  # values of the observation after the rollout
    adv, ret = gae(r, v, last, done, boot, g, lam, acted=acted)

    def rv(t: int, i: int) -> float:
        return float(r[t, i]), float(v[t, i])

    # agent 0: acts at 0 and 2 (rewards up to its next turn; step 3 ends the episode), then at 4
    (r0, v0), (r1, _), (r2, v2), (r3, _), (r4, v4), (r5, _) = (rv(t, 0) for t in range(6))
    a2 = r2 + g * r3 + g**2 * 0.35 - v2
    a0 = r0 + g * r1 + g**2 * v2 - v0 + g**2 * lam * a2
    a4 = r4 + g * r5 + g**2 * 0.2 - v4
    for t, a in ((0, a0), (2, a2), (4, a4)):
        assert adv[t, 0].item() == pytest.approx(a, abs=1e-6), t
    # its waiting rows get the return seen from there
    for t, target in ((1, r1 + g * (v2 + a2)), (3, r3 + g * 0.35), (5, r5 + g * 0.2)):
        assert ret[t, 0].item() == pytest.approx(target, abs=1e-6), t
    # agent 1: acts at 1 and 3 (the last step of the truncated episode), then at 5
    (q0, _), (q1, w1), (q2, _), (q3, w3), (q4, _), (q5, w5) = (rv(t, 1) for t in range(6))
    b3 = q3 + g * 0.45 - w3
    b1 = q1 + g * q2 + g**2 * w3 - w1 + g**2 * lam * b3
    b5 = q5 + g * 0.7 - w5
    for t, a in ((1, b1), (3, b3), (5, b5)):
        assert adv[t, 1].item() == pytest.approx(a, abs=1e-6), t
    for t, target in ((0, q0 + g * (w1 + b1)), (2, q2 + g * (w3 + b3)), (4, q4 + g * (w5 + b5))):
        assert ret[t, 1].item() == pytest.approx(target, abs=1e-6), t
    assert torch.allclose(ret, adv + v)
    # every agent acting every step is plain GAE
    plain = gae(r, v, last, done, boot, g, lam)
    assert all(torch.allclose(x, y) for x, y in zip(plain, gae(r, v, last, done, boot, g, lam,
                                                               acted=torch.ones(6, 2, dtype=torch.bool)), strict=True))


# --------------------------------------------------------------------------- learning
def test_short_training_beats_random_on_an_easy_spec(tmp_path: Path) -> None:
    cfg = TrainConfig(**EASY, num_envs=128, rollout_len=8, total_steps=128 * 8 * 12, lr=3e-3,
                      out=tmp_path / "run", checkpoint_every=100)
    result = train(cfg)
    trained = play_episodes(EASY["spec"], EASY["params"], load_policy(result.checkpoint), episodes=400, seed=10**6)
    rand = play_episodes(EASY["spec"], EASY["params"], random_legal_policy(0), episodes=400, seed=10**6)
    assert rand.returns["hunter"] == pytest.approx(7.0, abs=0.2)
    assert trained.returns["hunter"] - trained.ci95["hunter"] > rand.returns["hunter"] + rand.ci95["hunter"]
    assert trained.returns["hunter"] > 7.6
    assert result.history[-1]["charts/return/hunter"] > result.history[0]["charts/return/hunter"]
    for key in ("reward_terms/hunter/stag", "losses/policy_loss", "losses/value_loss", "metrics/stag_share"):
        assert key in result.history[-1]


def test_evaluate_reports_returns_with_confidence_intervals() -> None:
    res = play_episodes("iterated_prisoners_dilemma", {"rounds": 1}, random_legal_policy(0), episodes=500, seed=0)
    assert res.episode_returns.shape == (500, 2)
    assert res.returns["player"] == pytest.approx(2.25, abs=3 * res.ci95["player"])
    assert 0 < res.ci95["player"] < 0.3
    assert res.metrics["cooperation_rate"] == pytest.approx(0.5, abs=0.1)
    assert res.length == 1


# --------------------------------------------------------------------------- checkpoints
def test_checkpoint_round_trip(tmp_path: Path) -> None:
    result = train(small(tmp_path))
    saved = ck.load(result.checkpoint)
    assert saved["update"] == 3 and saved["env_steps"] == 3 * 8 * 32
    assert saved["spec_hash"] == ck.spec_identity("cake_negotiation")[0]
    assert saved["params"] == [{}]
    policy = load_policy(tmp_path / "run")  # the folder works too
    for name, x in policy.model.state_dict().items():
        assert torch.equal(x, saved["model"][name])
    obs, masks = make_env("cake_negotiation", [{}], 64).reset(seed=5)
    assert (policy.act(obs, masks, True) == load_policy(result.checkpoint).act(obs, masks, True)).all()
    assert not list(Path(result.checkpoint).parent.glob(".*tmp*"))  # written atomically


def two_mapf_envs_one_stepped(copies: int = 16) -> tuple[Any, Any, Any]:
    """Two batch envs of `copies` copies reset with other seeds, the first stepped 7 times; and
    the random legal policy that stepped it."""
    a, b = make_env("mapf_frozenlake", [{}], copies), make_env("mapf_frozenlake", [{}], copies)
    a.reset(seed=3)
    b.reset(seed=99)
    rng = random_legal_policy(1)
    for _ in range(7):
        a.step(rng.act(a.obs_buf, a.masks))
    return a, b, rng


def test_env_state_round_trip_replays_exactly() -> None:
    a, b, rng = two_mapf_envs_one_stepped()
    ck.restore_env_state(b, ck.env_state(a))
    for _ in range(40):
        acts = rng.act(a.obs_buf, a.masks)
        oa, ra, ta, _, _ = a.step(acts)
        ob, rb, tb, _, _ = b.step(acts)
        assert np.array_equal(oa, ob) and np.array_equal(ra, rb) and np.array_equal(ta, tb)


@pytest.mark.parametrize("copies", [16, 8])  # 8: as many copies as MAPF has metrics, a square array
def test_env_state_saved_with_the_old_metric_layout_restores_the_same_episode_results(copies: int) -> None:
    """Checkpoints written before the batch env kept its metrics metric-major: (copies, metrics),
    and no `metric_layout` mark."""
    a, b, rng = two_mapf_envs_one_stepped(copies)
    state = ck.env_state(a)
    del state["metric_layout"]
    kind, acc = state["metric_acc"]
    state["metric_acc"] = (kind, np.ascontiguousarray(acc.T))
    ck.restore_env_state(b, state)
    assert b.metric_acc.shape == a.metric_acc.shape and np.array_equal(a.metric_acc, b.metric_acc)
    finished = 0
    for _ in range(60):
        acts = rng.act(a.obs_buf, a.masks)
        ia, ib = a.step(acts)[4], b.step(acts)[4]
        for name, x in ia.get("metrics", {}).items():
            assert np.array_equal(x, ib["metrics"][name])
        finished += len(ia.get("done_idx", []))
    assert finished > 0


def test_resume_continues_bit_for_bit(tmp_path: Path) -> None:
    full = train(small(tmp_path, out=tmp_path / "full", total_steps=32 * 8 * 5, checkpoint_every=2))

    def stop_at_3(row: dict) -> None:
        if row["update"] == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # stopped after update 3, checkpoint at 2
        train(small(tmp_path, out=tmp_path / "part", total_steps=32 * 8 * 5, checkpoint_every=2), progress=stop_at_3)
    assert ck.load(tmp_path / "part")["update"] == 2
    resumed = train(small(tmp_path, out=tmp_path / "part", total_steps=32 * 8 * 5, checkpoint_every=2, resume=True))
    assert resumed.updates == 5
    assert same_rows(full.history, resumed.history)
    a, b = ck.load(full.checkpoint), ck.load(resumed.checkpoint)
    for name, x in a["model"].items():
        assert torch.equal(x, b["model"][name]), name


KILL_SCRIPT = textwrap.dedent("""
    import sys, time, torch
    from gymwright.train import TrainConfig, train
    out, updates = sys.argv[1], int(sys.argv[2])
    cfg = TrainConfig(spec="cake_negotiation", num_envs=32, rollout_len=8, total_steps=32 * 8 * updates,
                      checkpoint_every=2, out=out, algo="mappo")
    train(cfg, progress=lambda row: time.sleep(0.4))
""")


@pytest.mark.slow  # over 5 s; the suite's time budget (CI runs it with -m slow)
def test_resume_after_kill_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    updates = 8
    run = tmp_path / "killed"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(run), str(updates)], env=env)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            if (run / "checkpoint.pt").exists() and ck.load(run / "checkpoint.pt")["update"] >= 2:
                break
            assert proc.poll() is None, "the training subprocess ended early"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    stopped_at = ck.load(run / "checkpoint.pt")["update"]
    assert 2 <= stopped_at < updates
    cfg = dict(spec="cake_negotiation", num_envs=32, rollout_len=8, total_steps=32 * 8 * updates,
               checkpoint_every=2, algo="mappo")
    resumed = train(TrainConfig(**cfg, out=run, resume=True))
    full = train(TrainConfig(**cfg, out=tmp_path / "full"))
    assert resumed.updates == full.updates == updates
    assert same_rows(full.history, resumed.history)
    assert resumed.final_return == full.final_return
    a, b = ck.load(full.checkpoint), ck.load(resumed.checkpoint)
    for name, x in a["model"].items():
        assert torch.equal(x, b["model"][name]), name
    lines = (run / "train.jsonl").read_text().splitlines()
    assert [int(__import__("json").loads(x)["update"]) for x in lines] == list(range(1, updates + 1))


def test_resume_refuses_another_spec_or_params(tmp_path: Path) -> None:
    train(small(tmp_path, total_steps=32 * 8))
    with pytest.raises(CheckpointError, match="was trained on spec cake_negotiation"):
        train(small(tmp_path, spec="stag_hunt", resume=True))
    with pytest.raises(CheckpointError, match="was trained with params"):
        train(small(tmp_path, params={"discount": 0.5}, resume=True))
    with pytest.raises(CheckpointError, match="was trained on spec"):
        load_policy(tmp_path / "run", spec="stag_hunt")


def test_bad_config_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GymwrightError, match="unknown algo 'ppo'"):
        train(small(tmp_path, algo="ppo"))
    with pytest.raises(GymwrightError, match="out of its range"):
        train(small(tmp_path, params={"discount": 7.0}))


# --------------------------------------------------------------------------- mixed configs, MAPPO
def test_mixed_configs_spread_over_the_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    envs = []

    def keep(*args, **kw):
        envs.append(make_env(*args, **kw))
        return envs[-1]

    monkeypatch.setattr(ppo, "make_env", keep)
    configs = [{"discount": 0.5}, {"discount": 0.9}]
    result = train(small(tmp_path, params=configs, total_steps=32 * 8 * 2))
    assert envs[0].p.discount.tolist() == [0.5] * 16 + [0.9] * 16
    row = result.history[-1]
    assert "config0/return/bargainer" in row and "config1/return/bargainer" in row
    assert ck.load(result.checkpoint)["params"] == configs


def test_mappo_critic_reads_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    envs = []

    def spying_make_env(*args, **kw):
        benv = make_env(*args, **kw)
        state = benv.state

        def spy(idx=None):
            calls["n"] += idx is None  # the critic's calls, not the final states of finished episodes
            return state(idx)

        benv.state = spy
        envs.append(benv)
        return benv

    monkeypatch.setattr(ppo, "make_env", spying_make_env)
    result = train(small(tmp_path, algo="mappo", spec="mapf_frozenlake", total_steps=32 * 8))
    S = envs[0].state().shape[1]
    assert calls["n"] >= 8  # one state() per rollout step, and one for the last value
    policy = load_policy(result.checkpoint)
    critic_in = policy.model.nets[0].critic[0].in_features
    actor_in = policy.model.nets[0].actor[0].in_features
    obs_dim = envs[0].ROLES[0][3]
    assert critic_in == S + 2 and actor_in == obs_dim  # the state needs the agent's index, the obs not
    ippo = load_policy(train(small(tmp_path, spec="mapf_frozenlake", total_steps=32 * 8, out=tmp_path / "i")).checkpoint)
    assert ippo.model.nets[0].critic[0].in_features == actor_in
    indexed = load_policy(train(small(tmp_path, spec="mapf_frozenlake", total_steps=32 * 8, agent_index=True,
                                      out=tmp_path / "x")).checkpoint)
    assert indexed.model.nets[0].actor[0].in_features == indexed.model.nets[0].critic[0].in_features == obs_dim + 2
