"""`gymwright report RUN RUN ...`: runs compared on one page, from real small runs.

The statistics (IQM, stratified bootstrap) are checked against cases worked by hand and by exact
enumeration of every resample; the page is opened in headless Chromium (the harness of
test_report.py); bad input gets an error that names the folder and the fix. Also here: the
learning-curve check judges a curriculum's whole log, and grid GIFs carry a colour legend
(`gymwright evaluate`, `gymwright play --gif`)."""

from __future__ import annotations

import itertools
import json
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import typer
from PIL import Image
from typer.testing import CliRunner, Result

from gymwright.cli.config_options import save_config
from gymwright.cli.evaluate import whole_history
from gymwright.cli.play import play_command
from gymwright.cli.report import report_command
from gymwright.compile import compile_spec
from gymwright.evaluate import assess
from gymwright.evaluate.learnability import learning_curve
from gymwright.evaluate.trajectories import legend, record, save_frames
from gymwright.mechanics.grid.runtime import AGENT_PALETTE
from gymwright.report import ReportError, charts, read_cohort, read_run, write_comparison
from gymwright.report.compared import group_band
from gymwright.report.stats import difference_interval, iqm, iqm_band, iqm_interval
from gymwright.train import TrainConfig, train
from gymwright.train import checkpoint as ck
from tests.report.test_report import assert_renders, chromium  # noqa: F401  (chromium: the fixture)

IPD = ("iterated_prisoners_dilemma", {"rounds": 1})
MAPF = ("mapf_frozenlake", {"size": 4, "n_agents": 2})


# --------------------------------------------------------------------------- real small runs
def run(out: Path, spec: str, params: dict, steps: int = 3072, evaluate: bool = True, **config: object) -> Path:
    """`gymwright train` as the command does it (train, then config.yaml), and `evaluate`."""
    cfg = TrainConfig(spec=spec, params=params, total_steps=steps, num_envs=64, rollout_len=16, out=out, **config)
    train(cfg)
    save_config(out, asdict(cfg), "train")
    if evaluate:
        saved = ck.load(out)
        assess(spec, saved["params"][0], ck.policy_from(saved), history=saved["history"], episodes=20,
               record_episodes=2, out=out / "eval")
    return out


