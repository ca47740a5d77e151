"""Bad inputs to `report`, RLlib's options, `evaluate --band`, `play --gif` and `--npc` keys, each
answered clearly (issue 39, item 10).

A run folder is read as a spec is: within bounds, typed, and a record that cannot be read is named
with the file (and line) and what is wrong. A part of a run that the report can do without (a
config.yaml, lines of train.jsonl, a scorecard) is left out and said in the notes, which the page
and `--json` carry, as a torn last line always was; a folder that is not a run, or cannot be read,
is an error (exit 1). Every `train --backend rllib` option is checked before Ray is imported or
started. With `--json`, an error is one JSON object on stdout. None of them is a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from gymwright.cli.config_options import save_config
from gymwright.evaluate import assess
from gymwright.report import read_cohort, read_run, records
from gymwright.spec import limits
from gymwright.train import TrainConfig, train
from gymwright.train import checkpoint as ck
from tests.support.cli_clean import assert_clean, invoke

IPD = ("iterated_prisoners_dilemma", {"rounds": 1})


def one_json_error(result: Result, *fragments: str, code: int = 1) -> dict[str, Any]:
    """With --json: exit `code` and exactly one JSON object on stdout, `ok` false, saying each fragment."""
    assert result.exit_code == code, result.output
    reply = json.loads(result.stdout)  # one object, nothing else on stdout
    assert reply["ok"] is False and reply["exit_code"] == code
    said = f"{reply['path']}: {reply['message']} {reply['hint']}"
    for fragment in fragments:
        assert fragment in said, (fragment, said)
    return reply


# =========================================================================== real runs
def trained(out: Path, seed: int, evaluate: bool) -> Path:
    """`gymwright train` as the command does it (train, then config.yaml), and `evaluate`."""
    cfg = TrainConfig(spec=IPD[0], params=IPD[1], total_steps=256, num_envs=4, rollout_len=16, seed=seed, out=out)
    train(cfg)
    save_config(out, asdict(cfg), "train")
    if evaluate:
        saved = ck.load(out)
        assess(IPD[0], saved["params"][0], ck.policy_from(saved), history=saved["history"], episodes=4,
               record_episodes=2, out=out / "eval")
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An evaluated run (4 updates) and an unevaluated one of another seed, to copy and damage."""
    root = tmp_path_factory.mktemp("runs")
    return {"run": trained(root / "run", 0, True), "other": trained(root / "other", 1, False)}


def damaged(made: dict[str, Path], tmp_path: Path, name: str = "run") -> Path:
    return Path(shutil.copytree(made[name], tmp_path / name))


def report(run: Path, *more: Any) -> Result:
    return invoke("report", run, "-o", run.parent / "report.html", "--no-verify", *more)


def compare(run: Path, made: dict[str, Path], *more: Any) -> Result:
    return invoke("report", run, made["other"], "-o", run.parent / "compare.html", *more)


def notes_of(result: Result) -> list[str]:
    """The notes of a report written with --json (exit 0, one JSON object)."""
    assert result.exit_code == 0, result.output
    return list(json.loads(result.stdout)["notes"])


# =========================================================================== config.yaml
def alias_bomb() -> str:
    lines, previous = ["a: &a [x, x, x, x, x, x, x, x, x]"], "a"
    for name in "bcdefghijkl":  # each level repeats the one before nine times: 9^12 values in all
        lines.append(f"{name}: &{name} [{', '.join(['*' + previous] * 9)}]")
        previous = name
    return "\n".join([*lines, f"seed: *{previous}"]) + "\n"


