"""The trainer: multi-agent PPO on the batch backend, checkpoints, rollouts of policies, baselines.

```python
from gymwright.train import TrainConfig, train, load_policy, play_episodes, random_legal_policy

result = train(TrainConfig(spec="cake_negotiation", total_steps=2_000_000, out="runs/cake"))
policy = load_policy(result.checkpoint)
print(play_episodes("cake_negotiation", {}, policy, episodes=1000).returns)
```

`gymwright.train.rllib` (imported on its own, it needs Ray) trains on a Ray cluster instead.
"""

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
from gymwright.train.ppo import TrainResult, train

__all__ = [
    # training
    "TrainConfig",
    "TrainResult",
    "train",
    "ALGOS",
    # policies
    "Policy",
    "load_policy",
    "CheckpointError",
    "random_legal_policy",
    "RandomLegalPolicy",
    "scripted_policy",
    "ScriptedPolicy",
    "baseline_names",
    "Team",
    # rollouts of policies
    "play_episodes",
    "EvalResult",
]