@pytest.fixture(scope="module")
def four(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two learning rates x two seeds of the prisoner's dilemma, trained and evaluated."""
    root = tmp_path_factory.mktemp("compare")
    return [run(root / f"lr{lr}-s{seed}", *IPD, lr=lr, seed=seed) for lr in (1e-3, 3e-4) for seed in (0, 1)]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One update each, not evaluated: for the refusals."""
    root = tmp_path_factory.mktemp("tiny")
    return {"ipd": run(root / "ipd", *IPD, steps=1024, evaluate=False),
            "ipd_other": run(root / "ipd_other", *IPD, steps=1024, evaluate=False, seed=3),
            "mapf": run(root / "mapf", *MAPF, steps=1024, evaluate=False)}


def scorecard(folder: Path) -> dict:
    return json.loads((folder / "eval" / "scorecard.json").read_text())


# --------------------------------------------------------------------------- the statistics, by hand
def test_iqm_is_the_mean_of_the_middle_half() -> None:
    assert iqm(np.array([0.1, 0.2, 0.3, 0.9])) == pytest.approx(0.25)  # cut 1 from each end: (0.2 + 0.3) / 2
    assert iqm(np.array([5.0, 1.0, 3.0])) == pytest.approx(3.0)  # int(0.75) = 0 cut: the plain mean
    assert iqm(np.array([[1.0, 100.0], [2.0, 3.0], [4.0, -50.0], [5.0, 6.0]])) == pytest.approx(3.5)  # 8 cells, 2 cut
    assert iqm(np.array([[0.0, 4.0], [1.0, 5.0], [2.0, 6.0], [3.0, 7.0]]), axis=0) == pytest.approx([1.5, 5.5])


def exact_interval(columns: list[list[float]]) -> tuple[float, float]:
    """The 2.5% and 97.5% quantiles of the IQM's exact bootstrap distribution: every stratified
    resample enumerated, each as likely as the others (the quantiles of a discrete distribution)."""
    draws = [list(itertools.product(col, repeat=len(col))) for col in columns]
    stats = sorted(float(iqm(np.array([x for part in combo for x in part]))) for combo in itertools.product(*draws))
    return tuple(float(q) for q in np.percentile(stats, [2.5, 97.5], method="inverted_cdf"))  # type: ignore[return-value]


def test_the_bootstrap_interval_matches_the_enumerated_one() -> None:
    # two seeds: the resamples are a,a / a,b / b,a / b,b, so the interval is [a, b] exactly
    two = iqm_interval(np.array([0.2, 0.6]))
    assert (two.point, two.low, two.high, two.runs) == (pytest.approx(0.4), 0.2, 0.6, 2)
    assert exact_interval([[0.2, 0.6]]) == (0.2, 0.6)
    # four seeds (4^4 = 256 resamples), and two strata of different sizes resampled apart
    for columns in ([[1.0, 2.0, 3.0, 10.0]], [[0.0, 1.0, 4.0], [2.0, 8.0]]):
        low, high = exact_interval(columns)
        got = iqm_interval([np.array(c) for c in columns], reps=40_000)
        assert got.low == pytest.approx(low, abs=0.15) and got.high == pytest.approx(high, abs=0.15)
        assert got.point == pytest.approx(float(iqm(np.concatenate([np.array(c) for c in columns]))))
    # a difference of two groups of two seeds, resampled apart: 16 equally likely pairs of means
    # {0.2, 0.4, 0.4, 0.6} - {0.0, 0.1, 0.1, 0.2}; the extremes (1/16 each) are the interval
    d = difference_interval(np.array([0.2, 0.6]), np.array([0.0, 0.2]))
    assert (d.point, d.low, d.high) == (pytest.approx(0.3), pytest.approx(0.0), pytest.approx(0.6))
    assert difference_interval(np.array([0.2, 0.6]), np.array([0.1])).runs == 1  # one seed: no interval
    one = iqm_interval(np.array([0.7]))
    assert (one.low, one.high, one.runs, one.text()) == (0.7, 0.7, 1, "0.7")  # no interval from one seed


def test_the_band_of_two_curves_spans_them() -> None:
    center, low, high = iqm_band(np.array([[0.0, 1.0, 2.0], [1.0, 3.0, 2.0]]))
    assert center.tolist() == [0.5, 2.0, 2.0] and low.tolist() == [0.0, 1.0, 2.0] and high.tolist() == [1.0, 3.0, 2.0]


# --------------------------------------------------------------------------- the learning-curve check
def stage_log(returns: list[float]) -> list[dict]:
    """One stage's train.jsonl rows, counting env steps from zero as every stage does."""
    return [{"env_steps": (i + 1) * 1024, "charts/return/walker": r} for i, r in enumerate(returns)]


def test_learning_curve_judges_every_stage_of_a_curriculum() -> None:
    """The report's plot rose from 0.30 to 0.50 over three stages while the check, reading the
    last stage alone, said it did not rise: the whole log laid end to end rises."""
    stages = [stage_log([0.30, 0.31, 0.29, 0.30]), stage_log([0.40, 0.41, 0.39, 0.40]), stage_log([0.50, 0.51, 0.49, 0.50])]
    last = learning_curve(stages[-1], ["walker"])
    assert last.verdict == "warning" and "did not rise measurably" in last.message
    whole = learning_curve([row for s in stages for row in s], ["walker"])
    assert whole.verdict == "ok", whole.message
    assert whole.evidence["stages"] == 3 and whole.evidence["points"] == 12
    assert "over 3 stages laid end to end" in whole.message and "from 0.3 to 0.5" in whole.message


@pytest.mark.slow
def test_evaluate_reads_the_log_of_every_stage_before_the_one_it_judges(tmp_path: Path) -> None:
    """`gymwright evaluate --policy OUT/stage1` judges stage 0's log and stage 1's (a real
    two-stage curriculum: stage 1 starts from stage 0's policy)."""
    root = tmp_path / "curriculum"
    run(root / "stage0", *MAPF, steps=2048, evaluate=False)
    run(root / "stage1", *MAPF, steps=2048, evaluate=False, init_from=root / "stage0")
    (root / "curriculum.jsonl").write_text("")
    saved = ck.load(root / "stage1")
    rows = whole_history(saved)
    assert rows == ck.load(root / "stage0")["history"] + saved["history"] and len(rows) == 4
    assert [r["env_steps"] for r in rows] == [1024, 2048, 1024, 2048]
    assert learning_curve(rows, ["walker"]).evidence["stages"] == 2
    assert whole_history(ck.load(tmp_path / "curriculum" / "stage0")) == ck.load(root / "stage0")["history"]


# --------------------------------------------------------------------------- the comparison page
@pytest.mark.slow  # over 5 s, and not its stage's one smoke test (the default suite's 4-minute budget)
def test_a_comparison_of_seeds_and_configs_renders_with_hand_checked_intervals(
        four: list[Path], chromium: str, tmp_path: Path) -> None:  # noqa: F811
    report = write_comparison(four, tmp_path / "compare.html", x="time")
    page = report.path.read_text()
    assert report.sections == ["Runs compared", "Learning curves", "Evaluation", "Checks", "Hyperparameters"]
    assert report.missing == []
    cohort = read_cohort(four)
    assert cohort.grouped_by == ["lr"] and list(cohort.groups) == ["lr=0.001", "lr=0.0003"]
    assert cohort.groups == {"lr=0.001": [0, 1], "lr=0.0003": [2, 3]}
    # the table, by hand: two seeds each, so the IQM is their mean and the interval [min, max]
    metric = scorecard(four[0])["task_metric"]
    for a, b in ((four[0], four[1]), (four[2], four[3])):
        x, y = (scorecard(f)["trained"]["metrics"][metric] for f in (a, b))
        assert f"{(x + y) / 2:.3g} [{min(x, y):.3g}, {max(x, y):.3g}]" in page
        ret = [scorecard(f)["trained"]["returns"]["player"] for f in (a, b)]
        assert f"{sum(ret) / 2:.3g} [{min(ret):.3g}, {max(ret):.3g}]" in page
    # the difference of the two groups, by hand: the extremes of the 16 resampled pairs of means
    g1, g2 = ([scorecard(f)["trained"]["metrics"][metric] for f in pair] for pair in (four[:2], four[2:]))
    assert "<th>lr=0.001 - lr=0.0003</th>" in page
    assert (f"{np.mean(g1) - np.mean(g2):.3g} [{min(g1) - max(g2):.3g}, {max(g1) - min(g2):.3g}]<br><small>"
            in page)
    # the hyperparameters side by side: lr differs and labels the groups, the seed differs and does not
    assert '<td><code>lr</code></td><td><span class="differs">differs</span></td>' in page
    assert '<td><code>seed</code></td><td><span class="differs">differs (not grouped)</span></td>' in page
    assert "<td><code>gamma</code></td><td></td><td>0.99</td>" in page
    # the curves: the task metric and the return, one band per group, over seconds of training
    assert page.count('src="data:image/png;base64,') == 2
    band = group_band(cohort, cohort.groups["lr=0.001"], "metrics/", metric, "time_s")
    ends = [json.loads((f / "train.jsonl").read_text().splitlines()[-1])["time_s"] for f in four[:2]]
    assert band is not None and band.runs == 2 and band.x[-1] == pytest.approx(min(ends))
    assert all(lo <= c <= hi for lo, c, hi in zip(band.low, band.center, band.high, strict=True))
    assert_renders(chromium, report.path, tmp_path, min_images=2)


@pytest.mark.slow
def test_group_by_names_the_grouping(four: list[Path], tmp_path: Path) -> None:
    by_seed = read_cohort(four, ["seed"])
    assert by_seed.groups == {"seed=0": [0, 2], "seed=1": [1, 3]}
    assert list(read_cohort(four, ["run"]).groups) == [f.name for f in four]
    page = write_comparison(four[:1] + four[2:3], tmp_path / "two.html").path.read_text()
    assert "lr=0.001" in page and "lr=0.0003" in page and "With one seed there is no interval" in page
    x = scorecard(four[0])["trained"]["metrics"][scorecard(four[0])["task_metric"]]
    assert f"<td>{x:.3g}<br><small>" in page  # one seed: its value, no interval


@pytest.mark.slow
def test_curricula_of_two_engineers_are_grouped_by_engineer(tmp_path: Path, chromium: str) -> None:  # noqa: F811
    from gymwright.curriculum import CurriculumOptions, evolve
    from gymwright.engineer import FixedEngineer, HeuristicEngineer

    opts = CurriculumOptions(stages=2, steps_per_stage=2048, num_envs=32, eval_episodes=20, record_episodes=4)
    start = {"size": 3, "n_agents": 2, "max_steps": 12}
    folders = [tmp_path / name for name in ("heuristic", "fixed")]
    for engineer, folder in zip((HeuristicEngineer(), FixedEngineer()), folders, strict=True):
        evolve("mapf_frozenlake", start, engineer, folder, opts)
    cohort = read_cohort(folders)
    assert list(cohort.groups) == ["engineer=heuristic", "engineer=fixed"], cohort.differing
    assert cohort.settings[0]["params.size"] == 3 and cohort.settings[0]["stages"] == 2
    report = write_comparison(cohort, tmp_path / "engineers.html")
    assert "Learning curves" in report.sections and "Evaluation" in report.missing
    page = report.path.read_text()
    assert '<td><code>engineer</code></td><td><span class="differs">differs</span></td>' in page
    assert "valid (task metric) while training" in page  # the spec's task metric: no scorecard names it
    assert_renders(chromium, report.path, tmp_path, min_images=2)


def test_bad_input_is_refused_naming_the_folder_and_the_fix(tiny: dict[str, Path], tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ReportError, match=f"nothing to report in {empty}") as e:
        read_cohort([tiny["ipd"], empty])
    assert "gymwright train SPEC --out" in e.value.hint
    designed = tmp_path / "designed"
    designed.mkdir()
    (designed / "design.json").write_text("{}")
    with pytest.raises(ReportError, match=f"{designed}: has no train.jsonl and no eval/scorecard.json"):
        read_cohort([tiny["ipd"], designed])
    with pytest.raises(ReportError, match=f"{tiny['mapf']}: trained mapf_frozenlake, but {tiny['ipd']} trained "
                                          "iterated_prisoners_dilemma") as e:
        read_cohort([tiny["ipd"], tiny["mapf"]])
    assert "report runs of different specs separately" in e.value.hint
    again = tiny["ipd"] / ".." / "ipd"  # the same folder, spelled otherwise
    with pytest.raises(ReportError) as e:
        read_cohort([tiny["ipd"], again])
    assert str(e.value).startswith(f"{again}: given twice (as {tiny['ipd']} and as {again})")
    with pytest.raises(ReportError, match="--group-by: no run has a setting learning_rate") as e:
        read_cohort([tiny["ipd"], tiny["ipd_other"]], ["learning_rate"])
    assert "lr" in e.value.hint and "params.rounds" in e.value.hint


def test_runs_alike_but_the_seed_pool_into_one_group_and_curves_need_no_evaluation(
        tiny: dict[str, Path], tmp_path: Path) -> None:
    report = write_comparison([tiny["ipd"], tiny["ipd_other"]], tmp_path / "c.html")
    assert report.missing == ["Evaluation", "Checks"]
    assert list(read_cohort([tiny["ipd"], tiny["ipd_other"]]).groups) == ["all runs"]
    copy = tmp_path / "copy"
    shutil.copytree(tiny["ipd"], copy)
    assert any("several runs of seed 0" in n for n in read_cohort([tiny["ipd"], copy]).notes)


def test_curves_over_seconds_of_training(tiny: dict[str, Path], tmp_path: Path) -> None:
    """--x time: the x of every point is the log's `time_s` (seconds of training), not env steps."""
    segs = read_run(tiny["ipd"]).segments
    rows = [json.loads(ln) for ln in (tiny["ipd"] / "train.jsonl").read_text().splitlines()]
    c = charts.curves(segs, "charts/return/", charts.X_KEYS["time"])
    assert c.series["player"][0] == [r["time_s"] for r in rows] and c.x_label == "wall-clock seconds of training"
    assert charts.curves(segs, "charts/return/").series["player"][0] == [r["env_steps"] for r in rows]
    done = invoke("report", str(tiny["ipd"]), "--x", "time", "--no-verify", "-o", str(tmp_path / "t.html"))
    assert done.exit_code == 0 and "Learning curves" in done.output, done.output
    assert invoke("report", str(tiny["ipd"]), "--x", "hours").exit_code == 2  # steps or time only


# --------------------------------------------------------------------------- the command
def app() -> typer.Typer:
    cli = typer.Typer()
    cli.callback()(lambda: None)
    cli.command("report")(report_command)
    cli.command("play")(play_command)
    return cli


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app(), list(args))


