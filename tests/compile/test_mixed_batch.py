"""Mixed batches: copies whose structural params (map size) differ, composed into one batch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from gymwright.compile.batch import compile_batch
from gymwright.compile.mixed import MixedBatchEnv
from gymwright.errors import GymwrightError
from gymwright.train import TrainConfig, load_policy, play_episodes, random_legal_policy, train
from gymwright.train import checkpoint as ck
from gymwright.train.ppo import TIME_KEYS
from gymwright.train.rollout import make_env

torch.set_num_threads(1)

SPEC = "mapf_frozenlake"
SIZES = [{"size": 4}, {"size": 6}]


def mixed_cfg(tmp_path: Path, **kw: object) -> TrainConfig:
    base = dict(spec=SPEC, params=SIZES, num_envs=8, rollout_len=8, total_steps=8 * 8 * 3, minibatches=2,
                epochs=2, hidden=(16,), checkpoint_every=1, out=tmp_path / "run")
    base.update(kw)
    return TrainConfig(**base)  # type: ignore[arg-type]


def test_a_single_structure_keeps_the_generated_env() -> None:
    env = compile_batch(SPEC, [{"hole_density": 0.1}, {"hole_density": 0.3}], batch_size=2)
    assert not isinstance(env, MixedBatchEnv)
    assert env.p.hole_density.tolist() == [0.1, 0.3]
    assert not isinstance(compile_batch(SPEC, [{"size": 4}, {}], batch_size=2), MixedBatchEnv)  # 4 is the default


def test_mixed_copies_step_as_if_each_ran_alone() -> None:
    """Interleaved sizes (groups are not contiguous): every copy equals the same copy of a
    single-size batch with the same seeds, step by step, through auto-resets."""
    sizes = [4, 6, 6, 4, 4, 6, 4, 6, 6]
    per_copy = [{"size": s, "hole_density": 0.3} for s in sizes]
    mixed = compile_batch(SPEC, per_copy, batch_size=len(sizes))
    assert isinstance(mixed, MixedBatchEnv)
    seed = 7
    alone = {}
    for s in (4, 6):
        idx = np.flatnonzero(np.array(sizes) == s)
        env = compile_batch(SPEC, {"size": s, "hole_density": 0.3}, batch_size=len(idx))
        env.reset(seed=seed + idx)
        alone[s] = (idx, env)
    obs, masks = mixed.reset(seed=seed)
    for idx, env in alone.values():
        assert np.array_equal(obs[idx], env.obs_buf) and np.array_equal(masks[idx], env.masks)
    rng = random_legal_policy(3)
    ended = 0
    for _ in range(80):
        actions = rng.act(mixed.obs_buf, mixed.masks)
        obs, rew, term, trunc, info = mixed.step(actions)
        done_global = np.zeros(len(sizes), dtype=bool)
        for idx, env in alone.values():
            o, r, te, tr, inf = env.step(actions[idx])
            assert np.array_equal(obs[idx], o) and np.array_equal(mixed.masks[idx], env.masks)
            assert np.array_equal(rew[idx], r) and np.array_equal(term[idx], te) and np.array_equal(trunc[idx], tr)
            assert np.array_equal(info["illegal"][idx], inf["illegal"])
            for name, x in inf["reward_terms"]["walker"].items():
                assert np.array_equal(info["reward_terms"]["walker"][name][idx], x)
            if "done_idx" in inf:
                done_global[idx[inf["done_idx"]]] = True
                at = np.searchsorted(info["done_idx"], idx[inf["done_idx"]])
                assert np.array_equal(info["done_idx"][at], idx[inf["done_idx"]])
                assert np.array_equal(info["final_obs"][at], inf["final_obs"])
                assert np.array_equal(info["episode_return"][at], inf["episode_return"])
                assert np.array_equal(info["episode_length"][at], inf["episode_length"])
                for name, x in inf["metrics"].items():
                    assert np.array_equal(info["metrics"][name][at], x)
        if done_global.any():
            assert np.array_equal(info["done_idx"], np.flatnonzero(done_global))  # global, ascending
            assert "final_state" not in info  # the two sizes have no one state width
            ended += int(done_global.sum())
        else:
            assert "done_idx" not in info
    assert ended > len(sizes)  # several auto-resets happened


def test_mismatched_shapes_are_a_clear_error() -> None:
    with pytest.raises(GymwrightError, match=r"obs dims 59 vs \d+.*view_radius 1 vs 2") as e:
        compile_batch(SPEC, [{"view_radius": 1}, {"view_radius": 2}], batch_size=2)
    assert "{'view_radius': 1}" in str(e.value) and "hint" in str(e.value)
    with pytest.raises(GymwrightError, match=r"agents 2 vs 3.*n_agents 2 vs 3"):  # the trainer pads instead (test_train_padded)
        compile_batch(SPEC, [{"size": 4}] * 2 + [{"size": 6, "n_agents": 3}] * 2, batch_size=4)


def test_state_of_a_mixed_batch_needs_one_width() -> None:
    env = make_env(SPEC, SIZES, 4)
    env.reset(seed=0)
    with pytest.raises(GymwrightError, match=r"\(MAPPO\).*\n.*ippo"):
        env.state()
    same = make_env(SPEC, [{"size": 4, "hole_density": 0.1}, {"size": 4, "hole_density": 0.3}], 4)
    same.reset(seed=0)
    assert same.state().shape[0] == 4


def test_env_state_round_trip_of_a_mixed_batch() -> None:
    a, b = make_env(SPEC, SIZES, 6), make_env(SPEC, SIZES, 6)
    a.reset(seed=3)
    b.reset(seed=99)
    rng = random_legal_policy(1)
    for _ in range(9):
        a.step(rng.act(a.obs_buf, a.masks))
    ck.restore_env_state(b, ck.env_state(a))
    assert np.array_equal(a.obs_buf, b.obs_buf)
    for _ in range(40):
        acts = rng.act(a.obs_buf, a.masks)
        oa, ra, ta, _, ia = a.step(acts)
        ob, rb, tb, _, ib = b.step(acts)
        assert np.array_equal(oa, ob) and np.array_equal(ra, rb) and np.array_equal(ta, tb)
        assert np.array_equal(ia.get("done_idx", []), ib.get("done_idx", []))


@pytest.mark.slow
def test_train_on_a_size_mixture_then_play_another_size(tmp_path: Path) -> None:
    result = train(mixed_cfg(tmp_path))
    assert result.updates == 3
    saved = ck.load(result.checkpoint)
    assert saved["params"] == SIZES
    rows = [row for row in result.history if row.get("charts/episodes")]
    assert any("config0/return/walker" in row and "config1/metrics/all_reached" in row for row in rows)
    policy = load_policy(result.checkpoint, spec=SPEC)
    on8 = play_episodes(SPEC, {"size": 8}, policy, episodes=4, seed=100)  # a size it never saw
    assert on8.episodes == 4 and np.isfinite(on8.returns["walker"])
    three = [{"size": 4}, {"size": 6}, {"size": 8}]
    mixed = play_episodes(SPEC, three, policy, episodes=6, seed=100, deterministic=True)
    assert mixed.episode_returns.shape == (6, 2) and set(mixed.metrics) >= {"all_reached", "length"}
    # episode i of the mixed evaluation is the one its config plays alone with seed 100 + i
    for i in (0, 3, 5):
        alone = play_episodes(SPEC, three[i // 2], policy, episodes=1, seed=100 + i, deterministic=True)
        assert np.array_equal(alone.episode_returns[0], mixed.episode_returns[i])
        assert alone.episode_metrics["length"][0] == mixed.episode_metrics["length"][i]

def test_mappo_on_a_size_mixture_says_to_use_ippo(tmp_path: Path) -> None:
    with pytest.raises(GymwrightError, match="ippo"):
        train(mixed_cfg(tmp_path, algo="mappo"))


@pytest.mark.slow  # over 5 s, and not its stage's one smoke test (the default suite's 4-minute budget)
def test_resume_a_mixed_run_bit_for_bit(tmp_path: Path) -> None:
    full = train(mixed_cfg(tmp_path, out=tmp_path / "full", total_steps=8 * 8 * 4, checkpoint_every=2))

    def stop_at_3(row: dict) -> None:
        if row["update"] == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(mixed_cfg(tmp_path, out=tmp_path / "part", total_steps=8 * 8 * 4, checkpoint_every=2), progress=stop_at_3)
    resumed = train(mixed_cfg(tmp_path, out=tmp_path / "part", total_steps=8 * 8 * 4, checkpoint_every=2, resume=True))
    strip = [{k: v for k, v in row.items() if k not in TIME_KEYS} for row in (*full.history, *resumed.history)]
    assert strip[:4] == strip[4:]
    a, b = ck.load(full.checkpoint), ck.load(resumed.checkpoint)
    for name, x in a["model"].items():
        assert torch.equal(x, b["model"][name]), name


def test_a_scripted_baseline_plays_on_a_mixed_batch_as_on_each_config_alone() -> None:
    from gymwright.train import play_episodes
    from gymwright.train.baselines import scripted_policy

    sizes = [{"size": 3}, {"size": 4}, {"size": 3}, {"size": 4}]
    mixed = play_episodes("mapf_frozenlake", sizes, scripted_policy("straight_to_goal"), episodes=4, seed=50)
    for i, params in enumerate(sizes):
        alone = play_episodes("mapf_frozenlake", params, scripted_policy("straight_to_goal"), episodes=1, seed=50 + i)
        assert mixed.episode_metrics["length"][i] == alone.episode_metrics["length"][0]
        assert np.allclose(mixed.episode_returns[i], alone.episode_returns[0])


def test_a_finished_episode_reports_its_final_global_state() -> None:
    """`final_state` of a finished copy is the Python backend's state() at that episode's end."""
    from gymwright.compile import compile_spec

    params = {"size": 3, "n_agents": 2, "max_steps": 6}
    benv = compile_batch("mapf_frozenlake", params, batch_size=3)
    env = compile_spec("mapf_frozenlake", params).parallel_env(**params)
    benv.reset(seed=40)
    env.reset(seed=40)
    rng = np.random.default_rng(0)
    for _ in range(6):
        acts = rng.integers(0, 5, size=(3, 2))
        _, _, _, _, infos = benv.step(acts)
        env.step({a: int(acts[0, i]) for i, a in enumerate(env.possible_agents) if a in env.agents})
        if "done_idx" in infos and 0 in infos["done_idx"]:
            row = list(infos["done_idx"]).index(0)
            assert np.allclose(infos["final_state"][row], env.state())
            return
    pytest.fail("copy 0 did not finish within max_steps")
