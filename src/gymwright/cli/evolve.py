"""`gymwright evolve SPEC|"TASK"`: a curriculum whose environment the engineer redesigns between
stages (registered in `gymwright.cli`). A task text is designed first (the default designer)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from gymwright.cli.common import err, out  # inert consoles: an engineer's reply is model text
from gymwright.cli.config_options import (
    CONFIG_FILE,
    STAGE_FIELDS,
    STAGE_SHOWN,
    ConfigChoice,
    check_device_of,
    config_options,
    describe,
    resolved,
    rllib_settings,
    save_config,
)
from gymwright.engineer.registry import ENGINEERS, make_engineer
from gymwright.train.trainers import DEFAULT, TRAINERS

BackendOpt = Annotated[str, typer.Option("--backend", help="builtin (PPO on the batch backend) or rllib (each stage an "
                                                           "RLlib run on Ray, warm-started from the stage before).")]
TraineeOpt = Annotated[str | None, typer.Option("--trainee", metavar="hf:MODEL", help=(
    "Train a language model instead of a PPO policy: each stage runs GRPO (train-lm) on the stage's configurations "
    "played as text (the model plays the first agent, a scripted baseline or the model itself the others), from "
    "the checkpoint the stage before saved; the final checkpoint is judged on the spec's held-out cells (MAPF: "
    "the harder lakes) by the task metric. With it, --engineer llm --model trainee is answered by the trainee's "
    "current checkpoint (hf: of the folder the last stage saved), --model trainee-base by the model it started "
    "from. No guardrails, trials, edits or levers; --steps is unused (see --trainee-steps)."))]
TraineeStepsOpt = Annotated[int | None, typer.Option("--trainee-steps", min=1, help="GRPO updates per stage of the "
                                                                                  "--trainee (default: the scale's).")]
TraineeScaleOpt = Annotated[str, typer.Option("--trainee-scale", help="The --trainee's settings: toy (a CPU: 2 turns "
                                              "an episode, 3 new tokens, the top 2 blocks trained, no rules card) or "
                                              "paper (a GPU: the paper's, docs/engineer.md).")]
RayAddressOpt = Annotated[str | None, typer.Option("--ray-address", help="Ray cluster address for --backend rllib "
                                                                           "(default: a local Ray, started once for all stages).")]


def resolve_spec(spec_or_task: str, say: Any) -> str:
    """A spec file or library name as given; otherwise the task is designed first."""
    from gymwright.design import design
    from gymwright.errors import GymwrightError
    from gymwright.spec.loader import library_names

    if Path(spec_or_task).exists() or spec_or_task in library_names():
        return spec_or_task
    say(f"designing an environment for the task: {spec_or_task}")
    result = design(spec_or_task)
    if not result.passed or result.spec_path is None:
        raise GymwrightError(f"design {result.design_id} did not produce a verified spec: {result.explanation}",
                             hint=f"`gymwright show {result.design_id}`; or pass a spec file")
    say(f"design {result.design_id}: {result.spec_path} ({result.model})")
    return str(result.spec_path)


@config_options("evolve", STAGE_FIELDS, flags={"seed": ("-s",)}, shown=STAGE_SHOWN)
def evolve_command(
    spec_or_task: Annotated[str, typer.Argument(metavar="SPEC|TASK", help="A spec file, a library name, or a task text.")],
    stages: Annotated[int, typer.Option("--stages", "-k", min=1, help="Training stages.")] = 3,
    engineer: Annotated[str, typer.Option("--engineer", "-e", help=f"{' | '.join(ENGINEERS)}.")] = "heuristic",
    model: Annotated[str | None, typer.Option("--model", "-m", help="The LLM engineer's model: a provider (openai:MODEL, hf:PATH, ...), or with --trainee `trainee` (the trainee's current checkpoint answers) or `trainee-base` (the model it started from).")] = None,
    steps: Annotated[int, typer.Option("--steps", min=1000, help="Env steps per stage.")] = 200_000,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", metavar="NAME=VALUE", help="First stage's params.")] = None,
    metric: Annotated[str | None, typer.Option("--metric", help="The task metric (default: the spec's first).")] = None,
    band: Annotated[tuple[float, float], typer.Option("--band", help="Target band of the task metric.")] = (0.4, 0.8),
    mix: Annotated[str | None, typer.Option("--mix", metavar="NAME=V1,V2,...", help="Train each stage on a mixture: one bucket per value of this param (equal data shares to start), e.g. size=3,4,5.")] = None,
    knob: Annotated[list[str] | None, typer.Option("--knob", help="A param the engineer may move (repeat; default: every bounded numeric param that keeps the shapes).")] = None,
    edits: Annotated[bool, typer.Option("--edits", help="Let the engineer change the game when its knobs cannot: a verified variant (heuristic) or the model's spec edit (llm), verified and repaired before the next stage, which trains on it with the policy carried over by name.")] = False,
    lever: Annotated[list[str] | None, typer.Option("--lever", metavar="NAME[=STRENGTH]", help="A designer lever the engineer may use (repeat): park_cost (a cost for parking on another walker's way), weight or weight:TERM (a reward term's weight), end_on or end_on:METRIC (a training-only rule: a training episode ends at its first failure of that kind, e.g. end_on:conflicts), partners (the share of training copies where one walker is a fixed partner on the optimal joint plan), imitation (an imitation loss on a planner's plans; MAPF's built-in CBS planner). They change the game the policy trains on, never the one it is judged on. Without =STRENGTH it starts off.")] = None,
    demo_episodes: Annotated[int, typer.Option("--demo-episodes", min=1, help="Demonstrated episodes a stage while the imitation lever is on.")] = 2000,
    trials: Annotated[int, typer.Option("--trials", min=0, help="Before each stage after the first, try this many candidate proposals (the engineer's, its lever switches, the kept environment) for --trial-steps each and go on from the best by validation; their steps come out of the stage's. Judged on the validation cells of the spec's goal (for MAPF the harder lakes; else the task's configuration, other episodes). 0: off.")] = 0,
    trial_steps: Annotated[int, typer.Option("--trial-steps", min=0, help="Env steps of one trial (0: an eighth of a stage).")] = 0,
    output: Annotated[Path | None, typer.Option("--out", "-o", help="Run folder (default runs/evolve-SPEC).")] = None,
    backend: BackendOpt = DEFAULT,
    ray_address: RayAddressOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
    trainee: TraineeOpt = None,
    trainee_steps: TraineeStepsOpt = None,
    trainee_scale: TraineeScaleOpt = "toy",
    config: ConfigChoice | None = None,
) -> None:
    """Train in stages; after each, the engineer reads the evidence and proposes the next environment.

    The training config options (and --config FILE.yaml) set every stage's TrainConfig; stage k
    is seeded --seed + k. The resolved settings are saved in OUT/config.yaml."""
    from dataclasses import asdict

    from gymwright.cli.common import chosen_trainer, domain_errors, parse_params, to_json
    from gymwright.curriculum import CurriculumOptions, evolve
    from gymwright.errors import GymwrightError
    from gymwright.store import Store

    def say(line: str) -> None:
        if not as_json:
            err.print(Text(line, style="dim"))

    if trainee is not None:
        with domain_errors(spec_or_task):
            arm = evolve_trainee(spec_or_task, TraineeRun(trainee, trainee_steps, trainee_scale, engineer, model, stages,
                                                          edits, band, metric, output), parse_params(param), say)
        if as_json:
            typer.echo(to_json(arm))
            return
        print_trainee_stages(arm)
        return
    trainer = chosen_trainer(backend)
    with domain_errors(spec_or_task):
        refuse_code_mode(spec_or_task)
        check_device_of(config)
        if edits and engineer == "fixed":
            raise GymwrightError("--edits needs an engineer that proposes (heuristic or llm), not fixed", path="--edits",
                                 hint="drop --edits, or pass --engineer heuristic")
        eng = make_engineer(engineer, model, edits)
        spec = resolve_spec(spec_or_task, say)
        folder = output or Path("runs") / f"evolve-{Path(spec).stem}-{engineer}"
        num_envs, seed, train = STAGE_SETTINGS[trainer.name](config, folder, "evolve", steps)
        if settings := describe(config or ConfigChoice()):
            say(settings)
        opts = CurriculumOptions(stages=stages, steps_per_stage=steps, band=band, task_metric=metric,
                                 knobs=tuple(knob) if knob else None, num_envs=num_envs, seed=seed, train=train,
                                 backend=backend, ray_address=ray_address, levers=parse_levers(lever or []),
                                 demo_episodes=demo_episodes, trials=trials, trial_steps=trial_steps)
        start = parse_mix(mix, parse_params(param)) if mix else parse_params(param)
        if trials > 1:  # trials are judged on validation cells: the spec's goal's (`goal_for`)
            from gymwright.curriculum import goal_for

            first = start if isinstance(start, dict) else start.buckets[0].params
            goal = goal_for(spec, dict(first))
            opts.validation, opts.secondary, opts.target = goal.validation, goal.secondary, goal.target
        with Store.open() as store:
            records = evolve(spec, start, eng, folder, opts, store=store, progress=say)
    if as_json:
        typer.echo(to_json({"spec": spec, "out": str(folder), "config": str(folder / CONFIG_FILE),
                            "stages": [asdict(r) for r in records]}))
        return
    print_stages(records, f"curriculum: {spec}, {engineer} engineer ({folder})")


@dataclass(frozen=True)
class TraineeRun:
    """The evolve options of an LLM-trainee curriculum (`--trainee`)."""

    model: str
    steps: int | None
    scale: str
    engineer: str
    engineer_model: str | None
    stages: int
    edits: bool
    band: tuple[float, float]
    metric: str | None
    out: Path | None


def evolve_trainee(spec_or_task: str, run: TraineeRun, params: dict[str, Any], say: Any) -> dict[str, Any]:
    """`evolve --trainee`: the curriculum of `gymwright.curriculum.lmcurriculum`; the arm's record."""
    from gymwright.compile import compile_spec
    from gymwright.curriculum import goal_for
    from gymwright.curriculum.lmcurriculum import LMCurriculum, evolve_lm, start_for
    from gymwright.curriculum.lmstage import Loader, preset
    from gymwright.engineer.trainee import TraineeModels
    from gymwright.errors import GymwrightError
    from gymwright.evaluate.scorecard import default_task_metric

    if run.edits:
        raise GymwrightError("--edits is not available with --trainee", path="--edits", hint="drop --edits")
    opts = preset(run.scale, model=run.model, steps_per_stage=run.steps)
    models = TraineeModels(opts.model, device=opts.device)
    eng = make_engineer(run.engineer, run.engineer_model, False, trainee=models)
    refuse_code_mode(spec_or_task)
    spec = resolve_spec(spec_or_task, say)
    metric = run.metric or default_task_metric(compile_spec(spec, params)) or "valid"
    goal = goal_for(spec, params)
    folder = run.out or Path("runs") / f"evolve-{Path(spec).stem}-trainee-{run.engineer}"
    c = LMCurriculum(spec, goal, opts, run.stages, folder, band=run.band, metric=metric, loader=Loader(opts.device),
                     say=say)
    return evolve_lm(c, eng, start_for(eng, goal), models, eng.name)


