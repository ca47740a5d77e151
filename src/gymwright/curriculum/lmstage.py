"""A stage of a language-model trainee: GRPO (`gymwright.lmtrain.train_lm`) on the stage's mixture
of configurations, played as text, from the checkpoint the stage before saved; measured with
`evaluate_lm` (the task metric, e.g. MAPF's `valid`: every walker home, no hole, no conflict).

A mixture's GRPO updates go to its buckets by share: each update's configuration is drawn by
share (seeded by the curriculum seed and the stage), and each bucket's updates run as one
`train_lm` run, in the mixture's order, each from the previous run's saved model; the stage's
checkpoint is the last run's `model/` folder (`hf:` of it loads it). `LMTraineeOptions` holds the
trainee's settings, with a CPU preset (`toy`) and the paper's (`paper`, a GPU's).
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from gymwright.engineer.evidence import Validation
from gymwright.engineer.mixture import Mixture
from gymwright.errors import GymwrightError
from gymwright.lmtrain.config import LMTrainConfig
from gymwright.lmtrain.evaluate import evaluate_lm
from gymwright.train.episodes import Z95


@dataclass(frozen=True)
class LMTraineeOptions:
    """The LLM trainee of a curriculum. `steps_per_stage` GRPO updates a stage, each of
    `episodes_per_step` episodes (one group); the model plays the first walker, `opponent` the
    others (`self`: the model itself; `scripted:NAME`: a baseline of the spec, cheaper on a CPU);
    `eval_episodes` per bucket and per validation cell after a stage, `held_out_episodes` per
    held-out cell for the final checkpoint, each of up to `eval_turns` turns (training's
    `max_turns` may cut its episodes shorter: on a CPU a turn's tokens are the cost); `engineer_tokens`: the most tokens of an engineer reply
    from the trainee. The rest as `LMTrainConfig` says."""

    model: str = "hf:smollm2-135m"
    steps_per_stage: int = 2
    episodes_per_step: int = 2
    opponent: str = "scripted:straight_to_goal"
    lr: float = 2e-4
    max_new_tokens: int = 3
    max_turns: int = 1
    eval_turns: int = 4
    rules: bool = False
    train_layers: int = 2
    eval_episodes: int = 1
    held_out_episodes: int = 2
    engineer_tokens: int = 48
    device: str = "auto"
    scale: str = "toy"

    def check(self) -> None:
        for name in ("steps_per_stage", "eval_episodes", "held_out_episodes", "engineer_tokens", "eval_turns"):
            if getattr(self, name) < 1:
                raise GymwrightError(f"{name} is {getattr(self, name)}, below 1", path=name, hint="use 1 or more")
        self.train_config("mapf_frozenlake", {}, 1, 0, "").check()

    def train_config(self, spec: str, params: dict[str, Any], steps: int, seed: int, out: str,
                     model: str | None = None) -> LMTrainConfig:
        return LMTrainConfig(spec, model=model or self.model, opponent=self.opponent, params=dict(params),
                             episodes_per_step=self.episodes_per_step, steps=steps, lr=self.lr,
                             max_new_tokens=self.max_new_tokens, max_turns=self.max_turns, rules=self.rules,
                             train_layers=self.train_layers, device=self.device, seed=seed, out=out)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


PRESETS: dict[str, LMTraineeOptions] = {
    # a CPU: SmolLM2-135M, the top 2 blocks trained, no rules card, a training episode cut after its first
    # turn (a GRPO update of two 2-turn episodes took ~21 s on one core, of one turn ~10 s; measured episodes
    # play all 4 steps of a toy game), the other walker the spec's scripted baseline
    "toy": LMTraineeOptions(),
    # the paper's: Qwen3-4B (in the HF cache), every parameter, the rules card, the model plays every walker
    "paper": LMTraineeOptions(model="hf:Qwen/Qwen3-4B", steps_per_stage=50, episodes_per_step=8, opponent="self",
                              lr=1e-6, max_new_tokens=32, max_turns=40, eval_turns=40, rules=True, train_layers=0, eval_episodes=50,
                              held_out_episodes=100, engineer_tokens=1200, device="cuda", scale="paper"),
}


def preset(name: str, **changes: Any) -> LMTraineeOptions:
    if name not in PRESETS:
        raise GymwrightError(f"unknown trainee scale {name!r}", path="--scale", hint=f"one of {', '.join(PRESETS)}")
    return replace(PRESETS[name], **{k: v for k, v in changes.items() if v is not None})


@dataclass
class Loader:
    """Loads trainee models: the base once (a de-quantized GGUF takes ~20 s on a CPU), then a copy
    of it for every curriculum that starts from it; a saved checkpoint from its folder."""

    device: str = "auto"
    bases: dict[str, Any] = field(default_factory=dict)

    def base(self, ref: str) -> Any:
        from gymwright.llm.transformers_provider import load_model

        if ref not in self.bases:
            self.bases[ref] = load_model(ref.removeprefix("hf:"), self.device)
        return self.bases[ref]

    def fresh(self, ref: str) -> Any:
        """A model to train or measure: a copy of a base already loaded, else `ref` loaded anew."""
        from gymwright.llm.transformers_provider import load_model

        return copy.deepcopy(self.bases[ref]) if ref in self.bases else load_model(ref.removeprefix("hf:"), self.device)


def plan_updates(mixture: Mixture, steps: int, seed: int) -> list[tuple[int, int]]:
    """(bucket index, updates) per run of a stage: each update's bucket drawn by share, the draws
    counted per bucket, the buckets in the mixture's order; every update goes to some bucket."""
    shares = np.array([b.share for b in mixture.buckets], dtype=float)
    picks = np.random.default_rng([seed, 4242]).choice(len(shares), size=steps, p=shares / shares.sum())
    counts = np.bincount(picks, minlength=len(shares))
    return [(i, int(n)) for i, n in enumerate(counts) if n > 0]


def train_stage_lm(spec: str, mixture: Mixture, init_from: str, opts: LMTraineeOptions, loader: Loader,
                   folder: Path, seed: int) -> tuple[str, Any, list[dict[str, Any]]]:
    """Train one stage: (the `hf:` checkpoint it saved, the trained model, per run its bucket,
    updates and last log row)."""
    from gymwright.lmtrain.grpo import train_lm

    lm, ref, runs = loader.fresh(init_from), init_from, []
    for j, (i, updates) in enumerate(plan_updates(mixture, opts.steps_per_stage, seed)):
        bucket = mixture.buckets[i]
        out = folder / f"run{j}-{slug(bucket.label)}"
        result = train_lm(opts.train_config(spec, bucket.params, updates, seed * 1000 + j, str(out), ref), lm)
        ref = f"hf:{result['model_dir']}"
        runs.append({"bucket": bucket.label, "updates": updates, "model": ref, "seconds": result["seconds"],
                     "last": result["log"] or {}})
    return ref, lm, runs


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text)[:60] or "config"


