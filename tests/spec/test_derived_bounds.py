"""Bounds that follow from the spec (issue 16, item 6): `t` is bounded by the episode's end, and
a feature's `low`/`high` may be a constant expression over params."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.spec.checker import check_spec
from gymwright.spec.loader import load_spec


def counter(terminate: Any = False, truncate: Any = False, **feature: Any) -> dict[str, Any]:
    return {
        "name": "counter",
        "params": {"rounds": {"default": 5, "min": 2, "max": 9, "type": "int"},
                   "cap": {"default": 3.0, "min": 1.0, "max": 4.0}},
        "agents": {"p": {"count": 2}},
        "state": {"x": {"type": "float", "init": 0.0}},
        "actions": {"p": [{"name": "wait"}]},
        "terminate": terminate, "truncate": truncate,
        "observe": {"p": [{"expr": "t", "name": "t", **feature}]},
    }


def t_high(data: dict[str, Any]) -> float:
    cs, diags = check_spec(load_spec(data))
    assert cs is not None, [d.format() for d in diags]
    return float(cs.roles[0].features[0].high[0])


@pytest.mark.parametrize("terminate, truncate, high", [
    ("t >= rounds", False, 9),                       # rounds is free: its max bounds every instance
    (False, "t >= 2 * rounds", 18),
    ("x > 1 or t > rounds", False, 10),
    ("rounds <= t", "t >= 20", 9),                    # the nearer end wins
    ("t == rounds + 1", False, 10),
    ("t >= cap", False, 4),                           # a float limit: the step it first holds
    (False, False, math.inf),
    ("t >= rounds and x > 1", False, math.inf),       # may never hold
    ("t == 0", False, math.inf),                      # never checked at t == 0
    ("t >= x", False, math.inf),                      # not a constant
])
def test_t_is_bounded_by_the_end_of_the_episode(terminate: Any, truncate: Any, high: float) -> None:
    assert t_high(counter(terminate, truncate)) == high


def test_the_bound_holds_at_the_last_observation() -> None:
    env = compile_spec(load_spec(counter("t >= rounds"))).parallel_env(rounds=9)
    env.reset(seed=0)
    for _ in range(9):
        obs, *_ = env.step({})
    assert obs["p_0"][0] == 9 and env.observation_space("p_0").high[0] == 9


def test_a_feature_bound_may_be_a_param_expression() -> None:
    assert t_high(counter("t >= rounds", high="2 * cap")) == 8.0  # cap's max, so every instance fits
    cs, _ = check_spec(load_spec(counter(low="-cap", high=10)))
    assert cs is not None and cs.roles[0].features[0].low[0] == -4.0 and cs.roles[0].features[0].high[0] == 10
    assert np.isinf(t_high(counter(high=float("inf"))))


def test_a_feature_bound_that_is_not_constant_is_refused() -> None:
    _, diags = check_spec(load_spec(counter(high="x + 1")))
    assert any(d.format().startswith("error [static] observe.p[0].high: bound must be a constant scalar")
               for d in diags), [d.format() for d in diags]
