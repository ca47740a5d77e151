"""A task's own words as names (issue 42, point 1), and answers that were silently wrong (point 7).

A choice, an argument or a reward term keeps the user's word even where generated code cannot
use it (`pass`, `load`, `match`, `v`): its identifier there is mangled and the word is kept for
masks, `DECODE`, logs, probes and baselines. Where a name truly cannot be used the error says
what it is reserved for and suggests a rename in the word's own style.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch
from gymwright.errors import SpecError
from gymwright.spec import check_spec, load_spec
from gymwright.verify.verifier import verify

WORDS = yaml.safe_load("""
gymwright: 1
name: users_words
description: two players may pass, load food or move by a speed v; matching passes pay.
params:
  rounds: {default: 5, min: 1, max: 50, type: int, doc: rounds}
agents:
  player: {count: 2}
state:
  food: {type: int, init: 0, min: 0, max: 100, doc: food loaded}
  pos: {type: float, init: 0.0, min: -100, max: 100, doc: position}
actions:
  player:
    - {name: pass, doc: do nothing}
    - {name: load, legal: "food < 100", doc: load one food}
    - {name: move, args: {v: "[-1.0, 1.0]"}, doc: move by v}
step:
  - set: {food: "min(food + count(load), 100)", pos: "clip(pos + sum(v), -100, 100)"}
terminate: "t >= rounds"
rewards:
  player:
    - {name: match, expr: "1.0 * (pass[0] == pass[1])", doc: both passed or neither}
    - {name: load, expr: "0.1 * load[me] + 0.01 * v[me]", doc: loading and moving}
metrics:
  loaded: {expr: food, reduce: last, doc: food loaded}
  passes: {expr: "count(pass)", reduce: sum, doc: passes}
observe:
  player:
    - {name: food, expr: "food / 100", low: 0, high: 1, doc: food}
    - {name: passed, expr: "pass[me]", doc: passed last step}
baselines:
  always_pass:
    player:
      - {action: pass, doc: pass}
  go_right:
    player:
      - {action: "move(v=1.0)", doc: move right}
probes:
  - name: both pass and match
    actions: [{player_0: pass, player_1: pass}]
    expect: ["reward.player_0 == 1", "food == 0", "pass[0] and pass[1]", "metric.passes == 2"]
  - name: load and move
    actions: [{player_0: load, player_1: "move(v=1.0)"}]
    expect: ["food == 1", "pos == 1", "reward.player_0 == 1.1", "v[1] == 1", "load[0]"]
