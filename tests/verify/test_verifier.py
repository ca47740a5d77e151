"""The verifier: a corpus of broken-but-parseable specs, each with one defect for one check.

Every file in tests/data/broken/ starts with a comment block:

    # expect-stage: dynamic                     (the stage that must report it)
    # expect-path: step[0].set.level            (the diagnostic's path; may be empty)
    # expect-severity: error                    (error or warning)
    # expect-message: left its declared range   (a substring of the message)

An error stops the run at its stage (nothing later runs and the report fails); a warning
leaves the report passing, and is then the only finding above `info`.

Then: the report (JSON, repair prompt), stage stopping, the bound-violation and probe
messages, determinism (randomness cannot be injected through the spec language), the CLI.
No timing asserts (house rule): timings are only checked to be reported.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner, Result

from gymwright.cli import app
from gymwright.compile import compile_spec
from gymwright.compile.build import CompiledEnv, load_module
from gymwright.diagnostic import Diagnostic, Severity
from gymwright.spec.expr.functions import FUNCTIONS
from gymwright.spec.loader import library_names
from gymwright.verify.dynamic import determinism
from gymwright.verify.report import STAGES, VerificationReport
from gymwright.verify.verifier import verify
from tests.support.library_sample import every_spec
from tests.support.paths import DATA

CORPUS = DATA / "broken"
SPECS = sorted(CORPUS.glob("*.yaml"))
EPISODES = 20
runner = CliRunner()


# --------------------------------------------------------------------------- the corpus
@dataclass(frozen=True)
class Expected:
    stage: str
    path: str
    severity: Severity
    message: str


def expected(spec: Path) -> Expected:
    """The expectation in the file's leading comment block."""
    head: dict[str, str] = {}
    for line in spec.read_text().splitlines():
        if not line.startswith("#"):
            break
        m = re.match(r"#\s*expect-(stage|path|severity|message):\s?(.*)$", line)
        if m:
            head[m.group(1)] = m.group(2).strip()
    assert set(head) == {"stage", "path", "severity", "message"}, f"{spec.name}: incomplete header {head}"
    assert head["stage"] in STAGES, spec.name
    return Expected(head["stage"], head["path"], Severity(head["severity"]), head["message"])


@functools.cache
def report_of(spec: Path) -> VerificationReport:
    return verify(spec, episodes=EPISODES)


def matches(d: Diagnostic, want: Expected) -> bool:
    return (d.stage == want.stage and d.path == want.path and d.severity is want.severity
            and want.message in d.message)


def findings(report: VerificationReport) -> list[str]:
    return [d.format() for d in report.diagnostics]


def ran(report: VerificationReport) -> list[str]:
    return [s.name for s in report.stages]


def test_corpus_has_a_spec_for_every_check() -> None:
    assert len(SPECS) >= 28
    wants = [expected(s) for s in SPECS]
    assert {w.stage for w in wants} == {"static", "dynamic", "probes", "degeneracy"}
    assert sum(w.severity is Severity.error for w in wants) >= 15
    assert sum(w.severity is Severity.warning for w in wants) >= 13


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_broken_spec_gets_its_diagnostic(spec: Path) -> None:
    want = expected(spec)
    report = report_of(spec)
    hits = [d for d in report.diagnostics if matches(d, want)]
    assert hits, f"no {want} in:\n" + "\n".join(findings(report))
    if want.severity is Severity.error:
        assert not report.passed
        assert report.stopped_at == want.stage
        assert ran(report) == list(STAGES[: STAGES.index(want.stage) + 1])
    else:
        assert report.passed, "\n".join(findings(report))
        assert report.stopped_at is None
        assert ran(report) == list(STAGES)


@pytest.mark.parametrize("spec", [s for s in SPECS if expected(s).severity is Severity.warning],
                         ids=lambda p: p.stem)
