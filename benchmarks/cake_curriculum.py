"""The seed's curriculum that changes the game: plain cake -> an outside option -> two flavours.

The heuristic engineer with the variants library (`gymwright evolve --edits`; issue 18, item 5)
runs a 3-stage curriculum on the cake negotiation (discount 0.5, 10 rounds, 11 offer levels). Its
task metric is `agreed`, with the band 0.4-0.8 and no knob to move: once agreement is certain it
adds, in the library's order, the outside option (an agent may leave for 0.25) and then two
flavours that the agents value differently (`taste_gap` 0.5: the first values flavour A at 0.75
of the cake, the second at 0.25), and the policy carries over each edit
(`gymwright.train.carryover`). Against it, per seed:

- `scratch`: the curriculum's final version trained from scratch for the curriculum's whole budget
  (the same total env steps);
- `scratch, last stage's budget`: the same for one stage's steps (what the final stage had).

Every policy is judged greedily on the final version (2,000 episodes) against its subgame-perfect
equilibrium (`bargaining_theory.spe`, exact backward induction): the first offer (both shares),
deals, outside options taken, each agent's value, and `distance` = |first proposer's value -
equilibrium| + |responder's value - equilibrium|, and `joint_value` the sum of both values (the
gains from trade a split of two flavours can find). Means over seeds with 95% t-intervals; paired
differences per seed. With `--model` the LLM engineer (`LLMEngineer(edits=True)`) runs the same
curriculum; its final version is judged against its own equilibrium where the theory covers it.

    python benchmarks/cake_curriculum.py --json benchmarks/results/cake_curriculum_2026-12-01.json
    python benchmarks/cake_curriculum.py --seeds 1 --steps 6000      # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

from bargaining_theory import Equilibrium, spe  # noqa: E402
from engineer import mean_ci  # noqa: E402  (the 95% t-interval over seeds)

PARAMS = {"discount": 0.5, "max_rounds": 10, "offer_levels": 11}
VARIANTS = ("outside_option", "two_flavours")
STAGES = 3
EPISODES = 2000
KEYS = ("first_share", "first_share_b", "deal", "outside_taken", "first_value", "second_value", "joint_value",
        "distance")


def engineer_for(method: str, model: str | None) -> Any:
    from gymwright.engineer import HeuristicEngineer, LLMEngineer

    if method == "heuristic":
        return HeuristicEngineer(edits=True, variants=VARIANTS)
    from gymwright.llm import LLM, provider_from_name

    return LLMEngineer(LLM(provider_from_name(str(model))), edits=True)


def curriculum(method: str, seed: int, steps: int, out: Path, model: str | None) -> tuple[Any, dict[str, Any], str, list[dict]]:
    """Run the curriculum; (final spec as data, its params, the final policy's checkpoint, per stage:
    what it trained on and what the engineer did)."""
    import yaml

    from gymwright.curriculum import CurriculumOptions, evolve

    opts = CurriculumOptions(stages=STAGES, steps_per_stage=steps, band=(0.4, 0.8), task_metric="agreed", knobs=(),
                             eval_episodes=200, num_envs=128, seed=seed, record_episodes=10, train={"gamma": 1.0})
    records = evolve("cake_negotiation", PARAMS, engineer_for(method, model), out, opts)
    last = records[-1]
    spec_file = next((out / f"stage{k}" / "spec.yaml" for k in reversed(range(STAGES))
                      if (out / f"stage{k}" / "spec.yaml").exists()), None)
    spec = yaml.safe_load(spec_file.read_text()) if spec_file else "cake_negotiation"
    stages = [{"stage": r.index, "agreed": r.success, "edit": (r.edit or {}).get("summary"),
               "variant": ((r.edit or {}).get("variant") or {}).get("variant"), "rationale": r.rationale}
              for r in records]
    return spec, dict(last.mixture[0]["params"]), last.policy, stages


def theory(spec: Any, params: dict[str, Any]) -> Equilibrium:
    """The final version's equilibrium: its tastes and outside option where the variants added them."""
    from gymwright.spec.loader import read_data

    data = spec if isinstance(spec, dict) else read_data(spec)[0]
    declared = data.get("params", {})
    value = {k: params.get(k, v.get("default")) for k, v in declared.items()}
    gap = value.get("taste_gap")
    weights = None if gap is None else ((1 + gap) / 2, (1 - gap) / 2)
    return spe(value["discount"], int(value["max_rounds"]), int(value["offer_levels"]), weights=weights,
               outside=value.get("outside_value"))


