"""The settings of an RLlib run, in `TrainConfig`'s names, and the RLlib settings they become.

An RLlib run takes the `TrainConfig` fields that mean the same thing in RLlib's PPO
(`CONFIG_FIELDS`): the optimisation (`lr`, `gamma`, `gae_lambda`, `clip`, `ent_coef`, `vf_coef`,
`epochs`, `minibatches`, `max_grad_norm`), the networks (`hidden`, `activation`), the sampling
(`num_envs`: envs per env runner, `rollout_len`: the rollout fragment) and the run (`total_steps`,
`seed`, `out`, `tensorboard`, `init_from`); `algo` may be `ippo` and `agent_index` false, which
is what RLlib's one module per role is. Any other field is a setting of the built-in trainer
alone and is refused, naming it. Fields not given keep this adapter's defaults (tanh networks of
64 x 64, `DEFAULT_PPO`), and `resolved` writes them all down for the run's `config.yaml`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gymwright.diagnostic import shown
from gymwright.errors import GymwrightError
from gymwright.train.config import MAX_BATCH_STEPS, value_problem

# PPO settings for small discrete problems (short episodes, few actions), as used by the
# benchmark. `ppo=` overrides any of them (keys of `PPOConfig.training`).
DEFAULT_PPO: dict[str, Any] = {
    "lr": 3e-4,
    "gamma": 0.99,
    "lambda_": 0.95,
    "clip_param": 0.2,
    "entropy_coeff": 0.01,
    "vf_loss_coeff": 0.5,
    "num_epochs": 4,
    "train_batch_size_per_learner": 2048,
    "minibatch_size": 256,
}
# Measured here: RLlib 2.60 re-converts the finished episodes of a sample call on every step,
# so short episodes need many envs per runner and short fragments (about 1,500 env-steps/s
# with these against under 100 with the defaults).
NUM_ENVS_PER_RUNNER = 32
ROLLOUT_FRAGMENT_LENGTH = 8
HIDDEN = (64, 64)
ACTIVATION = "tanh"

TRAINING = {"lr": "lr", "gamma": "gamma", "gae_lambda": "lambda_", "clip": "clip_param", "ent_coef": "entropy_coeff",
            "vf_coef": "vf_loss_coeff", "epochs": "num_epochs", "max_grad_norm": "grad_clip"}
"""TrainConfig field -> `PPOConfig.training` key"""
SAMPLING = ("num_envs", "rollout_len")
NETWORK = ("hidden", "activation")
RUN = ("total_steps", "seed", "out", "tensorboard", "init_from")
SAME = {"algo": "ippo", "agent_index": False}
"""fields an RLlib run takes only at the value its one-module-per-role PPO has"""
CONFIG_FIELDS = (*RUN, *TRAINING, "minibatches", *SAMPLING, *NETWORK, *SAME)
ACTIVATIONS = ("relu", "tanh")


@dataclass
class Settings:
    """What `build_config` needs: PPO training keys, the networks, the sampling."""

    ppo: dict[str, Any] = field(default_factory=dict)
    hidden: tuple[int, ...] = HIDDEN
    activation: str = ACTIVATION
    num_envs: int = NUM_ENVS_PER_RUNNER
    rollout_len: int = ROLLOUT_FRAGMENT_LENGTH
    minibatches: int | None = None
    """minibatches per epoch (`minibatch_size` = train batch / minibatches); None: DEFAULT_PPO's size"""


