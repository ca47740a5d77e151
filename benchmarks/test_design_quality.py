"""Quick checks of the design-quality benchmark: the task set, the scoring, the watchdog and the
hand-worked behaviour scenarios (`benchmarks/behaviour/`, run by `benchmarks/scenarios.py`).

    .venv/bin/python -m pytest benchmarks/test_design_quality.py
"""

from __future__ import annotations

import ast
import copy
import json
import re
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import design_quality as dq  # noqa: E402
import scenarios as sc  # noqa: E402

from gymwright.diagnostic import Severity  # noqa: E402
from gymwright.llm.base import Completion, TransientLLMError  # noqa: E402
from gymwright.spec.loader import library_names, load_spec, read_data  # noqa: E402
from gymwright.spec.model import Probe  # noqa: E402
from gymwright.verify.validate import validate  # noqa: E402

TASKS = dq.load_tasks()
OWN = dq.load_tasks(own=True)  # issue 42's own tasks, kept out of the default set


# ----------------------------------------------------------------------------- the task set
def test_task_set_size_and_coverage() -> None:
    assert len(TASKS) >= 40
    assert len({t.id for t in TASKS}) == len(TASKS)
    off = [t for t in TASKS if not t.in_library]
    assert len(off) >= 10 and all(not t.params for t in off)
    counts = {name: sum(t.template == name for t in TASKS) for name in library_names()}
    assert min(counts.values()) >= 2, counts
    assert {t.template for t in TASKS if t.in_library} <= set(library_names())
    subset = [t for t in TASKS if t.spec_subset]
    assert len(subset) == 6 and any(not t.in_library for t in subset)


@pytest.mark.parametrize("task", [t for t in TASKS if t.in_library], ids=lambda t: t.id)
def test_stated_params_exist_in_range_and_typed(task: dq.Task) -> None:
    spec = load_spec(task.template)
    assert task.params, "a library paraphrase states at least one param"
    for name, value in task.params.items():
        assert name in spec.params, f"{task.template} has no param {name}"
        p = spec.params[name]
        if p.type == "bool":
            assert isinstance(value, bool)
            continue
        assert not isinstance(value, bool)
        assert isinstance(value, int if p.type == "int" else int | float)
        assert p.min is None or value >= p.min
        assert p.max is None or value <= p.max


def test_first_tasks_are_a_fair_sample() -> None:
    """Interleaved: the first 10 tasks are one paraphrase of every library spec."""
    assert sorted(t.template for t in TASKS[:10]) == sorted(library_names())
    assert any(not t.in_library for t in TASKS[:20])


def test_tasks_are_held_out_from_the_designer_tests() -> None:
    source = (Path(__file__).parents[1] / "tests" / "design" / "test_offline_designer.py").read_text()
    quoted = {" ".join(node.value.split()).lower() for node in ast.walk(ast.parse(source))
              if isinstance(node, ast.Constant) and isinstance(node.value, str)
              and len(node.value) >= 25}
    assert len(quoted) > 20
    for t in TASKS:
        text = t.task.lower()
        assert not any(q in text for q in quoted), t.id


# ----------------------------------------------------------------------------- scoring
def outcome(task_id: str = "x", *, expected: str | None = "stag_hunt", params: dict | None = None,
            passed: bool = True, template: str | None = "stag_hunt", got: dict | None = None,
            **kw: object) -> dq.Outcome:
    return dq.Outcome("d", task_id, expected, params if params is not None else {"n_hunters": 4},
                      passed=passed, status=kw.pop("status", "passed" if passed else "failed"),
                      template=template, params=got if got is not None else {"n_hunters": 4},
                      **kw)  # type: ignore[arg-type]


def test_same_value() -> None:
    assert dq.same_value(0.95, 0.95 + 5e-7)
    assert not dq.same_value(0.95, 0.951)
    assert dq.same_value(5.0, 5) and dq.same_value(5, 5.0)
    assert not dq.same_value(True, 1) and not dq.same_value(1, True)
    assert dq.same_value(False, False) and not dq.same_value(False, None)


