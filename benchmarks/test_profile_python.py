"""`profile_python.py --statements`: the timed copy of a generated method behaves like the method
(same trajectory) and is charged once per call, statement by statement.

Run with `pytest benchmarks/test_profile_python.py` (not part of the main suite).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import profile_python
import pytest
import statement_timer
from throughput import GAMES, ParallelRunner

from gymwright.compile import compile_spec


def test_timed_step_plays_the_same_episode_and_counts_each_call() -> None:
    game = next(g for g in GAMES if g.key == "cake")
    compiled = compile_spec(game.spec, game.params)
    plain, timed = compiled.parallel_env(), compiled.parallel_env()
    _, fns, clocked = statement_timer.timed_methods(compiled.source, type(plain).__name__.__eq__, ["step"],
                                                    compiled.module.__dict__, blocks=False)
    fn, (texts, spent, calls) = fns["step"], clocked["step"]
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


def test_against_times_the_saved_module_the_module_of_now_and_the_hand_env(tmp_path: Path) -> None:
    game = next(g for g in GAMES if g.key == "cake")
    (path,) = profile_python.save_sources([game], tmp_path / "before")
    source = compile_spec(game.spec, game.params).source
    assert path == tmp_path / "before" / "cake.py" and path.read_text() == source
    edited = source.replace("Do not edit.", "Do not edit (saved).")  # another module, the same game
    us = profile_python.against(game, edited, rounds=2, steps=30)
    assert set(us) == {"hand", "saved", "now"} and all(0 < x < 1e5 for x in us.values())
    line = profile_python.against_line(game, us)
    assert re.fullmatch(r"cake: hand [\d.]+ us, saved [\d.]+ us \([\d.]+x hand\), now [\d.]+ us "
                        r"\([\d.]+x hand\), now vs saved [\d.]+x", line), line


def test_against_without_a_saved_module_says_how_to_make_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        profile_python.main(["cake", "--against", str(tmp_path)])
    err = capsys.readouterr().err
    assert "no cake.py there" in err and f"--save {tmp_path}" in err


def test_statements_of_an_unknown_method_name_the_methods_there_are() -> None:
    with pytest.raises(SystemExit, match=r"no method `_observe`; its methods: .*_observe_walker"):
        profile_python.statements(next(g for g in GAMES if g.key == "mapf"), ["_observe"], steps=10, top=3)


def test_wrapped_times_methods_and_module_functions_and_leaves_them_as_they_were() -> None:
    game = next(g for g in GAMES if g.key == "mapf")
    compiled = compile_spec(game.spec, game.params)
    module = compiled.module.__dict__
    resolve = module["resolve_moves"]
    out = profile_python.wrapped(compiled.parallel_env(), module, ["step", "resolve_moves", "_resolve"], steps=40)
    head, step, moves, missing = out.splitlines()
    assert re.fullmatch(r"40 env steps, [\d.]+ us per step \(wall clock, timers included\)", head), head
    assert re.fullmatch(r"\s+[\d.]+ us   1\.00 calls per step  step", step), step
    assert re.fullmatch(r"\s+[\d.]+ us   1\.00 calls per step  resolve_moves", moves), moves  # one a step
    assert float(moves.split()[0]) < float(step.split()[0])  # called inside step: part of its time
    assert missing == "  (no method or function _resolve)"  # the hand-written env's name: skipped here
    assert module["resolve_moves"] is resolve and type(compiled.parallel_env()).step.__name__ == "step"
