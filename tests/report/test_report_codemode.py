"""`gymwright report` on a code-mode run (issue 20): a module designed in code mode (scripted
replies), trained and evaluated in sandbox workers, then reported. The page shows the module as
escaped text (never imported here), the design's verdicts and its checks, and says which
sections are not applicable to a code-mode run and why."""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.codemode.source import read_code
from gymwright.design import DesignOptions, design
from gymwright.llm.scripted import ScriptedProvider
from gymwright.report import read_run, write_report
from gymwright.report.spec_source import training_folder
from gymwright.store import Store
from tests.design.test_design import FITS, PLANS
from tests.support.paths import MEET_ON_A_LINE

GOOD = MEET_ON_A_LINE.read_text()
EVIL = '</pre><script>document.title="pwned"</script><img src=x onerror=alert(1)>'
# a comment passes vetting and reaches the page: it must arrive there escaped
CODE = GOOD.replace("SIZE = 7\n", f"SIZE = 7  # {EVIL}\n")
TASK = f"Two walkers on a line must meet as soon as they can. {EVIL}"
TINY = ["--num-envs", "4", "--rollout-len", "8", "--minibatches", "2", "--epochs", "1", "--hidden", "16"]
NOT_APPLICABLE = ["Failure kinds", "Trajectories", "Curriculum lineage", "Engineer against the baselines"]


def invoke(*args: object) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


def section(page: str, sid: str) -> str:
    """The HTML of one section of the page."""
    start = page.index(f'<section id="{sid}">')
    return page[start:page.index("</section>", start)]


@pytest.fixture(scope="module")
def designed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """design --mode code (scripted replies): the module, and a folder holding the design result."""
    root = tmp_path_factory.mktemp("code_report")
    script = root / "script.yaml"
    reply = {"json": {"name": "meet_on_a_line", "class": "MeetOnALine", "code": CODE}}
    script.write_text(yaml.safe_dump([*PLANS, reply, FITS], sort_keys=False))  # FITS: the task-fit review
    module = root / "meet_on_a_line.py"
    with Store.open(root / "store") as store:
        result = design(TASK, DesignOptions(mode="code", retry_backoff=0.0, verify_episodes=5), store=store,
                        provider=ScriptedProvider(script), out=module)
    assert result.passed and result.spec_path == module, result.explanation
    (root / "design").mkdir()
    (root / "design" / "design.json").write_text(json.dumps(result.to_json_dict()))
    return module


@pytest.fixture(scope="module")
def run(designed: Path) -> Path:
    """The designed module trained and evaluated (in sandbox workers), with its design result."""
    folder = designed.parent / "run"
    trained = invoke("train", designed, *TINY, "--steps", "64", "--out", folder)
    assert trained.exit_code == 0, trained.output
    evaluated = invoke("evaluate", designed, "--policy", folder, "--episodes", "6")
    assert evaluated.exit_code == 0, evaluated.output
    (folder / "design.json").write_bytes((designed.parent / "design" / "design.json").read_bytes())
    return folder


def test_report_of_a_designed_module_shows_it_escaped_with_the_design_s_verdicts(designed: Path) -> None:
    """A folder with only the design result: the module as text, escaped (its comment's payload
    never becomes markup), code mode, verified, the task-fit review's verdict, the design's sandbox checks."""
    report = write_report(designed.parent / "design", designed.parent / "design.html")
    page = report.path.read_text()
    assert report.sections == ["The task", "The spec", "Verification"]
    spec = section(page, "spec")
    assert "A code-mode design: the environment is this Python module" in spec
    lines = read_code(designed).count("\n") + 1  # the model's module, read out of the sandboxed file
    assert f"meet_on_a_line ({lines} lines of Python)" in spec
    assert html.escape(f"SIZE = 7  # {EVIL}") in spec and html.escape("def step(self, actions):") in spec
    assert EVIL not in page and "<script>document" not in page and page.count("<script>") == 1
    task = section(page, "task")
    assert "(code mode)" in task and "<th>verified</th><td>yes</td>" in task
    assert "<th>fits the task</th><td>yes</td>" in task
    checks = section(page, "verification")
    assert "recorded by the design (design.json)" in checks and "sandbox layers: " in checks
    assert "<code>&lt;module&gt;</code>" in checks
    # not trained or evaluated yet: that can still be recorded; a curriculum cannot
    assert "Not recorded" in section(page, "evaluation") and "Not recorded" in section(page, "trajectories")
    assert report.not_applicable == ["Curriculum lineage", "Engineer against the baselines"]
    assert "refuses a code-mode design" in section(page, "curriculum")
    assert not [m for m in list(sys.modules.values())
                if str(getattr(m, "__file__", "")).startswith(str(designed.parent))]


