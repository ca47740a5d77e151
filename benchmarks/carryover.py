"""Does a policy that carries over an edit beat training from scratch on the edited game?

The edit: the cake negotiation gets the outside option (`gymwright.engineer.variants`,
`outside_option`): the responder, or the proposer, may leave for `outside_value` instead of
negotiating. With discount 0.5 and 10 rounds the plain game's subgame-perfect first offer keeps
2/3; with an outside option worth 0.4 the responder refuses less than 0.4, so the first proposer
keeps 0.6 (`bargaining_theory.spe`). Per seed:

- `parent`: the plain game for `--steps` env steps;
- `warm`: the parent's policy carried over to the edited game (`gymwright.train.carryover`: the
  new action starts at a low logit), then `--steps` on the edited game;
- `scratch`: `--steps` on the edited game from scratch (the same budget on the edited game);
- `scratch x2`: 2 x `--steps` from scratch (the same total budget as parent + warm).

Each policy is judged greedily on the edited game (2,000 episodes): the first proposer's share of
the deal, the deal rate, how often the outside option is taken, and the distance of each agent's
value to the equilibrium's. Paired differences per seed, with 95% t-intervals.

    python benchmarks/carryover.py                 # 3 seeds, 100,000 steps
    python benchmarks/carryover.py --seeds 1 --steps 20000   # a smoke run
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

from bargaining_theory import spe  # noqa: E402
from cake_curriculum import judge  # noqa: E402  (greedy play against the equilibrium)
from engineer import mean_ci  # noqa: E402  (the 95% t-interval over seeds)

PARAMS = {"discount": 0.5, "max_rounds": 10, "offer_levels": 11}
OUTSIDE = 0.4  # the default outside value (`--outside`)


def edited_spec() -> dict[str, Any]:
    from gymwright.engineer.variants import apply_variant

    return apply_variant("cake_negotiation", "outside_option", PARAMS).spec


def one_seed(seed: int, steps: int, out: Path, outside: float) -> dict[str, dict[str, float]]:
    import torch

    from gymwright.train import TrainConfig, train
    from gymwright.train.carryover import carry_over

    torch.set_num_threads(1)
    child = edited_spec()
    child_params = {**PARAMS, "outside_value": outside}
    base = {"num_envs": 128, "gamma": 1.0, "seed": seed}
    rows: dict[str, dict[str, float]] = {}
    start = time.perf_counter()
    parent = train(TrainConfig(spec="cake_negotiation", params=PARAMS, total_steps=steps, out=out / f"parent-{seed}", **base))
    carried = carry_over(parent.checkpoint, "cake_negotiation", child, child_params, out / f"carried-{seed}.pt")
    assert carried.checkpoint is not None, carried.summary()
    runs = {"warm": (steps, carried.checkpoint), "scratch": (steps, None), "scratch x2": (2 * steps, None)}
    for name, (n, init) in runs.items():
        res = train(TrainConfig(spec=child, params=child_params, total_steps=n, init_from=init,
                                out=out / f"{name.replace(' ', '')}-{seed}", **base))
        rows[name] = judge(child, child_params, res.checkpoint, seed)
    rows["parent (not trained on the edit)"] = judge(child, child_params, carried.checkpoint, seed)
    print(f"seed {seed}: {time.perf_counter() - start:.0f} s " + json.dumps(rows), file=sys.stderr, flush=True)
    return rows


def table(per_seed: list[dict[str, dict[str, float]]], outside: float) -> str:
    eq = spe(PARAMS["discount"], PARAMS["max_rounds"], PARAMS["offer_levels"], outside=outside)
    keys = ("first_share", "deal", "outside_taken", "first_value", "second_value", "distance")
    lines = [f"Equilibrium (backward induction): first share {float(eq.offer[0]):.3f}, values "
             f"{float(eq.first):.3f} / {float(eq.second):.3f}, deal at once.\n",
             "| policy | " + " | ".join(keys) + " |", "|---|" + "---:|" * len(keys)]
    for name in per_seed[0]:
        cells = [mean_ci([s[name][k] for s in per_seed]) for k in keys]
        lines.append(f"| {name} | " + " | ".join(f"{m:.3f} ± {h:.3f}" for m, h in cells) + " |")
    lines += ["", "| paired (per seed) | distance diff | 95% CI |", "|---|---:|---|"]
    for a, b in (("warm", "scratch"), ("warm", "scratch x2")):
        m, h = mean_ci([s[a]["distance"] - s[b]["distance"] for s in per_seed])
        lines.append(f"| {a} - {b} | {m:+.3f} | [{m - h:+.3f}, {m + h:+.3f}] |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=100_000, help="env steps of the parent, and of each run on the edit")
    ap.add_argument("--outside", type=float, default=OUTSIDE, help="the outside option's value (0.4: the equilibrium moves)")
    ap.add_argument("--out", type=Path, default=Path("runs/carryover-benchmark"))
    ap.add_argument("--json", type=Path, help="write every figure here")
    args = ap.parse_args(argv)
    per_seed = [one_seed(s, args.steps, args.out, args.outside) for s in range(args.seeds)]
    print(table(per_seed, args.outside))
    if args.json:
        args.json.write_text(json.dumps({"params": PARAMS, "outside_value": args.outside, "table": table(per_seed, args.outside), "steps": args.steps,
                                         "seeds": per_seed}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
