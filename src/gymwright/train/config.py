"""`TrainConfig`: every setting of a built-in PPO run, one line of doc each, and the values each
numeric setting may take (`RANGES`), checked whenever a config is made: `TrainConfig(...)` in
Python, and each option and config-file key of the CLI as it is read (`gymwright.cli.config_options`).

This module does not import torch (the CLI reads it before any training).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymwright.diagnostic import shown
from gymwright.errors import GymwrightError
from gymwright.runtime.core import SEED_LIMIT

ALGOS = ("ippo", "mappo")


# ---------------------------------------------------------------------------- the values a config may hold
@dataclass(frozen=True)
class Range:
    """The values of a numeric field: `low` to `high` (None: no upper end), `low` itself excluded
    when `open`; `whole` for a count."""

    low: float
    high: float | None = None
    open: bool = False
    whole: bool = True

    def holds(self, x: float) -> bool:
        return (x > self.low if self.open else x >= self.low) and (self.high is None or x <= self.high)

    def __str__(self) -> str:
        kind = "a whole number" if self.whole else "a finite number"
        low, high = (f"{x:,}" if self.whole else f"{x:g}" for x in (self.low, self.high or 0))
        if self.open:
            return f"{kind} above {low}" + (f" and at most {high}" if self.high is not None else "")
        return f"{kind} from {low} to {high}" if self.high is not None else f"{kind} of at least {low}"


# env seeds are ints in [0, SEED_LIMIT = 2**63); copy b of a batch is seeded seed * num_envs + b
MAX_BATCH_STEPS = 2**22
"""env steps of one rollout (num_envs x rollout_len): its buffers are allocated at once"""
MAX_HIDDEN_LAYERS = 16
"""hidden layers of the actor and of the critic"""

RANGES: dict[str, Range] = {
    "total_steps": Range(1, 2**53),  # counted exactly in the JSON log
    "num_envs": Range(1, 65_536),
    "rollout_len": Range(1, 65_536),
    "lr": Range(0, 1.0, whole=False),  # an Adam step above 1 diverges at once; 0 freezes the policy (a warm
    # start carried over unchanged, tests/curriculum/test_curriculum.py)
    "gamma": Range(0, 1, whole=False),
    "gae_lambda": Range(0, 1, whole=False),
    "clip": Range(0, open=True, whole=False),
    "epochs": Range(1, 1_000),
    "minibatches": Range(1, MAX_BATCH_STEPS),
    "ent_coef": Range(0, whole=False),
    "vf_coef": Range(0, whole=False),
    "max_grad_norm": Range(0, open=True, whole=False),
    "hidden": Range(1, 4_096),  # each layer's width
    "seed": Range(0, SEED_LIMIT - 1),
    "imitation_coef": Range(0, whole=False),
    "partners": Range(0, 1, whole=False),
    "checkpoint_every": Range(1),
    "threads": Range(1, 256),  # more torch threads than cores only contend
}


def value_problem(name: str, value: Any) -> str | None:
    """What is wrong with `value` for the numeric field `name` (its type or its range), or None."""
    rng = RANGES.get(name)
    if rng is None:
        return None
    if name == "hidden":
        sizes = list(value) if isinstance(value, list | tuple) else None
        if not sizes or len(sizes) > MAX_HIDDEN_LAYERS:
            return f"must be 1 to {MAX_HIDDEN_LAYERS} layer sizes, got {shown(repr(value))}"
        bad = next((x for x in sizes if _out_of(rng, x)), None)
        return None if bad is None else f"each layer size must be {rng}, got {shown(repr(bad))}"
    return f"must be {rng}, got {shown(repr(value))}" if _out_of(rng, value) else None


def _out_of(rng: Range, x: Any) -> bool:
    if isinstance(x, bool) or not isinstance(x, numbers.Integral if rng.whole else numbers.Real):
        return True
    return not (math.isfinite(x) and rng.holds(x))


def combination_problems(values: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(field, what is wrong, the fix) for the settings that are each in range but cannot work
    together; `values` holds every field (in range)."""
    envs, steps, seed = values["num_envs"], values["rollout_len"], values["seed"]
    found = []
    if envs * steps > MAX_BATCH_STEPS:
        found.append(("rollout_len", f"num_envs x rollout_len = {envs:,} x {steps:,} = {envs * steps:,} env steps per "
                      f"update; the limit is {MAX_BATCH_STEPS:,} (the rollout's buffers are allocated at once)",
                      "fewer copies or shorter rollouts: the default is 128 x 16"))
    elif values["minibatches"] > envs * steps:
        found.append(("minibatches", f"{values['minibatches']:,} minibatches of a rollout of {envs * steps:,} env steps "
                      "(num_envs x rollout_len): each minibatch needs at least one",
                      f"at most {envs * steps:,} minibatches, or more copies or longer rollouts"))
    if (seed + 1) * envs > SEED_LIMIT:
        found.append(("seed", f"seed {seed:,} with {envs:,} copies seeds copy b with seed x {envs:,} + b, past the "
                      f"envs' largest seed 2**63 - 1", f"with {envs:,} copies give a seed of at most "
                      f"{SEED_LIMIT // envs - 1:,}"))
    return found


