"""The training command of the CLI: `train` (registered in `gymwright.cli`; `play` is `gymwright.cli.play`).

Progress goes to stderr (a rich bar with steps/s, the return per role and the spec's first
metric), results to stdout, so `--json` output stays clean for scripts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from gymwright.cli.common import err, out
from gymwright.cli.config_options import (
    BY_NAME,
    FIELDS,
    ConfigChoice,
    check_combination,
    check_device_of,
    config_options,
    describe,
    plain,
    resolved,
    rllib_settings,
    save_config,
)
from gymwright.diagnostic import shown
from gymwright.train.config import ALGOS
from gymwright.train.trainers import DEFAULT, TRAINERS


# --------------------------------------------------------------------------- train
class TrainProgress:
    """A rich progress bar over updates: steps/s, return per role, the first metric."""

    def __init__(self, console: Console, total: int) -> None:
        self.bar = Progress(
            TextColumn("[bold]train"), BarColumn(), MofNCompleteColumn(), TextColumn("updates"),
            TimeElapsedColumn(), TextColumn("{task.fields[figures]}"), console=console,
            transient=False,
        )
        self.task = self.bar.add_task("train", total=total, figures="")
        self.bar.start()

    def __call__(self, row: dict[str, Any]) -> None:
        figures = [f"{row['charts/agent_sps']:,.0f} agent-steps/s"]
        sides = any(k.startswith("npc/return/") for k in row)  # NPCs: the trained and the fixed agents apart
        for k, v in row.items():
            side, _, role = k.partition("/return/")
            if role and (side in ("trained", "npc") if sides else side == "charts"):
                figures.append(f"return {role}{f' ({side})' if sides else ''} {v:.3f}")
        metric = next(((k, v) for k, v in row.items() if k.startswith("metrics/")), None)
        if metric is not None:
            figures.append(f"{metric[0].removeprefix('metrics/')} {metric[1]:.3f}")
        self.bar.update(self.task, completed=row["update"], total=row["updates_total"], figures="  ".join(figures))

    def stop(self) -> None:
        self.bar.stop()


def default_out(spec: str | dict[str, Any], algo: str, seed: int) -> Path:
    name = str(spec.get("name", "spec")) if isinstance(spec, dict) else Path(spec).stem
    return Path("runs") / f"{name}-{algo}-s{seed}"


TRAIN_FIELDS = tuple(f.name for f in FIELDS if f.name not in ("spec", "params", "copies"))
RUN_FIELDS = ("spec", "params", "total_steps", "seed", "out")  # given to the trainers as arguments


@config_options("train", TRAIN_FIELDS, flags={"total_steps": ("--steps", "-n"), "seed": ("-s",), "out": ("-o",)},
                shown={"out": "runs/SPEC-ALGO-sSEED"}, file_only=("spec", "params", "copies"))
def train_command(
    spec: Annotated[str | None, typer.Argument(metavar="SPEC", show_default=False,
                                               help="A spec file or a library spec name (default: `spec` of the --config file).")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", metavar="NAME=VALUE", help="Set a spec param (repeatable; over the file's `params`).")] = None,
    backend: Annotated[str, typer.Option("--backend", help="builtin (PPO on the batch backend) or rllib (Ray RLlib).")] = DEFAULT,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="Ray cluster address for --backend rllib (default: a local Ray).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
    config: ConfigChoice | None = None,
) -> None:
    """Train agents with PPO (IPPO or MAPPO) on the batch backend, or with RLlib on Ray.

    Every field of the trainer's TrainConfig is an option below; --config FILE.yaml sets them from
    a file (options given here win), and the run folder gets the resolved config.yaml."""
    from gymwright.cli.common import chosen_trainer, fail

    choice = config or ConfigChoice()
    values = choice.values()
    source = spec if spec is not None else values.get("spec")
    if source is None:
        fail(["no spec: give SPEC (a spec file or a library name), or `spec:` in the --config file"],
             "e.g. `gymwright train cake_negotiation`; `gymwright library` lists the library specs")
    label = source if isinstance(source, str) else str(source.get("name", "spec"))
    values["spec"], values["params"] = source, with_params(values.get("params", {}), param)
    algo, seed = values.get("algo", "ippo"), values.get("seed", 0)
    if algo not in ALGOS:
        fail([f"unknown --algo {shown(repr(algo))} ({choice.where('algo')}); choose one of {', '.join(ALGOS)}"],
             f"e.g. `gymwright train {label} --algo mappo`", path=choice.where("algo"))
    trainer = chosen_trainer(backend)
    refuse_for_code(source, trainer, values, choice)
    folder = Path(values.get("out") or default_out(source, algo, seed))
    RUNS[trainer.name](source, label, values, choice, folder, ray_address, as_json)


def train_builtin(source: Any, label: str, values: dict[str, Any], choice: ConfigChoice, folder: Path,
                  ray_address: str | None, as_json: bool) -> None:
    """`train` on the built-in PPO: every TrainConfig field, a progress bar, the run's summary."""
    from gymwright.cli.common import domain_errors, fail, to_json
    from gymwright.train import TrainConfig, train

    if not values.get("resume") and (folder / "checkpoint.pt").exists():
        fail([f"{folder} already holds a run (checkpoint.pt)"], "pass --resume to continue it, or choose another folder with --out")
    check_combination(choice, "train")
    with domain_errors(label):
        check_device_of(choice)
        if values.get("npc"):  # now, with the option's name in any error, not after the first update
            from gymwright.train.npc import check_npc

            check_npc(source, values["params"], values["npc"], where=choice.where("npc"))
        cfg = TrainConfig(**{**values, "out": folder})
        saved = save_config(folder, plain(resolved(tuple(BY_NAME), {**values, "out": folder})), "train")
    if settings := describe(choice):
        err.print(Text(settings, style="dim"))
    progress = TrainProgress(err, cfg.updates)
    try:
        with domain_errors(label):
            result = train(cfg, progress=progress)
    finally:
        progress.stop()
    if as_json:
        typer.echo(to_json({**result.to_dict(), "out": str(folder), "log": str(folder / "train.jsonl"), "config": str(saved)}))
        return
    out.print(Text.assemble(("trained", "bold"), f" {result.updates} updates, {result.env_steps:,} env steps, "
                            f"{result.agent_steps_per_second:,.0f} agent-steps/s "
                            f"(env {result.time['env_s']:.1f} s, network {result.time['network_s']:.1f} s)"))
    out.print(outcome_lines(result.final_return, result.metrics))
    if result.npc:
        fixed = "  ".join(f"{a}={p}" for a, p in result.npc.items())
        out.print(Text(f"  fixed    {fixed} (not trained; train.jsonl: trained/return/ROLE, npc/return/ROLE)"))
    out.print(f"Wrote {result.checkpoint}, {folder / 'train.jsonl'} and {saved}.")
    out.print(next_step(label, result.checkpoint))


