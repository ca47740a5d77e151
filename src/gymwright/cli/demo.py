"""`gymwright demo`: the main job, offline by default, in a few minutes on a laptop.

A task text -> design (the offline designer unless a model is given) -> verify -> train in
stages, the heuristic engineer redesigning the environment between them, and for the same budget
the two baselines a reviewer asks for: the fixed environment and uniform domain randomization over
the engineer's configuration space -> evaluate the engineer's last policy (the scorecard) -> every
final policy on held-out configurations (`gymwright.curriculum.compare`) -> watch it play -> one
self-contained report.html with the curricula side by side.
"""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext, redirect_stdout
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from gymwright.cli.config_options import (
    CONFIG_FILE,
    STAGE_FIELDS,
    STAGE_SHOWN,
    ConfigChoice,
    check_device_of,
    config_options,
    describe,
)
from gymwright.cli.evolve import BackendOpt, RayAddressOpt
from gymwright.train.trainers import DEFAULT

DEMO_TASK = (
    "Three robots cross a frozen lake to their goals without falling into holes or colliding with "
    "each other; a robot may wait to let another pass."
)
BASELINE = "baseline"
"""the fixed baseline's curriculum folder, inside the demo's run folder"""
DR_FOLDER = "dr"
"""domain randomization's curriculum folder, inside the demo's run folder"""
DEMO_LEARNER = {"lr": 1e-3, "num_envs": 512}
"""The demo's training settings where the user sets none (a config file or an option overrides
each): the engineer benchmark's learner (benchmarks/engineer.py, `LEARNER` and `NUM_ENVS`)"""
DEMO_SHOWN = {**STAGE_SHOWN, "num_envs": "512 (the demo's)", "lr": "0.001 (the demo's)"}
HELD_OUT_EPISODES = 150
"""The fewest held-out episodes a cell and arm (the verdict's interval: about +-0.04 an arm)"""
DEMO_BAND = (0.3, 0.6)
"""The heuristic engineer's band of training success (the engineer benchmark's, `BAND`)"""
DEMO_PARAMS = {"view_radius": 2}
"""Params the demo sets where the designed spec declares them (the engineer benchmark's: walkers
see the 5x5 window around them, as its learner was tuned with)"""


def demo_params(spec: str) -> dict[str, Any]:
    """`DEMO_PARAMS` that the spec declares, inside its ranges."""
    from gymwright.spec.loader import load_spec

    declared = load_spec(spec).params
    return {k: v for k, v in DEMO_PARAMS.items()
            if k in declared and (declared[k].min is None or declared[k].min <= v)
            and (declared[k].max is None or v <= declared[k].max)}


def demo_design(task: str, model: str | None, store: Path | None) -> Any:
    """Step 1: design from the task text (offline unless a model is given), with progress."""
    from gymwright.cli.common import err, out
    from gymwright.cli.design import LiveProgress, print_result
    from gymwright.design import DesignOptions, design
    from gymwright.store import Store

    out.rule(Text("1. design", style="bold"))
    out.print(Text(f"task: {task}"))
    progress = LiveProgress(err)
    with Store.open(store) as st:
        try:
            result = design(task, DesignOptions(model=model), store=st, progress=progress)
        finally:
            progress.stop()
    print_result(result)
    return result


def demo_verify(report: Any) -> None:
    """Step 2: the verification the design passed, stage by stage."""
    from gymwright.cli.common import out, print_diagnostics
    from gymwright.diagnostic import Severity

    out.rule(Text("2. verify", style="bold"))
    counts = {sev: len(report.of(sev)) for sev in Severity}
    verdict = Text(f"{report.spec}: ")
    verdict.append("passed" if report.passed else "FAILED", style="bold green" if report.passed else "bold red")
    verdict.append(f" ({', '.join(f'{k}={v:.2f}s' for k, v in report.timings.items())}; "
                   f"{counts[Severity.error]} errors, {counts[Severity.warning]} warnings)")
    out.print(verdict)
    print_diagnostics([d for d in report.diagnostics if d.severity is not Severity.info])


