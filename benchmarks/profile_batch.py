"""cProfile of gymwright's batch backend under the benchmark loop (random legal actions).

    python benchmarks/profile_batch.py cake mapf --batch-size 8192 --calls 200 --top 25

Prints, per game, the wall time per batch step of the profiled loop, the share of it spent in
the harness's sampler, and the top functions by own time (tottime), then by cumulative time.
The loop is throughput.py's BatchRunner: auto-reset included.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import GAMES, BatchRunner, random_legal_batch  # noqa: E402

from gymwright.compile.batch import compile_batch  # noqa: E402


def sampler_ms(runner: BatchRunner, calls: int) -> float:
    """Milliseconds per call of the harness's sampler alone on the runner's current masks."""
    masks = runner.masks.copy()
    start = time.perf_counter()
    for _ in range(calls):
        random_legal_batch(masks, runner.rng)
    return (time.perf_counter() - start) / calls * 1e3


def profile(runner: BatchRunner, calls: int, top: int) -> str:
    runner.run(max(1, calls // 10))  # warm-up
    start = time.perf_counter()
    runner.run(calls)
    wall = time.perf_counter() - start
    prof = cProfile.Profile()
    prof.enable()
    runner.run(calls)
    prof.disable()
    out = io.StringIO()
    out.write(f"unprofiled loop: {wall / calls * 1e3:.2f} ms per batch step "
              f"(B={runner.batch_size}); sampler alone: {sampler_ms(runner, calls):.2f} ms\n")
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("games", nargs="*", help="cake, mapf, public_goods (default: all)")
    ap.add_argument("--batch-size", type=int, default=8192)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args(argv)
    unknown = set(args.games) - {g.key for g in GAMES}
    if unknown:
        ap.error(f"unknown game(s) {sorted(unknown)}; choose from {[g.key for g in GAMES]}")
    for game in (g for g in GAMES if g.key in (args.games or [g.key for g in GAMES])):
        benv = compile_batch(game.spec, game.params, batch_size=args.batch_size)
        print(f"===== {game.key}: batch B={args.batch_size} =====")
        print(profile(BatchRunner(benv), args.calls, args.top))


if __name__ == "__main__":
    main()
