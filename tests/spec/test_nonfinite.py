"""Numbers that compare false (issue 13, item 5).

NaN passes every range check (`nan < lo` and `nan > hi` are both false), and infinities make
no sense as knob values: both are refused wherever a param is set (CLI, check_spec overrides,
compile_spec / compile_batch, the generated module's make_params, spec defaults and ranges).
Random functions refuse invalid arguments: in the checker when they are constant (or their
intervals rule out every valid value), in the runtime draw functions otherwise, which the
verifier reports at the spec path of the expression.
"""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch
from gymwright.errors import GymwrightError
from gymwright.runtime import core
from gymwright.spec.checker import check_spec
from gymwright.spec.loader import load_spec, read_data
from gymwright.verify.verifier import verify

NAN, INF = float("nan"), float("inf")
NON_FINITE = ["nan", ".nan", "NaN", "inf", "-inf", ".inf", "-.Inf", "Infinity", "1e999"]


def errors(spec: Any, params: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    checked, diags = check_spec(load_spec(spec), params)
    found = [(d.path, d.message) for d in diags if d.severity == "error"]
    assert (checked is None) == bool(found)
    return found


# --------------------------------------------------------------------------- CLI

@pytest.mark.parametrize("raw", NON_FINITE)
@pytest.mark.parametrize("command", ["validate", "verify", "run", "export"])
def test_cli_param_refuses_nan_and_infinities(command: str, raw: str, tmp_path: Path) -> None:
    out = tmp_path / "env.py"
    extra = ["-o", str(out)] if command == "export" else []
    result = CliRunner().invoke(app, [command, "stag_hunt", "--param", f"stag_reward={raw}", *extra])
    assert result.exit_code == 2, result.output
    assert not out.exists()
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    text = " ".join(result.output.replace("│", " ").split())
    assert f"Invalid value for '--param': stag_reward={raw}: NaN and infinities are not param values" in text
    assert "give a finite number (`gymwright library` lists each param's range)" in text


def test_cli_param_still_takes_finite_numbers_and_text() -> None:
    assert CliRunner().invoke(app, ["validate", "stag_hunt", "--param", "stag_reward=5.5"]).exit_code == 0
    result = CliRunner().invoke(app, ["validate", "stag_hunt", "--param", "stag_reward=nano"])
    assert result.exit_code == 1 and "expected a float value, got 'nano'" in result.output


# --------------------------------------------------------------------------- Python API

@pytest.mark.parametrize("value", [NAN, INF, -INF, np.float64("nan"), "nan", "-inf"], ids=repr)
@pytest.mark.parametrize(("name", "kind"), [("stag_reward", "float"), ("n_hunters", "int")])
def test_check_spec_refuses_non_finite_overrides_with_their_path(name: str, kind: str, value: Any) -> None:
    [(path, message)] = errors("stag_hunt", {name: value})
    assert path == f"params.{name} (given {value!r})"
    assert message.startswith(f"expected a finite {kind} value, got ")
    assert "NaN and infinities compare false against every range" in message


@pytest.mark.parametrize("build", [lambda p: compile_spec("stag_hunt", p),
                                   lambda p: compile_batch("stag_hunt", p, batch_size=2)], ids=["python", "batch"])
def test_compile_refuses_a_nan_param_before_generating_code(build: Any) -> None:
    with pytest.raises(GymwrightError, match=re.escape("params.stag_reward (given nan): expected a finite float value")):
        build({"stag_reward": NAN})


@pytest.mark.parametrize("value", [NAN, INF, np.float32("-inf"), np.float64("nan")], ids=repr)
def test_generated_make_params_refuses_non_finite_values(value: Any) -> None:
    module = compile_spec("stag_hunt").module
    with pytest.raises(ValueError, match=r"param `stag_reward` = .*(nan|inf).* is not a finite number \(NaN and "
                                         r"infinities compare false against every range\); give a finite float in "):
        module.parallel_env(stag_reward=value)
    with pytest.raises(ValueError, match="param `stag_reward`"):
        module.env(stag_reward=value)


def test_generated_make_params_keeps_types_and_ranges() -> None:
    module = compile_spec("stag_hunt").module
    assert module.parallel_env(stag_reward=np.int64(6)).p.stag_reward == 6.0
    with pytest.raises(ValueError, match=r"param `n_hunters` must be an int, got 2\.5"):
        module.parallel_env(n_hunters=2.5)
    with pytest.raises(ValueError, match=r"param `stag_reward` must be a float, got '5'"):
        module.parallel_env(stag_reward="5")
    with pytest.raises(ValueError, match=r"param `stag_reward` must be a float, got True"):
        module.parallel_env(stag_reward=True)


def test_batch_make_params_names_the_copy_of_a_non_finite_value() -> None:
    cls = type(compile_batch("stag_hunt", {}, batch_size=3))
    with pytest.raises(ValueError, match=re.escape("param `stag_reward` = inf is not a finite number")) as e:
        cls(3, [{}, {"stag_reward": INF}, {}])
    assert str(e.value).endswith("(in the params of copy 1)")
    with pytest.raises(ValueError, match=r"param `stag_reward` = nan is not a finite number .*\]$"):
        cls(3, {"stag_reward": NAN})
    with pytest.raises(ValueError, match=r"param `stag_reward` must be a float, got 'x' \(str\); give a float in \[0.0, 100.0\] \(in the params of copy 2\)"):
        cls(3, [{}, {}, {"stag_reward": "x"}])


def test_rt_param_refuses_an_int_too_large_for_a_float_param() -> None:
    with pytest.raises(ValueError, match=r"param `x` = 1000+ is not a finite number"):
        core.rt_param("x", "float", 10**400)
    assert core.rt_param("x", "int", 10**400) == 10**400


# --------------------------------------------------------------------------- spec defaults and ranges

def stag(**edit: Any) -> dict[str, Any]:
    data = copy.deepcopy(read_data("stag_hunt")[0])
    for path, value in edit.items():
        *keys, last = path.split("__")
        at: Any = data
        for k in keys:
            at = at[int(k)] if isinstance(at, list) else at[k]
        at[last] = value
    return data


@pytest.mark.parametrize(("edit", "path", "fix"), [
    ({"params__stag_reward__default": NAN}, "params.stag_reward.default", "give a finite default"),
    ({"params__stag_reward__default": -INF}, "params.stag_reward.default", "give a finite default"),
    ({"params__stag_reward__max": INF}, "params.stag_reward.max", "give a number, or leave `max` out for no bound"),
    ({"params__stag_reward__min": NAN}, "params.stag_reward.min", "give a number, or leave `min` out for no bound"),
    ({"rewards__hunter__0__weight": NAN}, "rewards.hunter[0].weight", "give a finite weight"),
    ({"probes__0__params": {"stag_reward": INF}}, "probes[0].params", "give param `stag_reward` a finite value"),
], ids=["default-nan", "default-inf", "max-inf", "min-nan", "weight", "probe-param"])
def test_spec_numbers_must_be_finite(edit: dict[str, Any], path: str, fix: str) -> None:
    with pytest.raises(GymwrightError) as e:
        load_spec(stag(**edit))
    [d] = e.value.diagnostics
    assert d.path == path
    assert re.fullmatch(rf"-?(nan|inf) is not a finite number: NaN and infinities compare false against every "
                        rf"range; {re.escape(fix)}", d.message), d.message


def test_probe_seeds_are_in_the_seed_range() -> None:
    for seed in (-1, 2**63):
        with pytest.raises(GymwrightError) as e:
            load_spec(stag(probes__0__seed=seed))
        assert e.value.diagnostics[0].path == "probes[0].seed"


# --------------------------------------------------------------------------- random function arguments

def speaker_goal(init: str) -> dict[str, Any]:
    """speaker_listener with the goal's init replaced (an int scalar in 0 .. n_targets - 1)."""
    data = copy.deepcopy(read_data("speaker_listener")[0])
    data["state"]["goal"]["init"] = init
    return data


@pytest.mark.parametrize(("init", "message"), [
    ("randint(0, 0)", "randint(): draws an int in lo .. hi-1 (hi is exclusive), so it needs lo < hi; got lo=0, hi=0"),
    ("randint(3, 1)", "randint(): draws an int in lo .. hi-1 (hi is exclusive), so it needs lo < hi; got lo=3, hi=1"),
    ("randint(n_targets, n_targets)", "so it needs lo < hi; got lo=3, hi=3"),
    ("randint(0, [2, 0])", "so it needs lo < hi; got lo=0, hi=[2.0, 0.0]"),
    ("int(uniform(1, 0))", "uniform(): draws a float in [lo, hi), so it needs lo <= hi; got lo=1, hi=0"),
    ("int(uniform(0, 1e999))", "uniform(): draws a float in [lo, hi), so hi must be finite; got hi=inf"),
    ("int(uniform(2))", "uniform(): draws a float in [lo, hi), so it needs lo <= hi; got lo=2, hi=1"),
    ("int(bernoulli(2.0))", "bernoulli(): is true with probability p, so it needs 0 <= p <= 1; got p=2"),
    ("int(bernoulli(-0.5))", "bernoulli(): is true with probability p, so it needs 0 <= p <= 1; got p=-0.5"),
    ("int(bernoulli(noise + 1.5))", "so it needs 0 <= p <= 1; got p=1.5"),
    ("int(bernoulli(t + 2))", "so it needs 0 <= p <= 1, but p is in [2, 202]"),
    ("int(normal(0, -1))", "normal(): needs std >= 0; got std=-1"),
    ("int(normal(1e999, 1))", "normal(): needs a finite mean; got mean=inf"),
], ids=lambda x: x if "(" in x and len(x) < 40 else "")
def test_checker_refuses_invalid_constant_random_arguments(init: str, message: str) -> None:
    [(path, found)] = errors(speaker_goal(init))
    assert path == "state.goal.init"
    assert message in found
    checked, diags = check_spec(load_spec(speaker_goal(init)))
    assert diags[0].trace[-1].strip() == "^"  # the caret under the call


@pytest.mark.parametrize("init", ["randint(0, 1)", "int(uniform(0, 0))", "int(uniform(0.5))", "int(bernoulli(0))",
                                  "int(bernoulli(1.0))", "int(normal(0, 0))", "randint(t, t + 1)", "int(bernoulli(noise))"])
def test_checker_keeps_valid_and_undecidable_random_arguments(init: str) -> None:
    assert errors(speaker_goal(init)) == []


def test_random_function_docs_state_their_argument_rules() -> None:
    from gymwright.spec.expr.functions import FUNCTIONS
    assert "hi exclusive" in FUNCTIONS["randint"].doc and "lo < hi" in FUNCTIONS["randint"].doc
    assert "0 <= p <= 1" in FUNCTIONS["bernoulli"].doc
    assert "lo <= hi" in FUNCTIONS["uniform"].doc
    assert "std >= 0" in FUNCTIONS["normal"].doc


@pytest.mark.parametrize(("call", "args", "message"), [
    (core.draw_randint, (0, 0), "randint(lo, hi) draws an int in [lo, hi) (hi exclusive), so it needs finite lo < hi; got lo=0, hi=0"),
    (core.draw_randint, (np.array([0, 3]), 3), "got lo=[0, 3], hi=3"),
    (core.draw_uniform, (1.0, 0.0), "uniform(lo, hi) draws a float in [lo, hi), so it needs finite lo <= hi; got lo=1.0, hi=0.0"),
    (core.draw_uniform, (0.0, INF), "got lo=0.0, hi=inf"),
    (core.draw_bernoulli, (NAN,), "bernoulli(p) is true with probability p, so it needs 0 <= p <= 1; got p=nan"),
    (core.draw_bernoulli, (np.array([0.2, 1.2]),), "got p=[0.2, 1.2]"),
    (core.draw_normal, (0.0, -1.0), "normal(mean, std) needs a finite mean and a finite std >= 0; got mean=0.0, std=-1.0"),
])
def test_runtime_draws_refuse_invalid_arguments(call: Any, args: tuple[Any, ...], message: str) -> None:
    d = core.Draws()
    d.reset(0)
    with pytest.raises(ValueError, match=re.escape(message)):
        call(d, 0, 0, (), *args)


def test_runtime_draws_at_the_edges_of_their_domains() -> None:
    d = core.Draws()
    d.reset(0)
    assert core.draw_randint(d, 0, 0, (), 4, 5) == 4
    assert core.draw_uniform(d, 0, 0, (), 2.5, 2.5) == 2.5
    assert core.draw_bernoulli(d, 0, 0, (3,), np.array([0.0, 1.0, 1.0])).tolist() == [False, True, True]
    assert core.draw_normal(d, 0, 0, (), 1.5, 0.0) == 1.5
    assert math.isfinite(core.draw_normal(d, 0, 0, (), 0, 1))


def test_verifier_reports_a_non_constant_invalid_argument_at_its_rule() -> None:
    """bernoulli(noise + t): valid at t = 0, refused by the draw once p > 1 (the checker cannot know)."""
    data = copy.deepcopy(read_data("iterated_prisoners_dilemma")[0])
    assert data["step"][0]["set"] == {"move": "int(defect[me] != bernoulli(noise))"}
    data["step"][0]["set"]["move"] = "int(defect[me] != bernoulli(noise + t))"
    report = verify(data, {"noise": 0.0}, episodes=2)
    found = [d for d in report.diagnostics if d.message.startswith("a random function got invalid arguments")]
    assert len(found) == 1, report.diagnostics
    assert found[0].path == "step[0].set.move"
    assert "bernoulli(p) is true with probability p, so it needs 0 <= p <= 1; got p=2.0 (seed 0, step 3)" in found[0].message
    assert "bernoulli(clip(p, 0, 1))" in found[0].hint


def test_consts_and_feature_bounds_refuse_nan() -> None:
    data = stag()
    data.setdefault("consts", {})["table"] = {"value": [[1.0, 2.0], [3.0, NAN]]}
    with pytest.raises(GymwrightError) as e:
        load_spec(data)
    found = {(d.path, d.message) for d in e.value.diagnostics}  # the other union alternatives are listed too
    assert ("consts.table.value", "nan is not a number: it compares false with everything; give a number") in found
    data = stag()
    feature = data["observe"]["hunter"][0]
    data["observe"]["hunter"][0] = {"expr": feature["expr"] if isinstance(feature, dict) else feature, "low": NAN}
    with pytest.raises(GymwrightError) as e:
        load_spec(data)
    assert any(d.path == "observe.hunter[0].low" and d.message.startswith("nan is not a bound: it compares false")
               for d in e.value.diagnostics), e.value.diagnostics
    data["observe"]["hunter"][0]["low"] = -INF  # an infinite bound means none, and compiles
    assert errors(data) == []