def test_params_right_counts_stated_params_only_and_needs_the_template() -> None:
    o = outcome(params={"n_hunters": 6, "threshold": 4}, got={"n_hunters": 6, "threshold": 2,
                                                               "rounds": 99})
    assert dq.params_right(o) == (1, 2)
    assert dq.wrong_params(o) == ["threshold=2 (want 4)"]
    wrong = outcome(template="public_goods", got={"n_hunters": 4})
    assert dq.params_right(wrong) == (0, 1)


def test_refused_is_a_clean_no_spec_failure() -> None:
    assert dq.refused(outcome(expected=None, params={}, passed=False, template=None))
    assert not dq.refused(outcome(expected=None, params={}, passed=True))
    assert not dq.refused(outcome(expected=None, params={}, passed=False, template=None,
                                  status="timeout"))
    assert not dq.refused(outcome(expected=None, params={}, passed=False, template=None,
                                  spec_name="cournot"))
    assert not dq.refused(outcome(expected=None, params={}, passed=False, template=None, calls=6))
    # a model's "none" in template mode is a refusal; a model that failed otherwise is not
    assert dq.refused(outcome(expected=None, params={}, passed=False, template="none", calls=1))
    assert not dq.refused(outcome(expected=None, params={}, passed=False, template="public_goods", calls=2))


def test_score_row() -> None:
    outs = [
        outcome("a", calls=2, prompt_tokens=100, completion_tokens=20, wall_s=1.0),
        outcome("b", params={"n_hunters": 6}, calls=3, prompt_tokens=100, completion_tokens=30,
                wall_s=3.0),  # right template, wrong param
        outcome("c", template="public_goods", passed=True, calls=2, wall_s=2.0),  # wrong template
        outcome("d", passed=False, template=None, calls=5, wall_s=10.0, status="timeout",
                timed_out=True),
        outcome("e", expected=None, params={}, passed=False, template=None, wall_s=0.5),
        outcome("f", expected=None, params={}, passed=True, template="stag_hunt", calls=2,
                wall_s=0.5),
    ]
    r = dq.score("d", "template", outs)
    assert (r.tasks, r.library_tasks, r.verified, r.right_template) == (6, 4, 3, 2)
    assert r.params_all_right == 1 and r.params_share == pytest.approx(0.25)
    assert (r.off_library, r.off_refused, r.off_verified, r.verified_total) == (2, 1, 1, 4)
    assert (r.calls, r.tokens, r.timeouts) == (14, 250, 1)
    assert r.wall_median == pytest.approx(1.5) and r.wall_total == pytest.approx(17.0)
    table = dq.markdown_table([r, dq.score("s", "spec", outs[:2])])
    row, spec_row = table.splitlines()[2:]
    assert "| 3/4 (75%) | 2/4 (50%) | 1/4 (25%) | 25% | 1/2 (50%) | 1/2 (50%) | 0/0/4 | 3.5 | 62 |" in row  # template mode may refuse
    assert "| n/a | n/a | n/a |" in spec_row


def test_offline_row_reports_refusals_and_no_model_cost() -> None:
    outs = [outcome("a", calls=0), outcome("e", expected=None, params={}, passed=False,
                                           template=None)]
    row = dq.markdown_table([dq.score("offline", "offline", outs)]).splitlines()[2]
    assert "| 1/1 (100%) | 0/1 (0%) | 0/0/1 | 0 | 0 |" in row


def test_failure_reasons() -> None:
    assert dq.failure_reason(outcome()) is None
    assert dq.failure_reason(outcome(expected=None, params={}, passed=False, template=None)) is None
    assert dq.failure_reason(outcome(template="public_goods")) == "wrong template (verified)"
    assert dq.failure_reason(outcome(got={"n_hunters": 2})) == "params: n_hunters=2 (want 4)"
    assert dq.failure_reason(outcome(expected=None, params={}, template=None, spec_name="duo")) \
        == "verified a new spec `duo` for an off-library task"
    lines = dq.failures_table([outcome(), outcome(template="public_goods")]).splitlines()
    assert len(lines) == 3 and "| stag_hunt n_hunters=4 | public_goods |" in lines[2]