def test_warning_spec_has_no_other_finding(spec: Path) -> None:
    """Each spec has exactly one defect: nothing else may be reported above `info`."""
    want = expected(spec)
    report = report_of(spec)
    loud = [d for d in report.diagnostics if d.severity is not Severity.info]
    assert len(loud) == 1 and matches(loud[0], want), "\n".join(findings(report))


# --------------------------------------------------------------------------- report
def _spec(name: str, **replace: Any) -> dict[str, Any]:
    """A corpus spec as a dict, with some top-level sections replaced."""
    return {**yaml.safe_load((CORPUS / f"{name}.yaml").read_text()), **replace}


def _with_unused_param(name: str) -> dict[str, Any]:
    data = _spec(name)
    data["params"] = {**data["params"], "unused_knob": {"default": 1.0, "min": 0.0, "max": 2.0, "doc": "read by nothing"}}
    return data


THREE_CHOICES = {"walker": [{"name": "up"}, {"name": "wait"}, {"name": "rest"}]}


def test_report_json_has_every_field() -> None:
    report = verify(_with_unused_param("state_out_of_bounds_after_rule"), episodes=5)
    data = json.loads(report.to_json())
    assert data["passed"] is False
    assert data["stopped_at"] == "dynamic"
    assert data["stages"] == ["schema", "static", "compile", "dynamic"]
    assert set(data["timings"]) == set(data["stages"])
    assert all(isinstance(x, float) and x >= 0 for x in data["timings"].values())
    assert data["counts"]["error"] >= 1 and data["counts"]["warning"] == 1
    for d in data["diagnostics"]:
        assert set(d) == {"severity", "stage", "path", "message", "hint", "value", "trace"}
        assert d["severity"] in {"error", "warning", "info"} and d["stage"] in STAGES
    bound = next(d for d in data["diagnostics"] if d["path"] == "step[0].set.level")
    assert bound["severity"] == "error" and bound["value"] > 5 and bound["hint"]
    unused = next(d for d in data["diagnostics"] if d["path"] == "params.unused_knob")
    assert (unused["severity"], unused["stage"]) == ("warning", "static")
    assert json.loads(json.dumps(report.to_dict())) == data


def test_report_json_carries_a_trace() -> None:
    data = json.loads(report_of(CORPUS / "probe_expectation_fails.yaml").to_json())
    probe = next(d for d in data["diagnostics"] if d["stage"] == "probes")
    assert "level = 2" in probe["trace"]


def test_to_prompt_puts_errors_first_and_quotes_paths_and_fixes() -> None:
    report = verify(_with_unused_param("state_out_of_bounds_after_rule"), episodes=5)
    lines = report.to_prompt().splitlines()
    assert lines[0].startswith("Verification of spec `state_out_of_bounds_after_rule`: FAILED at stage `dynamic`")
    items = {i: m.groups() for i, ln in enumerate(lines) if (m := re.match(r"\d+\. \[(\w+)\] (\S+): ", ln))}
    severities = [sev for sev, _ in items.values()]
    assert "error" in severities and "warning" in severities
    assert severities == sorted(severities, key=["error", "warning", "info"].index)
    at = {path: i for i, (_, path) in items.items()}
    assert items[at["step[0].set.level"]][0] == "error"
    assert lines[at["step[0].set.level"]].endswith(")") and "`level` = " in lines[at["step[0].set.level"]]
    assert lines[at["step[0].set.level"] + 1].startswith("   fix: clamp the value")
    assert items[at["params.unused_knob"]][0] == "warning"
    assert lines[at["params.unused_knob"] + 1].startswith("   fix: use it in an expression, or remove it")
    assert lines[-1].startswith("Return the whole corrected spec")


def test_to_prompt_of_a_passing_spec_lists_its_warning() -> None:
    prompt = report_of(CORPUS / "dead_choice.yaml").to_prompt()
    assert prompt.splitlines()[0].startswith("Verification of spec `dead_choice`: PASSED (0 errors, 1 warnings")
    assert "1. [warning] actions.walker[2]: choice `rest` never changed state" in prompt
    assert "   fix: give it an effect in the step rules or remove it" in prompt
    assert "Return the whole corrected spec" not in prompt


