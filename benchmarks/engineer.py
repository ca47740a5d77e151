"""The MAPF-FrozenLake engineer experiment ("From Trainee to Trainer", in miniature).

Every engineer trains one policy in stages on 2-agent MAPF-FrozenLake, starting from the same
mixture (map sizes 3, 4 and 5, a third of the data each, hole ratio 0.2, wait ratio 0.25) with
the same total step budget; between stages the engineer reads the evidence (task metric
`valid` per map size, failures by kind, the measured effect of the hole and wait ratios) and
sets the next stage's mixture:

- `fixed`: no change (training on one fixed configuration, the paper's baseline);
- `heuristic`: each map size's knobs moved toward the target band, data moved toward the sizes
  with the lowest success (`gymwright.engineer.HeuristicEngineer`);
- `llm` (when a model is given with `--model`): a language model reads the same evidence and
  answers the knobs' values; `llm-steps` (`--llm-steps`) answers in bounded steps instead (per
  size harder, easier or keep, which knob, more or less data), for small models.

Every final policy is then evaluated on the same held-out instances: 5x5 lakes (hole ratio 0.2)
with 3, 4 and 5 agents at wait ratios 0.25, 0.50 and 0.75 (pools of solved instances, drawn with
the same seeds for every engineer), `--episodes` episodes per cell. The table gives the valid
and optimal rates with 95% confidence half-widths (normal approximation over episodes, and over
the seeds' runs pooled). `--ablation` also runs the LLM engineer with the failure evidence
only, + the guideline, and + the history.

    python benchmarks/engineer.py                       # fixed and heuristic, 2 seeds
    python benchmarks/engineer.py --quick               # a smoke run (a minute or two)
    python benchmarks/engineer.py --model local:qwen2.5-coder-1.5b --ablation
    python benchmarks/engineer.py --json results.json   # also write every number
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

SPEC = "mapf_frozenlake"
BASE = {"n_agents": 2, "hole_density": 0.2, "wait_ratio": 0.25, "max_steps": 30, "view_radius": 2}
TRAIN_SIZES = (3, 4, 5)
HELD_OUT = {"size": 5, "hole_density": 0.2, "max_steps": 40, "layout_pool": 200, "view_radius": 2}
HELD_AGENTS = (3, 4, 5)
HELD_WAITS = (0.25, 0.5, 0.75)
KNOBS = ("wait_ratio", "hole_density")
BAND = (0.5, 0.8)  # the default target band of the task metric (--band)
Z95 = 1.959963984540054


@dataclass
class Run:
    """One engineer's training run and its held-out evaluation."""

    engineer: str
    seed: int
    stages: list[dict[str, Any]] = field(default_factory=list)
    held_out: dict[str, dict[str, float]] = field(default_factory=dict)  # "agents=3 wait=0.25" -> rates
    train_s: float = 0.0
    env_steps: int = 0


def make_engineer(name: str, model: str | None) -> Any:
    from gymwright.engineer import FixedEngineer, HeuristicEngineer, LLMEngineer

    if name == "fixed":
        return FixedEngineer()
    if name == "heuristic":
        return HeuristicEngineer()
    from gymwright.llm import LLM, provider_from_name

    assert model is not None
    variants = {"llm": {}, "llm-failures": {"with_guideline": False, "with_history": False},
                "llm-guideline": {"with_history": False}, "llm-steps": {"steps": True}}
    return LLMEngineer(LLM(provider_from_name(model)), **variants[name])


