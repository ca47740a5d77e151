"""Writes are atomic (`gymwright.atomic`): a failed write leaves nothing behind and names the path.

The failures are real: RLIMIT_FSIZE (with SIGXFSZ ignored) makes a write past the limit fail
with EFBIG, as a full disk fails with ENOSPC; a folder where the file should go fails the
rename. Root ignores permission bits, so a read-only folder would not fail here.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import py_compile
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from gymwright.atomic import WriteError, atomic_writer, write_atomic
from gymwright.cli import app
from gymwright.design.designer import DesignResult, write_spec_file
from gymwright.evaluate.trajectories import Step, Trajectory, save_frames, write_jsonl
from gymwright.mapf.cache import load_npz, save_npz
from gymwright.report import write_report
from gymwright.store import Store
from gymwright.train import TrainConfig, train
from gymwright.train import checkpoint as ck
from gymwright.train.logger import RunLog

torch.set_num_threads(1)
LIMIT = 2048  # bytes: every output below is bigger


@contextlib.contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """This process cannot grow a file past `limit` bytes (EFBIG, like a full disk) inside the block."""
    old_limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, old_limits[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limits)
        signal.signal(signal.SIGXFSZ, old_handler)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") or p.suffix == ".tmp")


# --------------------------------------------------------------------------- the helper
def test_write_atomic_writes_text_and_bytes_with_the_usual_mode(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    try:
        assert write_atomic(tmp_path / "a.txt", "héllo\n") == tmp_path / "a.txt"
        write_atomic(tmp_path / "b.bin", b"\x00\xff")
    finally:
        os.umask(mask)
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "héllo\n"
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o644  # not mkstemp's 0o600
    os.chmod(tmp_path / "a.txt", 0o640)
    write_atomic(tmp_path / "a.txt", "again")
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o640  # a replaced file keeps its mode
    assert leftovers(tmp_path) == []


def test_a_write_past_the_size_limit_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("the old content\n")
    with file_size_limit(LIMIT), pytest.raises(WriteError) as e:
        write_atomic(path, "x" * (4 * LIMIT))
    assert e.value.path == str(path) and e.value.value == errno.EFBIG
    assert "File too large [EFBIG]" in str(e.value) and "free some disk space" in e.value.hint
    assert path.read_text() == "the old content\n"
    assert leftovers(tmp_path) == []


def test_an_error_while_producing_the_data_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(ZeroDivisionError), atomic_writer(tmp_path / "half.bin") as f:
        f.write(b"half of it")
        raise ZeroDivisionError  # any failure of the writer's own code, not only an OSError
    assert list(tmp_path.iterdir()) == []


def test_a_folder_in_the_way_or_a_missing_folder_is_a_write_error_naming_the_path(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(WriteError, match=r"Is a directory \[EISDIR\]") as e:
        write_atomic(tmp_path / "taken", "x")
    assert e.value.path == str(tmp_path / "taken") and "is a folder" in e.value.hint
    with pytest.raises(WriteError, match=r"\[ENOENT\]") as e:
        write_atomic(tmp_path / "missing" / "f.txt", "x")
    assert e.value.path == str(tmp_path / "missing" / "f.txt") and "create the folder" in e.value.hint
    assert leftovers(tmp_path) == [] and leftovers(tmp_path / "taken") == []


# --------------------------------------------------------------------------- export, in a real process
CHILD = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # kept across exec: writes fail with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))
from gymwright.cli import app
sys.argv = ["gymwright", *sys.argv[2:]]
app()
"""


