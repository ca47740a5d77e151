"""The reference states its conventions (issue 16, item 9): they are in the docs and in every
design prompt, and each one is what the compiled environments do."""

from __future__ import annotations

from typing import Any

from gymwright.compile import compile_spec
from gymwright.diagnostic import Severity
from gymwright.spec.checker import check_spec
from gymwright.spec.loader import load_spec
from gymwright.spec.reference import CONVENTIONS, compact_reference, prompt_reference
from gymwright.verify.validate import validate
from tests.support.paths import ROOT

DOC = (ROOT / "docs" / "spec-language.md").read_text()


def chase(**extra: Any) -> dict[str, Any]:
    data = {
        "name": "chase",
        "agents": {"predator": {"count": 2}, "prey": {"count": 1}},
        "consts": {"vals": [10, 20, 30]},
        "state": {"x": {"type": "int", "init": 0, "min": 0, "max": 5}},
        "actions": {"predator": [{"name": "go", "args": {"share": "[1, 2, 3]"}}, {"name": "stay"}],
                    "prey": [{"name": "go", "args": {"share": "[1, 2, 3]"}}, {"name": "stay"}]},
        "step": [{"set": {"x": 5}}],
        "rewards": {"predator": [{"name": "r", "expr": "x"}], "prey": [{"name": "r", "expr": "x"}]},
        "observe": {r: ["me", "share", "go", "roll(vals, -me)[0]"] for r in ("predator", "prey")},
    }
    data.update(extra)
    return data


def test_every_prompt_and_the_docs_state_the_conventions() -> None:
    for text in (prompt_reference([]), prompt_reference(["grid", "channel"]), DOC):
        assert all(c in text for c in CONVENTIONS)
    assert "n_<role>" in prompt_reference([]) and "`else`" in prompt_reference([])
    assert "First: first: list of Rule" in compact_reference()


def test_the_conventions_are_what_the_envs_do() -> None:
    cs, _ = check_spec(load_spec(chase()))
    assert cs is not None
    assert {"n_agents", "n_predator", "n_prey", "is_predator", "is_prey", "t"} <= set(cs.symbols)
    assert cs.symbols["is_prey"].info.value.tolist() == [False, False, True]
    env = compile_spec(load_spec(chase())).parallel_env()
    env.reset(seed=0)
    # predator_0 takes go(share=3), predator_1 stays (another choice), prey_0 does not act
    obs, rew, *_ = env.step({"predator_0": 2, "predator_1": 3})
    assert obs["prey_0"][0] == 2  # prey_0 is global index 2 (ids count within the role)
    assert obs["predator_0"][1:4].tolist() == [3, 0, 0] and obs["predator_0"][4:7].tolist() == [1, 0, 0]
    assert [obs[a][7] for a in ("predator_0", "predator_1", "prey_0")] == [10, 20, 30]  # roll(x, -me)[0] == x[me]
    assert rew == {"predator_0": 5.0, "predator_1": 5.0, "prey_0": 5.0}  # rewards see the state after the rules


def test_agents_a_probe_step_leaves_out_take_no_action() -> None:
    probe = {"name": "only predator_0 acts", "actions": [{"predator_0": "go(share=2)"}],
             "expect": ["action[0] == 1", "action[1] == -1", "action[2] == -1", "not go[2] and share[2] == 0"]}
    found = [d.format() for d in validate(chase(probes=[probe])) if d.severity == Severity.error]
    assert found == []


def test_the_generic_doc_key_is_stated_once_not_in_every_table() -> None:
    text = prompt_reference([])
    assert text.count("Documentation for people and the engineer.") == 0
    assert "also take `doc`" in text and "A step rule: when `when` holds" in text
    assert "| `else` | map name -> expr or null |" in text and "| `move` |" not in text  # grid keys only with a grid
    assert "| `move` |" in prompt_reference(["grid"])
