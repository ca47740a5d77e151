"""cProfile of the hand-written env vs gymwright's Python backend under the benchmark loop.

    python benchmarks/profile_python.py cake mapf --steps 20000 --top 20
    python benchmarks/profile_python.py mapf --statements step _observe_all__walker
    python benchmarks/profile_python.py mapf --wrapped _observe_all__walker resolve_moves _observations _resolve
    python benchmarks/profile_python.py cake mapf public_goods --save /tmp/before  # modules of today
    python benchmarks/profile_python.py cake mapf public_goods --against /tmp/before  # after a change

Prints, per game and backend, the wall time of the profiled loop and the top functions by own
time (tottime), then by cumulative time. The loop is throughput.py's: random legal actions
from the info masks, reset when an episode ends.

`--statements METHOD ...` times instead each top-level statement of those methods of the
generated env class (a loop or an `if` block counts as one statement) with this thread's CPU
clock, in the same loop: microseconds per call of the method, the clock's own cost taken off,
largest first (statement_timer.py).

`--wrapped NAME ...` wraps instead each named method of the env's class or function of its module
(the hand-written env's, the generated one's) in a timer and runs the loop: microseconds per env
step spent inside each (calls nested in another wrapped one count in both) and calls per step.
Unlike cProfile it slows nothing else, so the shares are those of the plain loop, give or take
the timer's 0.1 µs a call.

`--save DIR` writes each game's generated module to DIR/<game>.py; `--against DIR` is then the
A/B of a change: the hand-written env, the saved module and the module generated now, in one
process, `--rounds` interleaved rounds of `--round-steps` env steps each, this thread's CPU time,
the minimum per step of each (on a shared machine the minimum is the steadiest figure).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import math
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import saved_modules  # noqa: E402
from statement_timer import clock_cost_ns, report, reset, timed_methods  # noqa: E402
from throughput import GAMES, Game, ParallelRunner  # noqa: E402

from gymwright.compile import compile_spec  # noqa: E402
from gymwright.compile.build import load_module  # noqa: E402


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


def statements(game: Game, methods: list[str], steps: int, top: int) -> str:
    """Per-statement CPU time of `methods` of the game's generated env along the benchmark loop
    (top-level statements: a loop or an `if` block counts as one)."""
    compiled = compile_spec(game.spec, game.params)
    env = compiled.parallel_env()
    cls = type(env)
    cost = clock_cost_ns()
    _, fns, timed = timed_methods(compiled.source, cls.__name__.__eq__, methods, compiled.module.__dict__, blocks=False)
    env.__class__ = type(cls.__name__, (cls,), fns)  # this env only: the compiled class stays as it is
    runner = ParallelRunner(env)
    runner.run(max(1, steps // 10))
    reset(timed)
    runner.run(steps)
    return report(timed, cost, f"{steps} env steps", top)


def _timed(fn: Callable[..., Any], acc: list[int]) -> Callable[..., Any]:
    clock = time.perf_counter_ns

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            acc[0] += clock() - start
            acc[1] += 1
    return timed


def wrapped(env: Any, module: dict[str, Any], names: list[str], steps: int) -> str:
    """Microseconds per env step inside each of `names` (methods of `env`'s class, else functions
    in `module`, the dict of the module its step reads them from) along the benchmark loop; the
    class and the module are left as they were. Names found in neither are skipped (the report
    says so): one list serves the hand-written env and the generated one."""
    cls = type(env)
    spent = {name: [0, 0] for name in names}
    methods = {n: _timed(getattr(cls, n), spent[n]) for n in names if callable(getattr(cls, n, None))}
    functions = {n: module[n] for n in names if n not in methods and callable(module.get(n))}
    env.__class__ = type(cls.__name__, (cls,), methods)  # this env only
    module.update({n: _timed(fn, spent[n]) for n, fn in functions.items()})
    try:
        runner = ParallelRunner(env)
        runner.run(max(1, steps // 10))
        for acc in spent.values():
            acc[:] = [0, 0]
        start = time.perf_counter_ns()
        runner.run(steps)
        total = time.perf_counter_ns() - start
    finally:
        module.update(functions)
    lines = [f"{steps} env steps, {total / steps / 1e3:.1f} us per step (wall clock, timers included)"]
    for name, (ns, calls) in spent.items():
        if name in methods or name in functions:
            lines.append(f"  {ns / steps / 1e3:8.2f} us  {calls / steps:5.2f} calls per step  {name}")
        else:
            lines.append(f"  (no method or function {name})")
    return "\n".join(lines)


def save_sources(games: list[Game], folder: Path, say: bool = False) -> list[Path]:
    """Write each game's generated module to folder/<game>.py (for a later `against`)."""
    return saved_modules.save_sources(games, folder, lambda g: compile_spec(g.spec, g.params).source, say)


