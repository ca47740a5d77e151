"""A curriculum whose learner imitates: the first stage starts from a clone of demonstrations of
its mixture, every stage can keep an imitation loss on its own mixture's demonstrations, and the
demonstrations' env steps come out of each stage's budget. With a relabeller (DAgger) the later
stages imitate the previous policy's own play, labelled, added to what it was trained on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.curriculum import CurriculumOptions, evolve
from gymwright.engineer import FixedEngineer
from gymwright.engineer.mixture import Bucket, Mixture
from gymwright.errors import GymwrightError
from gymwright.train import load_policy
from gymwright.train.checkpoint import load
from gymwright.train.imitation import Demos

SPEC = "mapf_frozenlake"
SMALL = {"size": 3, "n_agents": 2, "max_steps": 10}


class Teacher:
    """Random legal play of a real env, labelled with a fixed rule's action (wait when legal, else the
    first legal move); it records what it was asked to demonstrate."""

    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, Any], int, int]] = []

    def __call__(self, spec: Any, params: dict[str, Any], episodes: int, seed: int) -> Demos:
        self.calls.append((dict(params), episodes, seed))
        env = compile_spec(spec, params).parallel_env()
        rng = np.random.default_rng(seed)
        obs_l, mask_l, act_l, steps = [], [], [], 0
        for ep in range(episodes):
            obs, infos = env.reset(seed=seed + ep)
            while env.agents:
                for a in env.agents:
                    m = np.asarray(infos[a]["action_mask"], bool)
                    obs_l.append(np.asarray(obs[a], np.float32))
                    mask_l.append(m)
                    act_l.append(int(np.flatnonzero(m)[-1]))
                obs, _, _, _, infos = env.step({a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"])))
                                                for a in env.agents})
                steps += 1
        return Demos(np.stack(obs_l), np.stack(mask_l), np.array(act_l), steps, episodes)


class Relabel:
    """The policy of the checkpoint plays a real env; every state is labelled with the Teacher's rule.
    It records (params, episodes, seed, checkpoint) of each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, Any], int, int, str]] = []

    def __call__(self, spec: Any, params: dict[str, Any], episodes: int, seed: int, checkpoint: str) -> Demos:
        self.calls.append((dict(params), episodes, seed, checkpoint))
        env, policy = compile_spec(spec, params).parallel_env(), load_policy(checkpoint)
        obs_l, mask_l, steps = [], [], 0
        for ep in range(episodes):
            obs, infos = env.reset(seed=seed + ep)
            while env.agents:
                o = np.stack([np.asarray(obs[a], np.float32) for a in env.possible_agents])
                m = np.stack([np.asarray(infos[a]["action_mask"], bool) for a in env.possible_agents])
                obs_l.extend(o)
                mask_l.extend(m)
                acts = policy.act(o[None], m[None])[0]
                obs, _, _, _, infos = env.step({a: int(acts[i]) for i, a in enumerate(env.possible_agents)})
                steps += 1
        acts = np.array([int(np.flatnonzero(m)[-1]) for m in mask_l])
        return Demos(np.stack(obs_l), np.stack(mask_l), acts, steps, episodes)


def mixture() -> Mixture:
    return Mixture([Bucket(SMALL, 0.75, "size=3"), Bucket({**SMALL, "size": 4}, 0.25, "size=4")])


def options(teacher: Teacher, coef: float, steps: int = 2048) -> CurriculumOptions:
    return CurriculumOptions(stages=2, steps_per_stage=steps, num_envs=16, eval_episodes=8, record_episodes=2, knobs=(),
                             train={"rollout_len": 8}, demonstrator=teacher, demo_episodes=8, imitation_coef=coef)


@pytest.mark.slow  # over 5 s: two stages of training with evaluation (CI runs it with -m slow)
def test_every_stage_imitates_its_mixture_within_its_budget(tmp_path: Path) -> None:
    teacher = Teacher()
    records = evolve(SPEC, mixture(), FixedEngineer(), tmp_path / "run", options(teacher, 0.5))
    assert [(c[0]["size"], c[1]) for c in teacher.calls] == [(3, 6), (4, 2), (3, 6), (4, 2)]  # by share, each stage
    assert len({c[2] for c in teacher.calls}) == 4  # fresh episodes for every bucket and stage
    for k, r in enumerate(records):
        assert r.demo_env_steps > 0 and r.env_steps + r.demo_env_steps <= 2048 + 16 * 8  # whole updates round up
        saved = load(r.checkpoint)
        assert saved["config"]["demos"] == str(tmp_path / "run" / f"stage{k}" / "demos.npz")
        assert saved["config"]["imitation_coef"] == 0.5
        assert "losses/imitation" in saved["history"][-1]
    first = load(records[0].checkpoint)["config"]["init_from"]
    assert first == str(tmp_path / "run" / "stage0" / "bc.pt")  # a BC init
    assert load(records[1].checkpoint)["config"]["init_from"] == records[0].policy  # then the policy carries over


@pytest.mark.slow
def test_without_an_imitation_loss_only_the_first_stage_is_demonstrated(tmp_path: Path) -> None:
    teacher = Teacher()
    records = evolve(SPEC, mixture(), FixedEngineer(), tmp_path / "run", options(teacher, 0.0))
    assert len(teacher.calls) == 2 and records[1].demo_env_steps == 0
    assert load(records[1].checkpoint)["config"]["demos"] is None


def test_demonstrations_that_cost_the_whole_stage_are_refused(tmp_path: Path) -> None:
    with pytest.raises(GymwrightError, match=r"stage 1: the demonstrations took \d+ env steps of the stage's 40"):
        evolve(SPEC, mixture(), FixedEngineer(), tmp_path / "run", options(Teacher(), 0.5, steps=40))


@pytest.mark.slow  # two stages of training (CI runs it with -m slow)
def test_dagger_stages_imitate_the_previous_policy_s_play_added_to_what_it_learned(tmp_path: Path) -> None:
    teacher, relabel = Teacher(), Relabel()
    opts = options(teacher, 0.5)
    opts.relabeller, opts.relabel_episodes = relabel, 4
    records = evolve(SPEC, mixture(), FixedEngineer(), tmp_path / "run", opts)
    assert len(teacher.calls) == 2  # only the first stage is demonstrated from scratch
    assert [(c[0]["size"], c[1], c[3]) for c in relabel.calls] == [(3, 3, records[0].policy), (4, 1, records[0].policy)]
    first, second = (Demos.load(tmp_path / "run" / f"stage{k}" / "demos.npz") for k in (0, 1))
    n = len(first.actions)
    assert len(second.actions) > n and np.array_equal(second.obs[:n], first.obs)  # aggregated, the old ones first
    assert second.episodes == first.episodes + 4
    assert records[1].demo_env_steps == second.env_steps - first.env_steps > 0  # only the new play is charged
    assert load(records[1].checkpoint)["config"]["demos"] == str(tmp_path / "run" / "stage1" / "demos.npz")


def test_a_relabeller_without_an_imitation_loss_is_refused_before_training(tmp_path: Path) -> None:
    opts = options(Teacher(), 0.0)
    opts.relabeller = Relabel()
    with pytest.raises(GymwrightError, match="a relabeller \\(DAgger\\) needs a demonstrator and an imitation_coef"):
        evolve(SPEC, mixture(), FixedEngineer(), tmp_path / "run", opts)
    assert not (tmp_path / "run").exists()