def gymwright(args: list[str], limit: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "COLUMNS": "300"}
    limit_arg = str(limit if limit is not None else resource.RLIM_INFINITY)
    return subprocess.run([sys.executable, "-c", CHILD, limit_arg, *args], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.mark.slow  # over 5 s, and not its stage's one smoke test (the default suite's 4-minute budget)
def test_export_on_a_full_disk_leaves_no_truncated_module_and_the_next_export_works(tmp_path: Path) -> None:
    module = tmp_path / "env.py"
    failed = gymwright(["export", "stag_hunt", "-o", str(module)], limit=LIMIT)
    assert failed.returncode == 1, failed.stderr
    assert f"{module}: could not write the file: File too large [EFBIG]" in failed.stderr
    assert "Traceback" not in failed.stderr + failed.stdout
    assert list(tmp_path.iterdir()) == []  # no env.py, no temporary file
    again = gymwright(["export", "stag_hunt", "-o", str(module)])  # no --force needed
    assert again.returncode == 0, again.stderr
    assert module.stat().st_size > LIMIT
    py_compile.compile(str(module), doraise=True)
    # a full disk while replacing a good module keeps the good one, byte for byte
    before = module.read_bytes()
    failed = gymwright(["export", "cake_negotiation", "-o", str(module), "--force"], limit=LIMIT)
    assert failed.returncode == 1 and str(module) in failed.stderr
    assert module.read_bytes() == before and leftovers(tmp_path) == []


def test_schema_output_is_atomic_too(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    with file_size_limit(LIMIT):
        result = CliRunner().invoke(app, ["schema", "-o", str(path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert f"{path}: could not write the file" in result.output
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- the other outputs
@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("atomic") / "run"
    train(TrainConfig(spec="stag_hunt", num_envs=16, rollout_len=8, total_steps=16 * 8 * 2, checkpoint_every=1, out=out))
    return out


def test_report_on_a_full_disk_is_a_short_error_and_leaves_nothing(run: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    import matplotlib.pyplot  # noqa: F401  (its font cache is written on import, before the limit)

    with file_size_limit(LIMIT):
        result = CliRunner().invoke(app, ["report", str(run), "-o", str(page), "--no-verify"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{page}: could not write the file: File too large" in result.output
    assert list(tmp_path.iterdir()) == []
    report = write_report(run, page, run_verifier=False)  # and then it works
    assert page.read_text().startswith("<!doctype html>") and report.bytes > LIMIT


def test_a_checkpoint_that_cannot_be_written_keeps_the_last_one(run: Path, tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    path.write_bytes((run / "checkpoint.pt").read_bytes())
    saved = {k: v for k, v in ck.load(path).items() if k not in ("path", "format", "kind")}
    with file_size_limit(LIMIT), pytest.raises(WriteError) as e:
        ck.save(path, saved)
    assert e.value.path == str(path)
    assert ck.load(path)["update"] == saved["update"] and leftovers(tmp_path) == []


def test_train_log_rewrite_is_atomic(run: Path, tmp_path: Path) -> None:
    rows = [{"update": i, "env_steps": i, "note": "x" * 100} for i in range(100)]
    (tmp_path / "train.jsonl").write_text("kept\n")
    with file_size_limit(LIMIT), pytest.raises(WriteError, match="train.jsonl"):
        RunLog(tmp_path, rows, tensorboard=False)
    assert (tmp_path / "train.jsonl").read_text() == "kept\n" and leftovers(tmp_path) == []


def test_trajectories_frames_scorecard_and_spec_files_fail_cleanly(tmp_path: Path) -> None:
    steps = [Step(i, {"a": "go"}, {"a": 1.0}, {"a": {}}, "text " * 50) for i in range(40)]
    tr = Trajectory(0, steps=steps, returns={"a": 40.0})
    tr.frames = [np.random.default_rng(i).integers(0, 255, (32, 32, 3)) for i in range(20)]
    store = Store.open(tmp_path / "store")  # its database is written before the limit
    result = DesignResult(1, "passed", "offline", "offline", "default", "a task", spec_sha="ab" * 32)
    with file_size_limit(LIMIT), store:
        with pytest.raises(WriteError, match="trajectories.jsonl"):
            write_jsonl([tr], tmp_path / "trajectories.jsonl")
        with pytest.raises(WriteError, match=r"best-000\.png|best\.gif"):
            save_frames(tr, tmp_path / "frames", "best")
        with pytest.raises(WriteError, match="pool.npz"):
            save_npz(tmp_path / "cache" / "pool.npz", {"x": np.zeros(10_000)})
        with pytest.raises(WriteError, match="spec.yaml"):
            write_spec_file({"name": "big", "about": "x" * (4 * LIMIT)}, result, store, tmp_path / "spec.yaml")
    assert not (tmp_path / "trajectories.jsonl").exists() and not (tmp_path / "spec.yaml").exists()
    assert [p.name for p in (tmp_path / "frames").iterdir()] == [] and load_npz(tmp_path / "cache" / "pool.npz") is None
    for folder in (tmp_path, tmp_path / "frames", tmp_path / "cache"):
        assert leftovers(folder) == [], folder
    write_jsonl([tr], tmp_path / "trajectories.jsonl")  # without the limit all of them work
    assert json.loads((tmp_path / "trajectories.jsonl").read_text().splitlines()[-1])["t"] == "end"
    assert save_frames(tr, tmp_path / "frames", "best")["gif"].stat().st_size > 0
