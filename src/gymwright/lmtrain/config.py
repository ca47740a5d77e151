"""What a language-model training run is: `LMTrainConfig`, checked before anything loads."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from gymwright.errors import GymwrightError

EVAL_SEED_OFFSET = 1_000_000
"""Held-out episodes start at `seed + EVAL_SEED_OFFSET`; training groups use `seed + step`."""


@dataclass
class LMTrainConfig:
    """One `gymwright train-lm` run.

    `role` is a role (the model plays its first agent) or an agent name; `opponent` plays every
    other agent: `self` (the current model, untrained on those turns), `random`, `scripted:NAME`
    (a baseline of the spec) or a model name (`hf:PATH`, `openai:...`). A step plays
    `episodes_per_step` episodes from one seed (one GRPO group) and makes one update.
    `invalid_penalty` is subtracted from the training reward per invalid reply of the model
    (the reported return is the game's own). `rules`: whether the model sees the rules card as
    its system message (False: only each turn's message, which lists the legal actions and how to
    answer; four times fewer tokens on a small game). `train_layers`: train only the top N
    decoder blocks (0: every parameter); on a CPU the backward pass then costs a fraction."""

    spec: str
    model: str = "hf:smollm2-135m"
    role: str = ""
    opponent: str = "random"
    params: dict[str, Any] = field(default_factory=dict)
    episodes_per_step: int = 8
    steps: int = 20
    lr: float = 1e-5
    beta: float = 0.0
    loss_type: str = "dapo"
    temperature: float = 1.0
    max_new_tokens: int = 12
    max_turns: int = 64
    invalid_penalty: float = 1.0
    rules: bool = True
    train_layers: int = 0
    device: str = "auto"
    seed: int = 0
    out: str = ""
    eval_episodes: int = 0

    def check(self) -> None:
        """A GymwrightError naming the first setting out of range."""
        ints = {"episodes_per_step": (self.episodes_per_step, 2), "steps": (self.steps, 1),
                "max_new_tokens": (self.max_new_tokens, 1), "max_turns": (self.max_turns, 1),
                "eval_episodes": (self.eval_episodes, 0),
                "train_layers": (self.train_layers, 0)}
        for name, (value, low) in ints.items():
            if value < low:
                hint = ("GRPO compares the episodes of a group: at least 2" if name == "episodes_per_step"
                        else f"use {low} or more")
                raise GymwrightError(f"{name} is {value}, below {low}", path=name, hint=hint)
        if not self.lr > 0:
            raise GymwrightError(f"lr is {self.lr}", path="lr", hint="use a positive learning rate, e.g. 1e-5")
        if self.temperature <= 0:
            raise GymwrightError("training samples its replies: temperature must be above 0",
                                 path="temperature", hint="use 1.0 (GRPO needs different episodes in a group)")
        if not self.model.startswith("hf:"):
            raise GymwrightError(f"model {self.model!r}: only hf: models are trained here", path="model",
                                 hint="hf:smollm2-135m, hf:PATH (a saved model folder) or hf:ORG/NAME (in the HF cache)")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def train_seed(self, step: int) -> int:
        return self.seed + step

    @property
    def eval_seed(self) -> int:
        return self.seed + EVAL_SEED_OFFSET
