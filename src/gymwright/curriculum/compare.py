"""An engineer against a baseline, for the same budget, judged on held-out configurations.

`goal_for` says what a spec's final policy is judged on (`Goal`): the first goal of `GOALS` that
knows the spec (`gymwright.curriculum.mapf_goal`: the harder lakes of a MAPF-FrozenLake-like
spec, with the configuration space the engineer may use), else the task's own configuration
(other episodes), with the knobs as the only levers.

`compare` trains every arm (an engineer and the curriculum options it runs with) into its own
folder with `evolve`, then evaluates each final policy on the held-out cells (the same episode
seeds for every arm) and writes `comparison.json`:

```python
goal = goal_for(spec, params)
result = compare(spec, params, {"engineer": HeuristicEngineer(), "fixed": FixedEngineer()}, goal,
                 {"engineer": out, "fixed": out / "baseline"}, out / "comparison.json")
result.difference("engineer", "fixed")   # mean, 95% half-width (unpaired, episodes pooled)
```
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from gymwright.atomic import write_atomic
from gymwright.compile import compile_spec
from gymwright.curriculum.goal import Goal, GoalMaker, task_goal
from gymwright.curriculum.mapf_goal import mapf_goal
from gymwright.curriculum.options import CurriculumOptions
from gymwright.curriculum.record import StageRecord
from gymwright.curriculum.runner import evolve
from gymwright.engineer.engineers import Engineer
from gymwright.engineer.evidence import measure_validation
from gymwright.engineer.mixture import Bucket, Mixture
from gymwright.errors import GymwrightError
from gymwright.evaluate.scorecard import default_task_metric
from gymwright.spec.loader import load_spec
from gymwright.store import Store
from gymwright.train.npc import load_policy
from gymwright.train.trainers import trainer_named

HELD_OUT_SEED = 900_000
"""first reset seed of the held-out episodes (the same for every arm)"""
GOALS: tuple[GoalMaker, ...] = (mapf_goal,)
"""the goals of particular kinds of spec, each asked in turn (`gymwright.curriculum.goal.GoalMaker`);
a spec none of them knows is judged on its task's own configuration (`task_goal`)"""


def goal_for(spec: str, params: dict[str, Any]) -> Goal:
    """The held-out cells and levers for `spec` at its task configuration `params` (see the module)."""
    loaded = load_spec(spec)
    return next((g for make in GOALS if (g := make(spec, loaded, params)) is not None), None) or task_goal(params)


@dataclass
class Arm:
    """One curriculum of the comparison and its held-out result."""

    name: str
    engineer: str
    folder: str  # relative to comparison.json's folder
    policy: str = ""  # the final policy's checkpoint
    last_stage: int = 0
    mean: float = 0.0
    ci95: float = 0.0
    cells: dict[str, float] = field(default_factory=dict)
    secondary: dict[str, float] = field(default_factory=dict)
    stages: list[dict[str, Any]] = field(default_factory=list)  # per stage: trained mixture, success, guard


@dataclass
class Comparison:
    spec: str
    task_metric: str
    env_steps: int  # per arm
    episodes: int  # per held-out cell and arm
    held_out: dict[str, dict[str, Any]]
    arms: dict[str, Arm]

    def difference(self, a: str, b: str) -> tuple[float, float]:
        """Mean held-out difference a - b and its 95% half-width (the arms' intervals combined)."""
        x, y = self.arms[a], self.arms[b]
        return x.mean - y.mean, math.hypot(x.ci95, y.ci95)

    def to_json_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare(spec: str, params: dict[str, Any], engineers: dict[str, Engineer], goal: Goal, folders: dict[str, Path],
            output: Path, options: CurriculumOptions, *, episodes: int = 200, store: Store | None = None,
            progress: Callable[[str], None] | None = None, jobs: int = 1) -> Comparison:
    """Train every arm for the same budget, judge each final policy on `goal.held_out`, write `output`.

    `jobs` > 1 trains that many arms at once, each in its own process (the built-in trainer only;
    each arm's results are the same as when run alone: every arm seeds its own stages)."""
    say = progress or (lambda _: None)
    metric = options.task_metric or default_task_metric(compile_spec(spec, params))
    if metric is None:
        raise GymwrightError(f"{spec} has no metrics: comparing curricula needs a task metric", path="metrics",
                             hint="add a metric with `kind: task` to the spec")
    options = replace(options, task_metric=metric)
    tasks = [(name, engineer, goal, folders[name], spec, options, metric, episodes) for name, engineer in engineers.items()]
    root = None if store is None else store.path
    if jobs > 1 and len(tasks) > 1 and trainer_named(options.backend).runs_side_by_side:
        arms = _arms_in_parallel(tasks, root, min(jobs, len(tasks)), say)
    else:
        arms = {t[0]: _arm(*t, store=store, say=say) for t in tasks}
    for name, arm in arms.items():
        arm.folder = os.path.relpath(folders[name], output.parent)  # the report finds it from there
    result = Comparison(spec, metric, options.stages * options.steps_per_stage, episodes, goal.held_out, arms)
    write_atomic(output, json.dumps(result.to_json_dict(), indent=2, default=float))
    return result


