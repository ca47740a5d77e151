"""Measure CBS and pool generation costs: ``python -m gymwright.mapf.measure [--pools]``.

Prints markdown tables (the ones in ``README.md``). Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gymwright.mapf.cbs import solve
from gymwright.mapf.errors import SearchLimitError, UnsolvableError
from gymwright.mapf.instances import GENERATE_NODE_LIMIT, draw_layout
from gymwright.mapf.pool import PoolConfig, make_pool


def solve_stats(size: int, n_agents: int, hole_ratio: float, draws: int, seed: int) -> str:
    """One table row: solve times over ``draws`` random candidates of one size and agent count."""
    rng = np.random.default_rng(seed)
    times, waits, joint, unsolvable, limit, spent = [], 0, 0, 0, 0, 0.0
    for _ in range(draws):
        layout = draw_layout(size, n_agents, hole_ratio, rng)
        if layout is None:
            continue
        start = time.perf_counter()
        try:
            plan = solve(*layout, node_limit=GENERATE_NODE_LIMIT)
        except UnsolvableError:
            unsolvable += 1
        except SearchLimitError:
            limit += 1
        else:
            times.append(time.perf_counter() - start)
            waits += plan.needs_wait
            joint += plan.method == "joint"
        spent += time.perf_counter() - start
    ms = np.array(times) * 1e3
    return (
        f"| {size}x{size} | {n_agents} | {len(ms)} | {np.mean(ms):.1f} | {np.median(ms):.1f} | "
        f"{np.percentile(ms, 95):.1f} | {ms.max():.0f} | {waits / max(1, len(ms)):.2f} | "
        f"{unsolvable} | {limit} | {joint} | {spent / draws * 1e3:.1f} |"
    )


def solve_table(draws: int, hole_ratio: float) -> None:
    print(f"hole_ratio {hole_ratio}, {draws} random candidates per row, node limit {GENERATE_NODE_LIMIT}")
    print("| map | agents | solved | mean ms | median ms | p95 ms | max ms | natural wait share "
          "| no plan | limit | joint | ms per candidate |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for size in (3, 4, 5, 6, 8, 10):
        for n_agents in (2, 3, 4, 5):
            print(solve_stats(size, n_agents, hole_ratio, draws, seed=size * 10 + n_agents), flush=True)


def pool_table(n: int) -> None:
    print(f"| config (size, agents, holes, wait) | {n} instances: seconds | wait share |")
    print("|---|---|---|")
    for config in (PoolConfig(4, 2, 0.2, 0.5), PoolConfig(6, 3, 0.2, 0.5), PoolConfig(8, 4, 0.2, 0.5),
                   PoolConfig(10, 2, 0.2, 0.25), PoolConfig(10, 5, 0.2, 0.75)):
        start = time.perf_counter()
        pool = make_pool(config, n, seed=0, cache=False)
        took = time.perf_counter() - start
        c = config
        print(f"| {c.size}, {c.n_agents}, {c.hole_ratio}, {c.wait_ratio} | {took:.1f} | {pool.wait_share:.2f} |",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=60)
    parser.add_argument("--holes", type=float, default=0.2)
    parser.add_argument("--pools", type=int, default=0, help="also time pools of this many instances")
    args = parser.parse_args()
    solve_table(args.draws, args.holes)
    if args.pools:
        pool_table(args.pools)


if __name__ == "__main__":
    main()