def train_run(name: str, seed: int, args: argparse.Namespace, out: Path) -> Run:
    from gymwright.engineer.curriculum import CurriculumOptions, evolve
    from gymwright.engineer.mixture import Mixture

    engineer = make_engineer(name, args.model)
    engineer.name = name
    opts = CurriculumOptions(stages=args.stages, steps_per_stage=args.steps // args.stages, band=tuple(args.band),
                             task_metric="valid", eval_episodes=args.stage_episodes, num_envs=args.num_envs,
                             seed=1000 * seed, knobs=KNOBS, record_episodes=20)
    start = time.perf_counter()
    records = evolve(SPEC, Mixture.over("size", list(TRAIN_SIZES), BASE), engineer, out / f"{name}-seed{seed}", opts,
                     progress=lambda line: print(f"  [{name} seed {seed}] {line}", file=sys.stderr))
    run = Run(name, seed, train_s=time.perf_counter() - start,
              env_steps=opts.stages * opts.steps_per_stage)
    run.stages = [{"index": r.index, "success": r.success, "mixture": r.mixture, "rationale": r.rationale,
                   "next": r.proposed_mixture, "checkpoint": r.checkpoint} for r in records]
    return run


def held_out(run: Run, episodes: int) -> None:
    from gymwright.train import evaluate, load_policy

    policy = load_policy(run.stages[-1]["checkpoint"])
    for agents in HELD_AGENTS:
        for wait in HELD_WAITS:
            params = {**HELD_OUT, "n_agents": agents, "wait_ratio": wait}
            ev = evaluate(SPEC, params, policy, episodes, seed=900_000)
            m = ev.episode_metrics
            failed = m["valid"] == 0
            hole = failed & (m["holes"] > 0)
            conflict = failed & ~hole & (m["conflicts"] > 0)
            run.held_out[f"agents={agents} wait={wait:.2f}"] = {
                "valid": float(m["valid"].mean()), "optimal": float(m["optimal"].mean()), "episodes": episodes,
                # failures by kind, as the failure evidence names them (first: hole, conflict; else timeout)
                "holes": float(hole.mean()), "conflicts": float(conflict.mean()),
                "timeout": float((failed & ~hole & ~conflict).mean()),
                "suboptimal": float(m["suboptimal"].mean())}


def pooled(runs: list[Run], cell: str, metric: str) -> tuple[float, float, int]:
    """Rate over every episode of the engineer's runs in a cell, and its 95% half-width."""
    n = sum(int(r.held_out[cell]["episodes"]) for r in runs)
    p = sum(r.held_out[cell][metric] * r.held_out[cell]["episodes"] for r in runs) / n
    return p, Z95 * math.sqrt(max(p * (1 - p), 1e-12) / n), n


def table(runs: list[Run]) -> str:
    names = list(dict.fromkeys(r.engineer for r in runs))
    cells = list(runs[0].held_out)
    lines = []
    for metric in ("valid", "optimal"):
        lines.append(f"\n**{metric} rate** on held-out 5x5 instances (95% CI half-width), by agents and wait ratio:\n")
        lines.append("| engineer | " + " | ".join(c.replace("agents=", "").replace(" wait=", " ag, w ") for c in cells)
                     + " | mean |")
        lines.append("|---|" + "---:|" * (len(cells) + 1))
        for name in names:
            mine = [r for r in runs if r.engineer == name]
            rates = [pooled(mine, c, metric) for c in cells]
            mean = sum(p for p, _, _ in rates) / len(rates)
            n_all = sum(n for _, _, n in rates)
            mean_ci = Z95 * math.sqrt(sum(p * (1 - p) / n for p, _, n in rates)) / len(rates)
            lines.append(f"| {name} | " + " | ".join(f"{p:.2f} ± {h:.2f}" for p, h, _ in rates)
                         + f" | **{mean:.3f} ± {mean_ci:.3f}** ({n_all} ep.) |")
    return "\n".join(lines)


def kinds_table(runs: list[Run]) -> str:
    lines = ["\n**Held-out episodes by outcome** (share of all held-out episodes, pooled over cells and seeds):\n",
             "| engineer | optimal | valid, not optimal | fell in a hole | conflict | timeout |", "|---|---:|---:|---:|---:|---:|"]
    for name in dict.fromkeys(r.engineer for r in runs):
        cells = [c for r in runs if r.engineer == name for c in r.held_out.values()]
        mean = {k: sum(c[k] for c in cells) / len(cells) for k in ("optimal", "suboptimal", "holes", "conflicts", "timeout")}
        lines.append(f"| {name} | " + " | ".join(f"{mean[k]:.3f}" for k in mean) + " |")
    return "\n".join(lines)


