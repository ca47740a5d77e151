"""The `gymwright` command line, driven through its real commands on real library specs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from importlib.metadata import version
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from gymwright.cli import app
from gymwright.compile import compile_spec
from gymwright.spec.loader import LIBRARY_DIR
from tests.support.no_gymwright import BLOCK_GYMWRIGHT

runner = CliRunner()
CAKE_AGENTS = {"bargainer_0", "bargainer_1"}
CAKE_METRICS = {"agreed", "rounds", "first_share"}


def invoke(*args: str) -> Result:
    return runner.invoke(app, list(args))


def assert_clean_failure(result: Result, *fragments: str, code: int = 1) -> None:
    """Exit `code`, no crash and no traceback, and every fragment said somewhere."""
    assert result.exit_code == code, result.output
    assert not isinstance(result.exception, Exception), repr(result.exception)
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output, (fragment, result.output)


@pytest.fixture
def bad_spec(tmp_path: Path) -> Path:
    """cake_negotiation with a misspelled param in its reward."""
    text = (LIBRARY_DIR / "cake_negotiation.yaml").read_text()
    broken = text.replace("deal * discount ** round", "deal * discnt ** round")
    assert broken != text
    path = tmp_path / "undefined_name_in_reward.yaml"
    path.write_text(broken)
    return path


COUNTER = """\
gymwright: 1
name: counter
description: Two agents may press a button; every step pays each agent 1.
params:
  horizon: {default: 5, min: 1, max: 20, type: int, doc: steps per episode}
agents: {clicker: {count: 2}}
state:
  presses: {type: int, init: 0, min: 0, max: 40}
actions:
  clicker:
    - {name: press}
    - {name: wait}
step:
  - {set: {presses: "presses + sum(press)"}}
truncate: "t >= horizon"
rewards:
  clicker:
    - {name: tick, expr: 1.0}
metrics:
  presses: {expr: presses, reduce: last}
  steps: {expr: 1, reduce: sum}
observe:
  clicker: [presses]