def print_trainee_stages(arm: dict[str, Any]) -> None:
    table = Table(title=f"LLM-trainee curriculum, {arm['engineer']} engineer: held-out {arm['held_out']['mean']:.3f}")
    for col in ("stage", "trained", "validation", "next", "engineer answered by", "rationale"):
        table.add_column(col, overflow="fold")
    for s in arm["stages"]:
        val = s["validation"]["mean"] if s["validation"] else None
        cells = (str(s["index"] + 1), "; ".join(f"{b['label']} {b['share']:.0%}" for b in s["trained"]),
                 "-" if val is None else f"{val:.3f}", "; ".join(f"{b['label']} {b['share']:.0%}" for b in s["next"]),
                 ", ".join(a["model"] for a in s["answered_by"]) or "-", s["rationale"])
        table.add_row(*(Text(c) for c in cells))
    out.print(table)
    out.print(Text(f"final checkpoint: {arm['checkpoint']}"))


def print_stages(records: list[Any], title: str) -> None:
    """A curriculum's stages as a table (params or mixture, success, failures, the proposal), then its edits."""
    table = Table(title=title)
    for col in ("stage", "params", "success", "failures", "next", "rationale"):
        table.add_column(col, overflow="fold")
    for r in records:
        if r.params or len(r.mixture) <= 1:
            changed = _short({k: v for k, v in r.proposal.items() if r.params.get(k) != v}) or "same"
            shown = _short(r.params)
        else:
            shown = "\n".join(f"{b['label']} {b['share']:.0%}: {_short(b['params'])} -> {b['success']:.3f}" for b in r.mixture)
            changed = "\n".join(f"{b['label']} {b['share']:.0%}: {_short(b['params'])}" for b in r.proposed_mixture)
        on = {k: v for k, v in r.levers.items() if v}
        shown += f"\nlevers: {_short(on)}" if on else ""
        cells = (str(r.index + 1), shown, f"{r.success:.3f}",
                 ", ".join(f"{k} {n}" for k, n in r.failures.items()) or "-", changed, r.rationale)
        table.add_row(*(Text(c) for c in cells))  # Text: a label such as [size=3] is not markup
    out.print(table)
    for r in records:
        if r.edit is not None:
            out.print(Text(f"stage {r.index + 1} edit ({r.edit['status']}): {r.edit['summary']}"))