# --------------------------------------------------------------------------- stage stopping
def test_a_schema_error_stops_before_static(tmp_path: Path) -> None:
    path = tmp_path / "garbage.yaml"
    path.write_text("gymwright: 1\nname: [not, a, name]\n")
    report = verify(path, episodes=5)
    assert ran(report) == ["schema"] and report.stopped_at == "schema" and not report.passed


def test_a_static_error_stops_before_compile() -> None:
    spec = _spec("dead_choice", rewards={"walker": [{"name": "climb", "expr": "1.0 * upp[me]"}]})
    report = verify(spec, episodes=5)
    assert ran(report) == ["schema", "static"] and report.stopped_at == "static"
    assert any(d.path == "rewards.walker[0].expr" and "upp" in d.message for d in report.diagnostics)


def test_a_dynamic_error_stops_before_probes_and_degeneracy() -> None:
    """The probe would fail and `rest` is dead, but neither later stage runs."""
    failing = {"name": "never checked", "actions": [{"walker_0": "up", "walker_1": "up"}], "expect": ["level == 3"]}
    spec = _spec("state_out_of_bounds_after_rule", probes=[failing], actions=THREE_CHOICES)
    report = verify(spec, episodes=5)
    assert ran(report) == ["schema", "static", "compile", "dynamic"] and report.stopped_at == "dynamic"
    assert {d.stage for d in report.diagnostics} == {"dynamic"}
    short = {"horizon": {"default": 2, "min": 1, "max": 2, "type": "int"}}
    probe_alone = verify(_spec("state_out_of_bounds_after_rule", probes=[failing], params=short), episodes=5)
    assert probe_alone.stopped_at == "probes"  # the same probe does fail once the bounds hold


def test_a_probe_error_stops_before_degeneracy() -> None:
    spec = _spec("probe_expectation_fails", actions=THREE_CHOICES)
    report = verify(spec, episodes=5)
    assert report.stopped_at == "probes" and ran(report)[-1] == "probes"
    assert not [d for d in report.diagnostics if d.stage == "degeneracy"]


# --------------------------------------------------------------------------- no false alarms
GIVING = """\
gymwright: 1
name: giving
description: Two players may give 0, 1 or 2 coins to a shared pot that pays back with a bonus.
params:
  horizon: {default: 6, min: 1, max: 20, type: int, doc: steps per episode}
agents: {player: {count: 2}}
state:
  pot: {type: float, init: 0.0, min: 0, max: 100}
agent_state:
  coins: {type: int, init: 10, min: 0, max: 10}
actions:
  player:
    - {name: wait}
    - {name: give, args: {amount: "[0, 1, 2]"}, legal: "amount <= coins[me]"}
step:
  - {set: {coins: "coins[me] - amount[me]"}}
  - {set: {pot: "pot + sum(amount)"}}
terminate: "t >= horizon"
rewards:
  player:
    - {name: share, expr: "1.5 * sum(amount) / n_agents - amount[me]"}
metrics:
  pot: {expr: pot, reduce: last}
observe:
  player: ["coins[me]", pot, {expr: "t / horizon", low: 0, high: 1}]
"""


def test_a_choice_whose_first_argument_value_does_nothing_is_not_dead(tmp_path: Path) -> None:
    """`give(amount=0)` is a no-op like `wait`, but `give(amount=1)` and `give(amount=2)` are not."""
    path = tmp_path / "giving.yaml"
    path.write_text(GIVING)
    report = verify(path, episodes=EPISODES)
    assert [d for d in report.diagnostics if d.severity is not Severity.info] == [], "\n".join(findings(report))


