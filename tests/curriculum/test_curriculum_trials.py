"""K candidate proposals in short trials, the best by validation kept (`gymwright.curriculum.trials`):
which candidates, the refusals, and a curriculum that tries them in local processes and on a local
Ray, every trial's env steps charged to the stage."""

from __future__ import annotations

from pathlib import Path

import pytest

from gymwright.curriculum import CurriculumOptions, evolve
from gymwright.curriculum.trials import candidates
from gymwright.engineer import FixedEngineer
from gymwright.engineer.levers import levers_for
from gymwright.engineer.mixture import Bucket, Mixture
from gymwright.errors import GymwrightError
from gymwright.spec.loader import read_data
from gymwright.train.checkpoint import load

SPEC = "mapf_frozenlake"
SMALL = {"size": 3, "n_agents": 2, "max_steps": 10, "hole_density": 0.1}


def test_the_candidates_are_the_proposal_its_lever_switches_and_the_kept_environment() -> None:
    menu = levers_for(read_data(SPEC)[0], ("park_cost", "imitation"))
    kept = Mixture([Bucket(SMALL, 1.0, "a")], {"park_cost": 0.0, "imitation": 0.0})
    proposed = Mixture([Bucket({**SMALL, "size": 4}, 1.0, "b")], {"park_cost": 0.5, "imitation": 0.0})
    got = candidates(proposed, kept, menu, 5)
    assert [why for _, why in got] == ["the engineer's proposal", "the proposal with park_cost 0.5 -> 0",
                                       "the proposal with imitation 0 -> 0.1", "the environment kept as it was"]
    assert got[1][0].levers == {"park_cost": 0.0, "imitation": 0.0} and got[1][0].buckets[0].params["size"] == 4
    assert len(candidates(proposed, kept, menu, 2)) == 2
    assert len(candidates(kept, kept, {}, 3)) == 1  # the proposal is the kept environment: one candidate


def options(**kw: object) -> CurriculumOptions:
    base = dict(stages=2, steps_per_stage=4096, num_envs=16, eval_episodes=8, record_episodes=2, knobs=(),
                train={"rollout_len": 8}, validation={"cell": {**SMALL, "size": 4}}, validation_episodes=10,
                trials=3, trial_steps=512, levers={"park_cost": None})
    return CurriculumOptions(**{**base, **kw})  # type: ignore[arg-type]


def test_trials_need_validation_and_must_leave_the_stage_a_budget(tmp_path: Path) -> None:
    with pytest.raises(GymwrightError, match="trials are judged on validation cells"):
        evolve(SPEC, SMALL, FixedEngineer(), tmp_path / "a", options(validation=None))
    with pytest.raises(GymwrightError, match="3 trials of 2,048 env steps take the whole stage of 4,096"):
        evolve(SPEC, SMALL, FixedEngineer(), tmp_path / "b", options(trial_steps=2048))


def _check(records: list, out: Path) -> None:
    first, second = records
    assert first.trials == [] and first.trial_env_steps == 0
    assert len(second.trials) == 2  # the fixed proposal and its park_cost switch (the kept one is the proposal)
    best = max(second.trials, key=lambda t: t["validation"])
    assert load(second.checkpoint)["config"]["init_from"] == best["checkpoint"]  # the stage goes on from the best
    assert second.levers == best["levers"]
    assert second.trial_env_steps == sum(t["env_steps"] for t in second.trials) > 0
    assert second.env_steps + second.trial_env_steps <= 4096 + 2 * 16 * 8  # whole updates round up
    assert all(Path(t["checkpoint"]).is_relative_to(out) for t in second.trials)


@pytest.mark.slow  # two stages and two trials in spawned processes (CI runs it with -m slow)
def test_a_stage_goes_on_from_the_best_trial_in_local_processes(tmp_path: Path) -> None:
    _check(evolve(SPEC, SMALL, FixedEngineer(), tmp_path / "run", options()), tmp_path / "run")


@pytest.mark.slow  # a local Ray on loopback (CI runs it with -m slow)
def test_trials_run_as_ray_tasks_with_a_ray_address(tmp_path: Path) -> None:
    _check(evolve(SPEC, SMALL, FixedEngineer(), tmp_path / "run", options(ray_address="local")), tmp_path / "run")
