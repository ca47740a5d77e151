"""Search where one stage's proposal is not enough: K candidate proposals tried in short trials,
the best by validation kept (the Eureka pattern: Ma et al. 2023, "Eureka: Human-Level Reward
Design via Coding Large Language Models", which samples reward candidates, trains each briefly
and keeps the best).

With `CurriculumOptions.trials` K > 1, after the engineer proposes the next stage the curriculum
makes K candidates (`candidates`: the proposal; the proposal with each designer lever switched;
the environment kept as it was), trains each for `trial_steps` env steps from the policy the
guardrails kept, measures each on the validation cells, and the stage goes on from the best
trial's policy on its mixture and levers for the rest of its budget. Every trial's env steps are
charged to that stage (the stage trains `steps_per_stage - K * trial_steps` after them), so an
engineer that searches trains on no more env steps than one that does not.

Trials run as Ray tasks when the curriculum has a Ray address (`ray_address`: a cluster, or `local`
for a Ray of this machine on loopback; each task one CPU), and as local processes otherwise (`trial_jobs` at a time, each with one torch thread); a trial's
outcome depends only on its candidate and seed, not on where it ran.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gymwright.curriculum.options import CurriculumOptions
from gymwright.engineer.levers import Lever
from gymwright.engineer.mixture import Mixture
from gymwright.errors import GymwrightError


@dataclass(frozen=True)
class Trial:
    """One candidate's short training and what validation made of it."""

    index: int
    mixture: Mixture
    why: str
    checkpoint: str
    validation: float
    ci95: float
    env_steps: int  # PPO's and the demonstrations' (charged to the stage)

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "why": self.why, "validation": self.validation, "ci95": self.ci95,
                "env_steps": self.env_steps, "mixture": self.mixture.to_list(), "levers": dict(self.mixture.levers),
                "checkpoint": self.checkpoint}


def check_trials(opts: CurriculumOptions) -> None:
    """Trials are judged on validation cells and must leave the stage some budget of its own."""
    if opts.trials <= 1:
        return
    if not opts.validation:
        raise GymwrightError("trials are judged on validation cells, and this curriculum has none", path="trials",
                             hint="give validation cells, or set trials to 0")
    if opts.trials * trial_steps(opts) >= opts.steps_per_stage:
        raise GymwrightError(f"{opts.trials} trials of {trial_steps(opts):,} env steps take the whole stage of "
                             f"{opts.steps_per_stage:,}", path="trial_steps", hint="use fewer or shorter trials")


def trial_steps(opts: CurriculumOptions) -> int:
    """Env steps of one trial (default: an eighth of a stage)."""
    return opts.trial_steps or opts.steps_per_stage // 8


def candidates(proposed: Mixture, kept: Mixture, menu: dict[str, Lever], k: int) -> list[tuple[Mixture, str]]:
    """Up to `k` distinct candidates, in order: the engineer's proposal, the proposal with each designer
    lever switched (on to off, off to its default), and the environment as the guardrails kept it."""
    out: list[tuple[Mixture, str]] = [(proposed, "the engineer's proposal")]
    for name, lever in menu.items():
        now = proposed.levers.get(name, lever.off)
        switched = lever.off if now != lever.off else lever.default
        out.append((proposed.with_levers({**proposed.levers, name: switched}),
                    f"the proposal with {name} {now:g} -> {switched:g}"))
    out.append((kept, "the environment kept as it was"))
    distinct: list[tuple[Mixture, str]] = []
    for mixture, why in out:
        if not any(mixture.same_as(m) for m, _ in distinct):
            distinct.append((mixture, why))
    return distinct[:k]


TrialTask = tuple[Any, dict[str, Any], Mixture, CurriculumOptions, int, Path, str, dict[str, Lever], str, int]


def run_trials(tasks: list[TrialTask], opts: CurriculumOptions, say: Callable[[str], None]) -> list[Trial]:
    """Every trial, as Ray tasks (a Ray address) or local processes; results in the tasks' order."""
    if opts.ray_address:
        return _on_ray(tasks, opts.ray_address)
    if opts.trial_jobs <= 1 or len(tasks) == 1:
        return [one_trial(*t) for t in tasks]
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    with ProcessPoolExecutor(max_workers=min(opts.trial_jobs, len(tasks)), mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(one_trial, *t) for t in tasks]
        return [f.result() for f in futures]


def _on_ray(tasks: list[TrialTask], address: str) -> list[Trial]:
    """The trials as Ray tasks of one CPU each, on the cluster at `address` (joined as gymwright joins one
    for RLlib, `gymwright.train.rllib_ray`; `local`: a Ray of this machine on loopback, started for them)."""
    import ray

    from gymwright.train.rllib_ray import ray_session

    with ray_session(address, num_cpus=max(1, min(len(tasks), 2))):
        remote = ray.remote(num_cpus=1)(one_trial)
        return list(ray.get([remote.remote(*t) for t in tasks]))


def one_trial(spec: Any, raw: dict[str, Any], mixture: Mixture, opts: CurriculumOptions, k: int, folder: Path,
              init_from: str, menu: dict[str, Lever], why: str, index: int) -> Trial:
    """Train one candidate for the trial's steps from `init_from` and measure it on the validation cells."""
    import torch

    from gymwright.curriculum.training import train_stage
    from gymwright.engineer.evidence import measure_validation
    from gymwright.train.npc import load_policy
    from gymwright.train.trainers import trainer_named

    torch.set_num_threads(1)
    short = replace(opts, steps_per_stage=trial_steps(opts))
    result, demo_steps = train_stage(trainer_named(opts.backend), spec, raw, mixture, short, k, folder, init_from, menu)
    val = measure_validation(spec, opts.validation or {}, load_policy(result.checkpoint), opts.task_metric or "",
                             opts.validation_episodes, opts.validation_seed, opts.secondary)
    return Trial(index, mixture, why, str(result.checkpoint), val.mean, val.ci95, result.env_steps + demo_steps)