def refuse_code_mode(spec_or_task: str) -> None:
    """`evolve` redesigns an environment through its spec (its params, or an edit); a code-mode
    module (a path ending in .py, existing or not) has neither, so it is refused before anything runs."""
    from gymwright.codemode.source import is_code_source
    from gymwright.errors import GymwrightError

    if is_code_source(spec_or_task):
        raise GymwrightError(
            f"evolve: {spec_or_task} is a code-mode module: a code-mode design has no param ranges for the engineer "
            "to move and no spec for it to edit", path="SPEC",
            hint=f"train it with `gymwright train {spec_or_task}` and judge it with `gymwright evaluate "
                 f"{spec_or_task} --policy RUN`; to evolve the task, design it in spec mode (`gymwright design \"TASK\"`)")


def builtin_stage_settings(choice: ConfigChoice | None, folder: Path, command: str,
                           steps: int) -> tuple[int, int, dict[str, Any]]:
    """(num_envs, first seed, the other TrainConfig fields) of every stage on the built-in trainer;
    saves the resolved settings in FOLDER/config.yaml."""
    from gymwright.curriculum import CurriculumOptions

    values = (choice or ConfigChoice()).values()
    num_envs, seed = values.pop("num_envs", CurriculumOptions.num_envs), values.pop("seed", CurriculumOptions.seed)
    save_config(folder, {**resolved(STAGE_FIELDS, values), "num_envs": num_envs, "seed": seed}, command)
    return num_envs, seed, values