def test_the_command_compares_runs_and_refuses_clearly(tiny: dict[str, Path], tmp_path: Path) -> None:
    done = invoke("report", str(tiny["ipd"]), str(tiny["ipd_other"]), "--json")
    assert done.exit_code == 0, done.output
    written = json.loads(done.stdout)
    assert written["report"] == str(tiny["ipd"].parent.resolve() / "comparison.html")  # their common folder
    assert written["sections"] == ["Runs compared", "Learning curves", "Hyperparameters"]
    failed = invoke("report", str(tiny["ipd"]), str(tiny["mapf"]), "-o", str(tmp_path / "x.html"))
    assert failed.exit_code == 1 and "Traceback" not in failed.output
    assert f"{tiny['mapf']}: trained mapf_frozenlake" in failed.output and not (tmp_path / "x.html").exists()
    failed = invoke("report", str(tiny["ipd"]), "--group-by", "lr")
    assert failed.exit_code == 1 and "groups several runs, and one was given" in failed.output
    failed = invoke("report", str(tiny["ipd"]), str(tmp_path / "nope"), "-o", str(tmp_path / "x.html"))
    assert failed.exit_code == 1 and f"{tmp_path / 'nope'} does not exist" in failed.output


# --------------------------------------------------------------------------- GIFs with a colour legend
def legend_pixels(gif: Path) -> tuple[set[tuple[int, int, int]], int]:
    """The colours of the first frame's legend strip (below the grid) and the frame's height."""
    with Image.open(gif) as im:
        frame = im.convert("RGB")
    grid_h = MAPF[1]["size"] * 16 * 4  # cells of 16 pixels, drawn 4x
    strip = np.asarray(frame)[grid_h:]
    return {tuple(int(v) for v in px) for px in strip.reshape(-1, 3)}, frame.height


