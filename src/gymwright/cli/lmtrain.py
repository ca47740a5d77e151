"""`gymwright train-lm` and `gymwright eval-lm`: a language model trained by GRPO in a gymwright
environment, and measured on held-out episodes (gymwright.lmtrain; the `lm` extra). Both commands
register themselves on the app when `gymwright.cli` imports this module. Progress goes to stderr,
results to stdout (`--json`: machine-readable)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from gymwright.cli.common import (
    JsonOpt,
    ParamOpt,
    SpecArg,
    app,
    domain_errors,
    out,
    parse_params,
    to_json,
)

ModelOpt = Annotated[str, typer.Option("--model", "-m", help="hf:smollm2-135m, hf:qwen2.5-coder-0.5b, hf:PATH (a saved model folder, e.g. RUN/model) or hf:ORG/NAME (in the HF cache).")]
RoleOpt = Annotated[str, typer.Option("--role", "-r", help="The role (its first agent) or agent the model plays (default: the first agent).")]
OpponentOpt = Annotated[str, typer.Option("--opponent", help="Who plays the other agents: self, random, scripted:NAME (a baseline of the spec) or a model (hf:PATH, openai:MODEL, ...).")]
TokensOpt = Annotated[int, typer.Option("--max-new-tokens", min=1, help="The most new tokens of one reply.")]
DeviceOpt = Annotated[str, typer.Option("--device", help="auto (cuda when present), cpu or cuda.")]
RulesOpt = Annotated[bool, typer.Option("--rules/--no-rules", help="Show the model the rules card (system message), or only each turn's message.")]


@app.command("train-lm")
def train_lm_command(
    spec: SpecArg,
    model: ModelOpt = "hf:smollm2-135m",
    role: RoleOpt = "",
    opponent: OpponentOpt = "random",
    param: ParamOpt = None,
    episodes_per_step: Annotated[int, typer.Option("--episodes-per-step", "-G", min=2, help="Episodes per update from one seed: the GRPO group.")] = 8,
    steps: Annotated[int, typer.Option("--steps", "-n", min=1, help="Updates (one group each).")] = 20,
    lr: Annotated[float, typer.Option("--lr", help="Learning rate.")] = 1e-5,
    beta: Annotated[float, typer.Option("--beta", help="KL coefficient against the base model (0: none, no reference model).")] = 0.0,
    loss_type: Annotated[str, typer.Option("--loss-type", help="TRL's GRPO loss: dapo, grpo, dr_grpo, bnpo, ...")] = "dapo",
    temperature: Annotated[float, typer.Option("--temperature", help="Sampling temperature of the training episodes.")] = 1.0,
    max_new_tokens: TokensOpt = 12,
    invalid_penalty: Annotated[float, typer.Option("--invalid-penalty", help="Subtracted from the training reward per invalid reply.")] = 1.0,
    rules: RulesOpt = True,
    train_layers: Annotated[int, typer.Option("--train-layers", min=0, help="Train only the top N decoder blocks (0: every parameter).")] = 0,
    eval_episodes: Annotated[int, typer.Option("--eval-episodes", min=0, help="Held-out episodes to measure the base and the trained model on (0: none).")] = 0,
    device: DeviceOpt = "auto",
    seed: Annotated[int, typer.Option("--seed", "-s", min=0, help="Training groups use seeds SEED, SEED+1, ...; held-out episodes SEED+1e6, ...")] = 0,
    output: Annotated[Path, typer.Option("--out", "-o", help="The run folder: config.json, log.jsonl, model/, result.json.")] = Path("runs/lm"),
    as_json: JsonOpt = False,
) -> None:
    """Train a language model by GRPO over multi-turn episodes of a text game (TRL)."""
    from gymwright.lmtrain import LMTrainConfig, train_lm

    with domain_errors(spec):
        config = LMTrainConfig(
            spec=spec, model=model, role=role, opponent=opponent, params=parse_params(param),
            episodes_per_step=episodes_per_step, steps=steps, lr=lr, beta=beta, loss_type=loss_type,
            temperature=temperature, max_new_tokens=max_new_tokens, invalid_penalty=invalid_penalty, rules=rules,
            train_layers=train_layers, eval_episodes=eval_episodes, device=device, seed=seed, out=str(output))
        result = train_lm(config)
    if as_json:
        out.print(to_json(result), soft_wrap=True)
        return
    out.print(f"trained {steps} steps in {result['seconds']:.0f} s; model: {result['model_dir']}")
    for name in ("base", "trained"):
        if result.get(name):
            out.print(line(name, result[name]))


@app.command("eval-lm")
def eval_lm_command(
    spec: SpecArg,
    model: ModelOpt = "hf:smollm2-135m",
    role: RoleOpt = "",
    opponent: OpponentOpt = "random",
    param: ParamOpt = None,
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, help="Episodes (seeds SEED, SEED+1, ...).")] = 32,
    seed: Annotated[int, typer.Option("--seed", "-s", min=0, help="The first episode's seed.")] = 1_000_000,
    temperature: Annotated[float, typer.Option("--temperature", min=0.0, help="0: greedy replies.")] = 0.0,
    max_new_tokens: TokensOpt = 12,
    rules: RulesOpt = True,
    device: DeviceOpt = "auto",
    as_json: JsonOpt = False,
) -> None:
    """Measure a language model on episodes of a text game: valid-action rate, returns, metrics."""
    from gymwright.lmtrain import evaluate_lm

    with domain_errors(spec):
        figures = evaluate_lm(spec, model, episodes, seed, role=role, opponent=opponent, params=parse_params(param),
                              temperature=temperature, max_new_tokens=max_new_tokens, rules=rules, device=device)
    out.print(to_json(figures) if as_json else line(model, figures), soft_wrap=True)


def line(name: str, figures: dict[str, Any]) -> str:
    """One line of an evaluation's figures."""
    return (f"{name}: valid {figures['valid_rate']:.1%} of {figures['decisions']} decisions, "
            f"return {figures['mean_return']:.3f} over {figures['episodes']} episodes, "
            f"{figures['decisions_per_s']:.2f} decisions/s, {figures['tokens']} tokens")