def stages_table(runs: list[Run]) -> str:
    lines = ["\n**Stages** (training success `valid` per map size, and the data share):\n",
             "| engineer | seed | stage | size 3 | size 4 | size 5 |", "|---|---:|---:|---|---|---|"]
    for r in runs:
        for s in r.stages:
            by = {m["label"]: m for m in s["mixture"]}
            cols = [f"{by[f'size={k}']['success']:.2f} ({by[f'size={k}']['share']:.0%}; wait "
                    f"{by[f'size={k}']['params']['wait_ratio']:g}, holes {by[f'size={k}']['params']['hole_density']:g})"
                    for k in TRAIN_SIZES]
            lines.append(f"| {r.engineer} | {r.seed} | {s['index'] + 1} | " + " | ".join(cols) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engineers", default="fixed,heuristic",
                    help="comma-separated: fixed, heuristic, llm, llm-failures, llm-guideline, llm-steps")
    ap.add_argument("--model", help="the LLM engineer's model (adds `llm` to the engineers)")
    ap.add_argument("--ablation", action="store_true", help="with --model: also llm-failures and llm-guideline")
    ap.add_argument("--llm-steps", action="store_true",
                    help="with --model: also llm-steps (the model answers harder/easier/keep, a knob, more/less data)")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--band", type=float, nargs=2, default=BAND, metavar=("LOW", "HIGH"),
                    help="target band of the training success (valid) the engineers steer into")
    ap.add_argument("--stages", type=int, default=4)
    ap.add_argument("--steps", type=int, default=1_200_000, help="env steps per run, split over the stages")
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--stage-episodes", type=int, default=200, help="evaluation episodes per bucket per stage")
    ap.add_argument("--episodes", type=int, default=300, help="held-out episodes per cell per run")
    ap.add_argument("--quick", action="store_true", help="1 seed, 2 stages, 40,000 steps, 60 episodes")
    ap.add_argument("--out", type=Path, default=Path("runs/engineer-benchmark"))
    ap.add_argument("--json", type=Path, help="write the runs as JSON here")
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds, args.stages, args.steps, args.episodes, args.stage_episodes = 1, 2, 40_000, 60, 60
    names = [n.strip() for n in args.engineers.split(",") if n.strip()]
    if args.model and not any(n.startswith("llm") for n in names):  # named llm variants run as named
        names += ["llm"] + (["llm-failures", "llm-guideline"] if args.ablation else [])
        names += ["llm-steps"] if args.llm_steps else []
    if any(n.startswith("llm") for n in names) and not args.model:
        ap.error("the llm engineers need --model")
    import torch

    torch.set_num_threads(1)
    runs: list[Run] = []
    start = time.perf_counter()
    for seed in range(args.seeds):
        for name in names:
            run = train_run(name, seed, args, args.out)
            held_out(run, args.episodes)
            runs.append(run)
            print(f"{name} seed {seed}: trained {run.env_steps} env steps in {run.train_s:.0f} s; held-out mean "
                  f"valid {sum(c['valid'] for c in run.held_out.values()) / len(run.held_out):.3f}", file=sys.stderr)
    print(f"# MAPF-FrozenLake engineer experiment\n\nBudget per run: {runs[0].env_steps:,} env steps of 2-agent "
          f"training in {args.stages} stages ({args.num_envs} copies), {args.seeds} seed(s) per engineer; target "
          f"band {args.band[0]:g}-{args.band[1]:g}; "
          f"{args.episodes} held-out episodes per cell per run; total wall {time.perf_counter() - start:.0f} s.")
    print(table(runs))
    print(kinds_table(runs))
    print(stages_table(runs))
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in runs], indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
