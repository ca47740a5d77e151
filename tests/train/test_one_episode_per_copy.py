"""`play_episodes` keeps each copy's first episode, so its copies need not start another: with
`restart = False` a finished copy stays as it ended. The episodes played are the same, and an
evaluation on a solved pool solves only the layouts it plays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gymwright.compile.batch import compile_batch
from gymwright.mapf import lazy
from gymwright.train import episodes as ep
from gymwright.train import play_episodes, random_legal_policy
from gymwright.train.rollout import make_env

LAKE = {"size": 4, "n_agents": 2, "hole_density": 0.2, "max_steps": 12}


def test_a_finished_copy_stays_as_it_ended() -> None:
    env = compile_batch("mapf_frozenlake", LAKE, batch_size=16)
    env.restart = False
    env.reset(seed=3)
    tiles = env.v.tiles.copy()
    policy = random_legal_policy(0)
    ended = np.zeros(16, dtype=bool)
    for _ in range(14):  # past max_steps: every copy has ended
        _, _, term, trunc, infos = env.step(policy.act(env.obs_buf, env.masks))
        done = term[:, 0] | trunc[:, 0]
        assert done[ended].all()  # once ended, reported done at every step after
        ended |= done
    assert ended.all()
    np.testing.assert_array_equal(env.v.tiles, tiles)  # no copy drew another layout


def same_result(a: ep.EvalResult, b: ep.EvalResult) -> None:
    np.testing.assert_array_equal(a.episode_returns, b.episode_returns)
    assert a.episode_metrics.keys() == b.episode_metrics.keys()
    for k in a.episode_metrics:
        np.testing.assert_array_equal(a.episode_metrics[k], b.episode_metrics[k])
    assert a.length == b.length


@pytest.mark.parametrize("params", [
    LAKE,
    [LAKE, {**LAKE, "size": 5}],  # a mixed batch (two map sizes)
    [LAKE, {**LAKE, "n_agents": 3}],  # a padded one (two agent counts)
], ids=["one config", "mixed", "padded"])
def test_the_episodes_played_are_the_ones_restarting_copies_play(params: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    policy_seed, n = 7, 24
    kept = play_episodes("mapf_frozenlake", params, random_legal_policy(policy_seed), n, seed=40)
    switched: list[Any] = []
    real = ep.one_episode_per_copy

    def spy(benv: Any) -> None:
        real(benv)
        switched.extend(e.restart for e in getattr(benv, "groups", None) or [benv])

    monkeypatch.setattr(ep, "one_episode_per_copy", spy)
    play_episodes("mapf_frozenlake", params, random_legal_policy(policy_seed), n, seed=40)
    assert switched and not any(switched)
    monkeypatch.setattr(ep, "one_episode_per_copy", lambda benv: None)  # every copy restarts, as before
    restarting = play_episodes("mapf_frozenlake", params, random_legal_policy(policy_seed), n, seed=40)
    same_result(kept, restarting)


def test_an_evaluation_solves_only_the_layouts_it_plays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GYMWRIGHT_CACHE", str(tmp_path))
    monkeypatch.setattr(lazy, "_LIVE", {})
    filled: list[int] = []
    real = lazy.LazyPool._fill
    monkeypatch.setattr(lazy.LazyPool, "_fill", lambda self, k: (filled.append(k), real(self, k)))
    params = {**LAKE, "wait_ratio": 0.4, "layout_pool": 500}
    play_episodes("mapf_frozenlake", params, random_legal_policy(0), 30, seed=5)
    assert 0 < len(filled) <= 30  # one draw per episode (fewer when two draw one slot)
    filled.clear()
    benv = make_env("mapf_frozenlake", [params], 30)  # restarting copies draw (and solve) more
    benv.reset(seed=5)
    policy = random_legal_policy(0)
    for _ in range(40):
        benv.step(policy.act(benv.obs_buf, benv.masks))
    assert len(filled) > 30
