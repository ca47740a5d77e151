"""Rules that exclude each other (issue 16, item 4): `first:` groups and `else:` on a rule, per
env, per agent and per batch copy, with the backends agreeing exactly."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch
from gymwright.errors import SpecError
from gymwright.spec.checker import check_spec
from gymwright.spec.loader import load_spec
from tests.compile.test_batch_differential import compare

PHASES = [{"when": "phase == 0", "set": {"phase": 1, "log": "log + 1"}},
          {"when": "phase == 1", "set": {"phase": 2, "log": "log + 10"}},
          {"set": {"phase": 0, "log": "log + 100"}}]


def game(step: list[Any], n: int = 3) -> dict[str, Any]:
    return {
        "name": "phases",
        "params": {"horizon": {"default": 8, "min": 2, "max": 12, "type": "int"}},
        "agents": {"p": {"count": n}},
        "state": {"phase": {"type": "int", "init": 0, "min": 0, "max": 2},
                  "log": {"type": "int", "init": 0, "min": 0, "max": 10_000}},
        "agent_state": {"score": {"type": "int", "init": 0, "min": 0, "max": 100},
                        "mark": {"type": "int", "init": 0, "min": 0, "max": 3}},
        "actions": {"p": [{"name": "a"}, {"name": "b"}]},
        "step": step,
        "terminate": "t >= horizon",
        "rewards": {"p": [{"name": "r", "expr": "score[me] + mark[me] + log / 100"}]},
        "observe": {"p": ["phase", "score[me]", "mark[me]", "log"]},
    }


def run(data: dict[str, Any], steps: list[dict[str, int]]) -> list[tuple[Any, ...]]:
    env = compile_spec(load_spec(data)).parallel_env()
    env.reset(seed=0)
    out = []
    for actions in steps:
        env.step(actions)
        v = env.v
        out.append((int(v.phase), int(v.log), v.score.tolist(), v.mark.tolist()))
    return out


def test_a_first_group_fires_one_rule_per_step_where_plain_rules_cascade() -> None:
    grouped = run(game([{"first": PHASES}]), [{}] * 4)
    assert [(p, log) for p, log, _, _ in grouped] == [(1, 1), (2, 11), (0, 111), (1, 112)]
    cascading = run(game(PHASES), [{}])
    assert cascading[0][:2] == (0, 111)  # each plain rule sees the one before it


def test_else_is_assigned_where_when_fails() -> None:
    data = game([{"when": "any(a)", "set": {"log": "log + 1"}, "else": {"log": "log + 2", "phase": 2}}])
    assert [x[:2] for x in run(data, [{"p_0": 0}, {}, {"p_1": 1}])] == [(0, 1), (2, 3), (2, 5)]


def test_a_per_agent_group_picks_a_rule_for_each_agent_from_the_state_before_it() -> None:
    rules = [{"when": "a[me] and score[(me + 1) % n_agents] == 0", "set": {"score": "score[me] + 1", "mark": 1}},
             {"when": "b[me]", "set": {"mark": 2}},
             {"set": {"mark": 3}}]
    # p_2 reads score[0] as it was before the group: p_0's point in the same step does not count
    out = run(game([{"first": rules}]), [{"p_0": 0, "p_1": 1, "p_2": 0}, {"p_0": 0, "p_1": 1, "p_2": 0}])
    assert out[0][2:] == ([1, 0, 1], [1, 2, 1])
    assert out[1][2:] == ([2, 0, 1], [1, 2, 3])  # p_2's first rule now fails (score[0] > 0): the default


def test_the_batch_backend_fires_per_copy() -> None:
    env = compile_batch(load_spec(game([{"first": PHASES}])), batch_size=2)
    env.reset(seed=0)
    env.step(np.full((2, 3), -1))
    assert env.v.phase.tolist() == [1, 1] and env.v.log.tolist() == [1, 1]
    env.v.phase = np.array([0, 1])  # copies in different phases take different rules of the group
    env.step(np.full((2, 3), -1))
    assert env.v.phase.tolist() == [1, 2] and env.v.log.tolist() == [2, 11]


@pytest.mark.parametrize("seed", [0, 5])
def test_the_backends_agree_on_exclusive_groups(seed: int) -> None:
    rules = [{"when": "a[me] and score[(me + 1) % n_agents] == 0", "set": {"score": "score[me] + 1", "mark": 1}},
             {"when": "b[me] and phase != 1", "set": {"mark": 2}, "else": {"mark": "(mark[me] + 1) % 4"}}]
    data = game([{"first": PHASES}, {"when": "any(a)", "set": {"log": "log + 1"}, "else": {"log": "log + 2"}},
                 {"first": rules}])
    compare(load_spec(data), {"horizon": 5 + seed}, 4, seed, 30, seed + 1)


def diagnostics(data: dict[str, Any]) -> list[str]:
    return [d.format() for d in check_spec(load_spec(data))[1]]


def test_a_group_mixing_global_and_per_agent_rules_is_refused() -> None:
    found = diagnostics(game([{"first": [{"when": "phase == 0", "set": {"phase": 1}}, {"set": {"mark": 1}}]}]))
    assert any(f.startswith("error [static] step[0]: the rules of an exclusive group must all set global state")
               for f in found), found


def test_rules_after_an_unconditional_rule_of_a_group_are_flagged() -> None:
    found = diagnostics(game([{"first": [{"set": {"phase": 1}}, {"when": "phase == 1", "set": {"phase": 2}}]}]))
    assert any(f.startswith("warning [static] step[0].first[0]: this rule always fires") for f in found), found


def test_errors_in_a_group_name_the_rule() -> None:
    found = diagnostics(game([{"first": [{"when": "phase == 0", "set": {"phase": 1}},
                                         {"when": "phse == 1", "set": {"phase": 2}}]},
                              {"when": "phase == 0", "set": {"log": 1}, "else": {"lgo": 2}}]))
    assert any(f.startswith("error [static] step[0].first[1].when: undefined name `phse`") for f in found), found
    assert any(f.startswith("error [static] step[1].else.lgo: cannot set `lgo`") for f in found), found


def test_one_run_reports_every_error_of_a_rule_and_its_else() -> None:
    found = diagnostics(game([{"when": "phse == 0", "set": {"lg": 1, "log": "lg"}, "else": {"log": "phase +"}}]))
    for start in ("error [static] step[0].when: undefined name `phse`", "error [static] step[0].set.lg: cannot set `lg`",
                  "error [static] step[0].else.log:"):
        assert any(f.startswith(start) for f in found), (start, found)


def test_a_misspelt_else_is_suggested_as_the_spec_writes_it() -> None:

    data = game([{"when": "any(a)", "set": {"log": "log + 1"}, "elze": {"log": "log + 2"}}])
    with pytest.raises(SpecError) as e:
        load_spec(data)
    hints = [d.hint or "" for d in e.value.diagnostics]
    assert any("did you mean `else`?" in h for h in hints), hints


@pytest.mark.parametrize("name", ["max_cycles", "render_mode", "action_mask_in_obs"])
def test_a_param_named_like_an_env_option_is_refused(name: str) -> None:
    data = game([{"set": {"log": "log + 1"}}])
    data["params"][name] = {"default": 3, "min": 1, "max": 9, "type": "int"}
    with pytest.raises(SpecError) as e:  # refused by the schema, saying what for
        load_spec(data)
    assert any(f"`{name}` is reserved for an option of every generated env" in d.message
               and f"`{name}_param`" in d.message for d in e.value.diagnostics)