"""


@pytest.fixture
def counter_spec(tmp_path: Path) -> Path:
    """Every step pays each agent 1 until t >= horizon: returns are known exactly."""
    path = tmp_path / "counter.yaml"
    path.write_text(COUNTER)
    return path


# ------------------------------------------------------------------- library, schema, version
def test_library_json_lists_cake_negotiation_with_its_params() -> None:
    result = invoke("library", "--json")
    assert result.exit_code == 0, result.output
    cards = {c["name"]: c for c in json.loads(result.stdout)}
    cake = cards["cake_negotiation"]
    assert cake["agents"] == {"bargainer": 2}
    assert "negotiation" in cake["tags"]
    assert cake["description"].startswith("Two agents split a cake")
    assert cake["params"]["discount"] == {
        "type": "float",
        "default": 0.9,
        "min": 0.5,
        "max": 1.0,
        "doc": "share of the cake left after each rejected offer",
    }
    assert cake["params"]["max_rounds"]["type"] == "int"
    assert cake["params"]["max_rounds"]["default"] == 10


def test_library_table_names_every_spec_and_param() -> None:
    result = invoke("library")
    assert result.exit_code == 0, result.output
    assert "cake_negotiation" in result.stdout
    assert "discount=0.9 [0.5, 1]" in result.stdout
    assert "bargainer x 2" in result.stdout


def test_schema_prints_the_spec_json_schema() -> None:
    result = invoke("schema")
    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    assert {"agents", "actions", "observe", "rewards"} <= set(schema["properties"])


def test_schema_writes_a_file(tmp_path: Path) -> None:
    out = tmp_path / "spec.schema.json"
    result = invoke("schema", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert str(out) in result.stdout
    assert "agents" in json.loads(out.read_text())["properties"]


def test_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"gymwright {version('gymwright')}"


# --------------------------------------------------------------------------- validate
def test_validate_a_library_spec() -> None:
    result = invoke("validate", "cake_negotiation")
    assert result.exit_code == 0, result.output
    assert "cake_negotiation: valid" in result.stdout
    result = invoke("validate", "cake_negotiation", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["valid"] is True
    assert report["spec"] == "cake_negotiation"
    assert all(d["severity"] != "error" for d in report["diagnostics"])


def test_validate_a_bad_spec_shows_path_message_and_hint(bad_spec: Path) -> None:
    result = invoke("validate", str(bad_spec))
    assert_clean_failure(
        result,
        "cake_negotiation: invalid (1 error",
        "error [static] rewards.bargainer[0].expr: undefined name `discnt`",
        "hint: did you mean `discount`?",
    )
    # the caret sits under the offending name
    lines = result.stdout.splitlines()
    source = next(i for i, line in enumerate(lines) if line.strip().startswith("deal * discnt"))
    assert lines[source + 1].index("^") == lines[source].index("discnt")


def test_validate_a_bad_spec_json(bad_spec: Path) -> None:
    result = invoke("validate", str(bad_spec), "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["valid"] is False
    [d] = report["diagnostics"]
    assert (d["severity"], d["path"], d["hint"]) == (
        "error",
        "rewards.bargainer[0].expr",
        "did you mean `discount`?",
    )


def test_validate_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    assert_clean_failure(
        invoke("validate", str(missing)), f"error [schema] {missing}: file not found"
    )


def test_validate_an_unknown_library_name() -> None:
    assert_clean_failure(
        invoke("validate", "cake_negotiatoin"),
        "no spec file or library spec named `cake_negotiatoin`",
        "did you mean cake_negotiation?",
    )


def test_validate_checks_params() -> None:
    assert_clean_failure(
        invoke("validate", "cake_negotiation", "--param", "discount=3"),
        "params.discount",
        "out of its range [0.5, 1]",
    )


# --------------------------------------------------------------------------- run
def run_json(*args: str) -> list[dict]:
    result = invoke("run", "cake_negotiation", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_run_json_reports_returns_and_metrics_per_episode() -> None:
    episodes = run_json("--episodes", "4", "--seed", "7")
    assert [ep["seed"] for ep in episodes] == [7, 8, 9, 10]
    for ep in episodes:
        assert set(ep["returns"]) == CAKE_AGENTS
        assert set(ep["metrics"]) == CAKE_METRICS
        assert ep["length"] >= 2  # the shortest game: propose, accept
        total = sum(ep["returns"].values())
        if ep["metrics"]["agreed"]:  # the whole (discounted) cake is split
            assert total == pytest.approx(0.9 ** ep["metrics"]["rounds"])
        else:
            assert total == 0


def test_run_is_reproducible_and_params_apply() -> None:
    assert run_json("-n", "3", "-s", "3") == run_json("-n", "3", "-s", "3")
    for ep in run_json("-n", "5", "--param", "discount=0.5"):
        if ep["metrics"]["agreed"]:
            assert sum(ep["returns"].values()) == pytest.approx(0.5 ** ep["metrics"]["rounds"])


def test_run_render_prints_every_frame_of_legal_play() -> None:
    result = invoke("run", "cake_negotiation", "--episodes", "1", "--render", "--seed", "4")
    assert result.exit_code == 0, result.output
    length = int(re.search(r"episode 1 \(seed 4\): length (\d+)", result.stdout).group(1))
    titles = re.findall(r"seed 4: (reset|step \d+)", result.stdout)
    assert titles == ["reset"] + [f"step {k}" for k in range(1, length + 1)]
    env = compile_spec("cake_negotiation").parallel_env(render_mode="ansi")
    env.reset(seed=4)
    assert env.render() in result.stdout  # the frame after reset, verbatim
    assert "illegal" not in result.stdout
    assert "return bargainer_0" in result.stdout  # the summary table


def test_random_play_is_legal_on_a_grid_spec() -> None:
    result = invoke("run", "mapf_frozenlake", "--episodes", "3", "--render")
    assert result.exit_code == 0, result.output
    assert "walker_0:" in result.stdout
    assert "illegal" not in result.stdout


def test_run_sums_rewards_over_every_step(counter_spec: Path) -> None:
    result = invoke("run", str(counter_spec), "--json", "-n", "3", "--param", "horizon=7")
    assert result.exit_code == 0, result.output
    for ep in json.loads(result.stdout):
        assert ep["length"] == 7 and ep["ended"] is True
        assert ep["returns"] == {"clicker_0": 7.0, "clicker_1": 7.0}
        assert ep["metrics"]["steps"] == 7.0
        assert 0 <= ep["metrics"]["presses"] <= 14


def test_run_cuts_episodes_at_max_steps(counter_spec: Path) -> None:
    result = invoke(
        "run", str(counter_spec), "--json", "-n", "1", "-p", "horizon=20", "--max-steps", "3"
    )
    assert result.exit_code == 0, result.output
    [ep] = json.loads(result.stdout)
    assert (ep["length"], ep["ended"], ep["returns"]["clicker_0"]) == (3, False, 3.0)
    assert "did not end within 3 steps" in result.stderr


def test_render_and_json_are_not_mixed_on_stdout() -> None:
    result = invoke("run", "cake_negotiation", "--render", "--json")
    assert_clean_failure(result, "--render and --json both write to stdout")
    assert result.stderr == ""  # under --json the error, too, is JSON on stdout
    assert json.loads(result.stdout)["message"] == "--render and --json both write to stdout; choose one"


def test_param_without_equals_is_refused() -> None:
    result = invoke("run", "cake_negotiation", "--param", "foo")
    assert_clean_failure(result, "--param", "NAME=VALUE", "'foo'", code=2)


def test_unknown_param_is_refused() -> None:
    result = invoke("run", "cake_negotiation", "--param", "foo=1")
    assert_clean_failure(
        result, "params.foo: unknown param `foo`", "this spec's params: discount, max_rounds"
    )
    assert "unknown param" in result.stderr


def test_out_of_range_param_is_refused() -> None:
    result = invoke("run", "cake_negotiation", "-p", "max_rounds=99")
    assert_clean_failure(
        result, "params.max_rounds", "out of its range [1, 50]", "choose a value in [1, 50]"
    )


def test_run_unknown_spec() -> None:
    result = invoke("run", "no_such_spec")
    assert_clean_failure(
        result, "no spec file or library spec named `no_such_spec`", "gymwright library"
    )
    assert "no_such_spec" in result.stderr


# --------------------------------------------------------------------------- export
def test_export_writes_and_refuses_to_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "env.py"
    result = invoke("export", "cake_negotiation", "-o", str(target))
    assert result.exit_code == 0, result.output
    assert f"Wrote {target}" in result.stdout
    assert "from env import parallel_env, env" in result.stdout
    assert "numpy, gymnasium and pettingzoo" in result.stdout
    source = target.read_text()
    assert "class " in source and "def parallel_env" in source

    target.write_text("# mine\n")
    result = invoke("export", "cake_negotiation", "-o", str(target))
    assert_clean_failure(result, f"{target} already exists", "--force")
    assert target.read_text() == "# mine\n"

    result = invoke("export", "cake_negotiation", "-o", str(target), "--force")
    assert result.exit_code == 0, result.output
    assert target.read_text() == source


def test_export_of_a_bad_spec_writes_nothing(tmp_path: Path, bad_spec: Path) -> None:
    target = tmp_path / "env.py"
    assert_clean_failure(
        invoke("export", str(bad_spec), "-o", str(target)), "undefined name `discnt`"
    )
    assert not target.exists()


STANDALONE = BLOCK_GYMWRIGHT + textwrap.dedent("""
    from env import env, parallel_env
    from pettingzoo.test import parallel_api_test

    par = parallel_env()
    obs, infos = par.reset(seed=0)
    assert set(obs) == {"bargainer_0", "bargainer_1"}
    # bargainer_0 proposes 0.5, bargainer_1 rejects, then proposes 0.5, bargainer_0 accepts
    returns = dict.fromkeys(par.possible_agents, 0.0)
    script = [("bargainer_0", 5), ("bargainer_1", 12), ("bargainer_1", 5), ("bargainer_0", 11)]
    for agent, action in script:
        _, rewards, terms, _, infos = par.step({agent: action})
        for a, r in rewards.items():
            returns[a] += r
    assert all(terms.values()) and par.agents == [], terms
    assert abs(returns["bargainer_0"] - 0.5 * 0.8) < 1e-9, returns  # the exported discount
    parallel_api_test(parallel_env(), num_cycles=200)
    env().reset(seed=1)
    assert not [m for m in sys.modules if m.split(".")[0] == "gymwright"]
    print("STANDALONE OK")