def test_parse_designer_and_task_selection() -> None:
    assert dq.parse_designer("offline") == dq.Designer(None, "offline")
    d = dq.parse_designer("local:qwen2.5-coder-1.5b@template[20]")
    assert d == dq.Designer("local:qwen2.5-coder-1.5b", "template", 20)
    assert d.label == "local:qwen2.5-coder-1.5b --mode template"
    assert len(d.tasks(TASKS, None)) == 20 and len(d.tasks(TASKS, 5)) == 20
    spec = dq.parse_designer("openai:gpt-4o-mini@spec")
    assert [t.spec_subset for t in spec.tasks(TASKS, None)] == [True] * 6
    assert len(dq.parse_designer("offline").tasks(TASKS, 7)) == 7


def test_template_used_reads_the_template_reply() -> None:
    attempts = [SimpleNamespace(stage="template", parsed={"template": "public_goods"}),
                SimpleNamespace(stage="template", parsed={"template": "stag_hunt"}),
                SimpleNamespace(stage="params", parsed={"params": {}})]
    assert dq.template_used(SimpleNamespace(attempts=attempts), "template") == "stag_hunt"
    assert dq.template_used(SimpleNamespace(attempts=attempts), "spec") is None
    assert dq.template_used(SimpleNamespace(template="x", attempts=[]), "offline") == "x"


def test_fits_the_task_counts_the_review_over_verified_designs() -> None:
    outs = [outcome("a", verified=True, fits_task="yes"), outcome("b", verified=True, fits_task="no",
                                                                  passed=False, status="unfit"),
            outcome("c", passed=False, template=None, fits_task="unknown")]
    assert dq.score("d", "spec", outs).fits == "1/1/0"


def test_prompt_sizes_meet_the_targets() -> None:
    """Issue 17: a non-grid spec prompt <= 25 KB; a repair never larger than its spec prompt."""
    rows = dq.prompt_sizes(TASKS)
    assert len(rows) == len(TASKS)
    for r in rows:
        assert r["repair_bytes"] <= r["spec_bytes"], r
        if r["mechanics"] == "none":
            assert r["spec_bytes"] <= 25_000, r
    assert "| spec prompt | repair prompt |" in dq.prompt_size_table(rows)


