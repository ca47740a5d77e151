"""The MAPF-FrozenLake engineer experiment ("From Trainee to Trainer"), against the UED baselines.

Two experiments, each with its own configuration space (the levers every method may use: map
sizes, agent counts, wait and hole ratios, each a short list of allowed values), start
configuration, and held-out cells (what the final policy is judged on):

- `in_distribution` (the paper's headline): train and judge at 3 agents; start on a 4x4 lake,
  hole ratio 0.2, wait ratio 0.25; held out: 5x5 and 6x6 lakes at hole ratio 0.3 and wait
  ratios 0.5 and 0.75 (bigger maps and higher ratios than the start).
- `generalization`: start with 2 agents on 4x4; the methods may use 2 or 3 agents and sizes 3-5;
  held out: 5x5 lakes with 3, 4 and 5 agents at wait ratios 0.25, 0.5 and 0.75.

Methods, all in the same curriculum runner (`gymwright.curriculum.evolve`), with the
same stages and the same total env-step budget, the same frozen base learner (`LEARNER`):

- `fixed`: the start configuration every stage;
- `dr`: uniform domain randomization over every level of the space;
- `plr`: Prioritized Level Replay over the same levels (positive value loss, `gymwright.engineer.ued`);
- `heuristic`: the heuristic engineer with the structural rule (knobs toward the judged values) and the
  guardrails; `heuristic-band`, its ablation, moves knobs by the band alone;
- `llm` (with `--model`; `--ablation` adds `llm-failures` and `llm-guideline`): a language model
  reads the same evidence (validation, levers, stage k of N) and answers the mixture, guarded.

Every engineer sees a validation set drawn like the held-out cells (other episodes, the training
pools) after every stage; the held-out cells themselves (each cell its own family of solved pools,
250 instances a cell, the same episode seeds for every method and seed) are evaluated once, on the
final policy. Figures: valid and optimal rates per cell and overall, mean over seeds with a 95%
t-interval over seeds, and paired differences (same seeds) between each engineer and each baseline.

    python benchmarks/engineer.py --quick                      # a smoke run (1 seed, no intervals; 2 jobs)
    python benchmarks/engineer.py --json benchmarks/results/engineer_latest.json   # the full run
    python benchmarks/engineer.py --model openai:gpt-4o-mini --ablation
    python benchmarks/engineer.py --tune                        # the base learner's tuning (fixed only)
    python benchmarks/engineer.py --bounds --steps 800000       # what bounds any curriculum over these levers
    python benchmarks/engineer.py --merge A.json B.json --json C.json   # one report from two runs
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

from gymwright.curriculum.compare import HELD_OUT_SEED  # noqa: E402 (torch after the thread count)
from gymwright.curriculum.mapf_goal import HELD_OUT_FAMILY, held_out_pools  # noqa: E402

SPEC = "mapf_frozenlake"
TRAIN_FIXED = {"max_steps": 30, "view_radius": 2}
HELD_FIXED = {"max_steps": 40, "view_radius": 2}
LEARNER: dict[str, Any] = {"hidden": (64, 64), "ent_coef": 0.01, "rollout_len": 16, "lr": 1e-3}
"""The frozen base learner v3 (IPPO, one shared walker policy; see `--tune`, `--bounds`,
benchmarks/README.md's "Engineer experiment" and results/2026-12-03-engineer-learner-v3.md): v2
with lr 1e-3 (from 3e-4) and 512 copies (from 256)."""
NUM_ENVS = 512
BAND = (0.3, 0.6)
BASELINES = ("fixed", "dr", "plr", "static")
DESIGNER_LEVERS: dict[str, float | None] = {"park_cost": None, "imitation": 0.1}
"""The designer levers (`gymwright.engineer.levers`) of the `heuristic-levers` and `llm` arms and their first
stage: the parking cost available and off (the heuristic's rule turns it on where timeouts dominate the
failures), the imitation loss on CBS plans on at 0.1 (the first stage starts from their clone)"""
LEVER_ARMS: dict[str, dict[str, float | None]] = {
    "heuristic-levers": DESIGNER_LEVERS,
    "heuristic-park": {"park_cost": None},  # the ablations: one lever each
    "heuristic-imitation": {"imitation": 0.1},
    # the training-only rule: a training episode ends at its first conflict, on from the first stage (with the
    # other two levers, whose imitation trades timeouts for conflicts; and alone)
    "heuristic-rules": {**DESIGNER_LEVERS, "end_on:conflicts": 1.0},
    "heuristic-end": {"end_on:conflicts": 1.0},
    # fixed partners on CBS plans in a quarter of the copies from the first stage (the rule keeps them while
    # timeouts dominate the failures, and anneals them after)
    "heuristic-partners": {"partners": 0.25},
    # heuristic-rules that tries K candidate proposals a stage in short trials and keeps the best by validation
    "heuristic-rules-trials": {**DESIGNER_LEVERS, "end_on:conflicts": 1.0},
    "llm": {**DESIGNER_LEVERS, "weight": None, "end_on": None, "partners": None},
    "llm-failures": {**DESIGNER_LEVERS, "weight": None, "end_on": None, "partners": None},
    "llm-guideline": {**DESIGNER_LEVERS, "weight": None, "end_on": None, "partners": None},
}
"""Per method, the designer levers it may use (none for the others: a sampler has none; `llm-plain` is the
LLM engineer without them)"""
TRIAL_ARMS: dict[str, int] = {"heuristic-rules-trials": 3}
"""Per method, K candidate proposals tried a stage (`CurriculumOptions.trials`, the Eureka pattern: the proposal,
it with a lever switched, the kept environment; each trains an eighth of a stage from the kept policy, charged to
the budget, and the best by validation goes on)"""
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


@dataclass
class Experiment:
    name: str
    start: dict[str, Any]
    structural: dict[str, list[Any]]
    knobs: dict[str, list[float]]
    held_out: dict[str, dict[str, Any]]  # cell label -> params
    target: str
    fixed: dict[str, Any] = field(default_factory=lambda: dict(TRAIN_FIXED))  # every level's other params
    judged_like: str = ""
    """the experiment whose held-out pools this one is judged on ("": its own), so two spaces are compared
    on the same instances"""
    pool: int = 1000  # solved layouts of each training level

    def space(self) -> Any:
        from gymwright.engineer import ConfigSpace

        space = ConfigSpace.for_spec(SPEC, self.structural, self.knobs, self.fixed)
        if self.name == "declared_ranges":
            space.allowed = declared_level
        return space


def _cells(agents: list[int], sizes: list[int], waits: list[float], holes: float) -> dict[str, dict[str, Any]]:
    return {f"{a} ag {s}x{s} w {w:.2f}": {**HELD_FIXED, "n_agents": a, "size": s, "wait_ratio": w, "hole_density": holes}
            for a in agents for s in sizes for w in waits}


EXPERIMENTS = {
    "in_distribution": Experiment(
        "in_distribution", {**TRAIN_FIXED, "size": 4, "n_agents": 3, "wait_ratio": 0.25, "hole_density": 0.2},
        {"size": [3, 4, 5, 6], "n_agents": [3]}, {"wait_ratio": [0.0, 0.25, 0.5, 0.75], "hole_density": [0.1, 0.2, 0.3]},
        _cells([3], [5, 6], [0.5, 0.75], 0.3),
        "3 walkers on 5x5 and 6x6 lakes, hole ratio 0.3, wait ratio 0.5 and 0.75 (at most 40 steps); judged on the "
        "valid rate (every walker on its goal, no hole, no conflict), then the optimal rate"),
    "generalization": Experiment(
        "generalization", {**TRAIN_FIXED, "size": 4, "n_agents": 2, "wait_ratio": 0.25, "hole_density": 0.2},
        {"size": [3, 4, 5], "n_agents": [2, 3]}, {"wait_ratio": [0.0, 0.25, 0.5, 0.75], "hole_density": [0.1, 0.2]},
        _cells([3, 4, 5], [5], [0.25, 0.5, 0.75], 0.2),
        "3, 4 and 5 walkers on 5x5 lakes, hole ratio 0.2, wait ratio 0.25, 0.5 and 0.75 (at most 40 steps; "
        "training may use at most 3); judged on the valid rate, then the optimal rate"),
}
DECLARED_POOL = 20
"""solved layouts of each level of the declared ranges (9,000 levels over about 600 pools: 1,000 a pool would
take hours of CBS on 2 cores; a level's pool is the instances, not the game)"""
EXPERIMENTS["declared_ranges"] = Experiment(
    "declared_ranges", {"view_radius": 2, "layout_pool": DECLARED_POOL, "max_steps": 40, "slip": 0.0, "size": 4,
                        "n_agents": 3, "wait_ratio": 0.25, "hole_density": 0.2},
    {"size": [3, 4, 5, 6, 8, 10], "n_agents": [1, 2, 3, 4, 5]},
    {"wait_ratio": [0.0, 0.25, 0.5, 0.75, 1.0], "hole_density": [0.0, 0.2, 0.3, 0.45, 0.6], "slip": [0.0, 0.25, 0.5],
     "max_steps": [400, 100, 40, 10]},
    EXPERIMENTS["in_distribution"].held_out, EXPERIMENTS["in_distribution"].target,
    {"view_radius": 2, "layout_pool": DECLARED_POOL}, judged_like="in_distribution", pool=DECLARED_POOL)
"""Where a user stands: no hand-curated space. Every param MAPF-FrozenLake declares that changes the level
without changing the policy's inputs or what is judged, each over its declared range (a few values from
its minimum to its maximum, easy to hard, the judged values among them): sizes 3-10, 1-5 walkers, hole
ratio 0-0.6, wait ratio 0-1, slip 0-0.5, step limit 400 down to 10 (of 4-400; 4 steps reach no goal past
3 cells). Left out: `view_radius` (the policy's input size), `step_cost` and `conflict_cost` (the reward:
designer levers, not levels), `layout_pool` and `layout_seed` (which instances, not the game). Levels the
game cannot make are no level (`declared_level`). Judged on in_distribution's cells and pools."""


DECLARED_INFEASIBLE = Path(__file__).parent / "data" / "declared_infeasible.json"
"""(size, agents, holes, wait) combinations of the declared ranges whose pools cannot be filled (no layout
of that kind in 2,000 draws), found by `prepare_pools` and kept here: no method may draw them"""


@functools.lru_cache(maxsize=1)
def _infeasible() -> frozenset[tuple[int, int, float, float]]:
    if not DECLARED_INFEASIBLE.exists():
        return frozenset()
    return frozenset(tuple(k) for k in json.loads(DECLARED_INFEASIBLE.read_text()))  # type: ignore[misc]


def declared_level(p: dict[str, Any]) -> bool:
    """A combination of the declared ranges the game can make: a wait needs two walkers, and the pool of
    its layouts could be filled."""
    if p["n_agents"] == 1 and p["wait_ratio"] > 0:
        return False
    return (p["size"], p["n_agents"], p["hole_density"], p["wait_ratio"]) not in _infeasible()


def _held_out_pools() -> dict[str, dict[str, dict[str, int]]]:
    """Experiment -> cell -> the pool it is judged on: every cell of every experiment its own
    family, numbered on from `HELD_OUT_FAMILY` across the experiments in order (in_distribution's
    cells get 1-4, as the demo's comparison's goal does: `gymwright.curriculum.mapf_goal`)."""
    out, first = {}, HELD_OUT_FAMILY
    for name, exp in EXPERIMENTS.items():
        if exp.judged_like:
            continue
        out[name] = held_out_pools(list(exp.held_out), first=first)
        first += len(exp.held_out)
    return {**out, **{n: out[e.judged_like] for n, e in EXPERIMENTS.items() if e.judged_like}}


HELD_OUT_POOL = _held_out_pools()
"""Experiment -> cell -> the pool the cell is judged on (`layout_pool` 250 solved instances,
`layout_seed` its own family). Each cell has a family of its own, never 0 (every pool a method
trains or validates on), so no judged instance was ever trained on, and no two cells share one:
with one family for all cells, slot k of the 0.5 and 0.75 wait cells of a size was the same
instance in about 74% of the slots (slot k is drawn from the stream (seed, k) and needs a wait
when k < round(wait_ratio * slots), `gymwright.mapf.lazy`)."""


def held_out_pool(params: dict[str, Any]) -> dict[str, int]:
    """The pool of the held-out cell whose configuration `params` is, in whichever experiment (for
    callers that hold a cell's params but not its name, e.g. mapf_failures.py); the experiments'
    cells differ in configuration, so one cell matches."""
    config = ("size", "n_agents", "hole_density", "wait_ratio")
    for name, exp in EXPERIMENTS.items():
        for cell, p in exp.held_out.items():
            if all(p[k] == params.get(k) for k in config):
                return HELD_OUT_POOL[name][cell]
    shown = {k: params.get(k) for k in config}
    raise ValueError(f"{shown} is not a held-out cell of any experiment ({', '.join(EXPERIMENTS)}): only those "
                     "have a held-out pool")


@dataclass
class Run:
    experiment: str
    method: str
    seed: int
    stages: list[dict[str, Any]] = field(default_factory=list)
    held_out: dict[str, dict[str, float]] = field(default_factory=dict)
    train_s: float = 0.0
    env_steps: int = 0  # the budget (PPO's steps, rounded up to whole updates, and the demonstrations' in it)
    demo_env_steps: int = 0  # of which the demonstrations' (`--imitate`)
    trial_env_steps: int = 0  # of which the trials' (`TRIAL_ARMS`)


# ---------------------------------------------------------------------------- one run
def make_engineer(name: str, space: Any, model: str | None, seed: int = 0) -> Any:
    from gymwright.engineer import (
        DomainRandomization,
        FixedEngineer,
        HeuristicEngineer,
        LLMEngineer,
        PrioritizedReplay,
    )

    simple = {"fixed": FixedEngineer, "heuristic": HeuristicEngineer}
    if name in simple or name in LEVER_ARMS and not name.startswith("llm"):
        return simple.get(name, HeuristicEngineer)()
    if name == "heuristic-band":  # the ablation: knobs follow the band alone, not the judged values
        return HeuristicEngineer(toward_targets=False)
    if name == "dr":  # over a space of more than 64 levels, 64 drawn a stage (seeded by the run's seed)
        return DomainRandomization(space, seed=seed)
    if name == "plr":
        return PrioritizedReplay(space, seed=seed)
    from gymwright.llm import LLM, provider_from_name

    if model is None:
        raise SystemExit(f"benchmarks/engineer.py: the {name} engineer needs --model (e.g. --model openai:gpt-4o-mini)")
    variants = {"llm": {}, "llm-failures": {"with_guideline": False, "with_history": False},
                "llm-guideline": {"with_history": False}, "llm-plain": {}}
    return LLMEngineer(LLM(provider_from_name(model)), **variants[name])


class StaticEngineer:
    """The `static` arm: after the first stage, the final mixture and levers another engineer's run of the
    same experiment and seed trained on, kept to the end (no adaptation). If it ties that engineer, the gain is
    the distribution, not the adaptivity."""

    name = "static"
    evaluates_buckets = False
    reads_knob_effects = False

    def __init__(self, mixture: Any) -> None:
        self.mixture = mixture

    @classmethod
    def of(cls, source: str | None, exp_name: str, seed: int) -> StaticEngineer:
        """From `RUNS/METHOD` (`--static-from`: a benchmark's --out folder and the method): that run's last
        stage (its curriculum.jsonl: the trained mixture with its params, and its levers)."""
        from gymwright.engineer.mixture import Bucket, Mixture

        if not source or "/" not in source:
            raise SystemExit("benchmarks/engineer.py: the static arm needs --static-from RUNS/METHOD "
                             "(e.g. runs/engineer-benchmark/heuristic-levers)")
        root, method = source.rsplit("/", 1)
        path = Path(root) / exp_name / f"{method}-seed{seed}" / "curriculum.jsonl"
        if not path.exists():
            raise SystemExit(f"benchmarks/engineer.py: --static-from {source}: no {path} (run {method} on seed {seed} first)")
        last = json.loads(path.read_text().splitlines()[-1])
        buckets = [Bucket(dict(b["params"]), b["share"], b["label"]) for b in last["trained_mixture"]]
        return cls(Mixture(buckets, {k: float(v) for k, v in last.get("levers", {}).items()}))

    def propose_stage(self, evidence: Any) -> Any:
        from gymwright.engineer.engineers import StageProposal

        return StageProposal(self.mixture, "static: the final mixture and levers of the engineer's run", self.name)


def levers_of(method: str, static_from: str | None = None) -> dict[str, float | None]:
    """The designer levers a method may use and their first strengths; the static arm's are those of the run it
    copies (it starts as that run did: `--static-from RUNS/METHOD`)."""
    if method == "static" and static_from and "/" in static_from:
        method = static_from.rsplit("/", 1)[1]
    return dict(LEVER_ARMS.get(method, {}))


def start_mixture(exp: Experiment, engineer: Any, space: Any) -> Any:
    from gymwright.engineer.mixture import Bucket, Mixture

    if hasattr(engineer, "initial"):  # the UED baselines start on their own distribution
        return engineer.initial()
    return Mixture([Bucket(dict(exp.start), 1.0, space.label(exp.start))])


def run_one(exp_name: str, method: str, seed: int, cfg: dict[str, Any]) -> Run:
    """Train one method on one experiment and seed, then judge its final policy on the held-out cells."""
    import torch

    from gymwright.curriculum import CurriculumOptions, evolve

    torch.set_num_threads(1)
    exp = EXPERIMENTS[exp_name]
    space = exp.space()
    engineer = StaticEngineer.of(cfg["static_from"], exp_name, seed) if method == "static" else \
        make_engineer(method, space, cfg["model"], seed)
    engineer.name = method
    arm = levers_of(method, cfg.get("static_from"))
    opts = CurriculumOptions(
        stages=cfg["stages"], steps_per_stage=cfg["steps"] // cfg["stages"], band=tuple(cfg["band"]), task_metric="valid",
        eval_episodes=cfg["stage_episodes"], num_envs=NUM_ENVS, seed=1000 * seed, knobs=tuple(exp.knobs),
        record_episodes=20, validation=validation_cells(exp), validation_episodes=cfg["validation_episodes"],
        secondary=("optimal",), target=exp.target, space=space if method not in ("fixed",) else None,
        guard=method not in BASELINES, train=dict(LEARNER), levers=arm, trials=TRIAL_ARMS.get(method, 0),
        **({"demo_episodes": cfg["demo_episodes"]} if cfg.get("demo_episodes") and arm
           and not cfg.get("imitate") else {}),
        **imitation_options(cfg))
    start = time.perf_counter()
    out = Path(cfg["out"]) / exp_name / f"{method}-seed{seed}"
    records = evolve(SPEC, start_mixture(exp, engineer, space), engineer, out, opts,
                     progress=lambda line: print(f"  [{exp_name} {method} seed {seed}] {line}"[:400], file=sys.stderr))
    run = Run(exp_name, method, seed, train_s=time.perf_counter() - start, env_steps=opts.stages * opts.steps_per_stage,
              demo_env_steps=sum(r.demo_env_steps for r in records),
              trial_env_steps=sum(r.trial_env_steps for r in records))
    run.stages = [{"index": r.index, "success": r.success, "validation": r.validation, "guard": r.guard,
                   "guard_reason": r.guard_reason, "unchanged": r.unchanged, "engineer_error": r.engineer_error,
                   "trained": [{k: b[k] for k in ("label", "share")} for b in r.trained_mixture],
                   "mixture": [{k: b.get(k) for k in ("label", "share", "success", "params")} for b in r.mixture],
                   "rationale": r.rationale[:2000], "policy": r.policy, "env_steps": r.env_steps,
                   "demo_env_steps": r.demo_env_steps} for r in records]
    held_out(run, exp, records[-1].policy, cfg["episodes"])
    return run


def validation_cells(exp: Experiment) -> dict[str, dict[str, Any]]:
    """What the engineers read after every stage: the held-out cells' configurations in the pools
    of the training family (1000 instances, seed 0), other episodes than any stage trains on; every
    lever of the space a cell leaves out at the spec's default (its judged value: slip 0)"""
    from gymwright.spec.loader import load_spec

    declared = load_spec(SPEC).params
    levers = [k for k in [*exp.structural, *exp.knobs] if k in declared]
    return {k: {**{n: declared[n].default for n in levers}, **v, "layout_pool": 1000} for k, v in exp.held_out.items()}


def imitation_options(cfg: dict[str, Any]) -> dict[str, Any]:
    """`CurriculumOptions` of a learner that imitates CBS plans (`--imitate`), none otherwise."""
    if not cfg.get("imitate"):
        return {}
    from gymwright.curriculum.mapf_demos import make_demos, relabel_demos

    dagger = {"relabeller": relabel_demos, "relabel_episodes": cfg["relabel"]} if cfg.get("relabel") else {}
    return {"demonstrator": make_demos, "demo_episodes": cfg["imitate"], "imitation_coef": cfg.get("imitation_coef", 0.0),
            **dagger}


def held_out(run: Run, exp: Experiment, checkpoint: str, episodes: int) -> None:
    from gymwright.train import load_policy, play_episodes

    policy = load_policy(checkpoint)
    for cell, params in exp.held_out.items():
        pool = HELD_OUT_POOL[exp.name][cell]
        m = play_episodes(SPEC, {**params, **pool}, policy, episodes, seed=HELD_OUT_SEED).episode_metrics
        failed = m["valid"] == 0
        hole = failed & (m["holes"] > 0)
        conflict = failed & ~hole & (m["conflicts"] > 0)
        run.held_out[cell] = {"valid": float(m["valid"].mean()), "optimal": float(m["optimal"].mean()),
                              "episodes": episodes, "holes": float(hole.mean()), "conflicts": float(conflict.mean()),
                              "timeout": float((failed & ~hole & ~conflict).mean())}


def pool_keys(names: list[str]) -> list[tuple[int, int, float, float, int, int]]:
    """Every solved pool the experiments draw from: (size, agents, holes, wait, slots, family seed);
    a held-out cell's pool is its own family's (`HELD_OUT_POOL`)."""
    keys = set()
    for name in names:
        exp = EXPERIMENTS[name]
        for p in exp.space().levels():
            keys.add((p["size"], p["n_agents"], p["hole_density"], p["wait_ratio"], exp.pool, 0))
        for cell, p in exp.held_out.items():
            held = HELD_OUT_POOL[name][cell]
            for n, seed in ((1000, 0), (held["layout_pool"], held["layout_seed"])):  # validation and held out
                keys.add((p["size"], p["n_agents"], p["hole_density"], p["wait_ratio"], n, seed))
    return sorted(keys, key=lambda k: -(k[0] ** 2) * k[1])  # the slowest first


def fill_pool(key: tuple[int, int, float, float, int, int]) -> float:
    """Solve every slot of one pool (CBS), so it is cached on disk for every later run."""
    from gymwright.mapf import PoolConfig
    from gymwright.mapf.errors import MapfError
    from gymwright.mapf.lazy import solved_pool

    size, agents, holes, wait, n, seed = key
    start = time.perf_counter()
    try:
        solved_pool(PoolConfig(size, agents, float(holes), float(wait)), n, seed).whole()
    except MapfError:  # no layout of that kind (a declared range's corner): recorded, never drawn
        return -1.0
    return time.perf_counter() - start


def prepare_pools(names: list[str], jobs: int) -> float:
    """Fill the pools once (minutes the first time; a cached pool loads in milliseconds). A pool that
    cannot be filled is an error, but in the declared ranges, whose corners the game cannot make: those
    are written to `DECLARED_INFEASIBLE` and left out of that space."""
    start = time.perf_counter()
    keys = pool_keys(names)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        took = list(pool.map(fill_pool, keys))
    failed = sorted({k[:4] for k, t in zip(keys, took, strict=True) if t < 0})
    declared = "declared_ranges" in names and EXPERIMENTS["declared_ranges"].pool
    if any(k[4] != declared or k[5] != 0 for k, t in zip(keys, took, strict=True) if t < 0):
        raise SystemExit(f"benchmarks/engineer.py: pools that cannot be filled outside the declared ranges: {failed}")
    if failed:
        known = sorted(set(_infeasible()) | {tuple(k) for k in failed})
        DECLARED_INFEASIBLE.write_text(json.dumps([list(k) for k in known]) + "\n")
        _infeasible.cache_clear()
        print(f"declared ranges: {len(failed)} (size, agents, holes, wait) combinations have no layout of their kind; "
              f"left out ({DECLARED_INFEASIBLE})", file=sys.stderr)
    return time.perf_counter() - start


# ---------------------------------------------------------------------------- statistics
def mean_ci(xs: list[float]) -> tuple[float, float]:
    """Mean and the 95% t-interval half-width over seeds (nan with one seed)."""
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, float("nan")
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, T975.get(n - 1, 1.96) * sd / math.sqrt(n)


def overall(run: Run, metric: str) -> float:
    return sum(c[metric] for c in run.held_out.values()) / len(run.held_out)


def summarize(runs: list[Run], engineers: list[str]) -> dict[str, Any]:
    """Per method: mean and CI over seeds, overall and per cell; paired differences by seed."""
    methods: dict[str, Any] = {}
    names = list(dict.fromkeys(r.method for r in runs))
    for name in names:
        mine = sorted((r for r in runs if r.method == name), key=lambda r: r.seed)
        entry: dict[str, Any] = {}
        for metric in ("valid", "optimal"):
            entry[metric], entry[f"{metric}_ci95"] = mean_ci([overall(r, metric) for r in mine])
        entry["cells"] = {}
        for cell in mine[0].held_out:
            c: dict[str, float] = {}
            for metric in ("valid", "optimal", "holes", "conflicts", "timeout"):
                c[metric], c[f"{metric}_ci95"] = mean_ci([r.held_out[cell][metric] for r in mine])
            entry["cells"][cell] = c
        entry["per_seed_valid"] = [overall(r, "valid") for r in mine]
        entry["guard"] = {a: sum(s["guard"] == a for r in mine for s in r.stages) for a in ("revert", "rollback")}
        entry["unchanged_proposals"] = sum(s["unchanged"] for r in mine for s in r.stages[:-1])
        entry["proposals"] = sum(len(r.stages) - 1 for r in mine)
        entry["engineer_errors"] = sum(bool(s["engineer_error"]) for r in mine for s in r.stages)
        entry["train_s"] = sum(r.train_s for r in mine) / len(mine)
        methods[name] = entry
    paired: dict[str, Any] = {}
    for a in [n for n in names if n in engineers]:
        for b in [n for n in names if n in BASELINES]:
            pa = {r.seed: r for r in runs if r.method == a}
            pb = {r.seed: r for r in runs if r.method == b}
            seeds = sorted(pa.keys() & pb.keys())
            row: dict[str, Any] = {"seeds": seeds}
            for metric in ("valid", "optimal"):
                d, h = mean_ci([overall(pa[s], metric) - overall(pb[s], metric) for s in seeds])
                row[f"{metric}_diff"], row[f"{metric}_ci95" if metric == "optimal" else "ci95"] = d, [d - h, d + h]
            paired[f"{a}-{b}"] = row
    return {"methods": methods, "paired": paired}


# ---------------------------------------------------------------------------- tables
def _pm(m: float, h: float, digits: int = 3) -> str:
    return f"{m:.{digits}f} ± {h:.{digits}f}" if math.isfinite(h) else f"{m:.{digits}f}"


def tables(name: str, summary: dict[str, Any]) -> str:
    methods = summary["methods"]
    cells = list(next(iter(methods.values()))["cells"])
    lines = [f"\n### {name}\n", EXPERIMENTS[name].target + ".\n"]
    lines.append("| method | valid (mean of cells) | optimal (mean of cells) | reverts | rollbacks | proposals kept as they were |")
    lines.append("|---|---:|---:|---:|---:|---:|")
    for m, e in methods.items():
        lines.append(f"| {m} | {_pm(e['valid'], e['valid_ci95'])} | {_pm(e['optimal'], e['optimal_ci95'])} | "
                     f"{e['guard']['revert']} | {e['guard']['rollback']} | {e['unchanged_proposals']} of {e['proposals']} |")
    for metric in ("valid", "optimal"):
        lines.append(f"\n**{metric} rate per held-out cell** (mean over seeds ± 95% t-interval):\n")
        lines.append("| method | " + " | ".join(cells) + " |")
        lines.append("|---|" + "---:|" * len(cells))
        for m, e in methods.items():
            lines.append(f"| {m} | " + " | ".join(_pm(e["cells"][c][metric], e["cells"][c][f"{metric}_ci95"], 2)
                                                   for c in cells) + " |")
    if summary["paired"]:
        lines.append("\n**Paired differences** (same seeds; mean of per-seed differences, 95% t-interval):\n")
        lines.append("| pair | valid diff | 95% CI | optimal diff | 95% CI |")
        lines.append("|---|---:|---|---:|---|")
        for pair, row in summary["paired"].items():
            lo, hi = row["ci95"]
            olo, ohi = row["optimal_ci95"]
            lines.append(f"| {pair} | {row['valid_diff']:+.3f} | [{lo:+.3f}, {hi:+.3f}] | {row['optimal_diff']:+.3f} | "
                         f"[{olo:+.3f}, {ohi:+.3f}] |")
    lines.append("\n**Held-out outcomes** (share of episodes, mean over cells and seeds):\n")
    lines.append("| method | valid | fell in a hole | conflict | timeout |")
    lines.append("|---|---:|---:|---:|---:|")
    for m, e in methods.items():
        avg = {k: sum(e["cells"][c][k] for c in cells) / len(cells) for k in ("valid", "holes", "conflicts", "timeout")}
        lines.append(f"| {m} | " + " | ".join(f"{avg[k]:.3f}" for k in avg) + " |")
    return "\n".join(lines)


def stage_lines(runs: list[Run]) -> str:
    lines = ["\n### Stages (what each method trained on, validation after the stage, guardrail)\n"]
    for r in runs:
        for s in r.stages:
            top = sorted(s["trained"], key=lambda b: -b["share"])[:4]
            mix = ", ".join(f"{b['label']} {b['share']:.0%}" for b in top) + (" ..." if len(s["trained"]) > 4 else "")
            val = s["validation"]["mean"] if s["validation"] else float("nan")
            lines.append(f"- {r.experiment} {r.method} seed {r.seed} stage {s['index'] + 1}: [{mix}] -> validation "
                         f"{val:.3f}{' (' + s['guard'] + ')' if s['guard'] not in ('', 'keep') else ''}")
    return "\n".join(lines)


def pair_across(a: str, b: str) -> dict[str, Any]:
    """`FILE:METHOD` minus `FILE:METHOD`, paired by experiment and seed (the same start and held-out
    episodes whatever the learner): for two base learners, which one table (`--merge`) refuses."""
    picked = []
    for text in (a, b):
        path, sep, method = text.rpartition(":")
        if not sep or not path or not method:
            raise SystemExit(f"--pair {text!r}: give FILE:METHOD, e.g. benchmarks/results/engineer_latest.json:fixed")
        report = read_report(Path(path))
        runs = {(exp, r["seed"]): Run(**r) for exp, summary in report["experiments"].items()
                for r in summary["runs"] if r["method"] == method}
        if not runs:
            raise SystemExit(f"--pair {text!r}: {path} has no runs of {method!r}")
        picked.append((runs, learner_of(report)))
    (ra, la), (rb, lb) = picked
    out: dict[str, Any] = {"a": a, "b": b, "learners": [la, lb], "experiments": {}}
    for exp in dict.fromkeys(e for e, _ in ra):
        seeds = sorted(s for e, s in ra.keys() & rb.keys() if e == exp)
        row: dict[str, Any] = {"seeds": seeds}
        for metric in ("valid", "optimal"):
            d, h = mean_ci([overall(ra[exp, s], metric) - overall(rb[exp, s], metric) for s in seeds])
            row[f"{metric}_diff"], row[f"{metric}_ci95"] = d, [d - h, d + h]
        out["experiments"][exp] = row
        print(f"{exp}: {a} - {b}, seeds {seeds}: valid {row['valid_diff']:+.3f} [{row['valid_ci95'][0]:+.3f}, "
              f"{row['valid_ci95'][1]:+.3f}], optimal {row['optimal_diff']:+.3f} [{row['optimal_ci95'][0]:+.3f}, "
              f"{row['optimal_ci95'][1]:+.3f}]")
    return out


# ---------------------------------------------------------------------------- main
def tune(cfg: dict[str, Any]) -> dict[str, Any]:
    """The base learner's tuning: the fixed baseline of the in-distribution experiment, one seed,
    the full budget, each variant judged on the validation cells."""
    from gymwright.engineer import measure_validation
    from gymwright.train import TrainConfig, load_policy, train

    exp = EXPERIMENTS["in_distribution"]
    variants = {"frozen (64x64, entropy 0.01, conflict cost 1.0)": {}, "conflict cost 0.05": {"conflict_cost": 0.05},
                "conflict cost 0.3": {"conflict_cost": 0.3}, "entropy 0.003": {"ent_coef": 0.003},
                "hidden 128x128": {"hidden": (128, 128)}, "view radius 1": {"view_radius": 1}}
    out = {}
    for name, change in variants.items():
        env = {"view_radius": 2, **{k: v for k, v in change.items() if k in ("view_radius", "conflict_cost")}}
        vr = env["view_radius"]
        learner = {**LEARNER, **{k: v for k, v in change.items() if k not in env}}
        start = time.perf_counter()
        res = train(TrainConfig(spec=SPEC, params={**exp.start, **env}, total_steps=cfg["steps"],
                                num_envs=NUM_ENVS, out=Path(cfg["out"]) / "tune" / "-".join(name.split()[:3]).strip(",()"), **learner))
        cells = {k: {**v, "view_radius": vr} for k, v in exp.held_out.items()}
        val = measure_validation(SPEC, cells, load_policy(res.checkpoint), "valid", cfg["validation_episodes"], 700_000,
                                 ("optimal",))
        out[name] = {"valid": val.mean, "ci95": val.ci95, "optimal": val.secondary["optimal"],
                     "train_s": time.perf_counter() - start}
        print(f"{name}: validation valid {val.mean:.3f} ± {val.ci95:.3f}, optimal {val.secondary['optimal']:.3f}",
              file=sys.stderr)
    return out


def frozen_spec() -> dict[str, Any]:
    """A fresh copy of the frozen spec's data, for a variant to change."""
    from gymwright.spec.loader import read_data

    return read_data(SPEC)[0]


def tie_break_spec() -> dict[str, Any]:
    """The frozen spec plus one input: which walkers in the window have priority (a lower index)."""
    data = frozen_spec()
    data["observe"]["walker"].append({"name": "yield_to_near", "doc": "walkers with priority over me (a tie-break)",
                                      "expr": "agents_view_of(pos[me], view_radius, arange(n_agents) < me)"})
    return data


def memory_spec() -> dict[str, Any]:
    """The frozen spec plus a memory of one number: how many steps in a row the walker has not moved
    (capped at 4), so a memoryless policy can learn "go after waiting long enough" (a deadlock breaker)."""
    data = frozen_spec()
    data["agent_state"]["still"] = {"type": "int", "init": 0, "min": 0, "max": 4,
                                    "doc": "steps in a row it has not moved (capped at 4)"}
    data["step"].append({"set": {"still": "0 if moved[me] else min(still[me] + 1, 4)"}})
    data["observe"]["walker"].append({"name": "still_steps", "doc": "steps in a row I have not moved, over 4",
                                      "expr": "still[me] / 4"})
    return data


from gymwright.engineer.levers import GOAL_IN_WAY  # noqa: E402 - the parking lever's own expression, one home


def goal_in_way_spec(park_cost: float = 0.0) -> dict[str, Any]:
    """The frozen spec plus one input, `goal_in_way`, so a policy can learn to wait before it parks
    on another's way; with `park_cost`, a reward term charges a walker that arrives there."""
    data = frozen_spec()
    data["observe"]["walker"].append({"name": "goal_in_way", "doc": "my goal is on a shortest route of another walker",
                                      "expr": GOAL_IN_WAY})
    if park_cost:
        data["rewards"]["walker"].append({"name": "park_in_way", "expr": f"-{park_cost!r} * (arrived[me] and {GOAL_IN_WAY})",
                                          "doc": "parked on the way of a walker still on its way"})
    return data


def team_spec(weight: float = 2.0) -> dict[str, Any]:
    """The frozen spec with the team reward (everybody home) weighted `weight` instead of 0.5."""
    data = frozen_spec()
    for term in data["rewards"]["walker"]:
        if term["name"] == "team":
            term["weight"] = weight
    return data


def _judged(spec: Any, policy: Any, cfg: dict[str, Any], **change: Any) -> dict[str, float]:
    from gymwright.engineer import measure_validation

    pools = HELD_OUT_POOL["in_distribution"]
    cells = {k: {**v, **pools[k], **change} for k, v in EXPERIMENTS["in_distribution"].held_out.items()}
    val = measure_validation(spec, cells, policy, "valid", cfg["validation_episodes"], 700_000, ("optimal",))
    return {"valid": val.mean, "ci95": val.ci95, "optimal": val.secondary["optimal"]}


def bound_setup(name: str, steps: int) -> tuple[Any, Any, int, dict[str, Any]]:
    """What variant `name` of `bounds` trains: (spec, params, env steps, TrainConfig changes); only
    that variant's spec is built."""
    exp = EXPERIMENTS["in_distribution"]
    judged = [{**v, "layout_pool": 1000} for v in exp.held_out.values()]
    levels = lambda: exp.space().levels()  # noqa: E731 - uniform domain randomization, built only when asked
    start = dict(exp.start)
    spec, params, scale, extra = {
        "fixed": (lambda: SPEC, start, 1, {}),
        "fixed for 4x the steps (fixed 4x)": (lambda: SPEC, start, 4, {}),
        "oracle: trained on the judged cells": (lambda: SPEC, judged, 1, {}),
        "oracle for 4x the steps (oracle 4x)": (lambda: SPEC, judged, 4, {}),
        "domain randomization over the 48 levels (dr)": (lambda: SPEC, None, 1, {}),
        "domain randomization for 4x the steps (dr 4x)": (lambda: SPEC, None, 4, {}),
        "tie-break input (yield_to_near)": (tie_break_spec, start, 1, {}),
        "agent index (asymmetric conventions)": (lambda: SPEC, start, 1, {"agent_index": True}),
        "centralized critic (mappo)": (lambda: SPEC, start, 1, {"algo": "mappo"}),
        "memory input (steps not moved)": (memory_spec, start, 1, {}),
        "team reward 2.0 (from 0.5)": (lambda: team_spec(2.0), start, 1, {}),
        "oracle with the memory input": (memory_spec, judged, 1, {}),
        "goal-in-the-way input": (goal_in_way_spec, start, 1, {}),
        "goal-in-the-way input and a parking cost 0.5": (lambda: goal_in_way_spec(0.5), start, 1, {}),
        "oracle with the parking cost": (lambda: goal_in_way_spec(0.5), judged, 1, {}),
        "fixed + BC init (CBS demos)": (lambda: SPEC, start, 1, {"imitate": DEMO_EPISODES}),
        "oracle + BC init (CBS demos of the judged cells)": (lambda: SPEC, judged, 1, {"imitate": DEMO_EPISODES}),
        "oracle + BC init without demos on held-out layouts": (lambda: SPEC, judged, 1, {"imitate": DEMO_EPISODES,
                                                                                       "exclude_held_out": True}),
        "fixed + BC init and imitation loss 0.1": (lambda: SPEC, start, 1, {"imitate": DEMO_EPISODES, "keep": 0.1}),
        "oracle + BC init and imitation loss 0.1": (lambda: SPEC, judged, 1, {"imitate": DEMO_EPISODES, "keep": 0.1}),
        "fixed + BC init and imitation loss 0.5": (lambda: SPEC, start, 1, {"imitate": DEMO_EPISODES, "keep": 0.5}),
        "oracle + BC init and imitation loss 0.5": (lambda: SPEC, judged, 1, {"imitate": DEMO_EPISODES, "keep": 0.5}),
        "fixed with learner v2 (lr 3e-4, 256 copies)": (lambda: SPEC, start, 1, dict(LEARNER_V2)),
        "oracle with learner v2 (lr 3e-4, 256 copies)": (lambda: SPEC, judged, 1, dict(LEARNER_V2)),
    }[name]
    return spec(), levels() if params is None else params, scale * steps, extra


LEARNER_V2: dict[str, Any] = {"lr": 3e-4, "num_envs": 256}
"""What learner v2 had where v3 differs (v3 halved the MAPF gold check's steps: tests/train/test_game_theory.py)"""

DEMO_EPISODES = 4000
"""Episodes of CBS plans a BC-init variant clones (`gymwright.curriculum.mapf_demos.make_demos`) before its PPO run"""


def held_out_layouts() -> frozenset[bytes]:
    """Every layout of the judged held-out pools (in_distribution), as `gymwright.curriculum.mapf_demos.layout_key`s.
    They come from other families of pools (`HELD_OUT_POOL`, one a cell) than any training pool;
    before that (results up to 2026-12-03) the judged cells' training pools held about half of
    them, since slot k of a config is the same instance in every pool of one family where it is the
    same kind."""
    from gymwright.curriculum.mapf_demos import layout_key
    from gymwright.mapf import PoolConfig
    from gymwright.mapf.lazy import solved_pool

    keys = set()
    for cell, p in EXPERIMENTS["in_distribution"].held_out.items():
        config = PoolConfig(p["size"], p["n_agents"], float(p["hole_density"]), float(p["wait_ratio"]))
        pool = HELD_OUT_POOL["in_distribution"][cell]
        holes, starts, goals, _ = solved_pool(config, pool["layout_pool"], pool["layout_seed"]).whole()
        keys.update(layout_key(*x) for x in zip(holes, starts, goals, strict=True))
    return frozenset(keys)


def imitate(spec: Any, params: Any, episodes: int, seed: int, out: Path, exclude_held_out: bool = False) -> dict[str, Any]:
    """Demonstrations of `episodes` CBS plans on `params` (drawn like the training configs), cloned
    into a warm start: {checkpoint, demo env steps (charged to the budget), samples, loss, accuracy};
    with `exclude_held_out`, no demonstration is on a layout of the judged held-out pools."""
    from gymwright.curriculum.demonstrations import DEMO_SEED
    from gymwright.curriculum.mapf_demos import make_demos
    from gymwright.train.imitation import clone

    demos = make_demos(spec, params, episodes, DEMO_SEED + episodes * seed,
                       held_out_layouts() if exclude_held_out else frozenset())
    first = params[0] if isinstance(params, list) else params
    res = clone(spec, first, demos, out / "bc.pt", hidden=LEARNER["hidden"], seed=seed)
    return {"checkpoint": res.checkpoint, "demos": str(demos.save(out / "demos.npz")), "demo_env_steps": demos.env_steps, "samples": len(demos.actions),
            "bc_loss": [res.losses[0], res.losses[-1]], "bc_accuracy": res.accuracy}


def bound_one(name: str, seed: int, cfg: dict[str, Any]) -> dict[str, Any]:
    """One variant of `bounds` on one seed: train (a BC-init variant first clones CBS plans and
    trains PPO for the budget less the demonstrations' env steps), then judge on the held-out cells."""
    import torch

    from gymwright.train import TrainConfig, load_policy, train

    torch.set_num_threads(1)
    spec, params, steps, extra = bound_setup(name, cfg["steps"])
    start = time.perf_counter()
    out = Path(cfg["out"]) / "bounds" / f"{re.sub(r'[^a-z0-9.]+', '-', name.lower()).strip('-')}-seed{seed}"
    bc = (imitate(spec, params, extra.pop("imitate"), seed, out, extra.pop("exclude_held_out", False))
          if "imitate" in extra else None)
    if bc is not None:
        extra["init_from"] = bc["checkpoint"]
    if "keep" in extra:  # PPO keeps an imitation loss on the same demonstrations
        assert bc is not None
        extra["demos"], extra["imitation_coef"] = bc["demos"], extra.pop("keep")
    res = train(TrainConfig(spec=spec, params=params, total_steps=steps - (bc["demo_env_steps"] if bc else 0),
                            seed=seed, out=out, **{"num_envs": NUM_ENVS, **LEARNER, **extra}))
    policy = load_policy(res.checkpoint)
    row = {"variant": name, "seed": seed, "env_steps": steps, **_judged(spec, policy, cfg, view_radius=2)}
    if bc is not None:
        row["bc"] = {**bc, "ppo_env_steps": res.env_steps,
                     "bc_only": _judged(spec, load_policy(bc["checkpoint"]), cfg, view_radius=2)}
    if name == "fixed":  # the same policy with fewer walkers: how much of the loss is coordination
        row["walkers"] = {n: _judged(spec, policy, cfg, view_radius=2, n_agents=n)["valid"]
                          for n in (1, 2)}
    row["train_s"] = time.perf_counter() - start
    return row


BOUND_VARIANTS = ("fixed", "fixed for 4x the steps (fixed 4x)", "oracle: trained on the judged cells", "oracle for 4x the steps (oracle 4x)",
                  "domain randomization over the 48 levels (dr)", "domain randomization for 4x the steps (dr 4x)",
                  "tie-break input (yield_to_near)", "agent index (asymmetric conventions)",
                  "centralized critic (mappo)", "memory input (steps not moved)", "team reward 2.0 (from 0.5)",
                  "oracle with the memory input", "goal-in-the-way input",
                  "goal-in-the-way input and a parking cost 0.5", "oracle with the parking cost",
                  "fixed + BC init (CBS demos)", "oracle + BC init (CBS demos of the judged cells)",
                  "oracle + BC init without demos on held-out layouts",
                  "fixed + BC init and imitation loss 0.1", "oracle + BC init and imitation loss 0.1",
                  "fixed + BC init and imitation loss 0.5", "oracle + BC init and imitation loss 0.5",
                  "fixed with learner v2 (lr 3e-4, 256 copies)", "oracle with learner v2 (lr 3e-4, 256 copies)")


def pick_variants(text: str | None) -> tuple[str, ...]:
    """The variants `--variants` names (each matched by a prefix or a word in parentheses), `fixed` first."""
    if not text:
        return BOUND_VARIANTS
    picked = ["fixed"]
    for want in (w.strip().lower() for w in text.split(",") if w.strip()):
        hits = [v for v in BOUND_VARIANTS if v.lower() == want or v.lower().startswith(want) or f"({want})" in v]
        if not hits:
            raise SystemExit(f"--variants: no variant {want!r}; the variants: {', '.join(BOUND_VARIANTS)}")
        picked += [h for h in hits[:1] if h not in picked]
    return tuple(picked)


PAIRED_WITH = {"oracle + BC init (CBS demos of the judged cells)": "fixed + BC init (CBS demos)",
               "oracle + BC init without demos on held-out layouts": "fixed + BC init (CBS demos)",
               **{f"oracle + BC init and imitation loss {c}": f"fixed + BC init and imitation loss {c}" for c in (0.1, 0.5)},
               "oracle with learner v2 (lr 3e-4, 256 copies)": "fixed with learner v2 (lr 3e-4, 256 copies)"}
"""Variants also paired with another than `fixed`: the oracle's headroom over the same learner"""
SHORT = {"fixed": "fixed", "fixed + BC init (CBS demos)": "fixed_bc",
         **{f"fixed + BC init and imitation loss {c}": f"fixed_imitating_{c}" for c in (0.1, 0.5)},
         "fixed with learner v2 (lr 3e-4, 256 copies)": "fixed_v2"}
"""The summary key (`minus_<short>`) of each base a variant is paired with"""


def paired(rows: list[dict[str, Any]], variant: str, bases: list[str]) -> dict[str, Any]:
    """Valid and optimal of `variant` over seeds, and its paired valid (and optimal) difference to each of `bases`."""
    mine = [r for r in rows if r["variant"] == variant]
    out: dict[str, Any] = {"valid": mean_ci([r["valid"] for r in mine]), "optimal": mean_ci([r["optimal"] for r in mine])}
    for base in bases:
        of = {r["seed"]: r for r in rows if r["variant"] == base}
        key = SHORT[base]
        out[f"minus_{key}"] = mean_ci([r["valid"] - of[r["seed"]]["valid"] for r in mine])
        out[f"optimal_minus_{key}"] = mean_ci([r["optimal"] - of[r["seed"]]["optimal"] for r in mine])
    return out


def bounds(cfg: dict[str, Any], seeds: int, jobs: int, variants: tuple[str, ...] = BOUND_VARIANTS) -> dict[str, Any]:
    """What bounds any curriculum over these levers (in_distribution): each of `variants` (the
    fixed learner trained 4x longer, on the judged cells themselves (an oracle curriculum), and
    with other inputs, rewards or critics: `bound_setup`) on every seed, paired with `fixed`, and
    the fixed policy judged with 1 and 2 walkers."""
    prepare_pools(["in_distribution"], jobs)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(bound_one, v, s, cfg) for s in range(seeds) for v in variants]
        rows = []
        for f in futures:
            rows.append(f.result())
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    summary = {v: paired(rows, v, [b for b in ("fixed", PAIRED_WITH.get(v)) if b in variants]) for v in variants}
    walkers = {n: mean_ci([r["walkers"][n] for r in rows if "walkers" in r]) for n in (1, 2)}
    return {"rows": rows, "summary": summary, "fixed_with_fewer_walkers": walkers, "seeds": seeds,
            "budget_env_steps": cfg["steps"]}


def read_report(path: Path) -> dict[str, Any]:
    """A `--json` result of this script, or a clear refusal naming the file and what is wrong."""
    try:
        report = json.loads(path.read_text())
    except OSError as e:
        raise SystemExit(f"--merge {path}: cannot read it ({e.strerror}); pass a file written by --json") from None
    except json.JSONDecodeError as e:
        raise SystemExit(f"--merge {path}: not JSON (line {e.lineno}: {e.msg}); pass a file written by --json") from None
    runs = [exp.get("runs") for exp in report.get("experiments", {}).values()] if isinstance(report, dict) else []
    if not runs or "budget_env_steps" not in report or any(not isinstance(r, list) for r in runs):
        raise SystemExit(f"--merge {path}: not an experiment result (it needs budget_env_steps and experiments with "
                         "their runs); pass a file written by --json without --bounds or --tune")
    return report


IMITATION_KEYS = {"imitate": 0, "imitation_coef": 0.0, "relabel": 0}
"""The learner's keys that files written before `--imitate` leave out, with the value they had"""


def learner_of(report: dict[str, Any]) -> dict[str, Any]:
    return {**IMITATION_KEYS, **report.get("learner", {})}


def check_learners(reports: list[tuple[Path, dict[str, Any]]]) -> None:
    """Refuse to join runs of different base learners (a method's gain would be the learner's)."""
    first_path, first = reports[0][0], learner_of(reports[0][1])
    for path, report in reports[1:]:
        mine = learner_of(report)
        differ = sorted(k for k in first.keys() & mine.keys() if first[k] != mine[k])
        if differ:
            raise SystemExit(f"--merge: {path} and {first_path} trained other learners ("
                             + ", ".join(f"{k} {mine[k]!r} against {first[k]!r}" for k in differ)
                             + "): not one table; compare them run by run with --pair")


def rename(report: dict[str, Any], renames: dict[str, str]) -> dict[str, Any]:
    """The report with the runs of each method `old` in `renames` called `renames[old]`."""
    for summary in report["experiments"].values():
        for run in summary["runs"]:
            run["method"] = renames.get(run["method"], run["method"])
    return report


def merge(paths: list[Path], renames: dict[str, str] | None = None) -> dict[str, Any]:
    """The runs of several `--json` results as one report: a later run of one method (the LLM
    engineer with a model) joins the earlier baselines. A run (experiment, method, seed) found in
    more than one file must have the same held-out figures in each (the check that both came from
    the same code and budget: training is deterministic per seed), else this refuses; so do files
    of other budgets or base learners. `renames` (old -> new method name) applies to the first
    file's runs (a method whose rule changed since, kept as an ablation)."""
    reports = [(path, read_report(path)) for path in paths]
    reports[0] = (reports[0][0], rename(reports[0][1], renames or {}))
    budgets = {r["budget_env_steps"] for _, r in reports}
    if len(budgets) > 1:
        raise SystemExit(f"--merge: the files have different budgets ({sorted(budgets)} env steps): not comparable")
    check_learners(reports)
    out: dict[str, Any] = {**reports[0][1], "merged_from": [str(p) for p in paths], "renamed": renames or {},
                           "experiments": {}}
    runs: dict[tuple[str, str, int], tuple[Path, Run]] = {}
    for path, report in reports:
        for exp, summary in report["experiments"].items():
            for d in summary["runs"]:
                run = Run(**d)
                key = (exp, run.method, run.seed)
                if key in runs and runs[key][1].held_out != run.held_out:
                    raise SystemExit(f"--merge: {exp} {run.method} seed {run.seed} differs between {runs[key][0]} and "
                                     f"{path}: the files come from different code or settings; rerun them together")
                runs.setdefault(key, (path, run))
    out["seeds"] = sorted({seed for _, _, seed in runs})
    print(f"# MAPF-FrozenLake engineer experiment\n\nMerged from {', '.join(str(p) for p in paths)} (the runs found "
          f"in several files agree); budget per run: {budgets.pop():,} env steps.")
    for exp in dict.fromkeys(k[0] for k in runs):
        mine = [run for (e, _, _), (_, run) in runs.items() if e == exp]
        summary = summarize(mine, [m for m in dict.fromkeys(r.method for r in mine) if m not in BASELINES])
        summary["runs"] = [r.__dict__ for r in mine]
        out["experiments"][exp] = summary
        print(tables(exp, summary))
    print(stage_lines([run for _, run in runs.values()]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiments", default="in_distribution,generalization",
                    help="in_distribution, generalization, declared_ranges (no curated space: the spec's declared ranges)")
    ap.add_argument("--pools-only", action="store_true", help="only fill the experiments' solved pools, then stop")
    ap.add_argument("--demo-episodes", type=int, default=0, metavar="EPISODES",
                    help="CBS plans demonstrated a stage while a lever arm's imitation lever is on (0: 2,000, the default)")
    ap.add_argument("--static-from", metavar="RUNS/METHOD",
                    help="the static arm (method `static`) trains the final mixture and levers of METHOD's run of the same "
                         "experiment and seed under RUNS (a --out folder) from stage 2 on")
    ap.add_argument("--methods", default="fixed,dr,plr,heuristic", help="fixed, dr, plr, heuristic, heuristic-band (knobs by the band alone), heuristic-levers (with the designer levers, LEVER_ARMS), heuristic-park, heuristic-imitation, heuristic-end and heuristic-partners (one lever each), heuristic-rules (heuristic-levers plus end_on:conflicts), heuristic-rules-trials (it with K=3 trials a stage), static (with --static-from), llm (with the levers), llm-plain (without), llm-failures, llm-guideline")
    ap.add_argument("--model", help="the LLM engineer's model (adds `llm`)")
    ap.add_argument("--ablation", action="store_true", help="with --model: also llm-failures and llm-guideline")
    ap.add_argument("--seeds", type=int, default=3, help="how many seeds (runs per method and experiment)")
    ap.add_argument("--first-seed", type=int, default=0, help="the first seed (more seeds for an earlier run: "
                    "--first-seed 3 --seeds 2, then --merge)")
    ap.add_argument("--band", type=float, nargs=2, default=BAND, metavar=("LOW", "HIGH"))
    ap.add_argument("--stages", type=int, default=4)
    ap.add_argument("--steps", type=int, default=3_200_000, help="env steps per run (every method), split over the stages")
    ap.add_argument("--stage-episodes", type=int, default=150, help="evaluation episodes per bucket per stage")
    ap.add_argument("--validation-episodes", type=int, default=150, help="validation episodes per cell per stage")
    ap.add_argument("--episodes", type=int, default=300, help="held-out episodes per cell per run")
    ap.add_argument("--jobs", type=int, default=2, help="runs in parallel (processes)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 1 seed, 2 stages, 24,000 steps, few episodes")
    ap.add_argument("--tune", action="store_true", help="only the base learner's tuning (the fixed baseline)")
    ap.add_argument("--bounds", action="store_true", help="only what bounds any curriculum (longer training, an oracle, "
                    "other learner inputs, rewards and critics, fewer walkers; --variants picks some)")
    ap.add_argument("--variants", help="with --bounds: a comma-separated subset of the variants (by their first "
                    "words: fixed, oracle, mappo ...); `fixed` is always run, every difference is paired with it")
    ap.add_argument("--imitate", type=int, default=0, metavar="EPISODES",
                    help="the learner imitates CBS plans: every method's first stage starts from a clone of this many "
                    "demonstrated episodes of its mixture (`gymwright.curriculum.mapf_demos`), their env steps charged to the budget")
    ap.add_argument("--imitation-coef", type=float, default=0.0,
                    help="with --imitate: every stage also keeps an imitation loss of this weight on demonstrations of "
                    "its own mixture (the same number of episodes a stage); 0: a BC init only")
    ap.add_argument("--relabel", type=int, default=0, metavar="EPISODES",
                    help="with --imitate and --imitation-coef: DAgger; from the second stage on, the imitation loss is on "
                    "this many episodes a stage played by the previous stage's policy and labelled by CBS "
                    "(`gymwright.curriculum.mapf_demos.relabel_demos`), added to its earlier demonstrations; their env steps are charged")
    ap.add_argument("--merge", type=Path, nargs="+", metavar="JSON",
                    help="join the runs of earlier --json results into one report (runs found twice must agree)")
    ap.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                    help="with --merge: call the first file's runs of method OLD NEW (repeatable)")
    ap.add_argument("--pair", nargs=2, metavar="FILE:METHOD",
                    help="the paired difference of two methods' runs in two --json files (e.g. two base learners)")
    ap.add_argument("--out", type=Path, default=Path("runs/engineer-benchmark"))
    ap.add_argument("--json", type=Path, help="write every figure here (e.g. benchmarks/results/engineer_latest.json)")
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds, args.stages, args.steps = 1, 2, 24_000
        args.stage_episodes, args.validation_episodes, args.episodes = 40, 40, 60
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if args.model and "llm" not in methods:
        methods += ["llm"] + (["llm-failures", "llm-guideline"] if args.ablation else [])
    cfg = {"model": args.model, "stages": args.stages, "steps": args.steps, "band": list(args.band),
           "stage_episodes": args.stage_episodes, "validation_episodes": args.validation_episodes,
           "episodes": args.episodes, "out": str(args.out), "imitate": args.imitate,
           "imitation_coef": args.imitation_coef, "relabel": args.relabel, "static_from": args.static_from,
           "demo_episodes": args.demo_episodes}
    if args.imitation_coef and not args.imitate:
        raise SystemExit("benchmarks/engineer.py: --imitation-coef needs --imitate EPISODES (the demonstrations it imitates)")
    levels = max(math.prod(len(v) for v in {**e.structural, **e.knobs}.values()) for e in EXPERIMENTS.values())
    for flag, n in (("--imitate", args.imitate), ("--relabel", args.relabel)):
        if n and n < levels:
            raise SystemExit(f"benchmarks/engineer.py: {flag} {n} is fewer episodes than the {levels} levels a mixture "
                             f"may hold (dr's; each level gets at least one); give {flag} {levels} or more")
    if args.relabel and not args.imitation_coef:
        raise SystemExit("benchmarks/engineer.py: --relabel needs --imitate EPISODES and --imitation-coef above 0 "
                         "(the relabelled states feed the imitation loss)")
    start = time.perf_counter()
    if args.pair:
        result = pair_across(*args.pair)
        if args.json:
            args.json.write_text(json.dumps(result, indent=1, default=float))
        return 0
    if args.merge:
        bad = [r for r in args.rename if r.count("=") != 1 or not all(r.split("="))]
        if bad:
            raise SystemExit(f"--rename {bad[0]!r}: give OLD=NEW, e.g. heuristic=heuristic-band")
        result = merge(args.merge, dict(r.split("=") for r in args.rename))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1, default=float))
        return 0
    if args.tune:
        result = {"tuning": tune(cfg), "budget_env_steps": args.steps, "command": " ".join(sys.argv)}
        print(json.dumps(result, indent=1))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1))
        return 0
    if args.bounds:
        result = {"bounds": bounds(cfg, args.seeds, args.jobs, pick_variants(args.variants)), "command": " ".join(["python", *sys.argv])}
        print(json.dumps(result["bounds"]["summary"], indent=1))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1, default=float))
        return 0
    names = [e.strip() for e in args.experiments.split(",") if e.strip()]
    pools_s = prepare_pools(names, args.jobs)
    print(f"solved pools ready in {pools_s:.0f} s", file=sys.stderr)
    if args.pools_only:
        return 0
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    jobs = [(e, m, s) for e in names for s in seeds for m in methods]
    runs: list[Run] = []
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(run_one, e, m, s, cfg) for e, m, s in jobs]
        failed = []
        for (e, m, s), f in zip(jobs, futures, strict=True):
            try:
                run = f.result()
            except Exception as error:  # noqa: BLE001 - one failed run must not lose the others
                failed.append(f"{e} {m} seed {s}: {type(error).__name__}: {error}")
                print(f"{failed[-1]}", file=sys.stderr)
                continue
            runs.append(run)
            print(f"{run.experiment} {run.method} seed {run.seed}: {run.env_steps} env steps in {run.train_s:.0f} s; "
                  f"held-out valid {overall(run, 'valid'):.3f}", file=sys.stderr)
    if not runs:
        raise SystemExit("benchmarks/engineer.py: every run failed:\n" + "\n".join(failed))
    engineers = [m for m in methods if m not in BASELINES]
    report: dict[str, Any] = {"budget_env_steps": runs[0].env_steps, "seeds": seeds,
                              "stages": args.stages, "band": list(args.band), "learner": {**LEARNER, "num_envs": NUM_ENVS,
                                                                                        **TRAIN_FIXED,
                                                                                        "imitate": args.imitate,
                                                                                        "imitation_coef": args.imitation_coef,
                                                                                        "relabel": args.relabel},
                              "command": " ".join(["python", *sys.argv]), "pools_s": pools_s, "experiments": {}}
    print(f"# MAPF-FrozenLake engineer experiment\n\nBudget per run: {runs[0].env_steps:,} env steps in {args.stages} "
          f"stages ({NUM_ENVS} copies), {args.seeds} seeds, band {args.band[0]:g}-{args.band[1]:g}, {args.episodes} "
          f"held-out episodes per cell per run; wall {time.perf_counter() - start:.0f} s.")
    for exp in dict.fromkeys(r.experiment for r in runs):
        mine = [r for r in runs if r.experiment == exp]
        summary = summarize(mine, engineers)
        summary["runs"] = [r.__dict__ for r in mine]
        report["experiments"][exp] = summary
        print(tables(exp, summary))
    print(stage_lines(runs))
    report["wall_s"] = time.perf_counter() - start
    report["failed"] = failed
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1, default=float))
    if failed:
        print(f"{len(failed)} runs failed (left out of every figure above):\n" + "\n".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
