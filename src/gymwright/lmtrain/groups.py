"""GRPO groups and their advantages, as TRL computes them for this trainer's samples.

One sample is one episode of the model's agent: its decisions' tokens in one sequence. The G
episodes of a step start from the same seed (the same deal, the same opponent draws where the
opponent is seeded by it) and differ only by the model's sampled replies: they form one group.
Every token the model wrote in an episode gets that episode's advantage (the episode-level
variant; not per turn): `(R - mean(group)) / (std(group) + eps)` (TRL's `scale_rewards="group"`).
A group whose episodes all scored the same carries no signal; `dead_share` counts them.

The seed travels to the rollout function inside the dataset's prompt (`seed_prompt`), because
TRL hands the rollout function the prompts alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from gymwright.errors import GymwrightError

SEED_TEXT = "gymwright episode seed={seed}"
SEED_RE = re.compile(r"^gymwright episode seed=(-?\d+)$")


def seed_prompt(seed: int) -> list[dict[str, str]]:
    """A dataset row's prompt naming the episode seed of its group."""
    return [{"role": "user", "content": SEED_TEXT.format(seed=seed)}]


def seed_of(prompt: object) -> int:
    """The seed a dataset prompt names (see `seed_prompt`)."""
    text = prompt[-1]["content"] if isinstance(prompt, list) and prompt else prompt
    match = SEED_RE.match(str(text).strip())
    if match is None:
        raise GymwrightError(f"not a train-lm episode prompt: {str(text)[:80]!r}", path="prompt",
                             hint="the dataset rows must come from gymwright.lmtrain.groups.seed_prompt")
    return int(match.group(1))


def groups(seeds: Sequence[int], size: int) -> list[list[int]]:
    """Consecutive runs of `size` equal seeds (TRL's sampler repeats each row G times in a row)."""
    if size < 1 or len(seeds) % size:
        raise GymwrightError(f"{len(seeds)} episodes do not split into groups of {size}", path="episodes_per_step",
                             hint="the generation batch must be a multiple of episodes_per_step")
    out = [list(seeds[i:i + size]) for i in range(0, len(seeds), size)]
    for g in out:
        if len(set(g)) != 1:
            raise GymwrightError(f"a group mixes seeds {sorted(set(g))}", path="episodes_per_step",
                                 hint="keep shuffling off inside a generation batch (TRL's RepeatSampler)")
    return out


def advantages(rewards: Sequence[float], size: int, eps: float = 1e-4) -> list[float]:
    """Group-relative advantages, each group of `size` consecutive rewards normalized by its mean
    and its (sample) standard deviation, as TRL's GRPO does."""
    out: list[float] = []
    for i in range(0, len(rewards), size):
        group = list(rewards[i:i + size])
        mean = sum(group) / len(group)
        std = math.sqrt(sum((r - mean) ** 2 for r in group) / max(len(group) - 1, 1))
        out += [(r - mean) / (std + eps) for r in group]
    return out


def dead_share(rewards: Sequence[float], size: int) -> float:
    """The share of groups whose rewards are all equal (no learning signal)."""
    chunks = [rewards[i:i + size] for i in range(0, len(rewards), size)]
    return sum(1 for c in chunks if max(c) - min(c) < 1e-9) / max(len(chunks), 1)
