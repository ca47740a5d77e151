"""A stage's training: the demonstrations it imitates (if any), then its trainer's run on the
stage's mixture, warm-started from the policy the stage before kept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gymwright.curriculum.demonstrations import DEMO_SEED, Demonstrator, demonstrate, relabel
from gymwright.curriculum.options import CurriculumOptions
from gymwright.curriculum.progress import StageProgress
from gymwright.engineer.levers import Lever, scaffolded, spec_levers_on
from gymwright.engineer.mixture import Mixture
from gymwright.errors import GymwrightError
from gymwright.train.imitation import Demos, clone
from gymwright.train.result import TrainResult
from gymwright.train.trainers import Run, Trainer


def check_imitation(opts: CurriculumOptions, trainer: Trainer) -> None:
    """Demonstrations need a trainer that imitates; a relabeller (DAgger) needs the first stage's
    demonstrations and an imitation loss to feed."""
    if opts.relabeller is not None and (opts.demonstrator is None or opts.imitation_coef == 0):
        raise GymwrightError("a relabeller (DAgger) needs a demonstrator and an imitation_coef above 0",
                             path="relabeller", hint="set demonstrator, demo_episodes and imitation_coef, or drop it")
    if (opts.demonstrator is not None or "imitation" in opts.levers) and not trainer.imitates:
        raise GymwrightError(f"demonstrations need a trainer that imitates; {trainer.title} does not", path="backend",
                             hint="train with backend builtin, or drop the demonstrator and the imitation lever")
    if "partners" in opts.levers and not trainer.takes_every_field:
        raise GymwrightError(f"the partners lever needs the built-in trainer; {trainer.title} has no partners",
                             path="backend", hint="train with backend builtin, or drop the partners lever")


DEFAULT_DEMO_EPISODES = 2000
"""demonstrated episodes a stage when the imitation lever is on and `demo_episodes` is not given"""


def training_spec(spec: str | dict[str, Any], raw: dict[str, Any], mixture: Mixture,
                  menu: dict[str, Lever]) -> str | dict[str, Any]:
    """The game a stage trains on: `spec` itself, or a copy with the mixture's spec levers applied."""
    return scaffolded(raw, mixture.levers, menu) if spec_levers_on(mixture.levers, menu) else spec


def train_stage(trainer: Trainer, spec: str | dict[str, Any], raw: dict[str, Any], mixture: Mixture,
                opts: CurriculumOptions, k: int, folder: Path, init_from: str | None,
                menu: dict[str, Lever], say: Callable[[str], None] | None = None) -> tuple[TrainResult, int]:
    """Train stage `k` on `mixture` (with its designer levers applied to the game it trains on),
    warm-started from `init_from`: (its result, the env steps its demonstrations took, charged to
    the stage's budget); `say` gets a progress line now and then while it trains
    (`gymwright.curriculum.progress`). Demonstrations are of the game as designed (the levers change rewards,
    episode ends, the imitation weight and who shares the lake, never what a walker sees or may do)."""
    demonstrator, coef = _imitating(opts, raw, mixture, menu)
    imitation, init_from, demo_steps = _imitation(spec, mixture, opts, k, folder, init_from, demonstrator, coef)
    trained_on = training_spec(spec, raw, mixture, menu)
    init_from = onto(init_from, trained_on, spec, mixture.buckets[0].params, folder)
    steps = opts.steps_per_stage - demo_steps
    progress = StageProgress(k, opts.stages, steps, say) if say is not None else None
    run = Run(trained_on, [dict(b.params) for b in mixture.buckets], [int(c) for c in mixture.counts(opts.num_envs)],
              steps, opts.num_envs, opts.seed + k, folder, init_from, {**opts.train, **partnered(mixture, menu)},
              opts.ray_address, imitation, progress)
    return trainer.run(run), demo_steps


def partnered(mixture: Mixture, menu: dict[str, Lever]) -> dict[str, Any]:
    """The TrainConfig fields of the `partners` lever when it is on (`gymwright.train.partners`), else none."""
    share = float(mixture.levers.get("partners", 0.0)) if "partners" in menu else 0.0
    return {"partners": share, "partner": "planner"} if share > 0 else {}


