"""The trainers a run can use, by name (`TRAINERS`): the built-in PPO on the batch backend and
RLlib on Ray. Whatever differs between them is a property or a method of its `Trainer`, so the
CLI, the curriculum and the comparison ask the trainer instead of comparing its name.

```python
trainer = trainer_named("rllib")          # GymwrightError naming the choices for an unknown one
with trainer.session(ray_address):        # what its runs need running (Ray for RLlib)
    result = trainer.run(Run(spec, [params], [num_envs], steps, num_envs, seed, out))
```

This module does not import torch or Ray: each trainer imports its own when it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gymwright.diagnostic import shown
from gymwright.errors import GymwrightError
from gymwright.train.result import TrainResult


@dataclass(frozen=True)
class Run:
    """One training run as a curriculum's stage asks for it: configs spread over env copies."""

    spec: str | dict[str, Any]
    params: list[dict[str, Any]]  # the configs of the run (a curriculum's buckets), in order
    copies: list[int]  # env copies per config, summing to num_envs
    steps: int  # env steps to train for
    num_envs: int
    seed: int
    out: Path
    init_from: str | None = None  # a checkpoint to warm-start from
    config: dict[str, Any] = field(default_factory=dict)  # more TrainConfig fields (the trainer's own)
    ray_address: str | None = None
    imitation: dict[str, Any] = field(default_factory=dict)  # demos and imitation_coef (a trainer that imitates)
    progress: Callable[[dict[str, Any]], None] | None = None
    """called with each training log row as it trains (the built-in's `gymwright.train.ppo.train` progress;
    RLlib's runs are not followed row by row)"""


class Trainer(Protocol):
    """A way to train a policy on a spec that writes a run folder the rest of gymwright reads."""

    name: str  # as `--backend` names it
    title: str  # in words, for headings
    takes_every_field: bool  # every TrainConfig field (else `gymwright.train.rllib_settings.CONFIG_FIELDS` only)
    imitates: bool  # trains with demonstrations (`Run.imitation`)
    runs_code_mode: bool  # trains a code-mode module (a .py design) as well as a spec
    logs_per_copy: bool  # its log's `config{i}/...` figures are per env copy (else per config of the run)
    runs_side_by_side: bool  # several runs may go at once, each in its own spawned process

    def session(self, address: str | None) -> AbstractContextManager[None]:
        """What this trainer's runs need running for as long as they go on (for several runs)."""
        ...

    def run(self, run: Run) -> TrainResult:
        """Train `run`; its folder `run.out` ends holding checkpoint.pt in the built-in format."""
        ...


class BuiltinPPO:
    """Multi-agent PPO on the batch backend (`gymwright.train.ppo`)."""

    name = "builtin"
    title = "built-in PPO"
    takes_every_field = True
    imitates = True
    runs_code_mode = True
    logs_per_copy = False
    runs_side_by_side = True

    def session(self, address: str | None) -> AbstractContextManager[None]:
        return nullcontext()

    def run(self, run: Run) -> TrainResult:
        from gymwright.train.config import TrainConfig
        from gymwright.train.ppo import train

        return train(TrainConfig(**{**run.config, "spec": run.spec, "params": [dict(p) for p in run.params],
                                    "copies": [int(c) for c in run.copies], "total_steps": run.steps,
                                    "num_envs": run.num_envs, "seed": run.seed, "out": run.out,
                                    "init_from": run.init_from, **run.imitation}), progress=run.progress)


class RLlib:
    """PPO in Ray RLlib (`gymwright.train.rllib`), on a local Ray or a cluster; a run's configs are
    spread over each env runner's `num_envs` envs, as over the built-in batch's copies."""

    name = "rllib"
    title = "RLlib"
    takes_every_field = False
    imitates = False
    runs_code_mode = False
    logs_per_copy = True
    runs_side_by_side = False

    def session(self, address: str | None) -> AbstractContextManager[None]:
        return _ray(address)

    def run(self, run: Run) -> TrainResult:
        from gymwright.train.rllib import train_rllib

        params = run.params[0] if len(run.params) == 1 else \
            [dict(p) for p, c in zip(run.params, run.copies, strict=True) for _ in range(int(c))]
        return TrainResult.of_rllib(train_rllib(run.spec, params, steps=run.steps, out=run.out, seed=run.seed,
                                                ray_address=run.ray_address, init_from=run.init_from,
                                                config={**run.config, "num_envs": run.num_envs}))


@contextmanager
def _ray(address: str | None) -> Iterator[None]:
    from gymwright.train.rllib_ray import ray_session

    with ray_session(address):
        yield


TRAINERS: dict[str, Trainer] = {t.name: t for t in (BuiltinPPO(), RLlib())}
"""every trainer by name; the first is the default"""
DEFAULT = next(iter(TRAINERS))


def trainer_named(name: str, where: str = "backend") -> Trainer:
    """The trainer called `name`; a `GymwrightError` at `where` naming the choices otherwise."""
    trainer = TRAINERS.get(name)
    if trainer is None:
        raise GymwrightError(f"unknown {where.lstrip('-')} {shown(repr(name))}", path=where,
                             hint=f"choose one of {', '.join(TRAINERS)}")
    return trainer
