"""cProfile of the hand-written env vs gymwright's Python backend under the benchmark loop.

    python benchmarks/profile_python.py cake mapf --steps 20000 --top 20
    python benchmarks/profile_python.py mapf --statements step _observe_all__walker

Prints, per game and backend, the wall time of the profiled loop and the top functions by own
time (tottime), then by cumulative time. The loop is throughput.py's: random legal actions
from the info masks, reset when an episode ends.

`--statements METHOD ...` times instead each top-level statement of those methods of the
generated env class (a loop or an `if` block counts as one statement) with this thread's CPU
clock, in the same loop: microseconds per call of the method, the clock's own cost (measured
first) taken off, largest first. cProfile charges a call overhead to every small function, which
misleads on code made of many cheap numpy calls; this does not add one. (A timed method called
by another timed one adds its own clock readings to the caller's statement: time them apart.)
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import GAMES, Game, ParallelRunner  # noqa: E402

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


def clock_cost_ns(clock: Any = time.thread_time_ns, n: int = 200_000) -> float:
    """What one reading of `clock` costs, in ns (taken off every timed statement)."""
    start = clock()
    for _ in range(n):
        clock()
    return (clock() - start) / n


def timed_method(source: str, cls_name: str, method: str, namespace: dict[str, Any]) -> tuple[Any, list[str], list[int], list[int]]:
    """`method` of class `cls_name` in the generated `source`, rebuilt with a clock reading around
    each top-level statement: (function, statement texts, total ns per statement, calls)."""
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name)
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == method)
    texts, body = [], []
    for stmt in fn.body:
        if isinstance(stmt, ast.Return | ast.Raise) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            body.append(stmt)  # a return leaves before its reading; a docstring costs nothing
            continue
        body += [ast.parse("_t0 = _clock()").body[0], stmt, ast.parse(f"_spent[{len(texts)}] += _clock() - _t0").body[0]]
        texts.append(ast.unparse(stmt).split("\n")[0][:100])
    body.insert(0, ast.parse("_calls[0] += 1").body[0])
    fn.body = body
    spent, calls = [0] * len(texts), [0]
    ns = {**namespace, "_clock": time.thread_time_ns, "_spent": spent, "_calls": calls}
    exec(compile(ast.fix_missing_locations(ast.Module(body=[fn], type_ignores=[])), f"<timed {method}>", "exec"), ns)
    return ns[method], texts, spent, calls


def statements(game: Game, methods: list[str], steps: int, top: int) -> str:
    """Per-statement CPU time of `methods` of the game's generated env along the benchmark loop."""
    compiled = compile_spec(game.spec, game.params)
    env = compiled.parallel_env()
    cls = type(env)
    cost = clock_cost_ns()
    timed, fns = {}, {}
    for m in methods:
        fns[m], texts, spent, calls = timed_method(compiled.source, cls.__name__, m, compiled.module.__dict__)
        timed[m] = (texts, spent, calls)
    env.__class__ = type(cls.__name__, (cls,), fns)  # this env only: the compiled class stays as it is
    runner = ParallelRunner(env)
    runner.run(max(1, steps // 10))
    for _, spent, calls in timed.values():
        spent[:] = [0] * len(spent)
        calls[0] = 0
    runner.run(steps)
    out = io.StringIO()
    for m, (texts, spent, calls) in timed.items():
        n = max(calls[0], 1)
        per = [(max(s / n - cost, 0.0) / 1000, t) for s, t in zip(spent, texts, strict=True)]
        out.write(f"{m}: {calls[0]} calls over {steps} env steps, {sum(p for p, _ in per):.1f} us per call "
                  f"(clock reading {cost:.0f} ns, taken off each statement)\n")
        for us, text in sorted(per, reverse=True)[:top]:
            out.write(f"  {us:7.2f} us  {text}\n")
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("games", nargs="*", default=["cake", "mapf"],
                    choices=[g.key for g in GAMES])
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--backend", choices=["hand", "python", "both"], default="both")
    ap.add_argument("--statements", nargs="+", metavar="METHOD",
                    help="time each statement of these methods of the generated env (e.g. step)")
    args = ap.parse_args(argv)
    for game in (g for g in GAMES if g.key in args.games):
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
