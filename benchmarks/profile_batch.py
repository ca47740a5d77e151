"""cProfile of gymwright's batch backend under the benchmark loop (random legal actions).

    python benchmarks/profile_batch.py cake mapf --batch-size 8192 --calls 200 --top 25
    python benchmarks/profile_batch.py mapf --statements step _observe _init_copies
    python benchmarks/profile_batch.py cake mapf public_goods --save /tmp/before  # modules of today
    python benchmarks/profile_batch.py cake mapf public_goods --against /tmp/before  # after a change

Prints, per game, the wall time per batch step of the profiled loop, the share of it spent in
the harness's sampler, and the top functions by own time (tottime), then by cumulative time.
The loop is throughput.py's BatchRunner: auto-reset included.

`--statements METHOD ...` times instead each statement of those methods of the generated batch
env class with this thread's CPU clock, in the same loop (statements inside `with`, `if` and
`for` blocks one by one: a batch `step` is mostly one `with np.errstate(...)` block):
microseconds per call of the method, the clock's own cost taken off, largest first. A timed
method called by another timed one adds its clock readings to the caller's statement; a
statement after which the method returns early (a `return` inside a block) is not charged.

`--save DIR` writes each game's generated batch module to DIR/<game>.py; `--against DIR` is then
the A/B of a change: the saved module and the module generated now, each a batch of
`--batch-size` copies in one process, `--rounds` interleaved rounds of `--calls` batch steps
(the benchmark loop, sampler included), this thread's CPU time: the median per step of each
(and the minimum), their ratio, and the minor page faults per step of each (a fresh
multi-megabyte temporary costs its pages each time the allocator hands it back).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import saved_modules  # noqa: E402
from statement_timer import clock_cost_ns, report, reset, timed_methods  # noqa: E402
from throughput import GAMES, BatchRunner, Game, random_legal_batch  # noqa: E402

from gymwright.compile.batch import batch_source, compile_batch  # noqa: E402
from gymwright.compile.build import load_module  # noqa: E402


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


def statements(game: Game, methods: list[str], batch_size: int, calls: int, top: int) -> str:
    """Per-statement CPU time of `methods` of the game's generated batch env along the loop."""
    source = batch_source(game.spec, game.params)
    module = load_module(source, f"{game.spec}_batch")
    name, fns, timed = timed_methods(source, lambda n: n.endswith("BatchEnv"), methods, module.__dict__, blocks=True)
    benv = module.BatchEnv(batch_size, game.params)
    benv.__class__ = type(name, (type(benv),), fns)  # this env only: the generated class stays as it is
    runner = BatchRunner(benv)
    cost = clock_cost_ns()
    runner.run(max(1, calls // 10))
    reset(timed)
    runner.run(calls)
    return report(timed, cost, f"{calls} batch steps (B={batch_size})", top, width=9, digits=1)


def save_sources(games: list[Game], folder: Path, say: bool = False) -> list[Path]:
    """Write each game's generated batch module to folder/<game>.py (for a later `against`)."""
    return saved_modules.save_sources(games, folder, lambda g: batch_source(g.spec, g.params), say)


def against(game: Game, saved_source: str, batch_size: int, rounds: int, calls: int) -> dict[str, dict[str, float]]:
    """Per runner ("saved", "now"): the median and minimum CPU milliseconds per batch step over
    `rounds` interleaved rounds of `calls` steps, and the minor page faults per step (median)."""
    saved = load_module(saved_source, f"{game.key}_batch_saved").BatchEnv(batch_size, game.params)
    runners = {"saved": BatchRunner(saved), "now": BatchRunner(compile_batch(game.spec, game.params, batch_size=batch_size))}
    for runner in runners.values():
        runner.run(max(1, calls // 2))  # warm-up
    ms: dict[str, list[float]] = {name: [] for name in runners}
    faults: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(rounds):
        for name, runner in runners.items():
            before, start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.thread_time()
            runner.run(calls)
            ms[name].append((time.thread_time() - start) / calls * 1e3)
            faults[name].append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls)
    return {name: {"median": statistics.median(ms[name]), "min": min(ms[name]),
                   "faults": statistics.median(faults[name])} for name in runners}


def against_line(game: Game, batch_size: int, ab: dict[str, dict[str, float]]) -> str:
    saved, now = ab["saved"], ab["now"]
    return (f"{game.key} B={batch_size}: saved {saved['median']:.3f} ms a step (min {saved['min']:.3f}, "
            f"{saved['faults']:.0f} page faults), now {now['median']:.3f} ms (min {now['min']:.3f}, "
            f"{now['faults']:.0f} page faults), now / saved {now['median'] / saved['median']:.3f}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("games", nargs="*", help="cake, mapf, public_goods (default: all)")
    ap.add_argument("--batch-size", type=int, default=8192)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--statements", nargs="+", metavar="METHOD",
                    help="time each statement of these methods of the generated batch env (e.g. step _observe)")
    saved_modules.add_arguments(ap, "batch modules")
    ap.add_argument("--rounds", type=int, default=8, help="--against: interleaved rounds of --calls steps")
    args = ap.parse_args(argv)
    unknown = set(args.games) - {g.key for g in GAMES}
    if unknown:
        ap.error(f"unknown game(s) {sorted(unknown)}; choose from {[g.key for g in GAMES]}")
    games = [g for g in GAMES if g.key in (args.games or [g.key for g in GAMES])]
    if args.save:
        save_sources(games, args.save, say=True)
        return
    if args.against:
        for game in games:
            ab = against(game, saved_modules.saved_source(ap, args.against, game), args.batch_size, args.rounds, args.calls)
            print(against_line(game, args.batch_size, ab), flush=True)
        return
    for game in games:
        if args.statements:
            print(f"===== {game.key}: batch B={args.batch_size}, per statement =====")
            print(statements(game, args.statements, args.batch_size, args.calls, args.top))
            continue
        benv = compile_batch(game.spec, game.params, batch_size=args.batch_size)
        print(f"===== {game.key}: batch B={args.batch_size} =====")
        print(profile(BatchRunner(benv), args.calls, args.top))


if __name__ == "__main__":
    main()