def test_a_grid_gif_carries_which_colour_is_which_agent(tiny: dict[str, Path], tmp_path: Path) -> None:
    compiled = compile_spec(*MAPF)
    entries = legend(compiled)
    assert [(e.label, e.rgb, e.shape) for e in entries] == [
        ("walker_0 (walker) and its goal (the small square)", AGENT_PALETTE[0], "disc"),
        ("walker_1 (walker) and its goal (the small square)", AGENT_PALETTE[1], "disc"),
        *[(kind, tuple(rgb), "tile") for kind, rgb in zip(compiled.checked.section("grid").kinds, compiled.checked.section("grid").colors, strict=True)]]
    assert legend(compile_spec(*IPD)) == []  # no grid, no frames
    saved = ck.load(tiny["mapf"])
    tr = record(*MAPF, ck.policy_from(saved), episodes=1, frames=True)[0]
    plain, keyed = save_frames(tr, tmp_path, "plain"), save_frames(tr, tmp_path, "keyed", legend_entries=entries)
    colours, height = legend_pixels(keyed["gif"])
    assert {AGENT_PALETTE[0], AGENT_PALETTE[1]} <= colours and height > Image.open(plain["gif"]).height
    assert AGENT_PALETTE[0] not in legend_pixels(plain["gif"])[0]  # the plain GIF has no strip at all


