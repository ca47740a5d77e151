"""The README's claim about per-spec checks: two representative specs by default, every spec
under `-m slow` (tests/support/library_sample.py)."""

from __future__ import annotations

from gymwright.spec import library_names
from tests.support.library_sample import REPRESENTATIVES, every_spec


def test_every_library_spec_is_a_case_and_all_but_the_representatives_are_slow() -> None:
    cases = every_spec()
    names = [c if isinstance(c, str) else c.values[0] for c in cases]
    assert names == library_names()
    plain = {c for c in cases if isinstance(c, str)}
    assert plain == set(REPRESENTATIVES) and len(REPRESENTATIVES) == 2
    for case in cases:
        if not isinstance(case, str):
            assert [m.name for m in case.marks] == ["slow"], case