def outcome_lines(final_return: dict[str, float], metrics: dict[str, float]) -> Text:
    """The last update's return per role and the episode metrics, as a trained run's summary shows them."""
    returns = "  ".join(f"{k}={v:.4g}" for k, v in final_return.items())
    shown = "  ".join(f"{k}={v:.4g}" for k, v in metrics.items()) or "-"
    return Text(f"  return   {returns}\n  metrics  {shown}")


def next_step(label: str, checkpoint: Any) -> str:
    return f"Next: `gymwright play {label} --policy {checkpoint} --render --episodes 1`."


def refuse_for_code(source: Any, trainer: Any, values: dict[str, Any], choice: ConfigChoice) -> None:
    """A code-mode module (SPEC ending in .py) trains on a trainer that runs one (the built-in), without
    NPCs: the RLlib adapter and the NPCs are built on a spec, which a code-mode design has not."""
    from gymwright.cli.common import fail
    from gymwright.codemode.source import is_code_source

    if not is_code_source(source):
        return
    if not trainer.runs_code_mode:
        fail([f"--backend {trainer.name}: {source} is a code-mode module; the {trainer.title} adapter builds its envs by "
              "compiling a spec, and a code-mode module runs only in the built-in trainer's sandbox workers"],
             f"use the built-in trainer (the default): `gymwright train {source}`", path="--backend")
    if values.get("npc"):
        fail([f"{choice.where('npc')}: {source} is a code-mode module; fixed-policy agents (NPCs) are "
              "resolved on a spec's roles and baselines, which a code-mode design has not"],
             f"drop --npc: `gymwright train {source}` trains every agent, or design the task in spec mode",
             path=choice.where("npc"))


