"""`profile_python.py --statements`: the timed copy of a generated method behaves like the method
(same trajectory) and is charged once per call, statement by statement.

Run with `pytest benchmarks/test_profile_python.py` (not part of the main suite).
"""

from __future__ import annotations

import re

import numpy as np
import profile_python
from throughput import GAMES, ParallelRunner

from gymwright.compile import compile_spec


def test_timed_step_plays_the_same_episode_and_counts_each_call() -> None:
    game = next(g for g in GAMES if g.key == "cake")
    compiled = compile_spec(game.spec, game.params)
    plain, timed = compiled.parallel_env(), compiled.parallel_env()
    fn, texts, spent, calls = profile_python.timed_method(compiled.source, type(plain).__name__, "step",
                                                          compiled.module.__dict__)
    assert any(t.startswith("terminated = ") for t in texts) and len(spent) == len(texts)
    a, b = ParallelRunner(plain, seed=3), ParallelRunner(timed, seed=3)
    timed.step = lambda actions: fn(timed, actions)
    a.run(5)
    b.run(5)
    assert calls[0] == 5 and all(s >= 0 for s in spent) and sum(spent) > 0
    np.testing.assert_array_equal(plain.state(), timed.state())


def test_statements_report_lists_the_costs_of_each_method() -> None:
    game = next(g for g in GAMES if g.key == "mapf")
    out = profile_python.statements(game, ["step"], steps=50, top=5)
    head = out.splitlines()[0]
    assert re.match(r"step: 50 calls over 50 env steps, [\d.]+ us per call", head), head
    rows = out.splitlines()[1:]
    assert len(rows) == 5 and all(re.match(r"\s+[\d.]+ us  \S", r) for r in rows)
    assert any("_observe_all__walker" in r for r in rows)  # the observation is among the top costs
    step = type(compile_spec(game.spec, game.params).parallel_env()).step
    assert not step.__code__.co_filename.startswith("<timed")  # the compiled class is left as it was
