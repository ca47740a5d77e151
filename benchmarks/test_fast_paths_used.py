"""The fast paths the throughput figures rely on are the ones the generators write: each check
reads generated source, so it guards speed, not behaviour (the differential tests and
tests/compile/test_pygen_cake_speed_equivalence.py hold each fast path equal to what it
replaces). A failure here means a figure of benchmarks/README.md's throughput section may no
longer hold: run `python benchmarks/throughput.py --clock cpu`.

Run with `pytest -m '' benchmarks/test_fast_paths_used.py` (CI runs the benchmarks' tests).
"""

from __future__ import annotations

from gymwright.compile import compile_spec
from gymwright.compile.batch import batch_source


def test_the_batch_lowering_of_cake_uses_the_look_ups() -> None:
    source = batch_source("cake_negotiation", {})
    assert "b_pow_int(self._powers, 'discount', p.discount, v.round, 0, 51)" in source
    assert "self._powers = BatchPowers()" in source
    assert "b_pick(v.share, v.proposer)" in source
    assert "b_turn_rows(TURN_ROWS_bargainer, code, active, 0, 2, m)" in source
    assert "np.power(" not in source.split("# ---- generated from the spec")[1]


def test_a_spec_without_param_powers_carries_no_table() -> None:
    assert "BatchPowers" not in batch_source("mapf_frozenlake", {"size": 8, "n_agents": 4})


def test_the_python_step_of_mapf_reads_flags_and_move_choices_from_lists() -> None:
    compiled = compile_spec("mapf_frozenlake", {"size": 8, "n_agents": 4})
    src = compiled.source
    assert "reached_ = v.reached.tolist()" in src and "if (not (reached_[me] or fell_[me])):" in src
    assert "x0_0 = float(arrived_[0])" in src and "v.left = [False] * 4" in src
    assert "np.broadcast_to(False" not in src  # constant starts are plain np.zeros


def test_cake_caches_one_mask_list_per_turn_and_phase() -> None:
    compiled = compile_spec("cake_negotiation")
    assert "given = (active, legal_bargainer_0, legal_bargainer_1)" in compiled.source
    env = compiled.parallel_env()
    env.reset(seed=0)
    first = env._masks
    for actions in ({"bargainer_0": 5}, {"bargainer_1": 12}, {"bargainer_1": 5}, {"bargainer_0": 12}):
        env.step(actions)  # propose, reject, propose, reject: bargainer_0 proposes again, as at the start
    assert env._masks is first  # the same cached list
    assert len([k for k in env._mask_cache if not isinstance(k[0], str)]) == 4  # (active, phase) pairs seen
