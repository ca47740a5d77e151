"""A language model trained by reinforcement learning in gymwright environments (layer 10).

GRPO over multi-turn text episodes, on TRL's `GRPOTrainer` (grpo.py says how and why): the model
plays one agent of a `TextGame` (textgame/) turn by turn, the other agents are played by a fixed
partner or by the model itself (opponents.py); the G episodes of one step start from the same seed
and form one GRPO group (groups.py). rollout.py plays the episodes and keeps each decision's
tokens (chat.py joins the turns into one token sequence), run.py writes the run folder,
evaluate.py measures a model on held-out episodes. docs/llm-training.md is the guide.
"""

from typing import Any

from gymwright.lmtrain.config import LMTrainConfig
from gymwright.lmtrain.evaluate import evaluate_lm

__all__ = ["LMTrainConfig", "evaluate_lm", "train_lm"]


def __getattr__(name: str) -> Any:
    if name == "train_lm":  # TRL is imported only when training
        from gymwright.lmtrain.grpo import train_lm

        return train_lm
    raise AttributeError(name)
