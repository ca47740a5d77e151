"""Why a MAPF-FrozenLake policy's held-out episodes fail, episode by episode.

    python benchmarks/mapf_failures.py runs/engineer-benchmark/bounds/fixed-5-seed0 --episodes 150
    python benchmarks/mapf_failures.py runs/engineer-benchmark/bounds/memory-30-seed0 --variant memory

Plays the held-out cells of `engineer.py`'s `in_distribution` experiment (or `--experiment
generalization`) with the policy, in the Python backend (the same episodes, seeds 900,000 on, as
the experiment's held-out evaluation), and sorts each episode into one outcome:

- `valid`: every walker home, no hole, no conflict;
- `hole`: a walker fell into a hole; `conflict`: a move was blocked by another walker;
- `timeout, no path left`: when the episode was cut off, some walker still on its way had no path
  to its goal: the holes and the walkers that will never move again (on their goals) cut every
  route. A walker that parks on its goal too early, on another walker's only way, loses the
  episode for both; an optimal joint plan has it wait before it parks;
- `timeout, stuck`: a path was left, and no walker still on its way moved in the last 10 steps;
- `timeout, wandering`: a path was left and the walkers still moved (mostly back and forth).

Prints the shares per cell and overall; `--json` writes them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import engineer  # noqa: E402

OUTCOMES = ("valid", "hole", "conflict", "timeout, no path left", "timeout, stuck", "timeout, wandering")
TAIL = 10


def has_path(blocked: np.ndarray, start: tuple[int, int], goal: tuple[int, int], walls: set[tuple[int, int]]) -> bool:
    """A 4-connected route from `start` to `goal` over cells neither `blocked` (holes) nor in `walls`."""
    height, width = blocked.shape
    seen, todo = {start}, deque([start])
    while todo:
        cell = todo.popleft()
        if cell == goal:
            return True
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            nxt = (cell[0] + dr, cell[1] + dc)
            if (0 <= nxt[0] < height and 0 <= nxt[1] < width and nxt not in seen and not blocked[nxt]
                    and nxt not in walls):
                seen.add(nxt)
                todo.append(nxt)
    return False


def outcome(v: Any, blocked: np.ndarray, tail: np.ndarray) -> str:
    """The outcome of a finished episode from the env's state `v` and the last positions `tail`
    (steps, walkers, 2)."""
    reached, fell, clashed = np.asarray(v.reached), np.asarray(v.fell), np.asarray(v.clashed)
    if reached.all() and not clashed.any():
        return "valid"
    if fell.any():
        return "hole"
    if clashed.any():
        return "conflict"
    pos, goal = np.asarray(v.pos), np.asarray(v.goal)
    parked = {tuple(int(x) for x in pos[j]) for j in np.flatnonzero(reached)}
    on_way = np.flatnonzero(~reached)
    if any(not has_path(blocked, tuple(int(x) for x in pos[i]), tuple(int(x) for x in goal[i]), parked)
           for i in on_way):
        return "timeout, no path left"
    moved = (tail[1:, on_way] != tail[:-1, on_way]).any()
    return "timeout, wandering" if moved else "timeout, stuck"


def play_cell(policy: Any, params: dict[str, Any], episodes: int, seed: int = 900_000,
              spec: Any = engineer.SPEC) -> dict[str, float]:
    """The share of each outcome over `episodes` episodes of one held-out cell of `spec`."""
    from gymwright.compile import compile_spec

    compiled = compile_spec(spec, {**params, **engineer.held_out_pool(params)})
    env = compiled.parallel_env()
    hole_of = np.asarray(compiled.module.GRID_BLOCKED, dtype=bool)
    counts = dict.fromkeys(OUTCOMES, 0)
    for ep in range(episodes):
        obs, infos = env.reset(seed=seed + ep)
        agents, trail = list(env.possible_agents), []
        while env.agents:
            o = np.stack([obs[a] for a in agents])[None]
            m = np.stack([infos[a]["action_mask"] for a in agents])[None].astype(bool)
            act = policy.act(o, m)[0]
            obs, _, _, _, infos = env.step({a: int(act[i]) for i, a in enumerate(agents)})
            trail.append(np.asarray(env.v.pos).copy())
        counts[outcome(env.v, hole_of[np.asarray(env.v.tiles)], np.array(trail[-TAIL:]))] += 1
    return {k: n / episodes for k, n in counts.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("policy", help="a checkpoint or run folder (e.g. a `--bounds` run of engineer.py)")
    ap.add_argument("--experiment", default="in_distribution", choices=sorted(engineer.EXPERIMENTS))
    ap.add_argument("--variant", default="fixed", help="the `engineer.py --bounds` variant the policy was trained "
                    "as (its spec: e.g. memory, goal-in-the-way); default: the library spec")
    ap.add_argument("--episodes", type=int, default=150, help="episodes per held-out cell")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    import torch

    from gymwright.train import load_policy

    torch.set_num_threads(1)
    torch.manual_seed(0)
    policy = load_policy(args.policy)
    spec = engineer.bound_setup(engineer.pick_variants(args.variant)[-1], 0)[0]
    cells = {cell: play_cell(policy, params, args.episodes, spec=spec)
             for cell, params in engineer.EXPERIMENTS[args.experiment].held_out.items()}
    cells["overall"] = {k: float(np.mean([c[k] for c in cells.values()])) for k in OUTCOMES}
    print("| cell | " + " | ".join(OUTCOMES) + " |\n|---|" + "---:|" * len(OUTCOMES))
    for cell, shares in cells.items():
        print(f"| {cell} | " + " | ".join(f"{shares[k]:.3f}" for k in OUTCOMES) + " |")
    if args.json:
        args.json.write_text(json.dumps({"policy": str(args.policy), "variant": args.variant, "episodes": args.episodes, "cells": cells},
                                        indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