CONFIGS = [  # (what config.yaml holds, what the note says)
    (b"lr: 0.001\n# caf\xe9\n", "config.yaml:2: the file is not UTF-8 text: byte 0xe9 at byte offset 15"),
    (alias_bomb().encode(), f"the config expands to more than {limits.MAX_SPEC_NODES:,} nodes"),
    (("seed: " + "[" * 100_000 + "]" * 100_000 + "\n").encode(),
     f"config.yaml: config file is 200,007 bytes; the limit is {limits.MAX_FILE_BYTES:,}"),
    (("seed: " + "[" * 40 + "]" * 40 + "\n").encode(),
     f"the config is nested more than {limits.MAX_NESTING_DEPTH} levels deep"),
    (b"- 1\n- 2\n", "config.yaml: a config is a mapping of TrainConfig fields (`field: value`), got a list"),
    (b"", "got an empty file"),
    (b"lr: [1\n", "config.yaml:2:1: YAML syntax error"),
    (b"lr: -0.5\n", "config.yaml: lr: must be a finite number"),
    (b"seed: '0'\n", "config.yaml: seed: must be a whole number from 0"),
    (("seed: " + "9" * 5000 + "\n").encode(), "a value cannot be read"),
]


@pytest.mark.parametrize(("text", "said"), CONFIGS, ids=lambda x: repr(x)[:24])
def test_a_config_yaml_that_cannot_be_read_is_said_and_the_checkpoints_config_used(
        made: dict[str, Path], tmp_path: Path, text: bytes, said: str) -> None:
    run = damaged(made, tmp_path)
    (run / "config.yaml").write_bytes(text)
    start = time.perf_counter()
    cohort = read_cohort([run, made["other"]])
    assert time.perf_counter() - start < 10  # the bomb took 3.5 GB and 49 s as a --config file
    (note,) = [n for n in cohort.notes if n.startswith(f"{run}: config.yaml")]
    assert said in note and note.endswith("; the checkpoint's config is used instead") and len(note) < 500, note
    assert cohort.settings[0]["lr"] == 3e-4  # the checkpoint's


def test_report_compares_runs_whose_config_yaml_cannot_be_read(made: dict[str, Path], tmp_path: Path) -> None:
    run = damaged(made, tmp_path)
    (run / "config.yaml").write_bytes(alias_bomb().encode())
    assert_clean(compare(run, made), f"{run}: config.yaml:", "expands to more than",
                 "the checkpoint's config is used instead", "Hyperparameters", code=0)
    notes = notes_of(compare(run, made, "--json", "-f"))
    assert any(n.startswith(f"{run}: config.yaml:") and "expands to more than" in n for n in notes), notes


def test_a_config_yaml_that_is_no_file_and_a_run_without_a_checkpoint_config(made: dict[str, Path],
                                                                          tmp_path: Path) -> None:
    run = damaged(made, tmp_path)
    (run / "config.yaml").unlink()
    (run / "config.yaml").mkdir()
    assert any(n == f"{run}: config.yaml: not a regular file; the checkpoint's config is used instead"
               for n in read_cohort([run, made["other"]]).notes)
    (run / "checkpoint.pt").unlink()  # nothing to fall back on: said, not guessed
    assert any(n.endswith("config.yaml: not a regular file; and the run has no checkpoint with its config: its "
                          "settings are not known") for n in read_cohort([run, made["other"]]).notes)


# =========================================================================== train.jsonl
def add_line(run: Path, line: bytes, name: str = "train.jsonl") -> None:
    with (run / name).open("ab") as f:
        f.write(line + b"\n")


