"""`CurriculumOptions`: every setting of a curriculum (`gymwright.curriculum.evolve`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gymwright.curriculum.demonstrations import Demonstrator, Relabeller
from gymwright.engineer.space import ConfigSpace
from gymwright.train.trainers import DEFAULT


@dataclass
class CurriculumOptions:
    stages: int = 3
    steps_per_stage: int = 200_000
    band: tuple[float, float] = (0.4, 0.8)
    task_metric: str | None = None
    eval_episodes: int = 200
    num_envs: int = 256
    seed: int = 0
    knobs: tuple[str, ...] | None = None
    """the params the engineer may move (default: every bounded numeric non-structural param)"""
    record_episodes: int = 40
    """episodes per bucket recorded for the failure evidence"""
    validation: dict[str, dict[str, Any]] | None = None
    """validation cells (label -> params), drawn like the configs the final policy is judged on"""
    validation_episodes: int = 200
    validation_seed: int = 700_000
    secondary: tuple[str, ...] = ()
    """metrics reported next to the task metric on validation (e.g. `optimal`)"""
    target: str = ""
    """what the final policy is judged on, in words (shown to the engineer)"""
    space: ConfigSpace | None = None
    """the levers the engineer may use (structural buckets and knob values); None: knobs only"""
    guard: bool = False
    """guardrails (`gymwright.curriculum.guard`): revert a change that did not help (validation did not
    improve, or the training metric did not move toward the band it was aimed at), roll back a stage
    whose validation fell beyond noise; without `validation` only the band rule applies"""
    train: dict[str, Any] = field(default_factory=dict)
    """more `TrainConfig` fields for every stage (e.g. hidden, ent_coef): the frozen base learner"""
    backend: str = DEFAULT
    """the trainer of every stage, by its name in `gymwright.train.trainers.TRAINERS`: `builtin` (PPO on
    the batch backend) or `rllib` (each stage an RLlib run; `train` then holds only the fields RLlib
    takes, `gymwright.train.rllib_settings.CONFIG_FIELDS`, and `num_envs` is the envs of each env
    runner, over which a mixture's buckets are spread)"""
    ray_address: str | None = None
    """the Ray cluster of an `rllib` curriculum (None: a local Ray, started once for all stages)"""
    demonstrator: Demonstrator | None = None
    """makes demonstrations of one config (`gymwright.curriculum.demonstrations`; e.g. a planner's plans
    replayed through the env): with it the first stage starts from a clone of `demo_episodes`
    demonstrations of its mixture (a BC init), and with `imitation_coef` every stage keeps an
    imitation loss on demonstrations of its own mixture; their env steps come out of the stage's budget"""
    demo_episodes: int = 0
    """demonstrated episodes per stage that uses them (spread over the mixture's buckets by share)"""
    imitation_coef: float = 0.0
    """weight of the imitation loss during each stage's PPO (`TrainConfig.imitation_coef`); 0: a BC init only"""
    relabeller: Relabeller | None = None
    """DAgger (`gymwright.curriculum.demonstrations`): from the second stage on, the imitation loss is on the
    previous stage's policy's own play of the stage's mixture, labelled by the expert, added to the
    demonstrations its lineage was trained on; needs `demonstrator` (the first stage) and `imitation_coef`"""
    relabel_episodes: int = 0
    trials: int = 0
    """K > 1: before each stage after the first, K candidate proposals train `trial_steps` each from the kept
    policy, and the stage goes on from the best by validation (`gymwright.curriculum.trials`); every trial's
    env steps come out of that stage's budget; needs validation cells"""
    trial_steps: int = 0
    """env steps of one trial (0: an eighth of a stage)"""
    trial_jobs: int = 2
    """trials run at once as local processes (with a `ray_address`, as Ray tasks instead)"""
    levers: dict[str, float | None] = field(default_factory=dict)
    """designer levers the engineer may use (`gymwright.engineer.levers`: `park_cost`, `weight` for every
    reward term's weight or `weight:TERM` for one, `end_on` or `end_on:METRIC` (a training episode ends at its first
    failure of that kind), `partners` (a share of the training copies with a fixed partner on the optimal joint
    plan), `imitation`), each with its strength in the first stage
    (None or its off value: available, off; a family name such as `weight` starts all its levers off). They change
    the game the policy *trains* on only: validation, evidence and judgment play the game as designed.
    `imitation` needs a demonstrator; for a spec with solved layouts (MAPF) the built-in planner's
    (`gymwright.curriculum.mapf_demos.planner_for`) is used when none is given, with `demo_episodes` (default 2000)"""
    """episodes the policy plays a stage for the relabeller (0: `demo_episodes`); their env steps are charged"""