def test_play_writes_a_gif_of_the_episodes_it_played(tiny: dict[str, Path], tmp_path: Path) -> None:
    gif = tmp_path / "play.gif"
    done = invoke("play", MAPF[0], "--policy", str(tiny["mapf"]), "-n", "2", "--gif", str(gif), "--deterministic")
    assert done.exit_code == 0, done.output
    saved = ck.load(tiny["mapf"])
    played = record(*MAPF, ck.policy_from(saved), episodes=2, deterministic=True, frames=True)
    frames = sum(len(tr.frames) for tr in played)
    assert f"GIF: {gif} ({frames} frames)" in done.output and "episode 2 (seed 1)" in done.output
    colours, _ = legend_pixels(gif)
    assert {AGENT_PALETTE[0], AGENT_PALETTE[1]} <= colours
    for args, fragment in [((IPD[0], "--policy", str(tiny["ipd"]), "--gif", str(gif)), "has no grid"),
                           ((MAPF[0], "--policy", "scripted:greedy", "--gif", str(gif)), "not a scripted baseline"),
                           ((MAPF[0], "--policy", str(tiny["mapf"]), "--gif", str(tmp_path / "no" / "x.gif")),
                            "does not exist")]:
        failed = invoke("play", *args)
        assert failed.exit_code == 1 and fragment in failed.output and "Traceback" not in failed.output, failed.output
    plain = invoke("play", MAPF[0], "--policy", str(tiny["mapf"]), "-n", "1")  # without --gif: the play it was
    assert plain.exit_code == 0 and "GIF" not in plain.output and "episode 1 (seed 0)" in plain.output

