"""cProfile of the hand-written env vs gymwright's Python backend under the benchmark loop.

    python benchmarks/profile_python.py cake mapf --steps 20000 --top 20

Prints, per game and backend, the wall time of the profiled loop and the top functions by own
time (tottime), then by cumulative time. The loop is throughput.py's: random legal actions
from the info masks, reset when an episode ends.
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

from throughput import GAMES, ParallelRunner  # noqa: E402

from gymwright.compile import compile_spec  # noqa: E402


def profile(runner: ParallelRunner, steps: int, top: int) -> str:
    runner.run(max(1, steps // 10))  # warm-up
    prof = cProfile.Profile()
    start = time.perf_counter()
    prof.enable()
    runner.run(steps)
    prof.disable()
    wall = time.perf_counter() - start
    out = io.StringIO()
    out.write(f"profiled loop: {steps} env steps in {wall:.2f} s\n")
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("games", nargs="*", default=["cake", "mapf"],
                    choices=[g.key for g in GAMES])
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--backend", choices=["hand", "python", "both"], default="both")
    args = ap.parse_args(argv)
    for game in (g for g in GAMES if g.key in args.games):
        if args.backend in ("hand", "both"):
            print(f"===== {game.key}: hand =====")
            print(profile(ParallelRunner(game.hand()), args.steps, args.top))
        if args.backend in ("python", "both"):
            env = compile_spec(game.spec, game.params).parallel_env()
            print(f"===== {game.key}: python =====")
            print(profile(ParallelRunner(env), args.steps, args.top))


if __name__ == "__main__":
    main()
