"""`gymwright report`: a self-contained HTML page from real run folders, opened in headless
Chromium (Debian's `chromium`): it loads with no console errors, every image decodes, and a
screenshot is taken. Untrusted text (task, model output, spec) is escaped; missing parts say so."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from gymwright.cli.report import report_command
from gymwright.curriculum import StageRecord
from gymwright.design.designer import DesignResult
from gymwright.diagnostic import warning
from gymwright.evaluate import assess
from gymwright.report import ReportError, read_run, write_report
from gymwright.train import TrainConfig, load_policy, train
from gymwright.train import checkpoint as ck
from gymwright.verify.report import StageResult, VerificationReport

MAPF = ("mapf_frozenlake", {"size": 4, "n_agents": 2})
IPD = ("iterated_prisoners_dilemma", {"rounds": 1})
EVIL = '<script>document.title="pwned"</script><img src=x onerror=alert(1)>'
CHROMIUM_TIMEOUT_S = 60


# --------------------------------------------------------------------------- real run folders
def trained_run(out: Path, spec: str, params: dict, steps: int = 4096) -> Path:
    train(TrainConfig(spec=spec, params=params, total_steps=steps, num_envs=64, rollout_len=16, out=out))
    return out


def assessed(run: Path, spec: str, episodes: int = 40) -> Path:
    saved = ck.load(run)
    assess(spec, saved["params"][0], ck.policy_from(saved), history=saved["history"], episodes=episodes,
           record_episodes=8, out=run / "eval")
    return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("report")
    mapf = assessed(trained_run(root / "mapf", *MAPF), MAPF[0])
    ipd = assessed(trained_run(root / "ipd", *IPD), IPD[0])
    return {"mapf": mapf, "ipd": ipd, "curriculum": curriculum_folder(root / "curriculum")}


def curriculum_folder(root: Path) -> Path:
    """Two real stages, the lineage in curriculum.jsonl and a design.json, with untrusted text."""
    configs = [dict(MAPF[1], hole_density=0.2), dict(MAPF[1], hole_density=0.1)]
    for k, params in enumerate(configs):
        trained_run(root / f"stage{k}", MAPF[0], params, steps=2048)
    assessed(root / "stage1", MAPF[0], episodes=20)
    with (root / "curriculum.jsonl").open("w") as f:
        for k, params in enumerate(configs):
            rec = StageRecord(k, params, 0.1 * k, {"walker": -0.3}, {"holes": 7 - k, "conflicts": 2},
                              str(root / f"stage{k}" / "checkpoint.pt"), "ab" * 32, "heuristic",
                              configs[min(k + 1, 1)], f"fewer holes: most failures fell in one {EVIL}")
            f.write(json.dumps(dataclasses.asdict(rec)) + "\n")
    report = VerificationReport(MAPF[0], {}, [StageResult("schema", 0.01, 0, 1)],
                                [warning("schema", "rewards.walker[0]", f"a finding {EVIL}", "a hint")])
    design = DesignResult(7, "passed", "offline", "offline designer", "default",
                          f"Walkers cross a frozen lake {EVIL}", spec_path=None, report=report,
                          explanation=f"picked the library spec {EVIL}")
    (root / "design.json").write_text(json.dumps(design.to_json_dict()))
    cells = {"5x5": {"size": 5}, f"6x6 {EVIL}": {"size": 6}}
    stage = {"index": 0, "trained": [{"label": f"size=4 {EVIL}", "share": 1.0, "params": {}}], "success": 0.2,
             "validation": 0.1, "guard": "revert", "guard_reason": f"did not help {EVIL}", "rationale": f"why {EVIL}"}
    arms = {name: {"name": name, "engineer": name, "folder": ".", "mean": mean, "ci95": 0.02,
                   "cells": {c: mean for c in cells}, "secondary": {"optimal": 0.01}, "stages": [stage]}
            for name, mean in (("engineer", 0.31), ("fixed", 0.25))}
    (root / "comparison.json").write_text(json.dumps({"spec": MAPF[0], "task_metric": "valid", "env_steps": 4096,
                                                      "episodes": 100, "held_out": cells, "arms": arms}))
    return root


# --------------------------------------------------------------------------- headless Chromium
@pytest.fixture(scope="session")
def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.fail("`chromium` is not on PATH: the report tests open the page in headless Chromium; "
                    "install it with `apt-get install -y chromium` (Debian's package; CI installs it)")
    return path


def chromium_args(binary: str, profile: Path) -> list[str]:
    return [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0"]


def console_lines(stderr: str) -> list[str]:
    """What the page wrote to the console (messages, uncaught errors, CSP refusals)."""
    return [ln for ln in stderr.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln]


def open_page(binary: str, page: Path, tmp: Path) -> tuple[str, list[str]]:
    """(the DOM after load, the console lines): --dump-dom, with virtual time for load events."""
    done = subprocess.run([*chromium_args(binary, tmp / "profile-dom"), "--virtual-time-budget=5000",
                           "--dump-dom", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, console_lines(done.stderr)


def screenshot(binary: str, page: Path, tmp: Path) -> tuple[Path, list[str]]:
    png = tmp / f"{page.stem}.png"
    done = subprocess.run([*chromium_args(binary, tmp / "profile-shot"), f"--screenshot={png}",
                           "--window-size=1280,4000", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S)
    assert done.returncode == 0 and png.exists(), done.stderr[-2000:]
    return png, console_lines(done.stderr)


def assert_renders(binary: str, page: Path, tmp: Path, min_images: int) -> str:
    """Loads without console errors, every <img> decodes, a real screenshot; the DOM."""
    from PIL import Image

    dom, console = open_page(binary, page, tmp)
    assert console == [], "the page wrote to the console:\n" + "\n".join(console)
    body = re.search(r"<body([^>]*)>", dom)
    assert body is not None and 'data-images-ok="true"' in body.group(1), body and body.group(1)
    shown = int(re.search(r'data-images="(\d+)"', body.group(1)).group(1))  # type: ignore[union-attr]
    assert shown >= min_images
    png, console = screenshot(binary, page, tmp)
    assert console == [], "the page wrote to the console:\n" + "\n".join(console)
    with Image.open(png) as im:
        assert im.format == "PNG" and im.size == (1280, 4000)
        assert len(im.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 100, "a blank screenshot"
    assert png.stat().st_size > 50_000
    return dom


@pytest.mark.slow
def test_the_harness_sees_console_errors_and_broken_images(chromium: str, tmp_path: Path) -> None:
    """The checks below could pass vacuously; they do not on a page that is broken."""
    from gymwright.report.page import SCRIPT

    bad = tmp_path / "bad.html"
    bad.write_text(f'<!doctype html><body><img src="data:image/png;base64,AAAA"><script>nothere();</script>'
                   f"<script>{SCRIPT}</script></body>")
    dom, console = open_page(chromium, bad, tmp_path)
    assert 'data-images-ok="false"' in dom
    assert any("Uncaught ReferenceError: nothere is not defined" in ln for ln in console), console


# --------------------------------------------------------------------------- the reports
def test_report_of_a_grid_run_renders_in_chromium(runs: dict[str, Path], chromium: str, tmp_path: Path) -> None:
    report = write_report(runs["mapf"], tmp_path / "mapf.html")
    page = report.path.read_text()
    assert report.missing == ["Curriculum lineage", "Engineer against the baselines"]
    assert "Trajectories" in report.sections
    links = re.findall(r"""\b(?:src|href)\s*=\s*["']?([^"'\s>]*)""", page)
    assert links and all(x.startswith(("data:", "#")) for x in links), "the page links outside itself"
    assert "url(" not in page and "@import" not in page
    gifs = page.count('src="data:image/gif;base64,')
    assert gifs == len(list((runs["mapf"] / "eval" / "frames").glob("*.gif"))) >= 2
    assert page.count('src="data:image/png;base64,') == 4  # return, reward terms, metrics, losses
    assert "<details><summary>mapf_frozenlake (" in page and "all_reached" in page and "±" in page
    assert "Best episode" in page and "walker_0:" in page  # the text rendering of the steps
    assert page.count('<p class="legend"><small>Colours: </small>') == gifs  # which colour is which agent
    assert "walker_1 (walker) and its goal (the small square)</span>" in page
    assert 'alt="agent colour #e6194b"' in page and 'alt="tile colour #' in page  # AGENT_PALETTE[0], a tile kind
    assert_renders(chromium, report.path, tmp_path, min_images=gifs + 4)


def test_report_of_a_curriculum_escapes_untrusted_text(runs: dict[str, Path], chromium: str, tmp_path: Path) -> None:
    report = write_report(runs["curriculum"], tmp_path / "curriculum.html", run_verifier=False)
    page = report.path.read_text()
    assert report.missing == []
    assert EVIL not in page and "<img src=x" not in page and page.count("&lt;script&gt;") >= 4
    assert "Walkers cross a frozen lake" in page and "fewer holes: most failures fell in one" in page
    assert "recorded by the design (design.json)" in page  # not re-verified
    assert "2 stages laid end to end" in page and "hole_density=0.1" in page
    # the scorecard judged stage 1's log alone; the page judges the learning curve on both stages
    assert "over 2 stages laid end to end" in page and "judged on the train.jsonl of all 2 stages" in page
    assert "engineer - fixed: +0.060 ± 0.028" in page and "engineer is better" in page  # 0.06 > hypot(0.02, 0.02)
    assert "valid while training" in page  # both curricula's curves (here: the same folder)
    dom = assert_renders(chromium, report.path, tmp_path, min_images=5)
    assert "<title>gymwright report: mapf_frozenlake</title>" in dom  # no injected script ran


def test_report_runs_the_verifier_and_says_what_is_missing(runs: dict[str, Path], tmp_path: Path) -> None:
    report = write_report(runs["ipd"], tmp_path / "ipd.html")
    page = report.path.read_text()
    assert "the verifier ran on" in page and "probes" in page
    assert "image/gif" not in page  # not a grid spec
    assert "no design.json in the folder" in page and "no curriculum.jsonl" in page

    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(runs["ipd"] / "train.jsonl", bare / "train.jsonl")
    with (bare / "train.jsonl").open("a") as f:
        f.write('{"update": 99, "env_st')  # a torn last line, as a killed run leaves
    report = write_report(bare, run_verifier=False)
    assert report.path == bare / "report.html"
    assert report.sections == ["The task", "Learning curves"]
    assert report.notes == ["train.jsonl: skipped 1 unreadable line"]
    assert "the spec was not found" in report.path.read_text()


def test_read_run_refuses_what_is_not_a_run(tmp_path: Path, runs: dict[str, Path]) -> None:
    with pytest.raises(ReportError, match="does not exist"):
        read_run(tmp_path / "nope")
    with pytest.raises(ReportError, match="nothing to report") as e:
        read_run(tmp_path)
    assert "gymwright train SPEC --out" in e.value.hint
    with pytest.raises(ReportError, match="is a file, not a run folder") as e:
        read_run(runs["ipd"] / "checkpoint.pt")
    assert str(runs["ipd"]) in e.value.hint
    assert len(read_run(runs["mapf"]).trajectories) == 8
    assert load_policy(runs["mapf"])  # the run is a real one


# --------------------------------------------------------------------------- the command
def cli() -> typer.Typer:
    app = typer.Typer()
    app.callback()(lambda: None)
    app.command("report")(report_command)
    return app


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli(), ["report", *args])


