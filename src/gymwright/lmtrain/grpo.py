"""GRPO over multi-turn text episodes, on TRL's `GRPOTrainer` (TRL 1.x, the `lm` extra).

How it uses TRL: the trainer, its GRPO loss (`loss_type`: dapo, grpo, dr_grpo, ...), KL term
(`beta`), group-relative advantages, optimizer, scheduler and logging run as TRL runs them; this
module supplies a `rollout_func` (TRL's hook for custom generation) that plays whole episodes. A
dataset row names an episode seed (`groups.seed_prompt`); TRL's sampler repeats it
`num_generations` = G times, so the rollout function receives G copies and plays G episodes of that
seed side by side (rollout.py): one GRPO group. Each episode comes back as one sample: the first
prompt as `prompt_ids`, every later token as `completion_ids`, with `env_mask` marking the model's
own tokens (TRL trains on those only: the turns' user messages and template tokens are masked out,
the mechanism TRL offers for environment feedback). The reward function returns the episode's
reward (return less `invalid_penalty` per invalid reply), so each decision's tokens get the
episode's advantage (episode level, not per turn).

Why not TRL's `environment_factory` / tool loop: it plays an environment as tools the model calls
inside one reply, which neither fits simultaneous multi-agent turns nor lets other agents (a
scripted baseline, the model itself) act between the model's turns. Why not `verifiers`: its
`MultiTurnEnv` drives rollouts through an OpenAI-compatible server (vLLM in its trainer), with no
in-process CPU path for a 135M model, and its own trainer is a fork of the same GRPO loss; TRL runs
in this process on CPU or one GPU with the same command (gymwright's verifiers environment, in
`serve/`, is the way to train there at scale).
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Any

from gymwright.errors import GymwrightError
from gymwright.llm.transformers_provider import EXTRA_HINT, LoadedModel, load_model
from gymwright.lmtrain import groups
from gymwright.lmtrain.config import LMTrainConfig
from gymwright.lmtrain.evaluate import check_opponent, evaluate_lm, new_games
from gymwright.lmtrain.opponents import make_opponent
from gymwright.lmtrain.rollout import Table, learner_agent, play
from gymwright.lmtrain.run import RunFolder
from gymwright.textgame import TextGame


def require_trl() -> Any:
    try:
        return importlib.import_module("trl")
    except ImportError as e:
        raise GymwrightError("train-lm needs TRL, which is not installed", path="trl", hint=EXTRA_HINT) from e


class Rollouts:
    """TRL's `rollout_func`: G episodes per distinct seed among the prompts (see the module doc)."""

    def __init__(self, config: LMTrainConfig, table: Table) -> None:
        self.config, self.table = config, table
        self.games = new_games(config.spec, config.params, config.episodes_per_step)
        check_opponent(table, self.games[0])
        self.last: dict[str, Any] = {}
        self.calls = 0

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        start = time.perf_counter()
        self.table.lm.model = trainer.accelerator.unwrap_model(trainer.model)
        seeds = [groups.seed_of(p) for p in prompts]
        episodes = []
        for group in groups.groups(seeds, self.config.episodes_per_step):
            self.calls += 1
            episodes += play(self.table, self.games[: len(group)], group, self.config.role,
                             gen_seed=self.config.seed * 7919 + self.calls)
        rewards = [e.reward(self.config.invalid_penalty) for e in episodes]
        decisions = sum(e.decisions for e in episodes)
        self.last = {
            "valid_rate": 1.0 - sum(e.invalid for e in episodes) / max(decisions, 1),
            "return": sum(e.returns.get(e.agent, 0.0) for e in episodes) / len(episodes),
            "train_reward": sum(rewards) / len(rewards), "decisions": decisions,
            "dead_groups": groups.dead_share(rewards, self.config.episodes_per_step),
            "tokens": sum(e.generated for e in episodes), "rollout_s": time.perf_counter() - start,
        }
        return {"prompt_ids": [e.prompt_ids for e in episodes], "completion_ids": [e.completion_ids for e in episodes],
                "logprobs": [e.logprobs for e in episodes], "env_mask": [e.env_mask for e in episodes],
                "episode_reward": rewards}


def episode_reward(prompts: list[Any], completions: list[Any], episode_reward: list[float], **_: Any) -> list[float]:
    """The reward TRL groups: the episode's (computed by the rollout)."""
    return list(episode_reward)