def test_the_same_verification_gives_the_same_report() -> None:
    """verify(seed=0) is reproducible: the same findings, word for word (timings aside)."""
    spec = CORPUS / "state_out_of_bounds_after_rule.yaml"
    runs = [[d.to_dict() for d in verify(spec, episodes=5).diagnostics] for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


# --------------------------------------------------------------------------- messages
def test_bound_violation_names_variable_rule_step_and_values() -> None:
    d = next(d for d in report_of(CORPUS / "state_out_of_bounds_after_rule.yaml").diagnostics
             if d.path == "step[0].set.level")
    m = re.fullmatch(r"`level` = (\d+\.\d+) left its declared range \[0, 5\] after step\[0\] "
                     r"\(seed (\d+), step (\d+)\)", d.message)
    assert m, d.message
    value, step = float(m.group(1)), int(m.group(3))
    assert d.value == value
    # two walkers climb at most 2 rungs a step, and this is the first step above 5
    assert 5 < value <= 7 and step >= 3 and value <= 2 * step


def test_agent_state_bound_violation_shows_every_agents_value() -> None:
    d = next(d for d in report_of(CORPUS / "agent_state_out_of_bounds_after_rule.yaml").diagnostics
             if d.path == "step[0].set.energy")
    assert re.fullmatch(r"`energy` = \[\d\.0, \d\.0\] left its declared range \[0, 3\] after step\[0\] "
                        r"\(seed \d+, step \d+\)", d.message), d.message
    assert isinstance(d.value, list) and len(d.value) == 2 and max(d.value) == 4


def test_probe_failure_carries_the_evaluated_sides() -> None:
    d = next(d for d in report_of(CORPUS / "probe_expectation_fails.yaml").diagnostics if d.stage == "probes")
    assert "probe `two climbers raise the level by three` failed after 1 steps: `level == 3` is false" in d.message
    assert d.trace[:2] == ["level = 2", "3 = 3"]
    assert "t=1  level=2" in d.trace


def test_probe_failure_quotes_reward_and_metric_sides_as_written() -> None:
    probe = {"name": "sides", "actions": [{"walker_0": "up", "walker_1": "wait"}],
             "expect": ["reward.walker_0 == 2 * reward.walker_1 + metric.height + 1"]}
    report = verify(_spec("probe_expectation_fails", probes=[probe]), episodes=5)
    d = next(d for d in report.diagnostics if d.stage == "probes")
    assert d.path == "probes[0].expect[0]"
    assert d.trace[:2] == ["reward.walker_0 = 1.0", "2 * reward.walker_1 + metric.height + 1 = 2.0"], d.trace


def test_empty_mask_shows_the_state() -> None:
    d = next(d for d in report_of(CORPUS / "empty_mask_turn_based.yaml").diagnostics if d.path == "actions.player")
    assert re.fullmatch(r"player_[01] must act but no action is legal \(seed \d+, step \d+\)", d.message)
    assert any("pile=0" in line for line in d.trace)


def test_no_end_names_the_missing_condition() -> None:
    d = next(d for d in report_of(CORPUS / "no_end_without_truncate.yaml").diagnostics if d.path == "truncate")
    assert "did not end within 1000 steps" in d.message
    assert "truncate: t >= max_steps" in d.hint


# --------------------------------------------------------------------------- determinism
RANDOM_SPEC = """\
gymwright: 1
name: every_random_function
description: Every random function of the language, in init and in step rules.
params:
  horizon: {default: 6, min: 1, max: 20, type: int, doc: steps per episode}
agents: {player: {count: 2}}
state:
  u: {type: float, init: "uniform(0, 1)", min: 0, max: 1}
  z: {type: float, init: "normal(0, 1)"}
  k: {type: int, init: "randint(0, 10)", min: 0, max: 9}
  coin: {type: bool, init: "bernoulli(0.5)"}
  pick: {type: float, init: "choice(linspace(0, 1, 5))", min: 0, max: 1}
  order: {type: int, shape: [4], init: "permutation(4)", min: 0, max: 3}
agent_state:
  w: {type: float, init: "uniform(0, 1)", min: 0, max: 1}
actions:
  player:
    - {name: go}
    - {name: stay}
step:
  - set: {u: "uniform(0, 1)", z: "z + normal(0, 1)", k: "randint(0, 10)", coin: "bernoulli(0.5)",
          pick: "choice(linspace(0, 1, 5))", order: "permutation(4)"}
  - {set: {w: "uniform(0, 1) if go[me] else w[me]"}}
terminate: "t >= horizon"
rewards:
  player:
    - {name: luck, expr: "u + z + k + coin + pick + order[0] + w[me]"}
observe:
  player: [u, z, k, coin, pick, order, "w[me]"]
"""

RANDOM_FUNCTIONS = {"uniform", "normal", "randint", "bernoulli", "choice", "permutation"}


@pytest.fixture(scope="module")
def random_spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("random") / "every_random_function.yaml"
    path.write_text(RANDOM_SPEC)
    return path


def _enclosing(tree: ast.Module) -> dict[int, str]:
    """id(node) -> qualified name of the definitions it is in (`Draws.__init__`; '' at module level)."""
    where: dict[int, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = name
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{name}.{child.name}" if name else child.name
            where[id(child)] = name
            visit(child, inner)

    visit(tree, "")
    return where


def randomness_audit(source: str) -> list[str]:
    """Every way a generated module could draw numbers that are not the env's seeded stream."""
    tree = ast.parse(source)
    where = _enclosing(tree)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            problems += [f"imports {m}" for m in mods
                         if m.split(".")[0] in {"random", "time", "secrets", "uuid", "datetime"}]
            if isinstance(node, ast.ImportFrom) and node.module == "os":
                problems.append("imports names from os")
        elif isinstance(node, ast.Attribute):
            caller_rng = (isinstance(node.value, ast.Name) and node.value.id == "rng"  # a scripted baseline's
                          and where.get(id(node), "").endswith((".scripted_action", ".scripted_actions")))  # fallback: the caller's generator
            if node.attr == "random" and not caller_rng:
                problems.append(f"uses {ast.unparse(node)}")
            if isinstance(node.value, ast.Name) and node.value.id == "os":
                if node.attr != "urandom":
                    problems.append(f"uses os.{node.attr}")
                elif where.get(id(node)) != "new_seed":
                    problems.append(f"uses os.urandom in {where.get(id(node))!r}")
        elif isinstance(node, ast.Name) and node.id in {"time", "hash", "perf_counter", "getrandbits"}:
            problems.append(f"uses {node.id}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "new_seed":
            if where.get(id(node)) != "Draws.__init__":
                problems.append(f"calls new_seed in {where.get(id(node))!r}")
    return problems


def test_the_audit_catches_unseeded_sources() -> None:
    bad = ("import random\nimport time\n"
           "def f():\n    return np.random.rand() + os.urandom(1)[0] + time.time() + new_seed()\n")
    found = randomness_audit(bad)
    assert {"imports random", "imports time", "uses np.random", "uses os.urandom in 'f'", "uses time",
            "calls new_seed in 'f'"} <= set(found), found


def test_random_functions_are_exactly_the_seeded_ones() -> None:
    assert {name for name, f in FUNCTIONS.items() if f.random} == RANDOM_FUNCTIONS


@pytest.mark.parametrize("instrument", [False, True], ids=["plain", "instrumented"])
@pytest.mark.parametrize("name", every_spec())
def test_generated_library_module_draws_only_from_the_seeded_stream(name: str, instrument: bool) -> None:
    assert randomness_audit(compile_spec(name, instrument=instrument).source) == []


def test_every_random_function_lowers_to_the_seeded_stream(random_spec: Path) -> None:
    source = compile_spec(random_spec).source
    assert randomness_audit(source) == []
    for fn in RANDOM_FUNCTIONS:
        assert re.search(rf"draw_{fn}\(v\._rng, ", source), fn


def _policy_episode(env: Any, seed: int, max_steps: int = 300) -> list[Any]:
    """A whole episode under a seeded random legal policy: every observation, reward, end, info and state."""
    policy = np.random.default_rng(seed)
    obs, infos = env.reset(seed=seed)
    out: list[Any] = [obs, infos, env.state()]
    for _ in range(max_steps):
        if not env.agents:
            break
        turn = env.turn_agent()
        acting = [turn] if turn is not None else list(env.agents)
        actions = {a: int(policy.choice(np.flatnonzero(infos[a]["action_mask"]))) for a in acting
                   if np.any(infos[a]["action_mask"])}
        obs, rew, term, trunc, infos = env.step(actions)
        out += [actions, obs, rew, term, trunc, infos, env.state()]
    return out


def _same(x: Any, y: Any) -> bool:
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, list | tuple):
        return isinstance(y, list | tuple) and len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y, strict=True))
    return bool(np.array_equal(np.asarray(x), np.asarray(y)))