HUGE = b'{"update": 5, "x": "' + b"a" * (records.MAX_ROW_BYTES + 10) + b'"}'
DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(("line", "said"), [
    (b'{"update": 99, "env_st', "train.jsonl: skipped 1 unreadable line"),  # torn, as a killed run leaves
    (b"not json at all", "train.jsonl: skipped 1 unreadable line"),
    (b'{"update": 5, "note": "caf\xe9"}', "train.jsonl: skipped 1 unreadable line"),
    (b'{"update": ' + b"9" * 5000 + b"}", "train.jsonl: skipped 1 unreadable line"),
    (DEEP, f"train.jsonl: skipped line 5: the record is nested more than {limits.MAX_NESTING_DEPTH} levels deep"),
    (b"[1, 2]", "train.jsonl: skipped line 5: a JSON list, not an object"),
    (HUGE, f"train.jsonl: skipped line 5: {len(HUGE) + 1:,} bytes, past the {records.MAX_ROW_BYTES:,} of a line"),
])
def test_a_train_log_line_that_cannot_be_read_is_skipped_and_said(made: dict[str, Path], tmp_path: Path,
                                                                 line: bytes, said: str) -> None:
    run = damaged(made, tmp_path)
    add_line(run, line)
    folder = read_run(run)
    assert len([n for n in folder.notes if n.startswith(said)]) == 1 and len(folder.segments[0].rows) == 4, folder.notes


def test_report_of_a_train_log_with_a_line_nested_100000_deep(made: dict[str, Path], tmp_path: Path) -> None:
    run = damaged(made, tmp_path)
    add_line(run, DEEP)  # was a RecursionError's traceback, in both forms of the command
    said = "train.jsonl: skipped line 5: the record is nested more than"
    assert_clean(report(run), said, "Learning curves", code=0)
    assert any(said in n for n in notes_of(compare(run, made, "--json")))


NOT_NUMBERS = [("env_steps", "many"), ("charts/return/player", float("nan")), ("update", [1, 2]),
               ("time_s", float("inf")), ("charts/sps", True), ("metrics/cooperation_rate", {"a": 1})]


