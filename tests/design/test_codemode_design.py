"""`gymwright design --mode code` with scripted replies (issue 20, items 1 and 5): spec mode's
plans, then a module in a JSON reply, checked in the sandbox; the repair loop sends the
findings with the module's line numbers; the store keeps the code; `export` writes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.codemode.export import RAW_HEADER
from gymwright.codemode.source import read_code
from gymwright.design import DesignOptions, design
from gymwright.llm.scripted import ScriptedProvider
from gymwright.store import Store
from tests.design.test_design import FITS, PLANS
from tests.support.paths import MEET_ON_A_LINE

GOOD = MEET_ON_A_LINE.read_text()
TASK = "Two walkers on a line must meet as soon as they can."
STEP_LINE = "        self._t += 1\n"
# a NameError in step, at the line after `self._t += 1`
BROKEN = GOOD.replace(STEP_LINE, STEP_LINE + "        self._t += step_cost\n")
BROKEN_LINE = BROKEN.splitlines().index("        self._t += step_cost") + 1
OS_IMPORT = "import os\n" + GOOD


def reply(code: str) -> dict[str, Any]:
    return {"json": {"name": "meet_on_a_line", "class": "MeetOnALine", "code": code}}


def run(tmp_path: Path, codes: list[str], store: Store, **opts: Any) -> tuple[Any, ScriptedProvider]:
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump([*PLANS, *(reply(c) for c in codes), FITS], sort_keys=False))
    provider = ScriptedProvider(path)
    options = DesignOptions(**{"mode": "code", "retry_backoff": 0.0, "verify_episodes": 5, **opts})
    return design(TASK, options, store=store, provider=provider), provider


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store.open(tmp_path / "store") as st:
        yield st


def test_a_good_module_passes_and_is_stored_with_its_code(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [GOOD], store)
    assert result.passed and result.mode == "code" and result.verified, result.explanation
    assert [a.stage for a in result.attempts] == ["roles", "dynamics", "rewards", "code", "code_review"]
    code_prompt = provider.requests[3].messages[-1].content
    assert "ParallelEnv" in code_prompt and "action_mask" in code_prompt and "gymnasium.spaces" in code_prompt
    assert "Roles and goals:" in code_prompt  # spec mode's plans are carried in
    assert result.spec_path.suffix == ".py" and read_code(result.spec_path) == GOOD
    stored = store.get_spec(result.spec_sha)
    assert stored == {"name": "meet_on_a_line", "class": "MeetOnALine", "code": GOOD}
    layers = [d.message for d in result.report.diagnostics if d.message.startswith("sandbox layers")]
    assert layers and "audit hook" in layers[0] and "NO audit hook" not in layers[0]


def test_a_broken_module_is_repaired_from_findings_with_its_line(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [BROKEN, GOOD], store)
    assert result.passed, result.explanation
    assert [a.stage for a in result.attempts][-3:] == ["code", "repair", "code_review"]
    assert result.attempts[-3].passed is False
    feedback = provider.requests[4].messages[-1].content
    assert f"code:{BROKEN_LINE}" in feedback and "NameError" in feedback and "step_cost" in feedback
    assert f"| {BROKEN_LINE}: self._t += step_cost" in feedback  # the line is quoted
    assert "corrected module" in feedback


def test_a_statically_refused_module_gets_the_refusal_and_its_line(tmp_path: Path, store: Store) -> None:
    result, provider = run(tmp_path, [OS_IMPORT, GOOD], store)
    assert result.passed, result.explanation
    first = result.attempts[-3].report
    assert first["stopped_at"] == "vet"
    feedback = provider.requests[4].messages[-1].content
    assert "code:1" in feedback and "import of `os` is not allowed" in feedback


def test_a_module_never_repaired_fails_and_keeps_the_last_attempt(tmp_path: Path, store: Store) -> None:
    result, _ = run(tmp_path, [BROKEN, BROKEN], store, max_repairs=1)
    assert not result.passed and result.status == "failed" and not result.verified
    assert result.spec_path.name.endswith(".failed.py")
    assert "failed verification" in result.explanation


def test_code_mode_without_a_model_is_a_clear_error(store: Store) -> None:
    from gymwright.errors import GymwrightError

    with pytest.raises(GymwrightError, match="--mode code needs a language model"):
        design(TASK, DesignOptions(mode="code"), store=store)


def test_the_cli_designs_in_code_mode_and_export_raw_writes_the_module_under_a_warning(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([*PLANS, reply(GOOD), FITS], sort_keys=False))
    out, exported = tmp_path / "env.py", tmp_path / "exported.py"
    runner = CliRunner()
    result = runner.invoke(app, ["design", TASK, "--mode", "code", "--model", f"scripted:{script}",
                                 "--store", str(tmp_path / "store"), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["mode"] == "code" and data["passed"] and data["spec_path"] == str(out)
    assert read_code(out) == GOOD and "def parallel_env(**params):" in out.read_text()  # a sandboxed module
    result = runner.invoke(app, ["export", str(out), "-o", str(exported), "--raw"])
    assert result.exit_code == 0, result.output
    assert exported.read_text() == RAW_HEADER + GOOD and "UNSANDBOXED" in result.stdout
    assert "vetted" not in result.stdout
    shown = runner.invoke(app, ["show", str(data["design_id"]), "--store", str(tmp_path / "store")])
    assert shown.exit_code == 0 and "final module" in shown.stdout
    assert "  14  class MeetOnALine(ParallelEnv):" in shown.stdout  # numbered like the findings
    bad = tmp_path / "bad.py"
    bad.write_text(OS_IMPORT)
    result = runner.invoke(app, ["export", str(bad), "-o", str(tmp_path / "no.py")])
    assert result.exit_code == 1 and "import of `os` is not allowed" in result.output
    assert not (tmp_path / "no.py").exists()