@dataclass
class TrainConfig:
    """A PPO run on the batch backend (`gymwright.train.train`)."""

    spec: str | Path | dict[str, Any] = "cake_negotiation"
    """the spec: a library name, a file, or the spec's data"""
    params: dict[str, Any] | list[dict[str, Any]] = field(default_factory=dict)
    """one param dict for every copy, or a list of dicts spread over the batch (mixed configs)"""
    copies: list[int] | None = None
    """with a list of params: how many copies each config gets, in order (summing to `num_envs`);
    None: equal contiguous blocks. The log's `config{i}/...` figures are per config of the list"""
    algo: str = "ippo"
    """`ippo` (a critic on each agent's observation) or `mappo` (a centralized critic on `state()`)"""
    total_steps: int = 1_000_000
    """env steps to train for, counted as copies x steps (rounded up to whole updates)"""
    num_envs: int = 128
    """copies of the environment stepped together (small discrete games learn fastest with 64-256:
    more updates per env step; raise it for throughput, e.g. 1024, when the game needs many samples)"""
    rollout_len: int = 16
    """steps per copy collected before each update"""
    lr: float = 3e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 over the run"""
    gamma: float = 0.99
    """discount per env step"""
    gae_lambda: float = 0.95
    """lambda of generalized advantage estimation"""
    clip: float = 0.2
    """PPO ratio clip"""
    epochs: int = 4
    """passes over each rollout"""
    minibatches: int = 8
    """minibatches per pass (the default: 256 env steps each)"""
    ent_coef: float = 0.01
    """entropy bonus weight"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient norm clip"""
    hidden: tuple[int, ...] = (64, 64)
    """hidden layer sizes of the actor and the critic"""
    agent_index: bool = False
    """give the actor (and the IPPO critic) a one-hot of the agent's index within its role; off,
    the agents of a role share one policy of their observation (the MAPPO critic always has it)"""
    activation: str = "relu"
    """activation of the hidden layers: `relu`, or `tanh` (CleanRL's; far slower on CPU)"""
    seed: int = 0
    """seed of torch and of the environment (copy b of the batch is seeded seed * num_envs + b)"""
    init_from: str | Path | None = None
    """warm start: a checkpoint (or run folder) of the same spec and roles whose policy and value
    normalizers this run starts from (params may differ: a curriculum's next stage); the
    optimizer, the env and the step count start fresh"""
    demos: str | Path | None = None
    """demonstrations (a `gymwright.train.imitation.Demos` .npz: observations, action masks and actions of
    one-role play, e.g. a planner's) whose cross-entropy the shared actor also minimizes at every
    minibatch, weighted by `imitation_coef`: PPO that keeps imitating (as PRIMAL mixes imitation and RL)"""
    imitation_coef: float = 0.0
    """weight of the imitation loss on `demos` (constant over the run); 0 without demos"""
    checkpoint_every: int = 10
    """write a checkpoint every this many updates (and always at the end)"""
    out: str | Path = "runs/train"
    """folder for checkpoint.pt, train.jsonl and the TensorBoard events"""
    resume: bool = False
    """continue from `out/checkpoint.pt` (bit-for-bit, as if never stopped)"""
    tensorboard: bool = False
    """also write TensorBoard event files to `out/tb`"""
    threads: int = 1
    """torch threads (1 is fastest for these small networks, and makes runs reproducible)"""
    device: str = "cpu"
    """torch device of the networks: `cpu`, or `cuda` / `cuda:N` (needs a GPU and a CUDA build of torch)"""
    partners: float = 0.0
    """share of the copies in which the last agent is played by a fixed partner (`partner`), not trained: a
    designer lever (`gymwright.train.partners`); 0: none"""
    partner: str = "planner"
    """what plays the partners: `planner` (its part of the optimal joint plan of the layout, for a spec with
    solved layouts), a scripted baseline of the spec, `random`, or a run folder"""
    npc: dict[str, str] = field(default_factory=dict)
    """fixed-policy agents, not trained (`--npc ROLE=PLAYER`, repeatable): ROLE, or ROLE[I] / ROLE[I,J] /
    ROLE[I:J] for agents of the role by index; PLAYER: a scripted baseline of the spec, `random`, a
    run folder whose frozen policy plays them, or `llm:MODEL` (a language model playing from the text view)"""

    @property
    def batch_steps(self) -> int:
        """Env steps (copies x steps) per update."""
        return self.num_envs * self.rollout_len

    @property
    def updates(self) -> int:
        """Updates of the run: total_steps rounded up to whole rollouts (at least 1)."""
        return max(1, -(-self.total_steps // self.batch_steps))

    def param_list(self) -> list[dict[str, Any]]:
        """The configs of the batch, one dict each."""
        return [dict(p) for p in self.params] if isinstance(self.params, list) else [dict(self.params or {})]

    def __post_init__(self) -> None:
        problems = [(n, message, "") for n in RANGES if (message := value_problem(n, getattr(self, n))) is not None]
        problems = problems or combination_problems(vars(self))
        if problems:
            raise ConfigValueError(problems)


class ConfigValueError(GymwrightError):
    """TrainConfig values that cannot train: `problems` holds (field, what is wrong, the fix) for each."""

    def __init__(self, problems: list[tuple[str, str, str]]) -> None:
        self.problems = problems
        name, _, hint = problems[0]
        super().__init__("; ".join(f"{n}: {message}" for n, message, _ in problems), path=f"TrainConfig.{name}",
                         hint=hint or "see `gymwright train --help` for each field and its default")

    def __str__(self) -> str:
        return self.message + (f"\n  hint: {self.hint}" if self.hint else "")


DEVICE_KINDS = ("cpu", "cuda")


def check_device(device: str) -> None:
    """Refuse a torch device this machine cannot train on, saying why and what to do instead."""
    kind, colon, index = device.partition(":")
    if kind not in DEVICE_KINDS or (colon and (kind == "cpu" or not (index.isascii() and index.isdigit())
                                              or len(index) > 4)):
        raise GymwrightError(f"unknown device {shown(repr(device))}", path="device", value=shown(device),
                             hint="use cpu (the default), cuda, or cuda:N for the N-th GPU")
    if kind == "cpu":
        return
    import torch

    if not torch.cuda.is_available():
        why = ("this torch build has no CUDA support" if torch.version.cuda is None
               else f"torch (built for CUDA {torch.version.cuda}) finds no usable GPU")
        raise GymwrightError(f"device {device!r}: {why} (torch {torch.__version__})", path="device", value=device,
                             hint="train on cpu (the default); for a GPU, install a CUDA build of torch on a machine with one")
    if colon and int(index) >= torch.cuda.device_count():
        raise GymwrightError(f"device {device!r}: this machine has {torch.cuda.device_count()} GPU(s), numbered from 0",
                             path="device", value=device, hint="pick an existing index, or plain cuda")