def with_params(base: dict[str, Any] | list[dict[str, Any]], given: list[str] | None) -> Any:
    """The file's params (a dict, or a list of dicts: mixed configs) with each --param over them."""
    from gymwright.cli.common import parse_params

    extra = parse_params(given)
    if isinstance(base, list):
        return [{**p, **extra} for p in base]
    return {**base, **extra}


def train_on_rllib(source: Any, label: str, values: dict[str, Any], choice: Any, folder: Path,
                   ray_address: str | None, as_json: bool) -> None:
    """`train --backend rllib`: the fields RLlib takes, a progress bar, the built-in run's summary."""
    from gymwright.cli.common import domain_errors, fail, to_json
    from gymwright.train.rllib_ray import LOCAL, host_port

    steps = values.get("total_steps", BY_NAME["total_steps"].default)
    with domain_errors(label):  # every setting, before Ray is imported or started
        rllib_settings(choice, {n: v for n, v in values.items() if n not in ("spec", "params")}, steps,
                       0 if ray_address in LOCAL else None)
        if ray_address is not None and ray_address not in LOCAL:
            host_port(ray_address)  # its form and port (whether it answers is seen when it is joined)
    if (folder / "checkpoint.pt").exists():
        fail([f"{folder} already holds a run (checkpoint.pt); an RLlib run does not resume one"],
             "choose another folder with --out", path=choice.where("out"))
    try:
        from gymwright.train.rllib import train_rllib
    except ImportError as e:
        missing = getattr(e, "name", "") or ""
        what = "--backend rllib: the RLlib adapter (gymwright.train.rllib) is not in this install" if missing.startswith("gymwright") \
            else f"--backend rllib needs Ray RLlib ({e})"
        fail([what], "install the extra: pip install 'gymwright[rllib]', or use --backend builtin")
    config = {n: v for n, v in values.items() if n not in RUN_FIELDS}
    progress = None if as_json else TrainProgress(err, 1)
    try:
        with domain_errors(label):
            result = train_rllib(source, values["params"], steps=steps, out=folder, seed=values.get("seed", 0),
                                 ray_address=ray_address, config=config,
                                 progress=None if progress is None else (lambda info: progress(info["row"])))
    finally:
        if progress is not None:
            progress.stop()
    if as_json:
        typer.echo(to_json({k: v for k, v in result.items() if k != "history"}))
        return
    out.print(Text.assemble(("trained", "bold"), f" with RLlib: {result['iterations']} iterations, "
                            f"{result['env_steps']:,} env steps, {result['agent_steps_per_second']:,.0f} agent-steps/s"))
    out.print(outcome_lines(result["final_return"], result["metrics"]))
    out.print(f"Wrote {result['checkpoint']} (the policy, built-in format), {result['rllib_checkpoint']}, "
              f"{result['log']} and {result['config']}.")
    out.print(next_step(label, result["checkpoint"]))


RUNS: dict[str, Callable[[Any, str, dict[str, Any], ConfigChoice, Path, str | None, bool], None]] = {
    "builtin": train_builtin, "rllib": train_on_rllib}
"""`train` on each trainer of `gymwright.train.trainers.TRAINERS`, by its name"""
assert set(RUNS) == set(TRAINERS), "every trainer needs its `train` run here"