""")


def test_a_choice_a_term_and_an_argument_keep_the_users_word() -> None:
    """`pass` (keyword), `load` (an attribute the audit refuses), `match` (soft keyword) and `v`
    (the generator's namespace) were refused before; now the spec verifies, probes and baselines
    included, and everything a person or a policy sees carries the user's word."""
    report = verify(copy.deepcopy(WORDS), episodes=3)
    assert report.passed, report.to_prompt()
    compiled = compile_spec(copy.deepcopy(WORDS))
    assert compiled.module.DECODE["player"] == [("pass", {}), ("load", {}), ("move", {"v": -1.0}), ("move", {"v": 1.0})]
    env = compiled.parallel_env()
    _, infos = env.reset(seed=0)
    assert list(infos["player_0"]["action_mask"]) == [1, 1, 1, 1]
    _, rewards, _, _, infos = env.step({"player_0": 1, "player_1": 3})  # load; move(v=1)
    terms = infos["player_0"]["reward_terms"]
    assert set(terms) == {"match", "load"}, terms
    assert rewards["player_0"] == pytest.approx(1.1) and rewards["player_1"] == pytest.approx(1.01)


def test_users_words_run_the_same_on_the_batch_backend() -> None:
    compiled = compile_spec(copy.deepcopy(WORDS))
    benv = compile_batch(copy.deepcopy(WORDS), {}, batch_size=2)
    benv.reset(seed=5)
    env = compiled.parallel_env()
    env.reset(seed=5)
    for acts in ([0, 0], [1, 3], [2, 0], [1, 1]):
        _, rew_b, *_ = benv.step(np.array([acts, acts]))
        _, rew, *_ = env.step({"player_0": acts[0], "player_1": acts[1]})
        assert rew_b[0].tolist() == pytest.approx([rew["player_0"], rew["player_1"]])


def test_an_expression_reads_a_keyword_choice_with_its_columns() -> None:
    spec = copy.deepcopy(WORDS)
    spec["rewards"]["player"][0]["expr"] = "1.0 * (pass[0] == passs[1])"
    _, diags = check_spec(load_spec(spec))
    [d] = [d for d in diags if d.severity.value == "error"]
    assert "undefined name `passs`" in d.message and "did you mean `pass`" in d.hint
    assert d.trace[-1].index("^") - d.trace[0].index("1") == len("1.0 * (pass[0] == ")


@pytest.mark.parametrize(("where", "name", "why", "rename"), [
    ("params", "pass", "Python syntax", "pass_param"),
    ("state", "load", "an attribute generated code may not use", "load_state"),
    ("state", "if", "expression syntax", "if_state"),
    ("params", "v", "the variables of generated code", "v_param"),
    ("params", "render_mode", "an option of every generated env", "render_mode_param"),
    ("params", "self", "the generated env's own instance", "self_param"),
    ("choice", "me", "the index of the agent", "me_action"),
    ("choice", "else", "expression syntax", "else_action"),
])
def test_a_reserved_name_says_what_for_and_suggests_a_rename(where: str, name: str, why: str, rename: str) -> None:
    spec = copy.deepcopy(WORDS)
    if where == "choice":
        spec["actions"]["player"][0]["name"] = name
    elif where == "params":
        spec["params"][name] = {"default": 1, "min": 0, "max": 2, "type": "int"}
    else:
        spec["state"][name] = {"type": "int", "init": 0, "min": 0, "max": 1}
    try:
        _, diags = check_spec(load_spec(spec))
    except SpecError as e:  # refused by the schema (most reserved names are)
        diags = e.diagnostics
    text = " ".join(f"{d.message} {d.hint}" for d in diags if d.severity.value == "error")
    assert f"`{name}` is reserved for" in text and why in text and f"`{rename}`" in text, text


def test_every_reserved_name_is_in_the_language_reference() -> None:
    from gymwright.spec.names import name_problem, reserved_table
    from gymwright.spec.reference import reference_markdown

    ref = reference_markdown()
    for names, why, _ in reserved_table():
        assert names in ref and why in ref
    assert ("`self`", "the generated env's own instance (the first argument of its constructor)", "params") \
        in reserved_table()
    assert name_problem("pass", "choice") is None and name_problem("load", "term") is None
    assert name_problem("v", "argument") is None and name_problem("match", "param") is None


# -- point 7: silent wrong answers --------------------------------------------------------------

NONE_YET = yaml.safe_load("""
gymwright: 1
name: none_yet
consts:
  pay: {value: [1.0, 2.0, 3.0], doc: paid per last choice}
agents:
  player: {count: 2}
agent_state:
  last: {type: int, init: -1, min: -1, max: 2, doc: "last choice, -1 = none yet"}
actions:
  player:
    - {name: pick, args: {k: "arange(3)"}}
step:
  - set: {last: "k[me] if pick[me] else last[me]"}
terminate: "t >= 3"
rewards:
  player:
    - {name: paid, expr: "pay[last[me]]"}
observe:
  player: ["last[me]"]
""")


def test_an_index_interval_below_zero_is_an_error_like_one_past_the_end() -> None:
    """`pay[last[me]]` with -1 = none yet paid the last entry (numpy wraps), with no warning."""
    _, diags = check_spec(load_spec(copy.deepcopy(NONE_YET)))
    [d] = [d for d in diags if d.severity.value == "error"]
    assert d.path == "rewards.player[0].expr"
    assert "index range [-1, 2] reaches below 0" in d.message and "max(" in d.hint
    fixed = copy.deepcopy(NONE_YET)
    fixed["rewards"]["player"][0]["expr"] = "pay[max(last[me], 0)] if last[me] >= 0 else 0.0"
    cs, diags = check_spec(load_spec(fixed))
    assert cs is not None, diags


CASCADE = yaml.safe_load("""
gymwright: 1
name: cascade
params:
  n: {default: 3, min: 1, max: 10, type: int}
consts:
  table: {value: "linspace(0, 1, n) + undefined_thing"}
  twice: {value: "table * 2"}
agents:
  walker: {count: 2}
state:
  x: {type: float, init: 0.0, min: -100, max: 100}
  best: {type: float, init: "table[0]", min: 0, max: 5}
actions:
  walker:
    - {name: go}
step:
  - set: {x: "clip(x + count(go) + twice[0], -100, 100)"}
terminate: "t >= 5"
rewards:
  walker:
    - {name: r, expr: "table[1] + twice[1]"}
observe:
  walker: [x]
""")


def test_one_failing_const_is_one_error_not_a_cascade() -> None:
    _, diags = check_spec(load_spec(copy.deepcopy(CASCADE)))
    errors = [d for d in diags if d.severity.value == "error"]
    assert [d.path for d in errors] == ["consts.table"], [f"{d.path}: {d.message}" for d in errors]
    assert "undefined_thing" in errors[0].message


def test_a_float_param_in_argument_values_is_not_told_it_sizes_arrays() -> None:
    """The rendezvous: `linspace(-speed, speed, 5)` fixes `speed` per module, but sizes nothing."""
    spec = yaml.safe_load("""
gymwright: 1
name: rendezvous_line
params:
  speed: {default: 1.0, min: 0.5, max: 2.5, doc: the largest step}
  length: {default: 10.0, min: 2.0, max: 50.0}
  steps: {default: 5, min: 2, max: 9, type: int}
agents:
  walker: {count: 2}
agent_state:
  x: {type: float, init: "uniform(0, length)", min: 0, max: length}
actions:
  walker:
    - {name: move, args: {v: "linspace(-speed, speed, steps)"}}
step:
  - set: {x: "clip(x[me] + v[me], 0, length)"}
terminate: "t >= 10"
rewards:
  walker:
    - {name: meet, expr: "-abs(x[0] - x[1]) / length"}
observe:
  walker: ["x[me] / length"]
""")
    cs, diags = check_spec(load_spec(copy.deepcopy(spec)))
    assert cs is not None, [d.message for d in diags]
    assert {"speed", "steps"} <= cs.structural
    spec["params"]["steps"]["type"] = "float"  # a float that really sizes an array is still refused
    _, diags = check_spec(load_spec(spec))
    assert any("param `steps` sizes arrays" in d.message for d in diags)


def test_soft_keywords_are_free_for_every_name() -> None:
    """`match`, `case` and `type` are keywords only at the start of a statement: a variable, a
    param and a metric may be called so (they were refused as keywords)."""
    spec = copy.deepcopy(WORDS)
    spec["params"]["type"] = {"default": 2, "min": 1, "max": 5, "type": "int"}
    spec["state"]["match"] = {"type": "int", "init": 0, "min": 0, "max": 100}
    spec["step"].append({"set": {"match": "min(match + type * count(pass), 100)"}})
    spec["metrics"]["case"] = {"expr": "match", "reduce": "last"}
    env = compile_spec(spec).parallel_env(type=3)
    env.reset(seed=0)
    env.step({"player_0": 0, "player_1": 0})
    assert env.unwrapped.v.match == 6


def test_a_role_a_metric_and_a_baseline_keep_the_users_word_on_both_backends() -> None:
    """Review of issue 42: a role, a metric or a baseline never becomes an identifier of generated
    code (a string, or inside a name of its own: `_script_import`, `MASK_ROWS_pass`, a probe's
    `metric_load`), so `pass`, `load`, `import` and `format` are free for them, as for a choice."""
    from gymwright.spec.names import name_problem

    text = yaml.safe_dump(copy.deepcopy(WORDS)).replace("player", "pass").replace("loaded", "load")
    text = text.replace("always_pass:", "import:").replace("go_right:", "format:")
    spec = yaml.safe_load(text)
    spec["probes"][1]["expect"].append("metric.load == 1")
    report = verify(copy.deepcopy(spec), episodes=3)
    assert report.passed, report.to_prompt()
    env = compile_spec(copy.deepcopy(spec)).parallel_env()
    env.reset(seed=0)
    assert env.possible_agents == ["pass_0", "pass_1"]
    acts = {a: env.scripted_action("format", a) for a in env.agents}
    _, _, _, _, infos = env.step(acts)
    assert env.unwrapped.v.pos == 2.0
    benv = compile_batch(copy.deepcopy(spec), {}, batch_size=2)
    benv.reset(seed=0)
    for name in ("import", "format"):
        benv.step(benv.scripted_actions(name))
    assert benv.v.pos.tolist() == [2.0, 2.0]
    for kind in ("role", "metric", "baseline"):
        assert name_problem("pass", kind) is None and name_problem("load", kind) is None
        assert "expression syntax" in (name_problem("if", kind) or "")


def test_the_planning_note_says_what_is_refused_and_nothing_else() -> None:
    """`names.plan_note` (the planning prompts' names rule) names each reserved word with the kinds
    the checker refuses it for: the words it calls free are free, the ones it refuses are refused."""
    from gymwright.spec.names import (
        ENV_OPTIONS,
        EXPRESSION_NAMES,
        NAMESPACES,
        name_problem,
        plan_note,
    )

    note = plan_note()
    for word in ("pass", "load", "match", "v"):
        assert f"`{word}`" in note
        for kind in ("choice", "argument", "term", "role", "metric", "baseline"):
            assert name_problem(word, kind) is None, (word, kind)
    for word in EXPRESSION_NAMES:
        assert f"`{word}`" in note
        assert all(name_problem(word, k) for k in ("param", "const", "enum member", "variable", "choice", "argument"))
    for word in NAMESPACES:
        assert f"`{word}`" in note and all(name_problem(word, k) for k in ("param", "const", "variable"))
    for word in ENV_OPTIONS:
        assert f"`{word}`" in note and name_problem(word, "param")
    assert "a role, a metric or a baseline may be the task's own word" in note


def test_an_env_option_is_reserved_for_params_only_as_the_reference_says() -> None:
    """Review of issue 42: the checker kept its own list of reserved names (`checks.context.RESERVED`)
    that refused `render_mode`, `max_cycles`, ... for every declaration, though the reference lists
    them for params only. One list now (`spec.names.reserved_for`): a const, a variable or an enum
    member may take them, on both backends, and the env's own option stays apart."""
    spec = copy.deepcopy(WORDS)
    spec["consts"] = {"max_cycles": {"value": 2}, "modes": {"enum": ["self", "action_mask_in_obs"]}}
    spec["state"]["render_mode"] = {"type": "int", "init": "max_cycles + self", "min": 0, "max": 100}
    spec["step"].append({"set": {"render_mode": "min(render_mode + 1, 100)"}})
    report = verify(copy.deepcopy(spec), episodes=3)
    assert report.passed, report.to_prompt()
    env = compile_spec(copy.deepcopy(spec)).parallel_env(max_cycles=1)
    env.reset(seed=0)
    assert env.unwrapped.v.render_mode == 2 and env.unwrapped.p.max_cycles == 2
    _, _, _, trunc, _ = env.step({"player_0": 0, "player_1": 0})
    assert all(trunc.values()) and env.unwrapped.v.render_mode == 3  # the option cut the episode
    benv = compile_batch(copy.deepcopy(spec), {}, batch_size=2)
    benv.reset(seed=0)
    benv.step(np.zeros((2, 2), dtype=np.int64))
    assert benv.v.render_mode.tolist() == [3, 3]