""")


def test_exported_module_runs_without_gymwright(tmp_path: Path) -> None:
    result = invoke(
        "export", "cake_negotiation", "-o", str(tmp_path / "env.py"), "-p", "discount=0.8"
    )
    assert result.exit_code == 0, result.output
    proc = subprocess.run(
        [sys.executable, "-I", "-c", STANDALONE],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "STANDALONE OK" in proc.stdout


# --------------------------------------------------------------------------- demo
@pytest.mark.slow  # the whole loop, three curricula and their held-out evaluation: about 45 s, so CI's slow run
def test_demo_runs_the_whole_loop(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = invoke("demo", "--steps", "4096", "--stages", "2", "--episodes", "20", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "design 1: passed" in result.stdout and "mapf_frozenlake: passed" in result.stdout
    assert "chose template mapf_frozenlake" in result.stdout and "retrieval" in result.stdout
    assert "n_agents=3 from 'three robots'" in result.stdout
    assert all(f"[{arm}] stage 2: valid" in result.stdout for arm in ("engineer", "dr", "fixed"))
    assert re.search(r"\[engineer\] stage 2/2 \[#+\.*\] +\d+% [\d,]+/[\d,]+ env steps, [\d,]+/s, \d+:\d\d elapsed, ETA",
                     result.stdout)  # progress while a stage trains
    assert "heuristic engineer" in result.stdout and "learnability" in result.stdout
    assert "seed 0: reset" in result.stdout and "seed 0: step 1" in result.stdout  # rendered
    comparison = json.loads((out / "comparison.json").read_text())
    assert list(comparison["arms"]) == ["engineer", "dr", "fixed"] and comparison["env_steps"] == 8192
    assert comparison["arms"]["dr"]["folder"] == "dr" and len(comparison["arms"]["dr"]["stages"][0]["trained"]) == 48
    assert comparison["arms"]["fixed"]["folder"] == "baseline" and (out / "baseline" / "curriculum.jsonl").exists()
    assert list(comparison["held_out"]) == ["3 ag 5x5 w 0.50", "3 ag 5x5 w 0.75", "3 ag 6x6 w 0.50", "3 ag 6x6 w 0.75"]
    # the engineer benchmark's settings: its learner, band and view radius; held out on another
    # family of solved pools, one family a cell (no instance shared between cells); the arms side by side
    assert "each arm: lr 0.001, 512 env copies, 8,192 env steps; the 3 arms train two at a time" in result.stdout
    assert [(c["view_radius"], c["layout_seed"], c["layout_pool"]) for c in comparison["held_out"].values()] == \
        [(2, 1, 250), (2, 2, 250), (2, 3, 250), (2, 4, 250)]
    assert comparison["episodes"] == 150  # at least 150 a cell, whatever --episodes says
    for arm in ("engineer", "dr", "fixed"):
        assert all(b["params"]["view_radius"] == 2 for st in comparison["arms"][arm]["stages"] for b in st["trained"])
    assert "band [0.3, 0.6]" in result.stdout
    eng = comparison["arms"]["engineer"]
    for base in ("dr", "fixed"):
        other = comparison["arms"][base]
        diff = eng["mean"] - other["mean"]
        ci = (eng["ci95"] ** 2 + other["ci95"] ** 2) ** 0.5
        verdict = "inside the noise" if abs(diff) <= ci else "curriculum is better" if diff > 0 else f"{base} is better"
        assert f"engineer - {base}: {diff:+.3f}" in result.stdout and verdict in result.stdout
    page = (out / "report.html").read_text()
    assert "<html" in page[:200].lower() and "Engineer against the baselines" in page
    section = page[page.index('id="comparison"'):]
    assert "Not recorded" not in section[:400] and "3 ag 6x6 w 0.75" in section
    assert "engineer - fixed" in section and "engineer - dr" in section
    assert "the heuristic engineer&#x27;s stages" in section or "the heuristic engineer's stages" in section
    assert (out / "stage1" / "eval" / "scorecard.json").exists()
    assert len(result.stdout.splitlines()) < 200
