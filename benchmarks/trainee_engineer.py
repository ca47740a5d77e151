"""The trainee as its own engineer ("From Trainee to Trainer"), end to end on MAPF-FrozenLake's text form.

One LLM trainee (GRPO on the stage's lakes played as text, `gymwright.curriculum.lmcurriculum`),
five ways to choose its stages, the same budget (stages x GRPO updates x episodes per update) and
the same held-out lakes (`gymwright.curriculum.mapf_goal`: one and two sizes bigger, hole ratio
0.3, wait ratios 0.5 and 0.75, each cell its own family of solved layouts):

- `fixed`: the start configuration every stage;
- `dr`: uniform domain randomization over every level of the engineer's space;
- `heuristic`: the heuristic engineer (the structural rule of `gymwright.engineer.structural`);
- `llm-base`: the LLM engineer answered by the trainee's base model (`--model trainee-base`);
- `llm-trained`: the LLM engineer answered by the trainee's current checkpoint (`--model trainee`):
  after stage k the model GRPO just trained reads the evidence and proposes stage k + 1.

Judged: the final checkpoint's valid rate (MAPF's task metric: every walker on its goal, no hole,
no conflict) on the held-out cells; per seed, mean over seeds with a 95% t-interval, and paired
differences (same seed) of every arm against `fixed` and `dr`.

    python benchmarks/trainee_engineer.py --seeds 1 --stages 2 --steps-per-stage 2 --episodes 2 --out runs/trainee-engineer
    python benchmarks/trainee_engineer.py --scale paper --seeds 3 --stages 5 --out runs/trainee-engineer-paper  # a GPU

At the toy scale (`--scale toy`, SmolLM2-135M on a CPU) it shows that the pipeline runs, not which
engineer is better: a few GRPO updates move a 135M model little, and the held-out figures rest on
a handful of episodes. `--scale paper` is the paper's setting (Qwen3-4B); on a machine without a
CUDA GPU it stops with what it needs (`paper_needs`, an estimate).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))

from engineer import mean_ci  # noqa: E402 (the engineer benchmark's 95% t-interval over seeds)

SPEC = "mapf_frozenlake"
ARMS = ("fixed", "dr", "heuristic", "llm-base", "llm-trained")
BASELINES = ("fixed", "dr")
ENGINEER_MODEL = {"llm-base": "trainee-base", "llm-trained": "trainee"}
"""the LLM arms and the model that answers their engineer (`gymwright.engineer.trainee`)"""
START = {
    # two walkers on 3x3 lakes (held out: 4x4 and 5x5), the smallest window, a small pool of solved layouts;
    # games of at most 4 steps (the spec's least), all of them played when measured (the toy trains on 2)
    "toy": {"size": 3, "n_agents": 2, "hole_density": 0.2, "wait_ratio": 0.25, "max_steps": 4, "view_radius": 1,
            "layout_pool": 20},
    # the paper's in-distribution start (benchmarks/engineer.py): three walkers on 4x4 (held out: 5x5 and 6x6)
    "paper": {"size": 4, "n_agents": 3, "hole_density": 0.2, "wait_ratio": 0.25, "max_steps": 40, "view_radius": 2},
}
BAND = (0.3, 0.6)
NO_GPU = "the paper's scale needs a CUDA GPU, and torch sees none here"


def goal_of(scale: str) -> Any:
    from gymwright.curriculum.compare import goal_for

    return goal_for(SPEC, dict(START[scale]))


def options(args: argparse.Namespace) -> Any:
    """The trainee's settings, one object for every arm (the shared budget)."""
    from gymwright.curriculum.lmstage import preset

    return preset(args.scale, steps_per_stage=args.steps_per_stage, held_out_episodes=args.episodes,
                  eval_episodes=args.eval_episodes, model=args.model, device=args.device)


def arm_engineer(arm: str, goal: Any, models: Any, seed: int, tokens: int) -> Any:
    from gymwright.engineer import DomainRandomization, FixedEngineer, HeuristicEngineer
    from gymwright.engineer.trainee import trainee_engineer

    if arm in ENGINEER_MODEL:
        return trainee_engineer("llm", ENGINEER_MODEL[arm], models, max_tokens=tokens)
    made = {"fixed": FixedEngineer, "heuristic": HeuristicEngineer}.get(arm)
    return made() if made is not None else DomainRandomization(goal.space, seed=seed)


