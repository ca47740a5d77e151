"""`TrainResult`: what a training run achieved, whichever trainer ran it (`gymwright.train.trainers`).

This module does not import torch.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class TrainResult:
    """What a run achieved: throughput, final returns and metrics, where the policy is."""

    agent_steps_per_second: float
    env_steps_per_second: float
    final_return: dict[str, float]
    metrics: dict[str, float]
    checkpoint: str
    updates: int
    env_steps: int
    history: list[dict[str, Any]] = field(default_factory=list)
    time: dict[str, float] = field(default_factory=dict)  # env_s, network_s, other_s, total_s
    npc: dict[str, str] = field(default_factory=dict)  # agent -> the fixed policy that played it (not trained)

    def to_dict(self, with_history: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_history:
            d.pop("history")
        return d

    @classmethod
    def of_rllib(cls, r: dict[str, Any]) -> TrainResult:
        """The result of `gymwright.train.rllib.train_rllib` (its dict) as a built-in run reports it."""
        clock = {"env_s": sum(x.get("time/env_s", 0.0) for x in r["history"]),
                 "network_s": sum(x.get("time/network_s", 0.0) for x in r["history"]), "total_s": r["seconds"]}
        return cls(r["agent_steps_per_second"], r["env_steps_per_second"], r["final_return"], r["metrics"],
                   r["checkpoint"], r["iterations"], r["env_steps"], r["history"],
                   {**clock, "other_s": clock["total_s"] - clock["env_s"] - clock["network_s"]})