def onto(init_from: str | None, trained_on: str | dict[str, Any], base: str | dict[str, Any],
         params: dict[str, Any], folder: Path) -> str | None:
    """`init_from` as a policy of the game the stage trains on: itself when it was trained on that game,
    else carried over (`gymwright.train.carryover`) from the game it was trained on, the one as designed
    or the one its stage's levers made (its config holds it). Designer levers change rewards and the
    imitation weight only, so every weight and value normalizer carries over as it is."""
    if init_from is None:
        return None
    from gymwright.train import checkpoint as ck
    from gymwright.train.carryover import carry_over

    saved = ck.load(init_from)
    if saved["spec_hash"] == ck.spec_identity(trained_on)[0]:
        return init_from
    parents = [p for p in (saved.get("config", {}).get("spec"), base) if p is not None]
    parent = next((p for p in parents if ck.spec_identity(p)[0] == saved["spec_hash"]), None)
    if parent is None:
        raise GymwrightError(f"{init_from} was trained on spec {saved['spec_name']}, neither the game as designed nor "
                             "the one its levers made", path="init_from", hint="start the curriculum from a policy of this spec")
    folder.mkdir(parents=True, exist_ok=True)
    carried = carry_over(init_from, parent, trained_on, dict(params), folder / "levers-carried.pt")
    if carried.checkpoint is None:
        raise GymwrightError(f"the policy of {init_from} does not carry over to the stage's levers: {carried.restart}",
                             path="levers")
    return carried.checkpoint


def lever_demonstrator(opts: CurriculumOptions, raw: dict[str, Any]) -> Demonstrator:
    """The imitation lever's demonstrator: the options' own, else the spec's built-in planner; an error
    saying so for a spec that has neither."""
    from gymwright.curriculum.mapf_demos import planner_for

    demonstrator = opts.demonstrator or planner_for(raw)
    if demonstrator is None:
        raise GymwrightError("the imitation lever needs a demonstrator, and this spec has no built-in planner",
                             path="levers.imitation", hint="give CurriculumOptions.demonstrator, or drop the lever")
    return demonstrator


def _imitating(opts: CurriculumOptions, raw: dict[str, Any], mixture: Mixture,
               menu: dict[str, Lever]) -> tuple[Demonstrator | None, float]:
    """(the demonstrator, the imitation weight) of a stage: the options' own, or, when `imitation` is
    a designer lever, the lever's strength in the mixture (off: no demonstrations) and the options'
    demonstrator or else the spec's built-in planner."""
    if "imitation" not in menu:
        return opts.demonstrator, opts.imitation_coef
    coef = float(mixture.levers.get("imitation", menu["imitation"].off))
    if coef == menu["imitation"].off:
        return None, 0.0
    demonstrator = lever_demonstrator(opts, raw)
    return demonstrator, coef


def _imitation(spec: str | dict[str, Any], mixture: Mixture, opts: CurriculumOptions, k: int, folder: Path,
               init_from: str | None, demonstrator: Demonstrator | None,
               coef: float) -> tuple[dict[str, Any], str | None, int]:
    """What a stage imitates: (TrainConfig changes, the checkpoint it starts from, demo env steps)."""
    if demonstrator is None or (init_from is not None and coef == 0):
        return {}, init_from, 0
    seed = DEMO_SEED + 10_000 * (opts.seed + k)
    episodes = opts.demo_episodes or DEFAULT_DEMO_EPISODES
    if init_from is not None and opts.relabeller is not None:
        demos, steps = relabel(spec, mixture, opts.relabeller, opts.relabel_episodes or episodes, seed,
                               init_from, _lineage_demos(init_from), folder / "demos.npz")
    else:
        demos = demonstrate(spec, mixture, demonstrator, episodes, seed, folder / "demos.npz")
        steps = demos.env_steps
    if steps >= opts.steps_per_stage:
        raise GymwrightError(f"stage {k + 1}: the demonstrations took {steps} env steps of the stage's "
                             f"{opts.steps_per_stage}", path="demo_episodes", hint="demonstrate fewer episodes a stage")
    if init_from is None:
        first = mixture.buckets[0].params
        init_from = clone(spec, first, demos, folder / "bc.pt",
                          hidden=tuple(opts.train.get("hidden", (64, 64))), seed=opts.seed + k).checkpoint
    changes = {"demos": folder / "demos.npz", "imitation_coef": coef} if coef else {}
    return changes, init_from, steps


def _lineage_demos(checkpoint: str) -> Demos | None:
    """The demonstrations the stage that wrote `checkpoint` trained on (saved beside it), if any."""
    path = Path(checkpoint).parent / "demos.npz"
    return Demos.load(path) if path.exists() else None