def demo_train(spec: str, folder: Path, stages: int, steps: int, store: Path | None,
               config: ConfigChoice | None = None, episodes: int = 150, backend: str = DEFAULT,
               ray_address: str | None = None) -> Any:
    """Step 3: train in stages with the heuristic engineer between them, and for the same budget the
    fixed environment and domain randomization over the engineer's space (without one, the fixed
    environment alone); every final policy is judged on the same held-out configurations."""
    from gymwright.cli.common import chosen_trainer, out
    from gymwright.cli.evolve import STAGE_SETTINGS
    from gymwright.curriculum import CurriculumOptions, compare, goal_for
    from gymwright.engineer import DomainRandomization, FixedEngineer, HeuristicEngineer
    from gymwright.engineer.ued import PER_STAGE
    from gymwright.store import Store

    trainer = chosen_trainer(backend)
    on = "" if trainer.takes_every_field else f" on {trainer.title}"  # the built-in goes unnamed
    choice = config or ConfigChoice()
    if trainer.takes_every_field:  # the demo's learner under the user's file and options
        choice = ConfigChoice(choice.file, {**DEMO_LEARNER, **choice.from_file}, choice.from_cli)
    num_envs, seed, train = STAGE_SETTINGS[trainer.name](choice, folder, "demo", steps)
    params = demo_params(spec)
    goal = goal_for(spec, params)
    arms: dict[str, Any] = {"engineer": HeuristicEngineer(), "fixed": FixedEngineer()}
    folders = {"engineer": folder, "fixed": folder / BASELINE}
    mixes = train.get("algo", "ippo") != "mappo"  # MAPPO's critic reads a state whose shape each size changes
    if goal.space is not None and mixes:
        # a stage of domain randomization trains every level, or as many as the copies hold (drawn afresh)
        dr = DomainRandomization(goal.space, per_stage=min(PER_STAGE, num_envs))
        arms = {"engineer": arms["engineer"], "dr": dr, "fixed": arms["fixed"]}
        folders["dr"] = folder / DR_FOLDER
    baselines = " and ".join({"dr": "domain randomization over its space", "fixed": "the fixed environment"}[a]
                             for a in arms if a != "engineer")
    out.rule(Text(f"3. train{on}: {stages} stages of {steps:,} env steps with the heuristic engineer, "
                  f"and the same budget for {baselines}", style="bold"))
    if settings := describe(config or ConfigChoice()):
        out.print(Text(settings, style="dim"))
    if goal.space is not None and not mixes:
        out.print(Text("no domain-randomization arm: --algo mappo's critic reads the global state, whose shape each lake "
                       "size changes, so it cannot train a mixture of sizes (use ippo, the default, for that arm)",
                       style="dim"))
    if trainer.runs_side_by_side:
        out.print(Text(f"each arm: lr {train['lr']:g}, {num_envs} env copies, {stages * steps:,} env steps; "
                       f"the {len(arms)} arms train two at a time (one process each)", style="dim"))
    out.print(Text(f"judged on: {goal.target}", style="dim"))
    opts = CurriculumOptions(stages=stages, steps_per_stage=steps, band=DEMO_BAND, eval_episodes=episodes, num_envs=num_envs,
                             seed=seed, train=train, record_episodes=min(40, episodes),
                             validation_episodes=episodes, backend=backend, ray_address=ray_address)
    with Store.open(store) as st:
        return compare(spec, params, arms, goal, folders, folder / "comparison.json", opts,
                       episodes=max(episodes, HELD_OUT_EPISODES), store=st, progress=lambda line: out.print(Text(line, style="dim")),
                       jobs=2)


def demo_compare(comparison: Any) -> None:
    """Step 5: the engineer's curriculum against the fixed one on the held-out configurations."""
    from rich.table import Table

    from gymwright.cli.common import out

    baselines = [a for a in comparison.arms if a != "engineer"]
    out.rule(Text(f"5. held out: the engineer against {' and '.join(baselines)} ({comparison.episodes} episodes a cell)",
                  style="bold"))
    arms = comparison.arms
    table = Table(show_edge=False)
    table.add_column("held-out configuration")
    for name in arms:
        table.add_column(name, justify="right")
    for cell in comparison.held_out:
        table.add_row(cell, *(f"{a.cells[cell]:.3f}" for a in arms.values()))
    table.add_row(f"mean {comparison.task_metric}", *(f"{a.mean:.3f} ± {a.ci95:.3f}" for a in arms.values()))
    for metric in next(iter(arms.values())).secondary:
        table.add_row(f"mean {metric}", *(f"{a.secondary[metric]:.3f}" for a in arms.values()))
    out.print(table)
    for base in baselines:
        diff, ci = comparison.difference("engineer", base)
        verdict = ("inside the noise: no measurable difference" if abs(diff) <= ci else
                   "the engineer's curriculum is better" if diff > 0 else f"{base} is better")
        out.print(Text(f"engineer - {base}: {diff:+.3f} ± {ci:.3f} (95%): {verdict}", style="bold"))