def against(game: Game, saved_source: str, rounds: int, steps: int) -> dict[str, float]:
    """CPU microseconds per env step of the hand-written env, of the saved module and of the
    module generated now: the minimum over `rounds` interleaved rounds of `steps` steps each."""
    saved = load_module(saved_source, f"{game.key}_saved").parallel_env(**game.params)
    runners = {"hand": ParallelRunner(game.hand()), "saved": ParallelRunner(saved),
               "now": ParallelRunner(compile_spec(game.spec, game.params).parallel_env())}
    for runner in runners.values():
        runner.run(max(1, steps // 2))  # warm-up
    best = dict.fromkeys(runners, math.inf)
    for _ in range(rounds):
        for name, runner in runners.items():
            start = time.thread_time()
            runner.run(steps)
            best[name] = min(best[name], (time.thread_time() - start) / steps * 1e6)
    return best


def against_line(game: Game, us: dict[str, float]) -> str:
    hand, saved, now = us["hand"], us["saved"], us["now"]
    return (f"{game.key}: hand {hand:.1f} us, saved {saved:.1f} us ({hand / saved:.3f}x hand), "
            f"now {now:.1f} us ({hand / now:.3f}x hand), now vs saved {saved / now:.3f}x")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("games", nargs="*", default=["cake", "mapf"],
                    choices=[g.key for g in GAMES])
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--backend", choices=["hand", "python", "both"], default="both")
    ap.add_argument("--statements", nargs="+", metavar="METHOD",
                    help="time each statement of these methods of the generated env (e.g. step)")
    ap.add_argument("--wrapped", nargs="+", metavar="NAME",
                    help="time each of these methods or module functions of the env inside the loop")
    saved_modules.add_arguments(ap, "modules")
    ap.add_argument("--rounds", type=int, default=25, help="--against: interleaved rounds")
    ap.add_argument("--round-steps", type=int, default=2000, help="--against: env steps per round")
    args = ap.parse_args(argv)
    games = [g for g in GAMES if g.key in args.games]
    if args.save:
        save_sources(games, args.save, say=True)
        return
    if args.against:
        for game in games:
            us = against(game, saved_modules.saved_source(ap, args.against, game), args.rounds, args.round_steps)
            print(against_line(game, us), flush=True)
        return
    for game in games:
        if args.wrapped:
            if args.backend in ("hand", "both"):
                hand = game.hand()
                print(f"===== {game.key}: hand, wrapped =====")
                print(wrapped(hand, sys.modules[type(hand).__module__].__dict__, args.wrapped, args.steps))
            if args.backend in ("python", "both"):
                compiled = compile_spec(game.spec, game.params)
                print(f"===== {game.key}: python, wrapped =====")
                print(wrapped(compiled.parallel_env(), compiled.module.__dict__, args.wrapped, args.steps))
            continue
        if args.statements:
            print(f"===== {game.key}: python, per statement =====")
            print(statements(game, args.statements, args.steps, args.top))
            continue
        if args.backend in ("hand", "both"):
            print(f"===== {game.key}: hand =====")
            print(profile(ParallelRunner(game.hand()), args.steps, args.top))
        if args.backend in ("python", "both"):
            env = compile_spec(game.spec, game.params).parallel_env()
            print(f"===== {game.key}: python =====")
            print(profile(ParallelRunner(env), args.steps, args.top))


if __name__ == "__main__":
    main()