@pytest.mark.slow
def test_report_of_a_trained_and_evaluated_code_mode_run(run: Path, tmp_path: Path) -> None:
    """Design, train, evaluate, report: the command writes the page with no traceback, and each
    part says what it is and, where it cannot be shown for a code-mode run, why."""
    assert not (run / "eval" / "trajectories.jsonl").exists()
    out = tmp_path / "report.html"
    done = invoke("report", run, "-o", out, "--json")
    assert done.exit_code == 0 and "Traceback" not in done.output, done.output
    summary = json.loads(done.stdout)
    assert summary["sections"] == ["The task", "The spec", "Verification", "Learning curves", "Training config",
                                   "Evaluation"]
    assert summary["missing"] == summary["not_applicable"] == NOT_APPLICABLE and summary["notes"] == []
    shown = invoke("report", run, "-o", tmp_path / "again.html")
    assert "Not applicable to this run: " + ", ".join(NOT_APPLICABLE) in " ".join(shown.output.split())
    assert "Not recorded" not in shown.output
    page = out.read_text()
    # the module is on the page as text, escaped (as in the design-only report above)
    assert html.escape(f"SIZE = 7  # {EVIL}") in section(page, "spec") and EVIL not in page
    task = section(page, "task")
    assert "(code mode)" in task and "defaults (a code-mode module takes its params as keyword arguments of its class)" in task
    assert "64 env steps in 2 updates" in task
    assert "recorded by the design (design.json)" in section(page, "verification")
    # evaluation: judged by episodes, the spec's checks n/a with why
    evaluation = section(page, "evaluation")
    assert "trained and random legal play ran in sandbox workers" in evaluation
    for name in ("baselines", "hacking.dominant_shaping", "degeneracy"):
        row = evaluation[evaluation.index(f"<td>{name}</td>"):]
        assert row.index("n/a") < row.index("a code-mode design has no spec: ") < row.index("</tr>")
    # no steps came back over the pipe: the sections that need them are n/a, and say why
    for sid in ("failures", "trajectories"):
        part = section(page, sid)
        assert "Not applicable" in part and "only each episode&#x27;s returns" in part and "Not recorded" not in part
    assert "refuses a code-mode design" in section(page, "curriculum")
    assert "reward has no named terms" in section(page, "curves") and "Reward terms" not in page
    # nothing of the module was imported into this process
    assert not [m for m in list(sys.modules.values()) if str(getattr(m, "__file__", "")).startswith(str(run.parent))]


@pytest.mark.slow
def test_without_design_json_the_checks_run_in_the_sandbox_and_a_changed_module_is_flagged(
        run: Path, tmp_path: Path) -> None:
    """The module found from the checkpoint's config; its checks run while the report is written;
    a module edited since training is named as such; a missing one is said to be missing."""
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("train.jsonl", "checkpoint.pt"):
        (folder / name).write_bytes((run / name).read_bytes())
    (folder / "eval").mkdir()
    (folder / "eval" / "scorecard.json").write_bytes((run / "eval" / "scorecard.json").read_bytes())
    module = run.parent / "meet_on_a_line.py"
    report = write_report(folder, tmp_path / "a.html")
    page = report.path.read_text()
    assert report.not_applicable == NOT_APPLICABLE and "The spec" in report.sections
    assert "the code-mode checks ran on " in section(page, "verification")
    assert "0 errors" in section(page, "verification") and "has changed since training" not in page
    assert "The task" in report.sections and "Not recorded" in section(page, "task")  # no design.json
    # an edit after training
    original = module.read_text()
    try:
        # the model's code edited (the written file holds it under its digest: the edit is a module of its own)
        module.write_text(read_code(module) + "\n# edited\n")
        page = write_report(folder, tmp_path / "b.html", run_verifier=False).path.read_text()
        assert "this module (sha256 " in section(page, "spec") and "it has changed since training" in page
        assert "the verifier was not run: --no-verify" in section(page, "verification")
        # gone: said so, with where it looked
        module.rename(module.with_suffix(".moved"))
        gone = write_report(folder, tmp_path / "c.html")
        page = gone.path.read_text()
        assert "The spec" in gone.missing and "Verification" in gone.missing
        assert "the code-mode module was not found (tried: " in page and str(module) in page
        assert "no design.json, and the module was not found" in page
    finally:
        module.with_suffix(".moved").rename(module) if module.with_suffix(".moved").exists() else None
        module.write_text(original)
    assert read_run(folder).code_mode


def test_a_relative_module_path_is_read_from_the_folder_training_ran_in(tmp_path: Path) -> None:
    """`train design.py --out runs/a` run in /x records `design.py` and `runs/a`: the module is /x/design.py."""
    root = tmp_path / "x" / "runs" / "a"
    root.mkdir(parents=True)
    assert training_folder(root, "runs/a") == (tmp_path / "x").resolve()
    assert training_folder(root, "./runs/a") == (tmp_path / "x").resolve()
    assert training_folder(root, "runs/b") is None and training_folder(root, "../a") is None
    assert training_folder(root, str(root)) is None and training_folder(root, None) is None