def measure_cells(spec: str, lm: Any, cells: dict[str, dict[str, Any]], metric: str, episodes: int, seed: int,
                  opts: LMTraineeOptions, secondary: tuple[str, ...] = ()) -> tuple[Validation, dict[str, Any]]:
    """The model's task metric (greedy replies) in every cell, `episodes` each from `seed`, as a
    `Validation` (the mean over cells, its 95% half-width with episodes pooled per cell), and per
    cell `evaluate_lm`'s figures (the valid-action rate, returns, every metric). An episode cut at
    `max_turns` before the game ended has no metrics: it counts as a failure of the task."""
    rates, var, extra, figures = {}, 0.0, dict.fromkeys(secondary, 0.0), {}
    for label, params in cells.items():
        r = evaluate_lm(spec, lm, episodes, seed, opponent=opts.opponent, params=params,
                        max_new_tokens=opts.max_new_tokens, rules=opts.rules, max_turns=opts.eval_turns,
                        device=opts.device, batch=16)
        p = finished_rate(r, metric)
        rates[label], var = p, var + p * (1 - p) / episodes
        for name in secondary:
            extra[name] += float(r["metrics"].get(name, math.nan)) / len(cells)
        figures[label] = {"metrics": r["metrics"], "action_valid_rate": r["valid_rate"], "episodes": r["episodes"],
                          "mean_return": r["mean_return"], "truncated": r["truncated"], "seconds": r["seconds"]}
    mean = float(np.mean(list(rates.values())))
    return Validation(rates, mean, Z95 * float(np.sqrt(var)) / len(cells), extra, episodes), figures


def finished_rate(result: dict[str, Any], metric: str) -> float:
    """`metric` over all of `evaluate_lm`'s episodes, 0 for those cut before the game ended (a
    game's metrics come at its end; `evaluate_lm` averages over the episodes that have them)."""
    episodes = int(result["episodes"])
    finished = episodes - int(result["truncated"])
    if finished <= 0:
        return 0.0
    return float(result["metrics"].get(metric, 0.0)) * finished / episodes
