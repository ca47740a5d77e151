"""Per-statement CPU time of a generated env's methods: the one home of `--statements` in
profile_python.py (the Python backend) and profile_batch.py (the batch backend).

`timed_methods` rebuilds methods of a class in generated source with a reading of this thread's
CPU clock around each statement (optionally inside `with`, `if` and `for` blocks too), `reset`
zeroes what they counted after a warm-up, and `report` lists microseconds per call of each
method, the clock's own cost (`clock_cost_ns`) taken off every statement, largest first.
cProfile charges a call overhead to every small function, which misleads on code made of many
cheap numpy calls; this does not add one. A timed method called by another timed one adds its
own clock readings to the caller's statement: time them apart.
"""

from __future__ import annotations

import ast
import io
import time
from collections.abc import Callable
from typing import Any

Timed = dict[str, tuple[list[str], list[int], list[int]]]
"""method -> (statement texts, total ns per statement, [calls])"""


def clock_cost_ns(clock: Any = time.thread_time_ns, n: int = 200_000) -> float:
    """What one reading of `clock` costs, in ns (taken off every timed statement)."""
    start = clock()
    for _ in range(n):
        clock()
    return (clock() - start) / n


def _timed_body(body: list[ast.stmt], texts: list[str], blocks: bool) -> list[ast.stmt]:
    """`body` with a clock reading around each statement (`blocks`: `with`, `if`, `for` entered)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if blocks and isinstance(stmt, ast.With | ast.If | ast.For):
            stmt.body = _timed_body(stmt.body, texts, blocks)
            if isinstance(stmt, ast.If) and stmt.orelse:
                stmt.orelse = _timed_body(stmt.orelse, texts, blocks)
            out.append(stmt)
            continue
        if isinstance(stmt, ast.Return | ast.Raise) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            out.append(stmt)  # a return leaves before its reading; a docstring costs nothing
            continue
        out += [ast.parse("_t0 = _clock()").body[0], stmt, ast.parse(f"_spent[{len(texts)}] += _clock() - _t0").body[0]]
        texts.append(ast.unparse(stmt).split("\n")[0][:100])
    return out


def timed_methods(source: str, is_class: Callable[[str], bool], methods: list[str], namespace: dict[str, Any],
                  blocks: bool) -> tuple[str, dict[str, Any], Timed]:
    """The first class of the generated `source` whose name `is_class` accepts, and its `methods`
    rebuilt with a clock reading around each statement: (class name, functions, timings)."""
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and is_class(n.name))
    defs = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    fns, timed = {}, {}
    for m in methods:
        if m not in defs:
            raise SystemExit(f"--statements: the generated class {cls.name} has no method `{m}`; "
                             f"its methods: {', '.join(sorted(defs))}")
        fn, texts = defs[m], []
        fn.body = [ast.parse("_calls[0] += 1").body[0], *_timed_body(fn.body, texts, blocks)]
        spent, calls = [0] * len(texts), [0]
        ns = {**namespace, "_clock": time.thread_time_ns, "_spent": spent, "_calls": calls}
        exec(compile(ast.fix_missing_locations(ast.Module(body=[fn], type_ignores=[])), f"<timed {m}>", "exec"), ns)
        fns[m], timed[m] = ns[m], (texts, spent, calls)
    return cls.name, fns, timed


def reset(timed: Timed) -> None:
    """Forget what the timed methods counted so far (after a warm-up)."""
    for _, spent, calls in timed.values():
        spent[:] = [0] * len(spent)
        calls[0] = 0


def report(timed: Timed, cost_ns: float, over: str, top: int, width: int = 7, digits: int = 2) -> str:
    """Per method, `top` statements by microseconds per call; `over` says what the calls ran over."""
    out = io.StringIO()
    for m, (texts, spent, calls) in timed.items():
        n = max(calls[0], 1)
        per = [(max(s / n - cost_ns, 0.0) / 1000, t) for s, t in zip(spent, texts, strict=True)]
        out.write(f"{m}: {calls[0]} calls over {over}, {sum(p for p, _ in per):.1f} us per call "
                  f"(clock reading {cost_ns:.0f} ns, taken off each statement)\n")
        for us, text in sorted(per, reverse=True)[:top]:
            out.write(f"  {us:{width}.{digits}f} us  {text}\n")
    return out.getvalue()
