"""Computed tables (issue 16, item 3): consts computed when the env is built from params and
earlier consts, the table functions, and their size limits."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from gymwright.compile import compile_spec
from gymwright.spec.checker import check_spec
from gymwright.spec.limits import MAX_CONST_SIZE, MAX_TABLE_SIZE
from gymwright.spec.loader import load_spec
from tests.compile.test_batch_differential import compare


def blotto(**consts: Any) -> dict[str, Any]:
    """Colonel Blotto: each colonel splits `troops` over `fields`; a field goes to the larger force."""
    return {
        "name": "blotto",
        "params": {"troops": {"default": 5, "min": 1, "max": 8, "type": "int"},
                   "fields": {"default": 3, "min": 1, "max": 4, "type": "int"}},
        "consts": {"splits": "compositions(troops, fields)", **consts},
        "agents": {"colonel": {"count": 2}},
        "agent_state": {"sent": {"type": "int", "shape": ["fields"], "init": 0, "min": 0, "max": "troops"}},
        "actions": {"colonel": [{"name": "allocate", "args": {"k": "arange(len(splits))"}}]},
        "step": [{"set": {"sent": "splits[k[me]]"}}],
        "terminate": "t >= 1",
        "rewards": {"colonel": [{"name": "fields_won", "expr": "sum(sent[me] > sent[1 - me]) - sum(sent[me] < sent[1 - me])"}]},
        "observe": {"colonel": ["sent[me]"]},
    }


def checked(data: dict[str, Any], params: dict[str, Any] | None = None) -> Any:
    cs, diags = check_spec(load_spec(data), params)
    assert cs is not None, [d.format() for d in diags]
    return cs


def errors(data: dict[str, Any]) -> list[str]:
    _, diags = check_spec(load_spec(data))
    return [d.format() for d in diags if d.severity.value == "error"]


def brute_force_splits(total: int, parts: int) -> list[list[int]]:
    return sorted(list(v) for v in itertools.product(range(total + 1), repeat=parts) if sum(v) == total)


@pytest.mark.parametrize("total, parts", [(5, 3), (0, 2), (4, 1), (3, 4)])
def test_compositions_are_every_split_in_lexicographic_order(total: int, parts: int) -> None:
    cs = checked(blotto(table=f"compositions({total}, {parts})"))
    assert cs.consts["table"].tolist() == brute_force_splits(total, parts)


def test_a_split_game_has_one_action_per_split_and_follows_its_params() -> None:
    cs = checked(blotto())
    assert cs.roles[0].n_actions == 21 and {"troops", "fields"} <= cs.structural
    assert checked(blotto(), {"troops": 4, "fields": 2}).roles[0].n_actions == 5
    env = compile_spec(load_spec(blotto())).parallel_env()
    env.reset(seed=0)
    splits = brute_force_splits(5, 3)
    k0, k1 = splits.index([0, 0, 5]), splits.index([1, 2, 2])
    obs, rew, *_ = env.step({"colonel_0": k0, "colonel_1": k1})
    assert obs["colonel_0"].tolist() == [0, 0, 5] and obs["colonel_1"].tolist() == [1, 2, 2]
    assert rew == {"colonel_0": -1.0, "colonel_1": 1.0}  # colonel_1 wins two fields of three


def test_the_backends_agree_on_a_split_game() -> None:
    compare(load_spec(blotto()), {}, 4, 7, 12, 3)


def test_tables_from_products_filters_and_combinations() -> None:
    cs = checked(blotto(
        grid="product(arange(troops + 1), repeat=fields)",
        by_filter="filter(grid, sum(grid, axis=1) == troops)",
        even="filter(splits, max(splits, axis=1) <= 2)",
        pairs="combinations(arange(4), 2)",
        mixed="product([0, 1], [5, 6, 7])",
        counts=[2, 3], levels="arange(counts[0] + 1)", shares="linspace(0, 1, counts[1] * 2 + 1)"))
    c = cs.consts
    assert c["grid"].shape == (216, 3) and c["grid"][:2].tolist() == [[0, 0, 0], [0, 0, 1]]
    assert c["by_filter"].tolist() == c["splits"].tolist()
    assert c["even"].tolist() == [[1, 2, 2], [2, 1, 2], [2, 2, 1]]
    assert c["pairs"].tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    assert c["mixed"].tolist() == [[0, 5], [0, 6], [0, 7], [1, 5], [1, 6], [1, 7]]
    assert c["levels"].tolist() == [0, 1, 2] and len(c["shares"]) == 7


def test_a_table_inside_an_expression_compiles_on_both_backends() -> None:
    data = blotto()
    data["observe"]["colonel"].append({"name": "share", "expr": "sent[me] / max(sum(compositions(2, 2)[1]), 1)"})
    compare(load_spec(data), {}, 2, 1, 4, 0)


@pytest.mark.parametrize("const, message", [
    ("compositions(troops * 40, fields + 3)", "the limit (MAX_TABLE_SIZE)"),
    ("product(arange(troops + 20), repeat=fields + 1)", "the limit (MAX_TABLE_SIZE)"),
    ("arange(troops * 3000)", "the limit (MAX_CONST_SIZE)"),
    ("filter(splits, sum(splits, axis=1) > troops)", "keep holds for no row"),
    ("combinations(arange(3), 4)", "k = 4 is more than the 3 entries of a"),
    ("splits * bonus", "reads float param `bonus`"),
    ("sent", "`sent` is not known when consts are computed"),
])
def test_bad_tables_are_refused_at_the_const(const: str, message: str) -> None:
    data = blotto(bad=const)
    data["params"]["bonus"] = {"default": 0.5, "min": 0, "max": 1}
    found = errors(data)
    assert any(f.startswith("error [static] consts.bad:") and message in f for f in found), found


def test_the_table_limits_are_counted_before_the_table_is_made() -> None:
    assert MAX_TABLE_SIZE > MAX_CONST_SIZE
    found = errors(blotto(bad="compositions(10**6, 10**6)"))  # never enumerated: C(2e6, 1e6) rows
    assert any("MAX_TABLE_SIZE" in f for f in found), found


def test_a_const_may_use_len_and_earlier_consts() -> None:
    found = errors(blotto(bad="t + 1"))
    assert any("consts.bad: `t` is not known when consts are computed" in f for f in found), found
    assert checked(blotto(n2="len(splits) * 2")).consts["n2"] == 42


def test_a_table_may_read_the_agent_counts() -> None:
    cs = checked(blotto(pairs="combinations(arange(n_agents), 2)", colonels="filter(arange(n_agents), is_colonel)"))
    assert cs.consts["pairs"].tolist() == [[0, 1]] and cs.consts["colonels"].tolist() == [0, 1]
