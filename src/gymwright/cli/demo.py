"""`gymwright demo`: the main job, offline by default, in a few minutes on a laptop.

A task text -> design (the offline designer unless a model is given) -> verify -> train in
stages, the heuristic engineer redesigning the environment between them -> evaluate the last
policy (the scorecard) -> watch it play -> one self-contained report.html.
"""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext, redirect_stdout
from dataclasses import asdict
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
    stage_settings,
)

DEMO_TASK = (
    "Two robots divide a pie by taking turns making offers; the pie shrinks by 10% after "
    "every rejected offer, and they have ten rounds to agree."
)


def demo_design(task: str, model: str | None, store: Path | None) -> Any:
    """Step 1: design from the task text (offline unless a model is given), with progress."""
    from gymwright.cli.common import err, out
    from gymwright.cli.design import LiveProgress, print_result
    from gymwright.design import DesignOptions, design
    from gymwright.store import Store

    out.rule("[bold]1. design")
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

    out.rule("[bold]2. verify")
    counts = {sev: len(report.of(sev)) for sev in Severity}
    verdict = Text(f"{report.spec}: ")
    verdict.append("passed" if report.passed else "FAILED", style="bold green" if report.passed else "bold red")
    verdict.append(f" ({', '.join(f'{k}={v:.2f}s' for k, v in report.timings.items())}; "
                   f"{counts[Severity.error]} errors, {counts[Severity.warning]} warnings)")
    out.print(verdict)
    print_diagnostics([d for d in report.diagnostics if d.severity is not Severity.info])


def demo_train(spec: str, folder: Path, stages: int, steps: int, store: Path | None,
               config: ConfigChoice | None = None) -> list[Any]:
    """Step 3: train in stages; the heuristic engineer proposes each next environment."""
    from gymwright.cli.common import out
    from gymwright.engineer import HeuristicEngineer
    from gymwright.engineer.curriculum import CurriculumOptions, evolve
    from gymwright.store import Store

    out.rule(f"[bold]3. train: {stages} stages of {steps:,} env steps, the heuristic engineer between them")
    num_envs, seed, train = stage_settings(config, folder, "demo")
    if settings := describe(config or ConfigChoice()):
        out.print(Text(settings, style="dim"))
    opts = CurriculumOptions(stages=stages, steps_per_stage=steps, eval_episodes=150, num_envs=num_envs,
                             seed=seed, train=train)
    with Store.open(store) as st:
        records = evolve(spec, {}, HeuristicEngineer(), folder, opts, store=st,
                         progress=lambda line: out.print(Text(line, style="dim")))
    return records


def demo_evaluate(spec: str, record: Any, folder: Path) -> Any:
    """Step 4: the scorecard of the last stage's policy, in that stage's environment."""
    from gymwright.cli.common import out
    from gymwright.cli.evaluate import STYLE
    from gymwright.evaluate import assess
    from gymwright.train import load_policy

    out.rule("[bold]4. evaluate the last policy")
    policy = load_policy(record.checkpoint)
    history = [json.loads(x) for x in (folder / "train.jsonl").read_text().splitlines() if x.strip()]
    card = assess(spec, record.params, policy, history=history, episodes=150, out=folder / "eval")
    line = Text(f"{card.spec} with {record.params}: ")
    line.append(card.verdict, style=STYLE[card.verdict])
    out.print(line)
    for c in card.checks:
        if c.verdict != "n/a":
            out.print(Text(f"  [{c.verdict}] {c.name}: {c.message}", style=STYLE[c.verdict]))
    return policy


@config_options("demo", STAGE_FIELDS, flags={"seed": ("-s",)}, shown=STAGE_SHOWN)
def demo_command(
    task: Annotated[str, typer.Argument(metavar="[TASK]", help="The task to design for.")] = DEMO_TASK,
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="A model (see `gymwright design --help`); default: offline.")] = None,
    stages: Annotated[int, typer.Option("--stages", min=1, help="Training stages (the engineer acts between them).")] = 3,
    steps: Annotated[int, typer.Option("--steps", min=1000, help="Env steps per stage.")] = 150_000,
    output: Annotated[Path, typer.Option("--out", "-o", help="The run folder.")] = Path("runs/demo"),
    store: Annotated[Path | None, typer.Option("--store", help="The store folder.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary on stdout (the steps' output goes to stderr).")] = False,
    config: ConfigChoice | None = None,
) -> None:
    """The main job, offline by default: design -> verify -> train -> evaluate -> engineer -> report.

    The training config options (and --config FILE.yaml) set every stage's TrainConfig."""
    from gymwright.atomic import write_atomic
    from gymwright.cli.common import DEMO_FRAMES, domain_errors, out, play_episode, to_json
    from gymwright.cli.train import policy_chooser
    from gymwright.compile import compile_spec
    from gymwright.errors import GymwrightError
    from gymwright.report import write_report

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
        records = demo_train(spec, output, stages, steps, store, config)
        last = records[-1]
        policy = demo_evaluate(spec, last, output / f"stage{last.index}")
        out.rule("[bold]5. the last policy plays (the first steps rendered)")
        env = compile_spec(spec, last.params).parallel_env(render_mode="ansi")
        play_episode(env, 0, frames=DEMO_FRAMES, max_steps=1000, choose=policy_chooser(policy, True))
        out.rule("[bold]6. report")
        report = write_report(output)
    if as_json:
        typer.echo(to_json({"design_id": result.design_id, "spec": spec, "out": str(output),
                            "config": str(output / CONFIG_FILE), "report": str(report.path),
                            "checkpoint": last.checkpoint, "stages": [asdict(r) for r in records]}))
        return
    out.print(f"report: {report.path}  (open file://{report.path.resolve()} in a browser)")
    out.rule("[bold]next")
    out.print(Text(
        f"gymwright show {result.design_id}                 # the design's attempts\n"
        f"gymwright play {spec} --policy {last.checkpoint} --render\n"
        'gymwright design "your task" --model openai:gpt-4o-mini   # a model writes a new spec\n'
        "gymwright library"
    ))
