"""Generated code cites the spec path of every block, and `compile.cites.cited_path` reads each
citation back (the verifier maps a line that raised to the spec through it)."""

from __future__ import annotations

import pytest

from gymwright.compile.build import check
from gymwright.compile.cites import cited_path
from gymwright.compile.python_backend import generate
from tests.support.library_sample import every_spec


@pytest.mark.parametrize("name", every_spec())
def test_every_rule_init_term_and_observation_is_cited_and_read_back(name: str) -> None:
    cs = check(name)
    source = generate(cs, instrument=True)
    cited = {cited_path(line) for line in source.splitlines()} - {None}
    wanted = {f"{var.path}.init" for var in cs.state + cs.agent_state if not var.builtin}
    wanted |= {r.path for r in cs.rules}
    wanted |= {t.path for role in cs.roles for t in role.terms}
    wanted |= {role.features[0].path for role in cs.roles}  # scalar features share one line and comment
    wanted |= {"terminate", "truncate"} | ({"grid"} if cs.section("grid") is not None else set())
    assert wanted <= cited, sorted(wanted - cited)


def test_only_comments_that_start_with_a_section_are_citations() -> None:
    assert cited_path("        # step[2].set.x: x + 1") == "step[2].set.x"
    assert cited_path("    # text.render") == "text.render"
    assert cited_path("# baselines.greedy.bargainer[0].action: accept") == "baselines.greedy.bargainer[0].action"
    assert cited_path("# grid: moves, slip, collisions") == "grid"
    assert cited_path("# the same for every agent") is None
    assert cited_path("# stateful: not a section") is None
    assert cited_path("state = 1  # state.x") is None