def _arm(name: str, engineer: Engineer, goal: Goal, folder: Path, spec: str, options: CurriculumOptions, metric: str,
         episodes: int, *, store: Store | None, say: Callable[[str], None]) -> Arm:
    """One arm: its curriculum, then its final policy judged on the held-out cells."""
    opts = _options_for(engineer, goal, options)
    say(f"{name} ({engineer.name} engineer): {opts.stages} stages of {opts.steps_per_stage:,} env steps")
    records = evolve(spec, _start(goal, engineer), engineer, folder, opts, store=store,
                     progress=lambda line: say(f"  [{name}] {line}"))
    arm = _judge(name, engineer, folder, records, spec, goal, metric, episodes)
    say(f"{name}: held-out {metric} {arm.mean:.3f} +/- {arm.ci95:.3f}")
    return arm


def _arm_process(task: tuple[Any, ...], root: Path | None, lines: Any) -> Arm:
    """`_arm` in a worker process: its own store connection, its progress lines sent to `lines`."""
    import torch

    torch.set_num_threads(1)
    if root is None:
        return _arm(*task, store=None, say=lines.put)
    with Store.open(root) as st:
        return _arm(*task, store=st, say=lines.put)


def _arms_in_parallel(tasks: list[tuple[Any, ...]], root: Path | None, jobs: int,
                      say: Callable[[str], None]) -> dict[str, Arm]:
    """The arms `jobs` at a time in spawned processes, their progress lines passed on as they come."""
    import queue
    from concurrent.futures import ProcessPoolExecutor, wait
    from multiprocessing import get_context

    ctx = get_context("spawn")
    with ctx.Manager() as manager, ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        lines = manager.Queue()
        futures = {t[0]: pool.submit(_arm_process, t, root, lines) for t in tasks}
        pending = set(futures.values())
        while pending:
            _, pending = wait(pending, timeout=0.2)
            while True:
                try:
                    say(lines.get_nowait())
                except queue.Empty:
                    break
        return {name: f.result() for name, f in futures.items()}


def _options_for(engineer: Engineer, goal: Goal, options: CurriculumOptions) -> CurriculumOptions:
    """The fixed baseline keeps the task's configuration; a sampler (domain randomization, PLR: it has
    an `initial` distribution) draws from the goal's space, unguarded, with no designer levers; an
    engineer gets the goal, the space, the levers and the guardrails."""
    if engineer.name == "fixed":
        return replace(options, space=None, validation=None, guard=False, levers={})
    if hasattr(engineer, "initial"):
        return replace(options, space=goal.space, validation=goal.validation, target=goal.target, guard=False,
                       secondary=goal.secondary, levers={})
    return replace(options, space=goal.space, validation=goal.validation, target=goal.target, guard=True,
                   secondary=goal.secondary)


def _start(goal: Goal, engineer: Engineer) -> dict[str, Any] | Mixture:
    """Where an arm starts: a sampler on its own distribution, every other arm on the goal's start."""
    initial = getattr(engineer, "initial", None)
    if initial is not None and goal.space is not None:
        return initial()
    if goal.space is None:
        return dict(goal.start)
    return Mixture([Bucket(dict(goal.start), 1.0, goal.space.label(goal.start))])


def _judge(name: str, engineer: Engineer, folder: Path, records: list[StageRecord], spec: str, goal: Goal,
           metric: str, episodes: int) -> Arm:
    policy = load_policy(str(records[-1].policy or records[-1].checkpoint))
    val = measure_validation(spec, goal.held_out, policy, metric, episodes, HELD_OUT_SEED, goal.secondary)
    stages = [{"index": r.index, "trained": [{"label": b["label"], "share": b["share"], "params": b["params"]}
                                             for b in r.trained_mixture or r.mixture],
               "success": r.success, "validation": (r.validation or {}).get("mean"), "guard": r.guard,
               "guard_reason": r.guard_reason, "rationale": r.rationale} for r in records]
    return Arm(name, engineer.name, str(folder), str(records[-1].policy or records[-1].checkpoint), records[-1].index,
               val.mean, val.ci95, dict(val.cells), dict(val.secondary), stages)