def test_report_command_writes_and_refuses_clearly(runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    done = invoke(str(runs["ipd"]), "-o", str(out), "--no-verify")
    assert done.exit_code == 0, done.output
    assert f"Wrote {out}" in done.stdout and "Not recorded: Verification, Curriculum lineage, Engineer against" in done.stdout
    assert out.read_text().startswith("<!doctype html>")
    for args, fragment in [((str(runs["ipd"]), "-o", str(out)), "already exists; not overwriting it"),
                           ((str(tmp_path / "nope"),), "does not exist"),
                           ((str(tmp_path),), "nothing to report in"),
                           ((str(runs["ipd"]), "-o", str(tmp_path / "no" / "r.html")), "does not exist")]:
        failed = invoke(*args)
        assert failed.exit_code == 1 and not isinstance(failed.exception, Exception), failed.output
        assert fragment in failed.output and "Traceback" not in failed.output, failed.output
    assert invoke(str(runs["ipd"]), "-o", str(out), "--force", "--no-verify").exit_code == 0


def test_the_task_part_shows_verified_and_fits_the_task_from_design_json(tmp_path: Path) -> None:
    """Issue 17: the design's two verdicts side by side, the review's findings when it does not
    fit, and unknown for a design.json written before the verdicts were recorded."""
    design = DesignResult(3, "unfit", "spec", "openai:some-model", "--model", "Three drones cover a grid",
                          spec_path=None, verified=True, fits_task="no",
                          findings=[f"- ends: the episode never ends when the grid is covered {EVIL}"])
    unfit = tmp_path / "unfit"
    unfit.mkdir()
    (unfit / "design.json").write_text(json.dumps(design.to_json_dict()))
    page = write_report(unfit, run_verifier=False).path.read_text()
    assert "<th>verified</th><td>yes</td>" in page and "<th>fits the task</th><td>no</td>" in page
    assert "the episode never ends when the grid is covered" in page and EVIL not in page

    old = tmp_path / "old"
    old.mkdir()
    record = {k: v for k, v in design.to_json_dict().items() if k not in ("verified", "fits_task", "findings")}
    (old / "design.json").write_text(json.dumps(record))
    page = write_report(old, run_verifier=False).path.read_text()
    assert "<th>verified</th><td>unknown</td>" in page and "<th>fits the task</th><td>unknown</td>" in page
    assert "<th>does not fit</th>" not in page