@pytest.mark.parametrize("name", library_names())
def test_same_seed_gives_the_same_whole_episode(name: str) -> None:
    compiled = compile_spec(name)
    for seed in (0, 1, 12345):
        a = _policy_episode(compiled.parallel_env(), seed)
        b = _policy_episode(compiled.parallel_env(), seed)
        assert len(a) > 4 and _same(a, b), (name, seed)


def test_seeds_drive_every_random_function(random_spec: Path) -> None:
    compiled = compile_spec(random_spec)
    runs = [_policy_episode(compiled.parallel_env(), s) for s in (0, 0, 1)]
    assert _same(runs[0], runs[1])
    assert not _same(runs[0][2], runs[2][2])  # the state at reset differs between seeds
    assert verify(random_spec, episodes=5).passed


def test_unseeded_reset_continues_the_seeded_stream(random_spec: Path) -> None:
    """After reset(seed=s), reset() draws the next episode of s: new_seed serves only a first unseeded reset."""
    compiled = compile_spec(random_spec)
    envs = [compiled.parallel_env() for _ in range(3)]
    for env, seed in zip(envs, (3, 3, 4), strict=True):
        env.reset(seed=seed)
    first = [env.reset()[0] for env in envs]
    assert _same(first[0], first[1])
    assert not _same(first[0], first[2])


