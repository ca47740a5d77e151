"""Probes that say what a hand-worked case says (issue 42, point 6): any operator in an
expectation, a `start:` that the init-derived values follow, the value of every part of a
failed expectation, and comparisons that fit float32 observations."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch
from gymwright.diagnostic import Severity
from gymwright.verify.validate import validate

SPEC: dict[str, Any] = {
    "gymwright": 1, "name": "forage_share", "description": "two foragers share what they take from a patch",
    "params": {"max_steps": {"default": 3, "min": 1, "max": 20, "type": "int"}},
    "agents": {"forager": {"count": 2}},
    "state": {
        "food": {"type": "float", "shape": [2], "init": "uniform(1, 2, shape=2)", "min": 0, "max": 5},
        "total": {"type": "float", "init": "sum(food)", "min": 0, "max": 10, "doc": "drawn from the food levels"},
        "taken": {"type": "float", "init": 0.0, "min": 0, "max": 10},
    },
    "actions": {"forager": [{"name": "take"}, {"name": "wait"}]},
    "step": [{"set": {"taken": "taken + food[0] * any(take)"}}],
    "terminate": "taken > 0",
    "truncate": "t >= max_steps",
    "rewards": {"forager": [{"name": "share", "expr": "taken / total"}]},
    "observe": {"forager": ["food[0]", "total"]},
}
TAKE = [{"forager_0": "take"}]
GIVEN = {"food": [2.0, 3.0]}


def spec(*probes: dict[str, Any], reward: str | None = None) -> dict[str, Any]:
    data = copy.deepcopy(SPEC)
    if reward is not None:
        data["rewards"]["forager"][0]["expr"] = reward
    data["probes"] = list(probes)
    return data


def errors(data: dict[str, Any]) -> list[str]:
    return [d.format() for d in validate(data) if d.severity == Severity.error]


def test_an_expectation_may_use_an_operator_the_env_never_uses() -> None:
    data = spec({"name": "every operator", "start": GIVEN, "actions": TAKE,
                 "expect": ["ret.forager_0 / total == 0.2", "total // taken == 2", "t % max_steps == 1",
                            "taken ** total == 32", "abs(2 ** (total - taken) - 8) < 1e-9"]},
                reward="taken * 0.5")
    source = compile_spec(data).source
    assert "rt_div_s" not in source and "rt_floordiv_s" not in source and "rt_pow_s" not in source
    assert errors(data) == []


def test_a_start_value_reruns_the_inits_that_read_it() -> None:
    assert errors(spec({"name": "the total follows the food", "start": GIVEN, "actions": TAKE,
                        "expect": ["total == 5", "reward.forager_0 == 0.4", "obs.forager_0[1] == 5"]},
                       {"name": "a total given is kept", "start": {**GIVEN, "total": 10.0}, "actions": TAKE,
                        "expect": ["total == 10", "reward.forager_0 == 0.2"]})) == []


def test_both_backends_rerun_the_inits_after_reset_options() -> None:
    env = compile_spec(spec()).parallel_env()
    obs, _ = env.reset(seed=0, options={"state": {"food": [4.0, 1.0]}})
    assert env.v.total == 5.0 and obs["forager_0"].tolist() == [4.0, 5.0]
    benv = compile_batch(spec(), {}, batch_size=3)
    bobs, _ = benv.reset(seed=0, options={"state": {"food": [[2.0, 3.0], [1.0, 1.0], [4.0, 1.0]]}})
    np.testing.assert_array_equal(benv.v.total, [5.0, 2.0, 5.0])
    np.testing.assert_array_equal(bobs[:, 0, 1], [5.0, 2.0, 5.0])


def test_a_failed_expectation_shows_the_value_of_each_part() -> None:
    found = errors(spec({"name": "zero sum", "start": GIVEN, "actions": TAKE,
                         "expect": ["ret.forager_0 + ret.forager_1 == 0 and not terminated"]}))
    assert len(found) == 1 and "probes[0].expect[0]" in found[0]
    lines = [line.strip() for line in found[0].splitlines()]
    for shown in ["ret.forager_0 + ret.forager_1 = 0.8", "ret.forager_0 = 0.4", "ret.forager_1 = 0.4",
                  "0 = 0", "terminated = True"]:
        assert shown in lines, found[0]


def test_comparisons_of_floats_allow_for_float32_observations() -> None:
    assert errors(spec({"name": "float32 observations", "start": {"food": [1.1, 3.0]},
                        "expect": ["obs.forager_0[0] == 1.1", "obs.forager_0[0] >= 1.1", "not obs.forager_0[0] < 1.1",
                                   "isclose(obs.forager_0[0], 1.1)", "obs.forager_0[0] != 1.1001"]},
                       {"name": "float64 arithmetic", "start": GIVEN, "actions": TAKE,
                        "expect": ["reward.forager_0 * 3 == 1.2", "t == 1"]})) == []
    found = errors(spec({"name": "a real difference", "start": {"food": [1.1, 3.0]},
                         "expect": ["obs.forager_0[0] == 1.1001"]}))
    assert len(found) == 1 and "obs.forager_0[0] = 1.100000023841858" in found[0]


def test_a_strict_comparison_keeps_its_own_slack() -> None:
    # `>` and `<` compare exactly: `x > y - 1e-9` holds for x == y although 1e-9 is inside the
    # tolerance `==` allows (the cake variant's gains-from-trade probe is written this way)
    from gymwright.verify.probes import probe_compare

    assert probe_compare(">", 1.5, 1.5 - 1e-9, 1e-9, 1e-12)
    assert probe_compare("==", 1.5, 1.5 - 1e-9, 1e-9, 1e-12)
    assert not probe_compare("<", 1.5, 1.5, 1e-9, 1e-12) and probe_compare("<=", 1.5, 1.5 + 1e-10, 1e-9, 1e-12)
