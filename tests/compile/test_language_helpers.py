"""Helpers the language lacked (issue 42, point 8): every other agent in index order (`others`),
k numbers per cell (`stack`) and `transpose`, on both backends, with the same values."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from gymwright.compile import compile_spec
from gymwright.errors import GymwrightError
from gymwright.spec import load_spec
from tests.compile.test_batch_differential import compare

SPEC = """
gymwright: 1
name: helpers
params: {n: {default: 4, min: 2, max: 6, type: int}}
consts: {table: [[1, 2, 3], [4, 5, 6]]}
agents: {player: {count: n}}
agent_state:
  x: {type: float, init: "uniform(0, 1)", min: 0, max: 1}
  score: {type: int, init: "me", min: 0, max: 100}
actions: {player: [{name: up}, {name: down}]}
step:
  - {set: {x: "uniform(0, 1)", score: "min(score[me] + up[me], 100)"}}
rewards: {player: [{name: r, expr: "sum(others(x, me)) - x[me]"}]}
metrics: {gap: {expr: "others(score, 0)[0] - score[0]"}}
truncate: "t >= 6"
observe:
  player:
    - {expr: "others(x, me)", name: rest}
    - {expr: "stack(others(x, me), others(score, me))", name: pairs}
    - {expr: "transpose(table)", name: cols}
    - {expr: "stack(x[me], 2)", name: mine}
"""


def spec():
    return load_spec(yaml.safe_load(SPEC))


def test_others_stack_and_transpose_on_the_python_backend() -> None:
    env = compile_spec(spec()).parallel_env()
    obs, _ = env.reset(seed=3)
    x, score = env.v.x, env.v.score
    o = obs["player_2"]
    np.testing.assert_allclose(o[:3], [x[0], x[1], x[3]], atol=1e-6)           # every other agent, index order
    np.testing.assert_allclose(o[3:9], [x[0], score[0], x[1], score[1], x[3], score[3]], atol=1e-6)  # cell by cell
    np.testing.assert_allclose(o[9:15], [1, 4, 2, 5, 3, 6])                     # transpose(table)
    np.testing.assert_allclose(o[15:17], [x[2], 2], atol=1e-6)


@pytest.mark.parametrize("seed", [0, 7])
def test_the_helpers_agree_between_backends(seed: int) -> None:
    compare(spec(), {}, size=3, seed=seed, steps=14, policy_seed=seed)


@pytest.mark.parametrize("expr, message", [
    ("others(x[me], 0)", "x must be an array with 2 or more entries"),
    ("others(x, 1.5)", "i must be one int"),
    ("others(x, 4)", "reaches outside the 4 entries"),
    ("transpose(x)", "expects a 2-D array"),
    ("x.T", "attribute access"),
    ("x.T", r"write transpose\(m\)"),
])
def test_helpers_refuse_what_they_cannot_do(expr: str, message: str) -> None:
    bad = SPEC.replace('{expr: "others(x, me)", name: rest}', f'{{expr: "{expr}", name: rest}}')
    with pytest.raises(GymwrightError, match=message):
        compile_spec(load_spec(yaml.safe_load(bad)))


def test_a_window_of_k_numbers_per_cell_agrees_between_backends() -> None:
    """predator_prey with the cell-by-cell view the docs show: `stack` of two `agents_view_of`
    windows, and `others(pos, me)`."""
    from gymwright.spec import load_spec as load

    data = load("predator_prey").model_dump(by_alias=True, exclude_none=True)
    cells = {"expr": "stack(agents_view_of(pos[me], 1, is_predator), agents_view_of(pos[me], 1, is_prey))",
             "name": "cells"}
    partners = {"expr": "others(pos, me)", "name": "partners", "low": 0, "high": 20}
    data["observe"] = {role: [cells, partners] for role in data["observe"]}
    data["probes"] = []
    env_spec = load(data)
    env = compile_spec(env_spec).parallel_env()
    obs, _ = env.reset(seed=2)
    pos, me = env.v.pos, 0
    window = obs["predator_0"][:18].reshape(3, 3, 2)
    assert window[1, 1, 0] >= 1  # [predators, prey] per cell: me, a predator, at the centre
    assert window.sum() == sum(1 for j in range(len(pos)) if (abs(pos[j] - pos[me]) <= 1).all())
    assert obs["predator_0"][18:].reshape(-1, 2).tolist() == [p.tolist() for p in pos[1:]]
    compare(env_spec, {}, size=3, seed=4, steps=12, policy_seed=1)