def judge(spec: Any, params: dict[str, Any], checkpoint: str, seed: int) -> dict[str, float]:
    """The checkpoint's greedy play of the cake version `spec` at `params` (2,000 episodes) against
    the version's equilibrium: the first offer, deals, outside options taken, each agent's value
    and the distance (`benchmarks/carryover.py` judges its policies with it too)."""
    import numpy as np

    from gymwright.train import load_policy, play_episodes

    ev = play_episodes(spec, params, load_policy(checkpoint), episodes=EPISODES, seed=10**6 + seed, deterministic=True)
    eq = theory(spec, params)
    m = ev.episode_metrics
    first, second = ev.episode_returns[:, 0], ev.episode_returns[:, 1]

    shown = {"first_share": "first_share", "first_share_b": "first_share_b", "deal": "agreed",
             "outside_taken": "outside_taken"}  # the version's metrics that it has
    return {**{k: float(np.mean(m[name])) for k, name in shown.items() if name in m},
            "first_value": float(first.mean()), "second_value": float(second.mean()),
            "joint_value": float(first.mean() + second.mean()),
            "distance": float(abs(first.mean() - float(eq.first)) + abs(second.mean() - float(eq.second)))}


def one_seed(seed: int, steps: int, out: Path, methods: list[str], model: str | None) -> dict[str, Any]:
    import torch

    from gymwright.train import TrainConfig, train

    torch.set_num_threads(1)
    start = time.perf_counter()
    rows: dict[str, dict[str, float]] = {}
    stages: dict[str, list[dict]] = {}
    finals: dict[str, Any] = {}
    for method in methods:
        spec, params, policy, stages[method] = curriculum(method, seed, steps, out / f"{method}-{seed}", model)
        rows[method] = judge(spec, params, policy, seed)
        finals[method] = (spec, params)
    spec, params = finals["heuristic"] if "heuristic" in finals else next(iter(finals.values()))
    for name, n in (("scratch", STAGES * steps), ("scratch, last stage's budget", steps)):
        res = train(TrainConfig(spec=spec, params=params, total_steps=n, num_envs=128, gamma=1.0, seed=seed,
                                out=out / f"{name.split(',')[0]}{n}-{seed}"))
        rows[name] = judge(spec, params, res.checkpoint, seed)
    eq = theory(spec, params)
    print(f"seed {seed}: {time.perf_counter() - start:.0f} s " + json.dumps(rows), file=sys.stderr, flush=True)
    return {"rows": rows, "stages": stages, "final_params": params,
            "variants": {m: [st["variant"] for st in ss if st["variant"]] for m, ss in stages.items()},
            "equilibrium": {"offer": [float(x) for x in eq.offer], "first": float(eq.first), "second": float(eq.second)}}


def table(per_seed: list[dict[str, Any]]) -> str:
    eq = per_seed[0]["equilibrium"]
    lines = [f"Equilibrium of the final version (backward induction): first offer {eq['offer']}, values "
             f"{eq['first']:.3f} / {eq['second']:.3f} (joint {eq['first'] + eq['second']:.3f}).\n",
             "| policy | " + " | ".join(KEYS) + " |", "|---|" + "---:|" * len(KEYS)]
    for name in per_seed[0]["rows"]:
        cells = [mean_ci([_value(s["rows"][name], k) for s in per_seed]) for k in KEYS]
        lines.append(f"| {name} | " + " | ".join(f"{m:.3f} ± {h:.3f}" for m, h in cells) + " |")
    lines += ["", "| paired (per seed) | distance diff | 95% CI |", "|---|---:|---|"]
    engineers = [n for n in per_seed[0]["rows"] if not n.startswith("scratch")]
    for a in engineers:
        for b in ("scratch", "scratch, last stage's budget"):
            m, h = mean_ci([s["rows"][a]["distance"] - s["rows"][b]["distance"] for s in per_seed])
            lines.append(f"| {a} - {b} | {m:+.3f} | [{m - h:+.3f}, {m + h:+.3f}] |")
    return "\n".join(lines)


def _value(row: dict[str, float], key: str) -> float:
    """A row's figure (`joint_value`, the sum of both agents' values, for rows written before it was
    kept; nan for a metric the version does not have)."""
    if key == "joint_value" and key not in row:
        return row["first_value"] + row["second_value"]
    return row.get(key, float("nan"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=150_000, help="env steps per curriculum stage (scratch: 3x)")
    ap.add_argument("--model", help="also run the LLM engineer with this model (e.g. openai:MODEL)")
    ap.add_argument("--out", type=Path, default=Path("runs/cake-curriculum-benchmark"))
    ap.add_argument("--json", type=Path, help="write every figure here")
    args = ap.parse_args(argv)
    methods = ["heuristic"] + (["llm"] if args.model else [])
    per_seed = [one_seed(s, args.steps, args.out, methods, args.model) for s in range(args.seeds)]
    print(table(per_seed))
    if args.json:
        args.json.write_text(json.dumps({"params": PARAMS, "steps_per_stage": args.steps, "stages": STAGES,
                                         "model": args.model, "table": table(per_seed), "seeds": per_seed}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