def run_seed(seed: int, arms: tuple[str, ...], opts: Any, stages: int, goal: Any, out: Path,
             loader: Any) -> list[dict[str, Any]]:
    """Every arm on one seed; arms that train the same mixtures from the same start share those stages."""
    from gymwright.curriculum.lmcurriculum import LMCurriculum, StageCache, evolve_lm, start_for
    from gymwright.engineer.trainee import TraineeModels

    c = LMCurriculum(SPEC, goal, opts, stages, out / f"seed{seed}", seed=seed, band=BAND, loader=loader,
                     cache=StageCache(), say=lambda line: print(f"  [seed {seed}] {line}"[:400], file=sys.stderr, flush=True))
    done = []
    for arm in arms:
        start = time.perf_counter()
        models = TraineeModels(opts.model, device=opts.device)
        engineer = arm_engineer(arm, goal, models, seed, opts.engineer_tokens)
        c.say(f"arm {arm}")
        record = evolve_lm(c, engineer, start_for(engineer, goal), models, arm)
        done.append({**record, "seed": seed, "seconds": time.perf_counter() - start,
                     "updates": sum(r["updates"] for s in record["stages"] for r in s["runs"])})
    return done


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per arm: the held-out valid rate per seed, its mean and 95% t-interval; paired differences
    (same seeds) of every arm against each baseline."""
    arms = list(dict.fromkeys(r["name"] for r in runs))
    by = {a: {r["seed"]: r for r in runs if r["name"] == a} for a in arms}
    methods = {}
    for a in arms:
        per_seed = {s: r["held_out"]["mean"] for s, r in sorted(by[a].items())}
        m, h = mean_ci(list(per_seed.values()))
        methods[a] = {"per_seed": per_seed, "mean": m, "ci95": h,
                      "updates": sorted({r["updates"] for r in by[a].values()}),
                      "cells": {cell: mean_ci([r["held_out"]["cells"][cell] for r in by[a].values()])[0]
                                for cell in next(iter(by[a].values()))["held_out"]["cells"]}}
    paired = {}
    for b in [x for x in BASELINES if x in by]:
        for a in [x for x in arms if x != b]:
            seeds = sorted(by[a].keys() & by[b].keys())
            d, h = mean_ci([by[a][s]["held_out"]["mean"] - by[b][s]["held_out"]["mean"] for s in seeds])
            paired[f"{a} - {b}"] = {"seeds": seeds, "diff": d, "ci95": [d - h, d + h] if math.isfinite(h) else None}
    return {"methods": methods, "paired": paired}


def _pm(m: float, h: float) -> str:
    return f"{m:.3f} ± {h:.3f}" if math.isfinite(h) else f"{m:.3f}"


def markdown(report: dict[str, Any]) -> str:
    s, cfg = report["summary"], report["config"]
    seeds = sorted({seed for e in s["methods"].values() for seed in e["per_seed"]})
    lines = ["# The trainee as its own engineer", "",
             f"{cfg['scale']} scale: trainee {cfg['trainee']['model']}, {cfg['stages']} stages x "
             f"{cfg['trainee']['steps_per_stage']} GRPO updates x {cfg['trainee']['episodes_per_step']} episodes per arm, "
             f"{cfg['trainee']['held_out_episodes']} episodes per held-out cell; {report['seconds']:.0f} s.", ""]
    if cfg["scale"] == "toy":
        lines += ["**Toy scale: this shows that the pipeline runs end to end, not which engineer is better** "
                  "(a few GRPO updates of a 135M model, a handful of held-out episodes).", ""]
    lines += ["Held-out valid rate (every walker home, no hole, no conflict), mean over cells:", "",
              "| arm | " + " | ".join(f"seed {x}" for x in seeds) + " | mean ± 95% t | GRPO updates |",
              "|---|" + "---:|" * (len(seeds) + 2)]
    for a, e in s["methods"].items():
        lines.append(f"| {a} | " + " | ".join(f"{e['per_seed'].get(x, math.nan):.3f}" for x in seeds)
                     + f" | {_pm(e['mean'], e['ci95'])} | {', '.join(map(str, e['updates']))} |")
    lines += ["", "Paired differences (same seeds; mean of per-seed differences, 95% t-interval; none with one seed):", "",
              "| pair | diff | 95% CI |", "|---|---:|---|"]
    for pair, row in s["paired"].items():
        ci = f"[{row['ci95'][0]:+.3f}, {row['ci95'][1]:+.3f}]" if row["ci95"] else "-"
        lines.append(f"| {pair} | {row['diff']:+.3f} | {ci} |")
    lines += ["", "Who answered the engineer (the LLM arms):", ""]
    for r in report["runs"]:
        for st in r["stages"]:
            for ans in st["answered_by"]:
                lines.append(f"- {r['name']} seed {r['seed']} after stage {st['index'] + 1}: {ans['model']} "
                             f"({ans['which']}; {ans['prompt_tokens']} prompt tokens, {ans['reply_tokens']} reply tokens)")
    return "\n".join(lines) + "\n"


def paper_needs(stages: int, seeds: int, opts: Any, arms: int = len(ARMS), cells: int = 4) -> str:
    """What the paper's scale needs, an estimate (not measured: no GPU ran it): memory from the model's
    size, hours from docs/llm-training.md's per-update estimate for Qwen3-4B on one H100 (15-30 s per
    update of 8 episodes) and ~4 s per evaluated episode (40 turns, the model playing every walker,
    16 episodes side by side), 30 s per engineer reply of 1,200 tokens."""
    trainings = arms * stages - (arms - 2)  # the four arms that start alike share their first stage
    updates = trainings * opts.steps_per_stage
    episodes = arms * (stages - 1) * 8 * opts.eval_episodes + arms * cells * opts.held_out_episodes
    low = (updates * 15 + episodes * 3 + arms * stages * 30) / 3600 * seeds
    high = (updates * 30 + episodes * 5 + arms * stages * 30) / 3600 * seeds
    return (f"GPU: about 50 GB for full bfloat16 training of Qwen3-4B with AdamW (8 GB weights, 8 GB gradients, "
            f"32 GB optimizer state) plus activations with gradient checkpointing, and 8 GB for the base model the "
            f"llm-base engineer asks: one 80 GB H100 (an H200 leaves room); Qwen/Qwen3-4B in the Hugging Face cache "
            f"(huggingface-cli download Qwen/Qwen3-4B). Time (estimate, not measured): {trainings} stage trainings "
            f"x {opts.steps_per_stage} updates = {updates} GRPO updates and ~{episodes} evaluated episodes per seed, "
            f"about {low:.0f}-{high:.0f} GPU hours for {seeds} seed(s) of {stages} stages.")


def check_device(opts: Any, stages: int, seeds: int) -> None:
    if opts.scale != "paper":
        return
    import torch

    if not torch.cuda.is_available():
        raise SystemExit(f"benchmarks/trainee_engineer.py --scale paper: {NO_GPU}.\n{paper_needs(stages, seeds, opts)}\n"
                         "Run --scale toy here (SmolLM2-135M on the CPU), or this command on a GPU machine.")


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", choices=("toy", "paper"), default="toy")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--stages", type=int, default=2)
    ap.add_argument("--steps-per-stage", type=int, default=None, help="GRPO updates per stage (toy 2, paper 50)")
    ap.add_argument("--episodes", type=int, default=None, help="episodes per held-out cell (toy 2, paper 100)")
    ap.add_argument("--eval-episodes", type=int, default=None, help="episodes per bucket and validation cell after a stage")
    ap.add_argument("--model", default=None, help="the trainee's base model (toy hf:smollm2-135m, paper hf:Qwen/Qwen3-4B)")
    ap.add_argument("--device", default=None, help="auto, cpu or cuda (toy auto, paper cuda)")
    ap.add_argument("--arms", default=",".join(ARMS), help="comma-separated subset of " + ", ".join(ARMS))
    ap.add_argument("--out", type=Path, default=Path("runs/trainee-engineer"))
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    from gymwright.curriculum.lmstage import Loader

    args = parse(argv)
    opts = options(args)
    arms = tuple(a.strip() for a in args.arms.split(",") if a.strip())
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        raise SystemExit(f"unknown arm {unknown[0]!r}: one of {', '.join(ARMS)}")
    check_device(opts, args.stages, args.seeds)
    opts.check()
    goal, loader, start = goal_of(args.scale), Loader(opts.device), time.perf_counter()
    runs = [r for seed in range(args.seeds) for r in run_seed(seed, arms, opts, args.stages, goal, args.out, loader)]
    report = {"config": {"scale": args.scale, "seeds": args.seeds, "stages": args.stages, "arms": list(arms),
                         "start": START[args.scale], "held_out": goal.held_out, "trainee": opts.to_dict()},
              "seconds": time.perf_counter() - start, "summary": summarize(runs), "runs": runs}
    args.out.mkdir(parents=True, exist_ok=True)
    from gymwright.lmtrain.run import dumps

    (args.out / "trainee_engineer.json").write_text(dumps(report), encoding="utf-8")
    (args.out / "trainee_engineer.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    return report


if __name__ == "__main__":
    main()