def rllib_stage_settings(choice: ConfigChoice | None, folder: Path, command: str,
                         steps: int) -> tuple[int, int, dict[str, Any]]:
    """The same for RLlib: the fields it takes, checked (each stage: `steps` env steps on a local
    Ray's batch), its resolved settings saved; num_envs are each env runner's envs."""
    from gymwright.curriculum import CurriculumOptions
    from gymwright.train import rllib_settings as rllib

    choice = choice or ConfigChoice()
    values = choice.values()
    seed = values.pop("seed", CurriculumOptions.seed)
    settings = rllib_settings(choice, values, steps)
    save_config(folder, rllib.resolved(settings, rllib.training_of(settings, steps, 0), {"seed": seed}), command)
    values.pop("num_envs", None)  # every stage gets it as CurriculumOptions.num_envs (RLlib's envs per runner)
    return settings.num_envs, seed, values


STAGE_SETTINGS: dict[str, Callable[[ConfigChoice | None, Path, str, int], tuple[int, int, dict[str, Any]]]] = {
    "builtin": builtin_stage_settings, "rllib": rllib_stage_settings}
"""(num_envs, first seed, the other TrainConfig fields) of every stage, per trainer of `TRAINERS` by name"""
assert set(STAGE_SETTINGS) == set(TRAINERS), "every trainer needs its stage settings here"


def parse_levers(given: list[str]) -> dict[str, float | None]:
    """`NAME` (starts off) or `NAME=STRENGTH` per --lever."""
    from gymwright.errors import GymwrightError

    out: dict[str, float | None] = {}
    for text in given:
        name, sep, value = text.partition("=")
        try:
            out[name.strip()] = float(value) if sep else None
        except ValueError:
            raise GymwrightError(f"--lever {text!r}: {value!r} is not a number", path="--lever",
                                 hint="give NAME or NAME=STRENGTH, e.g. --lever park_cost=0.5") from None
    return out


def parse_mix(mix: str, base: dict[str, Any]) -> Any:
    """`--mix size=3,4,5` -> a mixture with one bucket per value, equal shares."""
    from gymwright.cli.common import parse_params
    from gymwright.engineer.mixture import Mixture

    name, sep, raw = mix.partition("=")
    values = [v.strip() for v in raw.split(",") if v.strip()]
    if not sep or not name.strip() or not values:
        raise typer.BadParameter(f"expected NAME=V1,V2,... (e.g. --mix size=3,4,5), got {mix!r}", param_hint="'--mix'")
    parsed = [parse_params([f"{name.strip()}={v}"])[name.strip()] for v in values]
    return Mixture.over(name.strip(), parsed, base)


def _short(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items())
