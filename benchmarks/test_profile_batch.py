"""`profile_batch.py --statements`: the timed copies of a generated batch env's methods behave like
the methods (same trajectory) and charge every statement, those inside blocks too.

Run with `pytest benchmarks/test_profile_batch.py` (not part of the main suite).
"""

from __future__ import annotations

import re

import numpy as np
import profile_batch
import pytest
import statement_timer
from throughput import GAMES, BatchRunner

from gymwright.compile.batch import batch_source
from gymwright.compile.build import load_module


def test_timed_methods_play_the_same_steps_and_time_statements_inside_blocks() -> None:
    game = next(g for g in GAMES if g.key == "cake")
    source = batch_source(game.spec, game.params)
    module = load_module(source, f"{game.spec}_batch")
    name, fns, timed = statement_timer.timed_methods(source, lambda n: n.endswith("BatchEnv"), ["step", "_init_copies"],
                                                     module.__dict__, blocks=True)
    plain, clocked = module.BatchEnv(16, game.params), module.BatchEnv(16, game.params)
    clocked.__class__ = type(name, (type(clocked),), fns)
    a, b = BatchRunner(plain, seed=3), BatchRunner(clocked, seed=3)
    a.run(7)
    b.run(7)
    np.testing.assert_array_equal(plain.state(), clocked.state())
    np.testing.assert_array_equal(plain.obs_buf, clocked.obs_buf)
    texts, spent, calls = timed["step"]
    assert calls[0] == 7 and sum(spent) > 0
    # the statements of step's `with np.errstate(...)` block are timed one by one
    assert any(t.startswith("rewards, terms = self._rewards(") for t in texts)
    assert timed["_init_copies"][2][0] >= 1  # cake's copies end within 7 steps, then restart


def test_statements_report_names_the_costs_largest_first() -> None:
    game = next(g for g in GAMES if g.key == "mapf")
    out = profile_batch.statements(game, ["_observe"], batch_size=32, calls=6, top=4)
    head, *rows = out.splitlines()
    assert re.match(r"_observe: \d+ calls over 6 batch steps \(B=32\), [\d.]+ us per call", head), head
    costs = [float(r.split()[0]) for r in rows]
    assert len(costs) == 4 and costs == sorted(costs, reverse=True)


def test_save_then_against_compares_the_saved_module_with_todays(tmp_path, capsys) -> None:
    """`--save DIR` writes each game's batch module; `--against DIR` steps it beside today's, in
    interleaved rounds, and prints both figures with their ratio and page faults; a game not
    saved is refused with the command that would save it."""
    profile_batch.main(["cake", "--save", str(tmp_path)])
    assert (tmp_path / "cake.py").read_text() == batch_source("cake_negotiation", {})
    game = next(g for g in GAMES if g.key == "cake")
    ab = profile_batch.against(game, (tmp_path / "cake.py").read_text(), batch_size=16, rounds=2, calls=3)
    assert set(ab) == {"saved", "now"} and all(r["min"] <= r["median"] for r in ab.values())
    capsys.readouterr()
    profile_batch.main(["cake", "--against", str(tmp_path), "--batch-size", "16", "--calls", "3", "--rounds", "2"])
    line = capsys.readouterr().out.strip()
    assert re.fullmatch(r"cake B=16: saved [\d.]+ ms a step \(min [\d.]+, \d+ page faults\), now [\d.]+ ms "
                        r"\(min [\d.]+, \d+ page faults\), now / saved [\d.]+", line), line
    with pytest.raises(SystemExit):
        profile_batch.main(["mapf", "--against", str(tmp_path)])
    assert f"--save {tmp_path}" in capsys.readouterr().err