def demo_evaluate(spec: str, policy_path: str, folder: Path, episodes: int = 150) -> Any:
    """Step 4: the scorecard of the engineer's last policy, in the task's own configuration."""
    from gymwright.cli.common import out
    from gymwright.cli.evaluate import STYLE
    from gymwright.evaluate import assess
    from gymwright.train import load_policy

    out.rule(Text("4. evaluate the engineer's last policy in the task's configuration", style="bold"))
    policy = load_policy(policy_path)
    history = [json.loads(x) for x in (folder / "train.jsonl").read_text().splitlines() if x.strip()]
    card = assess(spec, demo_params(spec), policy, history=history, episodes=episodes, out=folder / "eval")
    line = Text(f"{card.spec}: ")
    line.append(card.verdict, style=STYLE[card.verdict])
    out.print(line)
    for c in card.checks:
        if c.verdict != "n/a":
            out.print(Text(f"  [{c.verdict}] {c.name}: {c.message}", style=STYLE[c.verdict]))
    return policy


@config_options("demo", STAGE_FIELDS, flags={"seed": ("-s",)}, shown=DEMO_SHOWN)
def demo_command(
    task: Annotated[str, typer.Argument(metavar="[TASK]", help="The task to design for.")] = DEMO_TASK,
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="A model (see `gymwright design --help`); default: offline.")] = None,
    stages: Annotated[int, typer.Option("--stages", min=1, help="Training stages (the engineer acts between them).")] = 4,
    steps: Annotated[int, typer.Option("--steps", min=1000, help="Env steps per stage (each arm: the engineer's, domain randomization's and the fixed baseline's, two at a time).")] = 800_000,
    output: Annotated[Path, typer.Option("--out", "-o", help="The run folder.")] = Path("runs/demo"),
    store: Annotated[Path | None, typer.Option("--store", help="The store folder.")] = None,
    episodes: Annotated[int, typer.Option("--episodes", min=10, help=(
        "Evaluation episodes per bucket, validation cell and scorecard (held out: at least "
        f"{HELD_OUT_EPISODES} a cell)."))] = 100,
    backend: BackendOpt = DEFAULT,
    ray_address: RayAddressOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary on stdout (the steps' output goes to stderr).")] = False,
    config: ConfigChoice | None = None,
) -> None:
    """The main job, offline by default: design -> verify -> train (engineer, domain randomization, fixed) -> evaluate -> held out -> report.

    The training config options (and --config FILE.yaml) set every stage's TrainConfig."""
    from gymwright.atomic import write_atomic
    from gymwright.cli.common import (
        DEMO_FRAMES,
        chosen_trainer,
        domain_errors,
        out,
        play_episode,
        to_json,
    )
    from gymwright.cli.play import policy_chooser
    from gymwright.compile import compile_spec
    from gymwright.errors import GymwrightError
    from gymwright.report import write_report

    chosen_trainer(backend)  # before anything runs
    with domain_errors(), redirect_stdout(sys.stderr) if as_json else nullcontext():
        check_device_of(config)
        result = demo_design(task, model, store)
        if result.report is not None:
            demo_verify(result.report)
        if not result.passed or result.spec_path is None:
            raise GymwrightError(f"design {result.design_id} did not produce a verified spec; nothing was trained",
                                 hint=f"`gymwright show {result.design_id}` shows its attempts and diagnostics")
        spec = str(result.spec_path)
        output.mkdir(parents=True, exist_ok=True)
        write_atomic(output / "design.json", json.dumps(result.to_json_dict(), indent=2, default=str))
        comparison = demo_train(spec, output, stages, steps, store, config, episodes, backend, ray_address)
        mine = comparison.arms["engineer"]
        policy = demo_evaluate(spec, mine.policy, output / f"stage{mine.last_stage}", episodes)
        demo_compare(comparison)
        out.rule(Text("6. the engineer's last policy plays (the first steps rendered)", style="bold"))
        env = compile_spec(spec, demo_params(spec)).parallel_env(render_mode="ansi")  # at the demo's params
        play_episode(env, 0, frames=DEMO_FRAMES, max_steps=1000, choose=policy_chooser(policy, True))
        out.rule(Text("7. report", style="bold"))
        report = write_report(output)
    if as_json:
        typer.echo(to_json({"design_id": result.design_id, "spec": spec, "out": str(output),
                            "config": str(output / CONFIG_FILE), "report": str(report.path),
                            "checkpoint": mine.policy, "comparison": comparison.to_json_dict()}))
        return
    out.print(f"report: {report.path}  (open file://{report.path.resolve()} in a browser)")
    out.rule(Text("next", style="bold"))
    out.print(Text(
        f"gymwright show {result.design_id}                 # the design's attempts\n"
        f"gymwright play {spec} --policy {mine.policy} --render\n"
        'gymwright design "your task" --model openai:gpt-4o-mini   # a model writes a new spec\n'
        "gymwright library"
    ))
