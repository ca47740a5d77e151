"""`step` keeps the draws' step counter (`v._rng.step`, which picks each step's numbers) whenever
the module draws random numbers after `reset`, and, in a spec without mechanics modules, only
then; on every library spec."""

from __future__ import annotations

import re

import pytest

from gymwright.compile import compile_spec
from tests.support.library_sample import every_spec

SET_UP = {"self.v._rng = Draws()", "v._rng.reset(seed)", "v._rng.step = v.t + 1"}


@pytest.mark.parametrize("name", every_spec())
def test_step_counts_draw_steps_iff_the_module_draws(name: str) -> None:
    compiled = compile_spec(name)
    source = compiled.source
    generated = source[source.index("class Params("):]
    reset = re.search(r"    def reset\(self, seed=None, options=None\):\n(.*?)\n    def ", generated, re.S)
    assert reset is not None
    after_reset = generated.replace(reset.group(1), "")
    draws = [line.strip() for line in after_reset.splitlines() if "_rng" in line and line.strip() not in SET_UP]
    keeps_counter = "v._rng.step = v.t + 1" in generated
    assert keeps_counter or not draws, draws[:3]
    if not compiled.checked.mechanics:  # a mechanics module keeps the counter for its own draws
        assert keeps_counter == bool(draws), (keeps_counter, draws[:3])
