"""cProfile of the hand-written env vs gymwright's Python backend under the benchmark loop.

    python benchmarks/profile_python.py cake mapf --steps 20000 --top 20
    python benchmarks/profile_python.py mapf --statements step _observe_all__walker
    python benchmarks/profile_python.py cake mapf public_goods --save /tmp/before  # modules of today
    python benchmarks/profile_python.py cake mapf public_goods --against /tmp/before  # after a change

Prints, per game and backend, the wall time of the profiled loop and the top functions by own
time (tottime), then by cumulative time. The loop is throughput.py's: random legal actions
from the info masks, reset when an episode ends.

`--statements METHOD ...` times instead each top-level statement of those methods of the
generated env class (a loop or an `if` block counts as one statement) with this thread's CPU
clock, in the same loop: microseconds per call of the method, the clock's own cost (measured
first) taken off, largest first. cProfile charges a call overhead to every small function, which
misleads on code made of many cheap numpy calls; this does not add one. (A timed method called
by another timed one adds its own clock readings to the caller's statement: time them apart.)

`--save DIR` writes each game's generated module to DIR/<game>.py; `--against DIR` is then the
A/B of a change: the hand-written env, the saved module and the module generated now, in one
process, `--rounds` interleaved rounds of `--round-steps` env steps each, this thread's CPU time,
the minimum per step of each (on a shared machine the minimum is the steadiest figure).
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import io
import math
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import GAMES, Game, ParallelRunner  # noqa: E402

from gymwright.atomic import write_atomic  # noqa: E402
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
    methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    if method not in methods:
        raise SystemExit(f"--statements: the generated class {cls_name} has no method `{method}`; "
                         f"its methods: {', '.join(sorted(methods))}")
    fn = methods[method]
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


def save_sources(games: list[Game], folder: Path) -> list[Path]:
    """Write each game's generated module to folder/<game>.py (for a later `against`)."""
    folder.mkdir(parents=True, exist_ok=True)
    return [write_atomic(folder / f"{g.key}.py", compile_spec(g.spec, g.params).source) for g in games]


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
    ap.add_argument("--save", type=Path, metavar="DIR", help="write the generated modules to DIR/<game>.py")
    ap.add_argument("--against", type=Path, metavar="DIR", help="A/B: the modules saved in DIR vs today's")
    ap.add_argument("--rounds", type=int, default=25, help="--against: interleaved rounds")
    ap.add_argument("--round-steps", type=int, default=2000, help="--against: env steps per round")
    args = ap.parse_args(argv)
    games = [g for g in GAMES if g.key in args.games]
    if args.save:
        for path in save_sources(games, args.save):
            print(f"wrote {path}")
        return
    if args.against:
        for game in games:
            path = args.against / f"{game.key}.py"
            if not path.is_file():
                ap.error(f"--against {args.against}: no {path.name} there (write it first with --save {args.against})")
            print(against_line(game, against(game, path.read_text(), args.rounds, args.round_steps)), flush=True)
        return
    for game in games:
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
