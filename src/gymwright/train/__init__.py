"""The trainer: multi-agent PPO on the batch backend, checkpoints, rollouts of policies, baselines.

```python
from gymwright.train import TrainConfig, train, load_policy, play_episodes, random_legal_policy

result = train(TrainConfig(spec="cake_negotiation", total_steps=2_000_000, out="runs/cake"))
policy = load_policy(result.checkpoint)
print(play_episodes("cake_negotiation", {}, policy, episodes=1000).returns)
```

Every name below is imported when first used, so `gymwright.train.config` (and the CLI that
reads it) imports without torch. `gymwright.train.trainers` names the trainers a run can use
(`TRAINERS`: the built-in PPO and RLlib); `gymwright.train.rllib` (imported on its own, it needs
Ray) trains on a Ray cluster.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gymwright.train.baselines import (
        RandomLegalPolicy,
        ScriptedPolicy,
        baseline_names,
        random_legal_policy,
        scripted_policy,
    )
    from gymwright.train.checkpoint import CheckpointError
    from gymwright.train.config import ALGOS, TrainConfig
    from gymwright.train.episodes import EvalResult, play_episodes
    from gymwright.train.npc import Team, load_policy
    from gymwright.train.policy import Policy
    from gymwright.train.ppo import train
    from gymwright.train.result import TrainResult

HOMES = {
    # training
    "TrainConfig": "config", "TrainResult": "result", "train": "ppo", "ALGOS": "config",
    # policies
    "Policy": "policy", "load_policy": "npc", "CheckpointError": "checkpoint", "random_legal_policy": "baselines",
    "RandomLegalPolicy": "baselines", "scripted_policy": "baselines", "ScriptedPolicy": "baselines",
    "baseline_names": "baselines", "Team": "npc",
    # rollouts of policies
    "play_episodes": "episodes", "EvalResult": "episodes",
}
"""each public name -> the module of this package that defines it"""

__all__ = [
    "TrainConfig", "TrainResult", "train", "ALGOS",
    "Policy", "load_policy", "CheckpointError", "random_legal_policy", "RandomLegalPolicy", "scripted_policy",
    "ScriptedPolicy", "baseline_names", "Team",
    "play_episodes", "EvalResult",
]


def __getattr__(name: str) -> Any:
    home = HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'gymwright.train' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"gymwright.train.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *HOMES])
