"""Constraints between params (issue 42, point 8): `constraints:` holds at every assignment that
is set (the checker, `--param`, both backends' constructors), and the engineer draws none that
breaks one."""

from __future__ import annotations

import pytest
import yaml

from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch
from gymwright.engineer.space import ConfigSpace
from gymwright.errors import GymwrightError
from gymwright.spec import load_spec
from gymwright.spec.checker import check_spec

SPEC = """
gymwright: 1
name: odd_table
params:
  n: {default: 3, min: 1, max: 9, type: int, doc: players}
  lo: {default: 0.2, min: 0, max: 1}
  hi: {default: 0.8, min: 0, max: 1}
constraints:
  - "n % 2 == 1"
  - {expr: "lo < hi", doc: the low end is below the high end}
agents: {player: {count: n}}
actions: {player: [{name: a}, {name: b}]}
rewards: {player: [{name: r, expr: "lo + (hi - lo) * a[me]"}]}
truncate: "t >= 3"
observe: {player: ["lo", "hi"]}
"""


def spec(text: str = SPEC):
    return load_spec(yaml.safe_load(text))


def test_the_checker_names_the_broken_constraint_and_the_values() -> None:
    assert check_spec(spec())[0] is not None
    _, diags = check_spec(spec(), {"n": 4, "lo": 0.9})
    errors = {d.path: d.message for d in diags}
    assert errors["constraints[0]"] == "the params given break constraint `n % 2 == 1`: n = 4"
    assert errors["constraints[1]"] == ("the params given break constraint `lo < hi` (the low end is below the "
                                        "high end): hi = 0.8, lo = 0.9")
    _, diags = check_spec(spec(SPEC.replace("default: 3,", "default: 4,")))
    assert any(d.path == "constraints[0]" and "defaults break" in d.message for d in diags)


def test_a_constraint_must_be_one_bool_over_params() -> None:
    _, diags = check_spec(spec(SPEC.replace('"n % 2 == 1"', '"n + 1"')))
    assert any(d.path == "constraints[0].expr" and "must be one bool" in d.message for d in diags)
    _, diags = check_spec(spec(SPEC.replace('"n % 2 == 1"', '"t > 1"')))
    assert any(d.path == "constraints[0].expr" for d in diags)


def test_compile_and_both_constructors_refuse_a_broken_assignment() -> None:
    with pytest.raises(GymwrightError, match="break constraint `n % 2 == 1`"):
        compile_spec(spec(), {"n": 4})
    env = compile_spec(spec()).parallel_env(lo=0.3, hi=0.5)
    assert env.p.lo == 0.3
    with pytest.raises(ValueError, match=r"params break constraint `lo < hi` \(the low end is below the high end\): "
                                         r"hi = 0.5, lo = 0.7"):
        compile_spec(spec()).parallel_env(lo=0.7, hi=0.5)
    compile_batch(spec(), [{"lo": 0.1}, {"lo": 0.5}], batch_size=2)
    with pytest.raises(ValueError, match=r"copy 1: params break constraint `lo < hi`.*hi = 0.8, lo = 0.9"):
        compile_batch(spec(), [{"lo": 0.1}, {"lo": 0.9}], batch_size=2)


def test_the_engineers_space_holds_no_level_that_breaks_a_constraint() -> None:
    space = ConfigSpace.for_spec(spec(), {"n": [1, 2, 3, 4, 5]}, {"lo": [0.1, 0.5, 0.9]})
    levels = space.levels()
    assert levels and all(lv["n"] % 2 == 1 and lv["lo"] < 0.8 for lv in levels)
    assert space.nearest({"n": 4, "lo": 0.9}) in levels
    with pytest.raises(GymwrightError, match="no level of this space meets the constraints"):
        ConfigSpace.for_spec(spec(), {"n": [2, 4]}, {})


def test_a_constraints_doc_reaches_the_module_only_as_text() -> None:
    payload = 'x\n"""\nimport os\nos.system("echo pwned")\n\u2028raise SystemExit'
    data = yaml.safe_load(SPEC)
    data["constraints"][1]["doc"] = payload
    env_spec = load_spec(data)
    with pytest.raises(ValueError, match="params break constraint `lo < hi`"):
        compile_spec(env_spec).parallel_env(lo=0.9)
    benv = compile_batch(env_spec, {}, batch_size=1)
    with pytest.raises(ValueError, match="copy 1: params break constraint `lo < hi`"):
        type(benv)(2, [{}, {"lo": 0.9}])


def test_the_heuristic_engineer_steps_only_to_levels_that_meet_the_constraints() -> None:
    """Review of issue 42: `knob_step` and `harder_shapes` never consulted the constraints: a
    mastered bucket at n = 3, lo = 0.5 (hi = 0.8) got lo = 0.9 (`lo < hi` broken) and opened n = 4
    (`n % 2 == 1` broken). Now the knob stays and the next harder bucket is n = 5."""
    from gymwright.engineer.evidence import Evidence, StageEvidence
    from gymwright.engineer.mixture import Bucket
    from gymwright.engineer.structural import propose_in_space

    space = ConfigSpace.for_spec(spec(), {"n": [1, 2, 3, 4, 5]}, {"lo": [0.1, 0.5, 0.9]})
    assert space.harder_shapes({"n": 3}, {"lo": 0.5}) == [{"n": 5}]
    assert space.knob_step("lo", 0.5, 1, {"n": 3}) == 0.5 and space.knob_step("lo", 0.5, -1, {"n": 3}) == 0.1
    p = {"n": 3, "lo": 0.5}
    ev = StageEvidence("constrained", "r", (0.3, 0.6), [(Bucket(p, 1.0, "n=3"), Evidence("constrained", p, "r", 0.9, (0.3, 0.6)))],
                       space=space)
    mixture, why = propose_in_space(ev)
    assert [b.params for b in mixture.buckets] == [{"n": 3, "lo": 0.5}, {"n": 5, "lo": 0.5}], why
    assert all(space.permits(b.params) for b in mixture.buckets)
    assert "held there by the spec's constraints" in why