def freeze_below(model: Any, train_layers: int) -> None:
    """Train only the top `train_layers` decoder blocks and the final norm (0: train everything)."""
    if train_layers <= 0:
        return
    body = getattr(model, "model", None)
    layers = getattr(body, "layers", None)
    if layers is None:
        raise GymwrightError("this model has no `model.layers` to train the top blocks of", path="train_layers",
                             hint="use --train-layers 0 (train every parameter)")
    for p in model.parameters():
        p.requires_grad_(False)
    for block in list(layers)[-train_layers:]:
        block.requires_grad_(True)
    norm = getattr(body, "norm", None)
    if norm is not None:
        norm.requires_grad_(True)


def trl_args(config: LMTrainConfig, lm: LoadedModel, out: Path) -> Any:
    """TRL's GRPOConfig for this run: one group (G episodes) per update, one update per group."""
    trl = require_trl()
    cuda = lm.device.startswith("cuda")
    return trl.GRPOConfig(
        output_dir=str(out / "trl"), per_device_train_batch_size=config.episodes_per_step,
        num_generations=config.episodes_per_step, gradient_accumulation_steps=1, steps_per_generation=1,
        max_steps=config.steps, learning_rate=config.lr, beta=config.beta, loss_type=config.loss_type,
        temperature=config.temperature, use_cpu=not cuda, bf16=cuda, gradient_checkpointing=cuda,
        logging_steps=1, save_strategy="no", report_to="none", seed=config.seed, shuffle_dataset=False,
        disable_tqdm=True, dataloader_num_workers=0, lr_scheduler_type="constant", warmup_steps=0)


def make_callback(run: RunFolder, rollouts: Rollouts) -> Any:
    transformers = importlib.import_module("transformers")

    class LogRows(transformers.TrainerCallback):  # type: ignore[name-defined]  # transformers is imported at run time (an extra)
        """One log.jsonl row per update: TRL's figures and the rollouts' own."""

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
            if logs is None or "train_runtime" in logs:
                return
            row = {"step": state.global_step, **{f"trl/{k}": v for k, v in logs.items()}, **rollouts.last}
            row["loss"], row["kl"] = logs.get("loss"), logs.get("kl")
            run.log(row)

    return LogRows()


def train_lm(config: LMTrainConfig, lm: LoadedModel | None = None) -> dict[str, Any]:
    """Train `config.model` as `config.role` (see LMTrainConfig) and write the run folder; with
    `eval_episodes`, the base and the trained model are measured on held-out seeds."""
    config.check()
    learner_agent(TextGame(config.spec, config.params), config.role)  # the game and the role, before a model loads
    trl = require_trl()
    datasets = importlib.import_module("datasets")
    run = RunFolder(config.out or "runs/lm")
    run.start(config.to_dict())
    lm = lm or load_model(config.model.removeprefix("hf:"), config.device)
    evaluate = _evaluator(config, lm)
    base = evaluate() if config.eval_episodes else None
    freeze_below(lm.model, config.train_layers)
    table = Table(lm, make_opponent(config.opponent, lm, max_new_tokens=config.max_new_tokens, seed=config.seed,
                                    rules=config.rules, device=config.device),
                  config.max_new_tokens, config.temperature, config.max_turns, config.rules)
    rollouts = Rollouts(config, table)
    rows = [{"prompt": groups.seed_prompt(config.train_seed(s))} for s in range(config.steps)]
    trainer = trl.GRPOTrainer(model=lm.model, reward_funcs=[episode_reward], args=trl_args(config, lm, run.root),
                              train_dataset=datasets.Dataset.from_list(rows), processing_class=lm.tokenizer,
                              rollout_func=rollouts, callbacks=[make_callback(run, rollouts)])
    trainer.remove_callback(importlib.import_module("transformers").PrinterCallback)  # log.jsonl has the rows
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    lm.model = trainer.accelerator.unwrap_model(trainer.model)
    run.save_model(lm.model, lm.tokenizer)
    result = {"config": config.to_dict(), "seconds": seconds, "steps": config.steps, "model_dir": str(run.model_dir),
              "log": run.rows()[-1:] and run.rows()[-1], "base": base,
              "trained": evaluate() if config.eval_episodes else None}
    run.finish(result)
    return result


def _evaluator(config: LMTrainConfig, lm: LoadedModel) -> Any:
    def evaluate() -> dict[str, Any]:
        return evaluate_lm(config.spec, lm, config.eval_episodes, config.eval_seed, role=config.role,
                           opponent=config.opponent, params=config.params, max_new_tokens=config.max_new_tokens,
                           rules=config.rules, max_turns=config.max_turns, device=config.device)

    return evaluate
