"""Code mode meets spec mode's bar (issue 42, point 11): the --out extension is respected, the
checked module is reviewed against the task (with play in the sandbox) and the review's failed
checks go back to the repair loop, the model's scenarios run and their failures come back, the
written file is a sandboxed PettingZoo module with `env()` and `parallel_env()`, and the prompt
says how the numbers of the game reach the class. Scripted replies, a real store, the sandbox."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.codemode.source import read_code
from gymwright.design import DesignOptions, design
from gymwright.errors import GymwrightError
from gymwright.llm.scripted import ScriptedProvider
from gymwright.store import Store
from tests.design.test_design import FITS, PLANS
from tests.support.paths import ROOT

STAG = (ROOT / "benchmarks" / "data" / "stag_hunt_code.py").read_text()
TASK = "Two hunters each choose stag or hare for 20 rounds; a stag pays 4 to each only if both hunt it, a hare pays 3."
# the hare pays 2: verifies, but is not the task
CHEAP_HARE = STAG.replace("HARE_REWARD = 3.0", "HARE_REWARD = 2.0")
BOTH_STAG = {"name": "both hunt the stag", "seed": 0, "steps": [{"hunter_0": 0, "hunter_1": 0}],
             "expect": {"rewards": {"hunter_0": 4, "hunter_1": 4}}}
HARE_PAYS_3 = {"name": "a hare pays 3", "seed": 0, "steps": [{"hunter_0": 1, "hunter_1": 1}],
               "expect": {"rewards": {"hunter_0": 3, "hunter_1": 3}, "done": False}}
UNFIT = {"json": {"checks": [{"aspect": "agents", "fits": True},
                             {"aspect": "rewards", "fits": False, "problem": "a hare pays 2, the task says 3",
                              "fix": "line 11: HARE_REWARD = 3.0"}],
                  "fits_task": False}}


def reply(code: str, scenarios: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": "stag_hunt", "class": "StagHunt", "code": code}
    if scenarios is not None:
        body["scenarios"] = scenarios
    return {"json": body}


def run(tmp_path: Path, items: list[Any], store: Store, out: Path | None = None,
        **opts: Any) -> tuple[Any, ScriptedProvider]:
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump([*PLANS, *items], sort_keys=False))
    provider = ScriptedProvider(path)
    options = DesignOptions(**{"mode": "code", "retry_backoff": 0.0, "verify_episodes": 3, **opts})
    return design(TASK, options, store=store, provider=provider, out=out), provider


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store.open(tmp_path / "store") as st:
        yield st


# ----------------------------------------------------------------------------- (a) --out
def test_code_mode_refuses_an_out_that_is_not_a_py_before_any_model_call(tmp_path: Path, store: Store) -> None:
    with pytest.raises(GymwrightError) as e:
        run(tmp_path, [reply(STAG)], store, out=tmp_path / "stag.yaml")
    assert e.value.path == "--out" and "writes a Python module" in e.value.message
    assert "stag.py" in e.value.hint
    assert store.designs() == []  # nothing started, no model asked


def test_the_cli_refuses_a_py_out_for_a_spec_and_a_yaml_out_for_code(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([*PLANS, reply(STAG)], sort_keys=False))
    runner = CliRunner()
    for mode, out, said in (("code", "env.yaml", "name it env.py"), ("spec", "env.py", "name it env.yaml")):
        result = runner.invoke(app, ["design", TASK, "--mode", mode, "--model", f"scripted:{script}",
                                     "--store", str(tmp_path / "store"), "--out", str(tmp_path / out), "--json"])
        assert result.exit_code == 1, result.output
        data = json.loads(result.stdout)
        assert data["diagnostics"][0]["path"] == "--out" and said in json.dumps(data), data
        assert not (tmp_path / out).exists()


# ----------------------------------------------------------------------------- (b) the review
def test_a_checked_module_is_reviewed_with_play_in_the_sandbox(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [reply(STAG, [BOTH_STAG, HARE_PAYS_3]), FITS], store)
    assert result.passed and result.fits_task == "yes", result.explanation
    assert [a.stage for a in result.attempts][3:] == ["code", "code_review"]
    review = provider.requests[4].messages[-1].content
    assert TASK in review and "  10  THRESHOLD = 2" in review  # the task and the numbered module
    assert "## 20 episodes (seeds 0-19)" in review and "return of hunter_0: mean" in review
    assert "metric stag_success_rate: mean" in review and "ended: terminated 20" in review
    assert "# The checks' warnings" in review
    assert '"name":"both hunt the stag"' in review  # the model's own scenarios
    assert "fits_task" in json.dumps(provider.requests[4].schema)


@pytest.mark.slow
def test_a_review_that_rejects_sends_its_failed_checks_to_the_code_repair_loop(tmp_path: Path, store: Store) -> None:
    items = [reply(CHEAP_HARE, [BOTH_STAG]), UNFIT, reply(STAG, [BOTH_STAG, HARE_PAYS_3]), FITS]
    result, provider = run(tmp_path, items, store)
    assert result.passed and result.fits_task == "yes", result.explanation
    assert [a.stage for a in result.attempts][3:] == ["code", "code_review", "repair", "code_review"]
    repair = provider.requests[5].messages
    assert "The module passed the sandboxed checks. The task-fit review marked 1 of its 2 checks" in repair[-1].content
    assert "rewards: a hare pays 2, the task says 3 Fix: line 11: HARE_REWARD = 3.0" in repair[-1].content
    assert "HARE_REWARD = 2.0" in repair[-2].content and repair[-2].role == "assistant"


def test_a_failed_review_call_is_a_failure_with_the_checked_module_kept(tmp_path: Path, store: Store) -> None:
    result, _ = run(tmp_path, [reply(STAG, [BOTH_STAG])], store)  # the script ends: the review call fails
    assert result.status == "review_failed" and not result.passed and result.review_error
    assert result.verified and result.fits_task == "unknown" and result.spec_path is not None
    assert read_code(result.spec_path).strip() == STAG.strip()
    assert result.explanation.startswith("the module passed the sandboxed checks, but the task-fit review failed")


# ----------------------------------------------------------------------------- (c) scenarios
def test_a_failed_scenario_goes_back_to_the_model_with_what_the_module_showed(tmp_path: Path, store: Store) -> None:
    wrong = {**HARE_PAYS_3, "expect": {"rewards": {"hunter_0": 2}}}
    items = [reply(STAG, [BOTH_STAG, wrong]), reply(STAG, [BOTH_STAG, HARE_PAYS_3])]
    result, provider = run(tmp_path, items, store, review=False)
    assert result.passed, result.explanation
    first = result.attempts[3]
    assert first.passed is False and first.report["stopped_at"] == "scenarios"
    feedback = provider.requests[4].messages[-1].content
    assert "scenarios[1]" in feedback and "the reward at the last step of hunter_0 is 3, expected 2" in feedback
    assert store.get_spec(result.spec_sha)["scenarios"][1] == HARE_PAYS_3  # stored with the module


def test_the_code_prompt_asks_for_scenarios_and_a_reply_without_them_is_warned(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [reply(STAG)], store, review=False)
    prompt = provider.requests[3].messages[-1].content
    assert '"scenarios"' in prompt and "action index" in prompt and '"returns"' in prompt
    assert result.passed and any("no scenarios" in d.message for d in result.report.diagnostics)
    assert "scenarios" in json.dumps(provider.requests[3].schema)


# ----------------------------------------------------------------------------- (d) the file
@pytest.mark.slow
def test_the_written_module_has_the_factories_and_runs_nothing_of_the_model_when_imported(
        tmp_path: Path, store: Store) -> None:
    out = tmp_path / "stag_env.py"
    result, _ = run(tmp_path, [reply(STAG, [BOTH_STAG])], store, out=out, review=False)
    assert result.passed and result.spec_path == out
    text = out.read_text()
    assert "def parallel_env(**params):" in text and "def env(**params):" in text and "class StagHunt" not in text.split("MODEL_CODE")[0]
    check = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import stag_env; "
             "assert not hasattr(stag_env, 'StagHunt'); e = stag_env.parallel_env(); o, i = e.reset(seed=0); "
             "print(sorted(o), e.action_space('hunter_0').n); e.close(); a = stag_env.env(); a.reset(seed=0); "
             "print(a.agent_selection); a.close()")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["['hunter_0', 'hunter_1'] 2", "hunter_0"]
    assert read_code(out).strip() == STAG.strip()  # train, play, evaluate and export read the model's code
    tampered = tmp_path / "tampered.py"
    tampered.write_text(text.replace("HARE_REWARD = 3.0", "HARE_REWARD = 9.0"))
    with pytest.raises(GymwrightError, match="does not match its SHA256"):
        read_code(tampered)


def test_export_raw_of_a_designed_module_gives_the_models_code(tmp_path: Path, store: Store) -> None:
    out, exported = tmp_path / "stag_env.py", tmp_path / "raw.py"
    run(tmp_path, [reply(STAG)], store, out=out, review=False)
    result = CliRunner().invoke(app, ["export", str(out), "-o", str(exported), "--raw"])
    assert result.exit_code == 0, result.output
    assert STAG.strip() in exported.read_text() and "gymwright.codemode.exported" not in exported.read_text()


# ----------------------------------------------------------------------------- (e) params
def test_the_code_prompt_says_how_the_numbers_of_the_game_reach_the_class(tmp_path: Path, store: Store) -> None:
    _, provider = run(tmp_path, [reply(STAG)], store, review=False)
    prompt = provider.requests[3].messages[-1].content
    assert "keyword argument of `__init__` with the value the task states as its default" in prompt
    assert "--param pie=12" in prompt and "passes\n  `pie=12` to the class" in prompt


def test_the_review_record_survives_metrics_that_are_not_numbers() -> None:
    # mid-episode infos with a text metric (the checks read only the last step's): the record
    # leaves it out instead of failing the design with a traceback
    from gymwright.design.code_review import play_record

    code = STAG.replace('                infos[a]["metrics"] = metrics',
                        '                pass\n        else:\n            for a in self.agents:\n'
                        '                infos[a]["metrics"] = {"phase": "opening"}')
    assert '"phase": "opening"' in code
    record = play_record({"code": code, "class": "StagHunt"}, episodes=2)
    assert "could not play" not in record and "phase" not in record
    assert "no episode's final infos carry metrics" in record and "return of hunter_0: mean" in record