def test_the_determinism_check_fires_on_an_env_that_ignores_its_seed(random_spec: Path) -> None:
    """Not constructible through the spec language (see above), so inject it in the generated code."""
    good = compile_spec(random_spec)
    assert determinism(good) == []
    seeded = "self.seed = rt_seed(seed)"
    assert good.source.count(seeded) == 1
    source = good.source.replace(seeded, "self.seed = new_seed()")
    bad = CompiledEnv(good.checked, source, load_module(source, "unseeded"), good.params, good.diagnostics)
    found = determinism(bad)
    assert len(found) == 1 and found[0].severity is Severity.error and found[0].stage == "dynamic"
    assert "seed 0 gave two different episodes" in found[0].message


# --------------------------------------------------------------------------- library
@pytest.mark.parametrize("name", every_spec())
def test_library_spec_passes_verification(name: str) -> None:
    report = verify(name, episodes=EPISODES)
    assert report.passed and report.stopped_at is None, "\n".join(findings(report))
    assert ran(report) == list(STAGES)


# --------------------------------------------------------------------------- CLI
def invoke(*args: str) -> Result:
    return runner.invoke(app, list(args))


def assert_no_crash(result: Result, code: int) -> None:
    assert result.exit_code == code, result.output
    assert not isinstance(result.exception, Exception), repr(result.exception)
    assert "Traceback" not in result.output