def settings_of(config: dict[str, Any] | None, ppo: dict[str, Any] | None = None) -> Settings:
    """The settings of TrainConfig-named `config` (only the fields given), then `ppo` (RLlib's own
    `PPOConfig.training` keys) over them; `GymwrightError` naming the field (its `path`) RLlib does
    not take, or whose value is out of its range (`gymwright.train.config.RANGES`), or an env
    runner's sample call past MAX_BATCH_STEPS. Nothing here starts or imports Ray."""
    config = dict(config or {})
    builtin_only = [k for k in config if k not in CONFIG_FIELDS]
    if builtin_only:
        raise GymwrightError(f"an RLlib run does not take {', '.join(builtin_only)}: "
                             f"{'that is a setting' if len(builtin_only) == 1 else 'those are settings'} of the built-in trainer",
                             path=builtin_only[0], hint=f"drop {'it' if len(builtin_only) == 1 else 'them'}, or train "
                             f"with the built-in trainer; RLlib takes {', '.join(CONFIG_FIELDS)}")
    for name, value in SAME.items():
        if name in config and config[name] != value:
            raise GymwrightError(f"an RLlib run trains one module per role on each agent's observation: "
                                 f"{name} must be {value!r}, not {shown(repr(config[name]))}", path=name,
                                 hint="use the built-in trainer for that (`--backend builtin`)")
    if config.get("activation", ACTIVATION) not in ACTIVATIONS:
        raise GymwrightError(f"unknown activation {shown(repr(config['activation']))}", path="activation",
                             hint=f"choose one of {', '.join(ACTIVATIONS)}")
    for name, value in config.items():  # each number in its range, as TrainConfig checks its own
        problem = value_problem(name, value)
        if problem is not None:
            raise GymwrightError(f"{name}: {problem}", path=name, hint=f"see `gymwright train --help` for {name}")
    envs, length = (int(config.get(k, d)) for k, d in (("num_envs", NUM_ENVS_PER_RUNNER),
                                                        ("rollout_len", ROLLOUT_FRAGMENT_LENGTH)))
    _check_sample(envs * length, f"num_envs x rollout_len = {envs:,} x {length:,}")
    return Settings(ppo={**{TRAINING[k]: v for k, v in config.items() if k in TRAINING}, **(ppo or {})},
                    hidden=tuple(config.get("hidden", HIDDEN)), activation=config.get("activation", ACTIVATION),
                    num_envs=int(config.get("num_envs", NUM_ENVS_PER_RUNNER)),
                    rollout_len=int(config.get("rollout_len", ROLLOUT_FRAGMENT_LENGTH)),
                    minibatches=config.get("minibatches"))


def _check_sample(steps: int, what: str) -> None:
    """One sample call of every env runner: at most the built-in trainer's rollout (`MAX_BATCH_STEPS`)."""
    if steps > MAX_BATCH_STEPS:
        raise GymwrightError(f"{what} = {steps:,} env steps per sample call; the limit is {MAX_BATCH_STEPS:,} (a "
                             "train batch holds at least one)", path="rollout_len",
                             hint=f"fewer envs per runner or shorter fragments: the default is "
                                  f"{NUM_ENVS_PER_RUNNER} x {ROLLOUT_FRAGMENT_LENGTH}")


def training_of(settings: Settings, steps: int | None, num_env_runners: int) -> dict[str, Any]:
    """`PPOConfig.training` keys: DEFAULT_PPO, the settings over it, and a train batch that
    sampling can fill (a whole number of sample calls, at most about `steps`: a small budget
    still trains once). `GymwrightError` for a sample call of all runners past MAX_BATCH_STEPS,
    or more minibatches than the train batch has env steps."""
    training = {**DEFAULT_PPO, **settings.ppo}
    runners = max(1, num_env_runners)
    unit = settings.num_envs * settings.rollout_len * runners
    _check_sample(unit, f"num_envs x rollout_len x env runners = {settings.num_envs:,} x {settings.rollout_len:,} x "
                        f"{runners:,}")
    batch = int(training["train_batch_size_per_learner"])
    if steps is not None:
        batch = min(batch, steps)
    training["train_batch_size_per_learner"] = max(unit, round(batch / unit) * unit)
    if settings.minibatches is not None:
        batch = training["train_batch_size_per_learner"]
        if settings.minibatches > batch:
            raise GymwrightError(f"{settings.minibatches:,} minibatches of a train batch of {batch:,} env steps: "
                                 "each minibatch needs at least one", path="minibatches",
                                 hint=f"at most {batch:,} minibatches (the train batch is the smaller of "
                                      f"{DEFAULT_PPO['train_batch_size_per_learner']:,} and the run's steps, in "
                                      "whole sample calls of num_envs x rollout_len), or leave minibatches out")
        training["minibatch_size"] = max(1, batch // settings.minibatches)
    training["minibatch_size"] = min(int(training["minibatch_size"]), training["train_batch_size_per_learner"])
    return training


def resolved(settings: Settings, training: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """Every setting of the run in TrainConfig's names (`run`: spec, params and the RUN fields)."""
    back = {ours: training[theirs] for ours, theirs in TRAINING.items() if training.get(theirs) is not None}
    return {**run, **SAME, **back,
            "minibatches": max(1, training["train_batch_size_per_learner"] // training["minibatch_size"]),
            "num_envs": settings.num_envs, "rollout_len": settings.rollout_len,
            "hidden": list(settings.hidden), "activation": settings.activation}


__all__ = ["CONFIG_FIELDS", "DEFAULT_PPO", "Settings", "resolved", "settings_of", "training_of"]
