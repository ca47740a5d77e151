"""What expressions compute in the Python backend, checked against numpy on small cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gymwright.compile import compile_spec


def evaluate(expr: str, dtype: str = "float", shape: list[int] | None = None, state: dict | None = None):
    """Value of `expr` assigned to a variable by a step rule (one agent, one step)."""
    spec = {
        "name": "probe_env",
        "agents": {"a": {"count": 3}},
        "consts": {"v3": [1, 2, 3], "b3": [True, False, True], "m22": [[1, 2], [3, 4]]},
        "state": {**(state or {}), "out": {"type": dtype, "shape": shape or [], "init": "False" if dtype == "bool" else 0}},
        "agent_state": {"score": {"type": "int", "init": "me * 2"}},
        "actions": {"a": [{"name": "go"}]},
        "step": [{"set": {"out": expr}}],
        "truncate": "t >= 1",
        "observe": {"a": ["t"]},
    }
    env = compile_spec(spec).parallel_env()
    env.reset(seed=0)
    env.step({f"a_{i}": 0 for i in range(3)})
    return env.v.out


@pytest.mark.parametrize(
    ("expr", "dtype", "expected"),
    [
        ("True + True", "int", 2),
        ("b3[0] + b3[2]", "int", 2),
        ("sum(b3)", "int", 2),
        ("7 // 2", "int", 3),
        ("-7 // 2", "int", -4),
        ("-7 % 3", "int", 2),
        ("1 / 0", "float", math.inf),
        ("2 ** 0.5", "float", math.sqrt(2)),
        ("round(2.5)", "int", 2),
        ("round(3.5)", "int", 4),
        ("int(-2.7)", "int", -2),
        ("floor(-2.5)", "int", -3),
        ("1 < 2 < 3", "bool", True),
        ("1 < 3 < 2", "bool", False),
        ("max(v3)", "int", 3),
        ("max(1, 5, 3)", "int", 5),
        ("argmax(v3)", "int", 2),
        ("count(v3 > 1)", "int", 2),
        ("m22[1, 0]", "int", 3),
        ("sum(m22, axis=0)[1]", "int", 6),
        ("dot(v3, v3)", "int", 14),
        ("score[2]", "int", 4),
        ("n_agents", "int", 3),
        ("clip(5, 0, 3)", "int", 3),
        ("mean(score)", "float", 2.0),
        ("abs(-2) if any(b3) else 0", "int", 2),
        ("not all(b3)", "bool", True),
        ("t", "int", 0),  # rules run before t increases
    ],
)
def test_scalar_expressions(expr: str, dtype: str, expected: object) -> None:
    assert evaluate(expr, dtype) == expected


@pytest.mark.parametrize(
    ("expr", "dtype", "shape", "expected"),
    [
        ("v3 * 2", "int", [3], [2, 4, 6]),
        ("b3 + b3", "int", [3], [2, 0, 2]),
        ("-b3", "int", [3], [-1, 0, -1]),
        ("where(b3, v3, 0)", "int", [3], [1, 0, 3]),
        ("b3 and v3 > 1", "bool", [3], [False, False, True]),
        ("not b3", "bool", [3], [False, True, False]),
        ("v3 if b3 else -v3", "int", [3], [1, -2, 3]),
        ("push(v3, 9)", "int", [3], [2, 3, 9]),
        ("onehot(1, 3)", "float", [3], [0.0, 1.0, 0.0]),
        ("linspace(0, 1, 3)", "float", [3], [0.0, 0.5, 1.0]),
        ("arange(3) == score // 2", "bool", [3], [True, True, True]),
        ("v3[1:]", "int", [2], [2, 3]),
        ("m22[:, 1]", "int", [2], [2, 4]),
        ("v3 / 0", "float", [3], [math.inf] * 3),
    ],
)
def test_array_expressions(expr: str, dtype: str, shape: list[int], expected: list) -> None:
    np.testing.assert_array_equal(evaluate(expr, dtype, shape), np.array(expected))


def test_power_is_bounded_at_run_time() -> None:
    assert evaluate("(10.0 + out) ** 400", state={}) == math.inf


def test_random_draws_are_reproducible_and_in_range() -> None:
    values = {float(evaluate("uniform(2, 3)")) for _ in range(3)}
    assert len(values) == 1 and 2 <= values.pop() < 3
    draws = evaluate("randint(0, 5, shape=(200,))", "int", [200])
    assert set(np.unique(draws)) == {0, 1, 2, 3, 4}