def test_log_round_trip(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    first, again = outcome("a", passed=False), outcome("a")
    log.write_text("".join(json.dumps({"mode": "template", **dq.asdict(o)}) + "\n"
                           for o in (first, again)))
    grouped = dq.read_log([log])
    assert list(grouped) == [("d", "template")] and grouped["d", "template"] == [again]


# ----------------------------------------------------------------------------- running designs
def test_offline_design_end_to_end() -> None:
    task = dq.Task("t", "four hunters choose stag or hare each round for 30 rounds", "stag_hunt",
                   {"n_hunters": 4, "rounds": 30})
    o = dq.run_design(dq.Designer(None, "offline"), task, None, 120)
    assert o.passed and o.template == "stag_hunt" and dq.failure_reason(o) is None
    assert o.calls == 0 and o.params["rounds"] == 30


class Hanging:
    """A provider whose call hangs until `close()` (as a local server's does when stopped)."""

    name, model, supports_schema = "fake", "hang", True

    def __init__(self) -> None:
        self.closed = threading.Event()
        self.calls = 0

    def complete(self, request: object) -> Completion:
        self.calls += 1
        self.closed.wait(30)
        raise TransientLLMError("connection lost")

    def close(self) -> None:
        self.closed.set()


def test_a_hung_design_is_stopped_by_the_timeout() -> None:
    provider = Hanging()
    task = dq.Task("t", "two hunters choose stag or hare", "stag_hunt", {"n_hunters": 2})
    o = dq.run_design(dq.Designer("fake:hang", "template"), task, provider, 0.5)
    assert o.timed_out and o.status == "timeout" and not o.passed
    assert provider.calls <= 1  # a retry after the timeout hits the watchdog, not the provider
    assert o.wall_s < 20


# ----------------------------------------------------------------------------- behaviour
SCENARIO_FILES = sorted(sc.SCENARIO_DIR.glob("*.yaml"))
REFERENCE_FILES = sorted((sc.SCENARIO_DIR / "reference").glob("*.yaml"))
BY_ID = {t.id: t for t in TASKS + OWN}


def at_stated_params(task: dq.Task) -> dict:
    """The library spec of `task` with the params the text states as its defaults."""
    data = copy.deepcopy(read_data(task.template)[0])
    for k, v in task.params.items():
        data["params"][k]["default"] = v
    return data


def kinds(results: list[sc.ScenarioResult]) -> list[str]:
    return [r.kind for r in results]


def test_scenario_files_are_hand_worked_probes_of_benchmark_tasks() -> None:
    assert len(SCENARIO_FILES) >= 12
    assert sum(not BY_ID[f.stem].in_library for f in SCENARIO_FILES) >= 3
    for f in SCENARIO_FILES:
        assert f.stem in BY_ID, f"{f.name} names no task of design_tasks.yaml"
        assert f.read_text().startswith("# Hand-worked scenarios for the "), f.name
        for s in sc.load_scenarios(f.stem):
            Probe.model_validate(s)
            assert "params" not in s, f"{f.name}: {s['name']} must run at the design's own defaults"
    assert {f.stem for f in REFERENCE_FILES} <= {f.stem for f in SCENARIO_FILES}


@pytest.mark.parametrize("task_id", [f.stem for f in SCENARIO_FILES if BY_ID[f.stem].in_library])
def test_library_scenarios_pass_on_the_library_spec_at_the_stated_params(task_id: str) -> None:
    results = sc.run_scenarios(at_stated_params(BY_ID[task_id]), sc.load_scenarios(task_id))
    assert all(r.passed for r in results), [(r.name, r.reason) for r in results if not r.passed]


@pytest.mark.parametrize("path", REFERENCE_FILES, ids=lambda p: p.stem)
def test_off_library_scenarios_can_be_met_by_a_hand_written_design(path: Path) -> None:
    data = read_data(path)[0]
    assert [d.format() for d in validate(data) if d.severity == Severity.error] == []
    results = sc.run_scenarios(data, sc.load_scenarios(path.stem))
    assert all(r.passed for r in results), [(r.name, r.reason) for r in results if not r.passed]


def test_a_design_that_breaks_one_rule_fails_that_scenario_only() -> None:
    data = at_stated_params(BY_ID["cake-rubinstein"])
    data["terminate"] = "deal or round > max_rounds"  # one round too many
    results = sc.run_scenarios(data, sc.load_scenarios("cake-rubinstein"))
    assert kinds(results) == [sc.PASSED] * 4 + [sc.WRONG]
    assert "`terminated or truncated` is false" in results[4].reason
    data = at_stated_params(BY_ID["cake-rubinstein"])
    data["params"]["discount"]["default"] = 0.9  # the stated 0.95 left out
    results = sc.run_scenarios(data, sc.load_scenarios("cake-rubinstein"))
    assert kinds(results) == [sc.PASSED, sc.WRONG, sc.WRONG, sc.PASSED, sc.PASSED]
    assert "abs(ret.bargainer_1 - 0.57) = 0.0299999" in results[1].reason  # 0.9 * 0.6 = 0.54


def test_a_design_without_the_names_is_unmatched_with_the_reason() -> None:
    data = json.loads(json.dumps(at_stated_params(BY_ID["stag-safe-hare"])).replace('"hunter"', '"forager"'))
    results = sc.run_scenarios(data, sc.load_scenarios("stag-safe-hare"))
    assert kinds(results) == [sc.UNMATCHED] * 4
    assert "unknown agent id `hunter_0`" in results[0].reason
    text = json.dumps(at_stated_params(BY_ID["auction-one-shot"])).replace('"value":', '"valuation":')
    data = {**json.loads(re.sub(r"\bvalue\[me\]", "valuation[me]", text)), "probes": []}
    assert not [d for d in validate(data) if d.severity == Severity.error]  # a sound design
    results = sc.run_scenarios(data, sc.load_scenarios("auction-one-shot"))
    assert kinds(results)[0] == sc.UNMATCHED
    assert "`value` is not a state or agent_state variable" in results[0].reason


def test_no_spec_fails_every_scenario() -> None:
    results = sc.run_scenarios(None, sc.load_scenarios("off-kuhn-poker"))
    assert len(results) >= 5 and kinds(results) == [sc.NO_SPEC] * len(results)
    assert sc.load_scenarios("no-such-task") == []


def scenarios_of(*kinds_: str) -> list[dict[str, str]]:
    return [{"name": f"s{i}", "kind": k, "reason": "" if k == sc.PASSED else "why"}
            for i, k in enumerate(kinds_)]


def test_behaviour_counts_scenarios_per_designer() -> None:
    outs = [outcome("a", scenarios=scenarios_of(sc.PASSED, sc.PASSED)),
            outcome("b", scenarios=scenarios_of(sc.PASSED, sc.WRONG, sc.UNMATCHED)),
            outcome("c"),  # a task without scenarios counts for nothing
            outcome("e", expected=None, params={}, passed=False, template=None,
                    scenarios=scenarios_of(sc.NO_SPEC, sc.NO_SPEC))]
    b = dq.behaviour(outs)
    assert (b.designs, b.designs_right) == (3, 1)
    assert (b.lib_passed, b.lib_total, b.off_passed, b.off_total) == (3, 5, 0, 2)
    assert (b.unmatched, b.wrong, b.no_spec) == (1, 1, 2)
    row = dq.behaviour_table([dq.score("d", "template", outs)]).splitlines()[2]
    assert row == "| d | 3/4 (75%) | 0/0/3 | 3/5 (60%) | 0/2 (0%) | 1/3 (33%) | 1 / 1 / 2 | n/a |"
    assert dq.failure_reason(outs[1]) == "2 of 3 scenarios failed: s1 (wrong: why); s2 (unmatched: why)"


def test_offline_design_of_a_task_with_scenarios_replays_them() -> None:
    o = dq.run_design(dq.Designer(None, "offline"), BY_ID["cake-rubinstein"], None, 120)
    assert o.passed and [s["kind"] for s in o.scenarios] == [sc.PASSED] * 5
    assert dq.failure_reason(o) is None


def test_with_scenarios_notes_say_which_tasks_ran() -> None:
    assert dq.subset_note("template", 4, 41, 4, 0, scenarios=16) == \
        "the first 4 of the tasks with scenarios: 4 of 41 tasks (4 library, 0 off-library)"
    assert dq.subset_note("offline", 16, 41, 12, 4, scenarios=16).startswith("the tasks with scenarios: 16 of 41")
    assert dq.subset_note("offline", 41, 41, 30, 11, scenarios=16) == ""
    with_files = [t for t in TASKS if sc.scenario_file(t.id).is_file()]
    assert len(with_files) == len([f for f in SCENARIO_FILES if not BY_ID[f.stem].own])


# ----------------------------------------------------------------------------- issue 42's own tasks
ISSUE_42_UNSEEN = ("ultimatum", "cournot", "blotto", "el farol", "foraging", "lewis", "second-price",
                   "fishery", "intersection", "rpsls", "minority game", "negotiation", "predator",
                   "box", "coverage", "speaker", "kuhn", "capture the flag", "trading", "rendezvous")


def test_own_tasks_are_off_library_spec_subset_tasks_apart_from_the_default_set() -> None:
    """Eight or more tasks of our own, none of issue 42's twenty unseen ones, each with scenarios
    and a reference design; the default set (and every figure recorded over it) is unchanged."""
    assert len(OWN) >= 8 and all(t.id.startswith("own-") for t in OWN)
    assert all(t.own and t.spec_subset and not t.in_library and not t.params for t in OWN)
    assert not any(t.own for t in TASKS) and len(TASKS) == 41
    for t in OWN:
        assert not any(word in t.task.lower() for word in ISSUE_42_UNSEEN), t.id
        assert sc.scenario_file(t.id).is_file() and (dq.REFERENCE_DIR / f"{t.id}.yaml").is_file(), t.id
    assert dq.reference_ids(OWN) == [t.id for t in OWN]


@pytest.mark.slow
def test_references_mode_verifies_every_own_reference_and_passes_its_scenarios(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`--references --own`: each own reference design verifies (random play included) and
    passes every scenario of its task, on the current package."""
    assert dq.main(["--references", "--own"]) == 0
    out = capsys.readouterr().out
    assert f"gymwright from {Path(dq.__file__).parents[1] / 'src' / 'gymwright'}" in out
    total = sum(len(sc.load_scenarios(t.id)) for t in OWN)
    assert f"| all ({len(OWN)}) | {len(OWN)}/{len(OWN)} | {total}/{total} (100%) | |" in out, out


def test_reference_table_names_what_failed() -> None:
    ok = dq.ReferenceCheck("a", True, "", scenarios_of(sc.PASSED, sc.PASSED))
    bad = dq.ReferenceCheck("b", False, "actions.x[0].name: `pass` is a Python keyword",
                            scenarios_of(sc.UNMATCHED, sc.UNMATCHED, sc.UNMATCHED))
    lines = dq.reference_table([ok, bad]).splitlines()
    assert lines[2] == "| a | yes | 2/2 (100%) | - |"
    assert lines[3] == ("| b | no (actions.x[0].name: `pass` is a Python keyword) | 0/3 (0%) "
                        "| s0 (unmatched: why); s1 (unmatched: why); and 1 more |")
    assert lines[4] == "| all (2) | 1/2 | 2/5 (40%) | |"


def own_reference(task_id: str) -> dict:
    return read_data(dq.REFERENCE_DIR / f"{task_id}.yaml")[0]


def _set(path: str, value: object):  # type: ignore[no-untyped-def]
    """A change of one rule: `value` at the dotted `path` of a reference (list indices as ints)."""
    def change(data: dict) -> None:
        *head, last = path.split(".")
        node = data
        for key in head:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is None:
            del node[last]
        else:
            node[last] = value
    return change


P, W = sc.PASSED, sc.WRONG
BROKEN_RULES = [  # (task, one rule broken, the scenarios' results)
    ("own-english-auction", _set("step.2.first.1.set.turn", "(turn + 1) % n_bidders"),  # no skipping
     [P, P, P, P, P, W, P, P]),
    ("own-truck-loading", _set("step.1.set.cargo",  # the last crate to the higher index
                               "0 if deliver[me] else cargo[me] + (load[me] and count(load and arange(n_trucks) > me) < depot)"),
     [P, P, P, W, P]),
    ("own-colour-match", _set("params.miss_penalty.default", 1.0), [P, W, W, W, P, P]),
    ("own-committee-vote", _set("step.0.set.passed", "count(yes) >= 2"), [P, W, P, P, P, P]),
    ("own-sprint-race", _set("rewards.runner.0.expr", "just[me] * count(not just)"),  # counts finishers
     [P, P, W, W]),
    ("own-hot-potato", _set("params.fuse.default", 7), [P, W, W, W, W]),
    ("own-warehouse-robots", _set("grid.collision", "block"), [W] + [P] * 9),
    ("own-tandem-climbers", _set("grid.can_move_sees_actions", None), None),  # refused: reads actions
]


@pytest.mark.parametrize(("task_id", "change", "expected"), BROKEN_RULES, ids=[b[0] for b in BROKEN_RULES])
def test_an_own_reference_that_breaks_one_rule_fails_those_scenarios(task_id: str, change, expected) -> None:  # type: ignore[no-untyped-def]
    data = own_reference(task_id)
    assert all(r.passed for r in sc.run_scenarios(data, sc.load_scenarios(task_id)))
    change(data)
    results = sc.run_scenarios(data, sc.load_scenarios(task_id))
    if expected is None:  # the spec no longer checks: every scenario is unmatched, with the reason
        assert kinds(results) == [sc.UNMATCHED] * len(results)
        assert "can_move" in results[0].reason
    else:
        assert kinds(results) == expected, [(r.name, r.kind, r.reason[:160]) for r in results]


def test_the_tandem_climbers_move_only_together() -> None:
    data = own_reference("own-tandem-climbers")
    data["grid"].pop("can_move")
    data["grid"].pop("can_move_sees_actions")  # climbers move on their own
    results = sc.run_scenarios(data, sc.load_scenarios("own-tandem-climbers"))
    assert [r.name for r in results if not r.passed] == ["different moves move neither",
                                                          "one climber staying holds the other"]
    assert "pos[0, 0] == 3" in results[1].reason


def test_an_even_committee_is_refused_by_the_reference_constraint() -> None:
    from gymwright.spec.checker import check_spec

    spec = load_spec(own_reference("own-committee-vote"))
    _, diags = check_spec(spec, {"n_members": 4})
    errors = [d for d in diags if d.severity == Severity.error]
    assert errors and "odd" in errors[0].format()
    _, diags = check_spec(spec, {"n_members": 7})
    assert not [d for d in diags if d.severity == Severity.error]