def test_cli_verify_passes_a_library_spec() -> None:
    result = invoke("verify", "cake_negotiation", "--episodes", "5")
    assert_no_crash(result, 0)
    assert "cake_negotiation: passed" in result.stdout
    for stage in STAGES:
        assert f"{stage}: " in result.stdout


def test_cli_verify_fails_a_broken_spec_and_prints_the_path() -> None:
    result = invoke("verify", str(CORPUS / "state_out_of_bounds_after_rule.yaml"), "-n", "5")
    assert_no_crash(result, 1)
    assert "state_out_of_bounds_after_rule: FAILED" in result.stdout
    assert "error [dynamic] step[0].set.level: `level` = " in result.stdout
    assert "Stopped at stage `dynamic`" in result.stdout


def test_cli_verify_json_parses() -> None:
    result = invoke("verify", str(CORPUS / "probe_expectation_fails.yaml"), "--json", "-n", "5")
    assert_no_crash(result, 1)
    data = json.loads(result.stdout)
    assert data["passed"] is False and data["stopped_at"] == "probes"
    assert any(d["path"] == "probes[0].expect[1]" for d in data["diagnostics"])


def test_cli_verify_episodes_sets_the_number_of_random_episodes() -> None:
    result = invoke("verify", str(CORPUS / "frozen_metric.yaml"), "--json", "--episodes", "5")
    assert_no_crash(result, 0)
    data = json.loads(result.stdout)
    metric = next(d for d in data["diagnostics"] if d["path"] == "metrics.reached_top")
    assert "in every one of 5 random episodes" in metric["message"]


def test_cli_verify_param_changes_the_instance() -> None:
    """With 2 steps, two walkers climb at most 4 rungs: the 5-rung ladder is no longer overrun."""
    spec = str(CORPUS / "state_out_of_bounds_after_rule.yaml")
    result = invoke("verify", spec, "--param", "horizon=2", "--json", "-n", "5")
    assert_no_crash(result, 0)
    data = json.loads(result.stdout)
    assert data["passed"] is True and data["params"] == {"horizon": 2}
    assert_no_crash(invoke("verify", spec, "--param", "horizon=8", "--json", "-n", "5"), 1)


def test_probes_run_at_the_spec_defaults_when_other_params_are_verified() -> None:
    """A probe is written for the defaults: verifying other (non-structural) params must not
    replay it at those params (it did for probes without params of their own)."""
    assert verify("iterated_prisoners_dilemma", {"rounds": 1}, episodes=3).passed
    assert verify("cake_negotiation", {"discount": 0.6}, episodes=3).passed


def test_a_one_shot_game_is_a_note_not_a_warning() -> None:
    """One round by design (the end comes from the first step) is not degenerate; a terminate
    that holds at reset is (tests/data/broken/instant_end.yaml)."""
    report = verify("sealed_bid_auction", {"rounds": 1}, episodes=5)
    found = [d for d in report.diagnostics if "first step" in d.message or "one step" in d.message]
    assert [(d.severity.value, d.message) for d in found] == [
        ("info", "every random episode ended after its first step: a one-shot game")]


def test_truncating_at_the_tasks_own_round_count_is_a_warning() -> None:
    """A fixed number of rounds that the task defines ends an episode by its rules: terminate."""
    import copy

    from gymwright.spec.checker import check_spec
    from gymwright.spec.loader import load_spec, read_data

    data, _ = read_data("stag_hunt")
    data = copy.deepcopy(data)
    data["terminate"], data["truncate"] = False, "t >= rounds"
    _, diags = check_spec(load_spec(data))
    found = [d for d in diags if d.path == "truncate"]
    assert [d.severity.value for d in found] == ["warning"]
    assert "a number of rounds the task defines: that is termination" in found[0].message
    _, diags = check_spec(load_spec("mapf_frozenlake"))  # `t >= max_steps` is a cap: no warning
    assert not [d for d in diags if d.path == "truncate"]