def test_values_that_are_not_finite_numbers_are_left_out_of_their_rows(made: dict[str, Path], tmp_path: Path) -> None:
    run = damaged(made, tmp_path)
    rows = [json.loads(x) for x in (run / "train.jsonl").read_text().splitlines()]
    for i, (key, value) in enumerate(NOT_NUMBERS):
        rows[i % len(rows)][key] = value
    (run / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    flat = assert_clean(report(run), "train.jsonl: left out 6 values that are not a finite number: line 1: "
                        "env_steps = 'many'; line 1: charts/sps = True; line 2: charts/return/player = nan; and 3 more",
                        "Learning curves", code=0)
    assert "line 4" not in flat
    assert any(n.startswith("train.jsonl: left out 6 values") for n in notes_of(report(run, "-f", "--json")))
    kept = read_run(run).segments[0].rows
    assert "env_steps" not in kept[0] and kept[0]["update"] == 1 and "update" not in kept[2]


def curriculum_of(run: Path, tmp_path: Path) -> Path:
    """Two stages (copies of `run`), the second evaluated, and their records: the report judges the
    learning curve again on both stages' logs (where text in the log was a raw ValueError)."""
    root = tmp_path / "curriculum"
    for k in range(2):
        shutil.copytree(run, root / f"stage{k}", ignore=shutil.ignore_patterns(*(["eval"] if k == 0 else [])))
    with (root / "curriculum.jsonl").open("w") as f:
        for k in range(2):
            f.write(json.dumps({"index": k, "params": IPD[1], "checkpoint": str(root / f"stage{k}" / "checkpoint.pt"),
                                "engineer": "fixed"}) + "\n")
    return root


def test_text_in_a_curriculums_log_is_left_out_before_the_learning_curve_is_judged(made: dict[str, Path],
                                                                                  tmp_path: Path) -> None:
    root = curriculum_of(made["run"], tmp_path)
    rows = [json.loads(x) for x in (root / "stage1" / "train.jsonl").read_text().splitlines()]
    rows[1]["env_steps"], rows[2]["charts/return/player"] = "many", "high"
    (root / "stage1" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert_clean(report(root), "stage1/train.jsonl: left out 2 values that are not a finite number: line 2: "
                 "env_steps = 'many'; line 3: charts/return/player = 'high'", "Evaluation", code=0)
    page = (tmp_path / "report.html").read_text()
    assert "judged on the train.jsonl of all 2 stages" in page


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail (rather than hang the suite) if the block takes longer than `seconds`."""
    def expired(*_: Any) -> None:
        raise TimeoutError(f"still reading after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_train_log_that_is_no_regular_file(made: dict[str, Path], tmp_path: Path) -> None:
    run = damaged(made, tmp_path)
    (run / "train.jsonl").unlink()
    (run / "train.jsonl").mkdir()
    assert "train.jsonl: not a regular file; left out" in read_run(run).notes
    (run / "train.jsonl").rmdir()
    os.mkfifo(run / "train.jsonl")
    with deadline(60):  # a FIFO was read forever
        assert_clean(report(run), "train.jsonl: not a regular file; left out", code=0)


# =========================================================================== the other records
@pytest.mark.parametrize(("name", "said"), [
    ("eval/scorecard.json", f"eval/scorecard.json:1:{limits.MAX_NESTING_DEPTH + 1}: the record is nested more than"),
    ("design.json", "design.json:1:33: the record is nested more than"),
    ("comparison.json", "comparison.json:1:33: the record is nested more than"),
    ("eval/trajectories.jsonl", "eval/trajectories.jsonl: skipped line 1: the record is nested more than"),
    ("curriculum.jsonl", "curriculum.jsonl: skipped line 1: the record is nested more than"),
])
def test_a_record_nested_100000_deep_is_left_out_not_a_recursion_error(made: dict[str, Path], tmp_path: Path,
                                                                       name: str, said: str) -> None:
    run = damaged(made, tmp_path)
    (run / name).write_bytes(DEEP + b"\n")
    assert any(n.startswith(said) for n in read_run(run).notes)


SCORECARDS = [
    (b'{"spec": "caf\xe9"}', "eval/scorecard.json:1: the file is not UTF-8 text: byte 0xe9"),
    (b'{"spec": ', "eval/scorecard.json: not JSON: Expecting value (line 1, column 10)"),
    (b'{"spec": ' + b"9" * 5000 + b"}", "eval/scorecard.json: a value cannot be read"),
    (b"[1, 2]", "eval/scorecard.json: a JSON list, not an object; left out"),
    (b" " * (records.MAX_RECORD_BYTES + 1), f"the file is {records.MAX_RECORD_BYTES + 1:,} bytes; a record is at most"),
    ({"trained": "x"}, "eval/scorecard.json: trained: input should be a valid dictionary or instance of played, "
                       "got 'x', not what gymwright writes; left out"),
    ({"trained": {"ci95": {"player": "wide"}}}, "eval/scorecard.json: trained.ci95.player: input should be a valid "
                                                "number, got 'wide'"),
    ({"checks": "x"}, "eval/scorecard.json: checks: input should be a valid list"),
    ({"checks": [-1.5]}, "eval/scorecard.json: checks.0: input should be a valid dictionary"),
    ({"params": [1]}, "eval/scorecard.json: params: input should be a valid dictionary"),
    ({"task_metric": [1]}, "eval/scorecard.json: task_metric: input should be a valid string"),
]


def scorecard(run: Path, content: bytes | dict[str, Any]) -> None:
    path = run / "eval" / "scorecard.json"
    if isinstance(content, dict):  # the real scorecard with one field changed
        content = json.dumps({**json.loads(path.read_text()), **content}).encode()
    path.write_bytes(content)


@pytest.mark.parametrize(("content", "said"), SCORECARDS, ids=lambda x: repr(x)[:24])
def test_a_scorecard_that_cannot_be_read_or_is_not_what_evaluate_writes(made: dict[str, Path], tmp_path: Path,
                                                                       content: bytes | dict[str, Any], said: str) -> None:
    run = damaged(made, tmp_path)
    scorecard(run, content)
    folder = read_run(run)
    assert folder.scorecard is None and any(said in n for n in folder.notes), folder.notes


def test_report_of_a_scorecard_of_the_wrong_shape(made: dict[str, Path], tmp_path: Path) -> None:
    run = damaged(made, tmp_path)
    scorecard(run, {"trained": {"ci95": {"player": "wide"}}})  # was an AttributeError's traceback
    said = "eval/scorecard.json: trained.ci95.player: input should be a valid number, got 'wide'"
    assert_clean(report(run), said, "Not recorded:", code=0)
    written = json.loads(report(run, "-f", "--json").stdout)
    assert "Evaluation" in written["missing"] and any(said in n for n in written["notes"])
    assert any(said in n for n in notes_of(compare(run, made, "--json")))


@pytest.mark.parametrize(("design", "said"), [
    ({"report": {"diagnostics": "x"}}, "design.json: report.diagnostics: input should be a valid list, got 'x'"),
    ({"report": {"timings": [1]}}, "design.json: report.timings: input should be a valid dictionary"),
    ({"report": {"counts": {"error": "many"}}}, "design.json: report.counts.error: input should be a valid integer"),
    ({"findings": "no"}, "design.json: findings: input should be a valid list"),
    ({"design_id": "7"}, "design.json: design_id: input should be a valid integer, got '7'"),
])
def test_a_design_record_of_another_shape_is_left_out(made: dict[str, Path], tmp_path: Path,
                                                      design: dict[str, Any], said: str) -> None:
    run = damaged(made, tmp_path)
    (run / "design.json").write_text(json.dumps({"design_id": 7, "task": "two players", "status": "passed", **design}))
    folder = read_run(run)
    assert folder.design is None and any(n.startswith(said) for n in folder.notes), folder.notes


def test_trajectories_whose_fields_are_not_what_evaluate_writes(made: dict[str, Path], tmp_path: Path) -> None:
    run = damaged(made, tmp_path)
    for bad in ({"episode": 99, "seed": "x", "t": 0}, {"episode": [1], "t": 0},
                {"episode": 0, "t": "end", "returns": {"player": "x"}}, {"episode": 0, "t": 1, "rewards": [1]},
                {"episode": 0, "t": 1, "terms": {"player": {"payoff": None}}}):
        add_line(run, json.dumps(bad).encode(), "eval/trajectories.jsonl")
    assert_clean(report(run), "eval/trajectories.jsonl: skipped line 5: seed: input should be a valid integer, "
                 "got 'x'; line 6: episode: input should be a valid integer, got [1]; line 7: returns.player: input "
                 "should be a valid number, got 'x'; and 2 more", "Trajectories", code=0)
    assert len(read_run(run).trajectories) == 2  # the two recorded episodes, whole


def test_a_curriculum_or_comparison_record_of_the_wrong_types(made: dict[str, Path], tmp_path: Path) -> None:
    root = curriculum_of(made["run"], tmp_path)
    add_line(root, json.dumps({"index": "9" * 5000, "checkpoint": "x" * 5000}).encode(), "curriculum.jsonl")
    add_line(root, json.dumps({"index": True, "checkpoint": ["a"]}).encode(), "curriculum.jsonl")
    add_line(root, json.dumps({"index": 2, "returns": {"player": "x"}, "failures": [1]}).encode(), "curriculum.jsonl")
    (root / "comparison.json").write_text(json.dumps({"arms": [1, 2]}))
    assert_clean(report(root), "curriculum.jsonl: skipped line 3: index: input should be a valid integer, got "
                 "'99999999999", "line 4: index: input should be a valid integer, got True; line 5: returns.player: "
                 "input should be a valid number, got 'x'",
                 "comparison.json: arms: input should be a valid dictionary, got [1, 2], not what gymwright writes; "
                 "left out",
                 "Curriculum lineage", code=0)


# =========================================================================== the run folder
def test_a_run_folder_that_does_not_exist(made: dict[str, Path], tmp_path: Path) -> None:
    nope = tmp_path / "nope"
    for result in (report(nope), compare(nope, made), invoke("report", made["run"], nope)):
        assert_clean(result, f"{nope} does not exist", "gymwright train SPEC --out RUN")
    one_json_error(invoke("report", nope, "--json"), f"{nope} does not exist")
    one_json_error(invoke("report", made["run"], nope, "--json"), f"{nope} does not exist")


@pytest.mark.parametrize("what", ["empty", "other files", "a file", "a checkpoint file"])
def test_a_folder_that_is_not_a_run(made: dict[str, Path], tmp_path: Path, what: str) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    if what == "other files":
        (folder / "notes.txt").write_text("hello")
        (folder / "train.json").write_text("{}")
    said, hint = f"nothing to report in {folder}: it has none of train.jsonl, checkpoint.pt", "train into it first"
    if what == "a file":
        folder = folder / "notes.txt"
        folder.write_text("hello")
        said, hint = f"{folder} is a file, not a run folder", "pass a folder: a run folder holds train.jsonl"
    if what == "a checkpoint file":
        folder = made["run"] / "checkpoint.pt"
        said, hint = f"{folder} is a file, not a run folder", f"pass its folder {made['run']}"
    assert_clean(invoke("report", folder), said, hint)
    assert_clean(invoke("report", folder, made["other"]), said, hint)
    one_json_error(invoke("report", folder, "--json"), said, hint)


@contextmanager
def unreadable(folder: Path) -> Iterator[None]:
    """`folder` unreadable by this process: its mode 000, and as root (whom modes do not stop) the
    effective user `nobody`, for whom pytest's own temporary folder is closed as well."""
    folder.chmod(0)
    as_root = os.geteuid() == 0
    try:
        if as_root:
            os.seteuid(65534)
        yield
    finally:
        if as_root:
            os.seteuid(0)
        folder.chmod(0o755)


def test_a_run_folder_that_cannot_be_read(made: dict[str, Path], tmp_path: Path) -> None:
    run = damaged(made, tmp_path)
    assert report(run).exit_code == 0  # everything the command imports is imported before the user changes
    with unreadable(run):
        one = report(run, "-f")
        many = compare(run, made)
        as_json = invoke("report", run, "--json")
    for result in (one, many):
        assert_clean(result, "cannot read", "Permission denied", "readable by this user")
    one_json_error(as_json, "cannot read", "Permission denied")


# =========================================================================== RLlib's options, before Ray
@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Fail the test where Ray would be imported or started: `train_rllib` and `start_ray` record a
    call and refuse; the list of calls is returned."""
    from gymwright.train import rllib, rllib_ray

    calls: list[str] = []

    def refuse(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            raise AssertionError(f"{name} was called: the error should have come before Ray")
        return call

    monkeypatch.setattr(rllib, "train_rllib", refuse("train_rllib"))
    monkeypatch.setattr(rllib_ray, "start_ray", refuse("start_ray"))
    return calls


RLLIB = [  # (options, exit code, what is said, where: the JSON path)
    (["--num-envs", "0"], 2, "num_envs: must be a whole number from 1 to 65,536, got 0", "--num-envs"),
    (["--num-envs", "-4"], 2, "num_envs: must be a whole number from 1", "--num-envs"),
    (["--rollout-len", "0"], 2, "rollout_len: must be a whole number from 1", "--rollout-len"),
    (["--epochs", "0"], 2, "epochs: must be a whole number from 1 to 1,000", "--epochs"),
    (["--minibatches", "0"], 2, "minibatches: must be a whole number from 1", "--minibatches"),
    (["--lr", "nan"], 2, "expected a finite number, got nan", "--lr"),
    (["--hidden", "0"], 2, "expected layer sizes", "--hidden"),
    (["--num-envs", "65536", "--rollout-len", "65536"], 1,
     "--backend rllib: num_envs x rollout_len = 65,536 x 65,536 = 4,294,967,296 env steps per sample call; the "
     "limit is 4,194,304", "--rollout-len"),
    (["--minibatches", "100000"], 1, "--backend rllib: 100,000 minibatches of a train batch of 2,048 env steps: "
                                     "each minibatch needs at least one", "--minibatches"),
    (["--steps", "64", "--minibatches", "300"], 1, "300 minibatches of a train batch of 256 env steps", "--minibatches"),
    (["--algo", "mappo"], 1, "algo must be 'ippo', not 'mappo'", "--algo"),
    (["--algo", "nosuch"], 1, "unknown --algo 'nosuch' (--algo); choose one of ippo, mappo", "--algo"),
    (["--agent-index"], 1, "agent_index must be False, not True", "--agent-index"),
    (["--activation", "swish"], 1, "--backend rllib: unknown activation 'swish'", "--activation"),
    (["--activation", "x" * 5000], 1, "unknown activation 'xxxxxxxx", "--activation"),
    (["--anneal-lr"], 1, "--backend rllib does not take --anneal-lr: settings of the built-in trainer", "--backend"),
    (["--device", "cuda", "--threads", "2"], 1, "does not take --threads, --device", "--backend"),
    (["--npc", "bargainer[0]=random"], 1, "does not take --npc", "--backend"),
    (["--ray-address", "nosuch"], 1, "'nosuch' is not a Ray cluster address", "--ray-address"),
    (["--ray-address", "127.0.0.1:99999"], 1, "the port of '127.0.0.1:99999' is not a port number", "--ray-address"),
]


@pytest.mark.parametrize(("args", "code", "said", "where"), RLLIB, ids=lambda x: str(x)[:30])
def test_a_bad_rllib_option_is_refused_before_ray(no_ray: list[str], tmp_path: Path, args: list[str], code: int,
                                                  said: str, where: str) -> None:
    command = ["train", "cake_negotiation", "--backend", "rllib", *args, "--out", tmp_path / "run"]
    flat = assert_clean(invoke(*command), said, code=code)
    assert len(flat) < 3000  # a long value is not quoted whole
    reply = one_json_error(invoke(*command, "--json"), said, code=code)
    assert reply["path"].startswith(where), reply
    assert no_ray == [] and not (tmp_path / "run").exists()


@pytest.mark.parametrize(("text", "said"), [
    ("num_envs: 0\n", "cfg.yaml:1: num_envs: must be a whole number from 1"),
    ("minibatches: 100000\n", "--backend rllib: 100,000 minibatches of a train batch"),
    ("algo: mappo\n", "algo must be 'ippo', not 'mappo'"),
    ("anneal_lr: false\ndevice: cpu\n", "does not take `anneal_lr` in {path}, `device` in {path}"),
    ("backend: rllib\n", "cfg.yaml:1: unknown key 'backend'"),
])
def test_a_bad_rllib_setting_in_a_config_file_names_the_file(no_ray: list[str], tmp_path: Path, text: str,
                                                            said: str) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    command = ["train", "cake_negotiation", "--backend", "rllib", "--config", path, "--out", tmp_path / "run"]
    flat = assert_clean(invoke(*command), said.format(path=path))
    assert str(path) in flat
    one_json_error(invoke(*command, "--json"), said.format(path=path))
    assert no_ray == [] and not (tmp_path / "run").exists()


def test_an_rllib_run_into_a_folder_that_holds_a_run_is_refused(no_ray: list[str], made: dict[str, Path]) -> None:
    command = ["train", "cake_negotiation", "--backend", "rllib", "--out", made["other"]]
    assert_clean(invoke(*command), f"{made['other']} already holds a run (checkpoint.pt)", "choose another folder")
    one_json_error(invoke(*command, "--json"), "already holds a run", "--out")
    assert no_ray == []


def test_evolve_on_rllib_checks_the_same_settings_before_ray(no_ray: list[str], tmp_path: Path) -> None:
    command = ["evolve", "cake_negotiation", "--backend", "rllib", "--minibatches", "100000", "-k", "2",
               "--steps", "1000", "-o", tmp_path / "run"]
    assert_clean(invoke(*command), "--minibatches: --backend rllib: 100,000 minibatches of a train batch of "
                 "1,024 env steps")
    one_json_error(invoke(*command, "--json"), "100,000 minibatches", "--minibatches")
    assert no_ray == []


# =========================================================================== evaluate --band, play --gif, --npc
@pytest.mark.parametrize("band", [["nan", "nan"], ["0.9", "0.1"], ["-inf", "1"], ["0", "inf"]])
def test_evaluate_refuses_a_band_that_is_no_band(made: dict[str, Path], tmp_path: Path, band: list[str]) -> None:
    shown = " ".join(f"{float(b):g}" for b in band)
    command = ["evaluate", IPD[0], "--policy", made["other"], "--band", *band, "-o", tmp_path / "eval"]
    assert_clean(invoke(*command), f"--band: {shown} is not a band: give two finite numbers, the lower first",
                 "the target range of the task metric, e.g. 0.4 0.8")
    one_json_error(invoke(*command, "--json"), "--band", "is not a band")
    assert not (tmp_path / "eval").exists()


def test_evaluate_says_of_a_band_what_evolve_says(tmp_path: Path) -> None:
    from gymwright.errors import GymwrightError
    from gymwright.evaluate.difficulty import check_band

    with pytest.raises(GymwrightError, match="^band: nan nan is not a band: give two finite numbers, the lower first"):
        check_band((float("nan"), float("nan")))
    with pytest.raises(GymwrightError, match=r"^band: 1 2 3 is not a band"):
        check_band((1, 2, 3))  # type: ignore[arg-type]  # a caller's mistake, said
    check_band((0.2, 0.2))  # a band of one value is a band
    flat = assert_clean(invoke("evolve", "cake_negotiation", "--band", "0.9", "0.1", "-k", "2", "--steps", "1000",
                               "-o", tmp_path / "run"),
                        "band: 0.9 0.1 is not a band: give two finite numbers, the lower first")
    assert "e.g. 0.4 0.8" in flat


@pytest.mark.parametrize("seed", [str(2**63 - 2), str(2**63 - 1)])
def test_play_gif_keeps_the_episodes_seeds_in_range(made: dict[str, Path], tmp_path: Path, seed: str) -> None:
    command = ["play", IPD[0], "--policy", made["other"], "--gif", tmp_path / "x.gif", "--seed", seed, "-n", "3"]
    assert_clean(invoke(*command), "Invalid value for '--seed': 3 episodes from seed", "past the envs' largest seed",
                 "give a seed of at most 9,223,372,036,854,775,805", code=2)
    one_json_error(invoke(*command, "--json"), "3 episodes from seed", code=2)
    assert not (tmp_path / "x.gif").exists()


@pytest.mark.parametrize("npc", ["bargainer[" + "9" * 5000 + "]=random", "b" * 5000 + "=random",
                                 "bargainer=" + "x" * 5000, "bargainer=scripted:" + "x" * 5000,
                                 "bargainer[0]=random,bargainer[" + "0" * 5000 + "]=random"])
def test_a_long_npc_key_or_player_is_not_quoted_whole(tmp_path: Path, npc: str) -> None:
    command = ["train", "cake_negotiation", "--npc", npc, "--total-steps", "64", "--num-envs", "4", "--rollout-len", "4",
               "-o", tmp_path / "run"]
    flat = assert_clean(invoke(*command), "--npc", "characters)")
    assert len(flat) < 1500, len(flat)
    reply = one_json_error(invoke(*command, "--json"), "characters)")
    assert len(reply["message"]) < 600 and reply["path"] == "--npc"
