"""Checkpoints cannot run code: only tensors and plain data are read (`torch.load(weights_only=True)`).

A pickle planted as `checkpoint.pt` in a run folder (an object whose `__reduce__` creates a
marker file) is refused by `play`, `evaluate`, `train --resume`, `init_from`, `load_policy` and
`report`, with an error that names the file, and the marker is never created. A format-1
checkpoint (a full pickle) is refused with the way out; `--convert-trusted` converts it.
"""

from __future__ import annotations

import contextlib
import pickle
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.report import read_run
from gymwright.train import CheckpointError, TrainConfig, load_policy, train
from gymwright.train import checkpoint as ck
from gymwright.train.rollout import make_env

torch.set_num_threads(1)
SPEC = "cake_negotiation"


class Planted:
    """Unpickling this creates `marker` (the payload of a malicious checkpoint)."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.marker, "w"))


def cfg(out: Path, **kw: Any) -> TrainConfig:
    return TrainConfig(**{"spec": SPEC, "num_envs": 32, "rollout_len": 8, "total_steps": 32 * 8 * 2,
                          "checkpoint_every": 1, "out": out, **kw})


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(train(cfg(tmp_path_factory.mktemp("trained") / "run")).checkpoint)


def plant(kind: str, path: Path, marker: Path) -> None:
    """Overwrite `path` with a pickle that creates `marker` when it is unpickled."""
    if kind == "bare pickle":  # what an attacker writes with the standard library
        path.write_bytes(pickle.dumps(Planted(marker)))
    elif kind == "bare pickle, protocol 2":
        path.write_bytes(pickle.dumps({"format": ck.FORMAT, "model": Planted(marker)}, protocol=2))
    else:  # a real torch zip checkpoint with the payload deep inside what looks like metadata
        saved = ck.load(path)
        saved.pop("path")
        torch.save({"format": ck.FORMAT, "kind": ck.KIND, **ck.encode(saved), "history": [Planted(marker)]}, path)


KINDS = ["bare pickle", "bare pickle, protocol 2", "torch zip"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_planted_pickle_does_run_code_when_unpickled(kind: str, trained: Path, tmp_path: Path) -> None:
    """The payload is real: the unsafe load this replaced creates the marker."""
    marker, path = tmp_path / "marker", tmp_path / "checkpoint.pt"
    shutil.copy(trained, path)
    plant(kind, path, marker)
    with contextlib.suppress(RuntimeError):  # a bare pickle is no torch file: torch says so after running it
        torch.load(path, weights_only=False)
    assert marker.exists()


@pytest.mark.parametrize("kind", KINDS)
def test_play_evaluate_resume_and_report_refuse_a_planted_pickle(kind: str, trained: Path, tmp_path: Path) -> None:
    run = tmp_path / "shared_run"
    shutil.copytree(trained.parent, run)
    ckpt = run / "checkpoint.pt"
    marker = tmp_path / "marker"
    plant(kind, ckpt, marker)
    runner = CliRunner()
    commands = {
        "play": ["play", SPEC, "--policy", str(run), "--episodes", "1"],
        "evaluate": ["evaluate", SPEC, "--policy", str(run), "-n", "2"],
        "train --resume": ["train", SPEC, "--out", str(run), "--resume", "--steps", "512", "--num-envs", "32"],
    }
    for name, args in commands.items():
        result = runner.invoke(app, args)
        assert result.exit_code == 1, (name, result.output)
        assert f"{ckpt} is not a safe gymwright checkpoint" in result.output, (name, result.output)
        assert "so it was not loaded" in result.output, (name, result.output)
        assert isinstance(result.exception, SystemExit), (name, result.exception)  # a short error, not a raise
        assert "Traceback" not in result.output, name
        assert not marker.exists(), name
    with pytest.raises(CheckpointError, match="not a safe gymwright checkpoint") as e:
        load_policy(run, spec=SPEC)
    assert str(ckpt) in str(e.value)
    with pytest.raises(CheckpointError, match="not a safe gymwright checkpoint"):
        train(cfg(run, resume=True))
    with pytest.raises(CheckpointError, match="not a safe gymwright checkpoint"):
        train(cfg(tmp_path / "next", init_from=str(ckpt)))
    folder = read_run(run)  # the report notes it and goes on without it
    assert any("not a safe gymwright checkpoint" in note for note in folder.notes)
    assert not marker.exists()


def old_format(saved_from: Path, path: Path) -> None:
    """A format-1 checkpoint as gymwright wrote it before: one pickle with numpy objects in it."""
    data = {k: v for k, v in ck.load(saved_from).items() if k not in ("path", "format", "kind")}
    torch.save({"format": 1, **data}, path)


def test_an_old_format_checkpoint_is_refused_with_the_way_out(trained: Path, tmp_path: Path) -> None:
    run = tmp_path / "old_run"
    shutil.copytree(trained.parent, run)
    old_format(trained, run / "checkpoint.pt")
    with pytest.raises(CheckpointError, match=r"old-format \(format 1\) checkpoint") as e:
        ck.load(run)
    assert str(run / "checkpoint.pt") in str(e.value)
    assert "retrain" in e.value.hint and "--convert-trusted" in e.value.hint
    result = CliRunner().invoke(app, ["play", SPEC, "--policy", str(run), "--episodes", "1"])
    assert result.exit_code == 1 and "old-format (format 1)" in result.output and "--convert-trusted" in result.output


def test_convert_trusted_turns_a_format1_checkpoint_into_the_same_policy(trained: Path, tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    old_format(trained, path)
    assert ck.main(["--convert-trusted", str(path)]) == 0
    assert (tmp_path / "checkpoint.pt.format1").exists()
    new, ref = ck.load(path), ck.load(trained)
    assert new["update"] == ref["update"] and new["params"] == ref["params"]
    for name, x in ref["model"].items():
        assert torch.equal(x, new["model"][name]), name
    obs, masks = make_env(SPEC, [{}], 16).reset(seed=3)
    assert (load_policy(path).act(obs, masks, True) == load_policy(trained).act(obs, masks, True)).all()
    assert ck.main(["--convert-trusted", str(path)]) == 1  # already format 2: not a format-1 file


def test_a_checkpoint_holds_only_tensors_and_plain_data(trained: Path) -> None:
    raw = torch.load(trained, weights_only=True)  # would raise on any other object
    assert raw["format"] == 2 and raw["kind"] == ck.KIND

    def leaves(x: Any) -> Any:
        if isinstance(x, dict):
            for k, v in x.items():
                assert isinstance(k, str | int), k
                yield from leaves(v)
        elif isinstance(x, list | tuple):
            for v in x:
                yield from leaves(v)
        else:
            yield x

    kinds = {type(x) for x in leaves(raw)}
    assert kinds <= {torch.Tensor, torch.nn.Parameter, str, int, float, bool, type(None)}, kinds
    assert torch.Tensor in kinds


VALUES: dict[str, Any] = {
    "uint64": np.array([0, 2**64 - 1, 12345678901234567890], dtype=np.uint64),
    "float16": np.array([1.5, np.nan, -np.inf], dtype=np.float16),
    "big-endian": np.arange(6, dtype=">i4").reshape(2, 3),
    "not contiguous": np.arange(20, dtype=np.float64).reshape(4, 5)[:, ::2],
    "bool 3d": np.random.default_rng(0).random((2, 3, 4)) < 0.5,
    "empty": np.zeros((0, 7), dtype=np.int8),
    "0-d": np.array(3.25),
    "scalars": [np.float32(0.1), np.int64(-7), np.bool_(True), np.uint64(2**63 + 5)],
    "plain": (1, 2.5, "x", None, True, [float("nan")], {"k": {3: "int key"}}),
    "tensor": torch.arange(4, dtype=torch.float64),
}


def test_encode_decode_is_exact_for_every_kind_of_value(tmp_path: Path) -> None:
    state = {**VALUES, "rng": ck.rng_state()}
    ck.save(tmp_path / "c.pt", state)
    back = ck.decode(torch.load(tmp_path / "c.pt", weights_only=True))
    for key, x in VALUES.items():
        y = back[key]
        if isinstance(x, np.ndarray):
            assert y.dtype == x.dtype and y.shape == x.shape and y.flags.writeable, key
            assert x.tobytes() == np.ascontiguousarray(y).tobytes(), key
        elif key == "scalars":
            assert [type(v) for v in y] == [type(v) for v in x] and [v.tobytes() for v in y] == [v.tobytes() for v in x]
        elif key == "tensor":
            assert torch.equal(x, y)
        else:
            assert repr(x) == repr(y)  # tuples stay tuples, nan stays nan
    np.random.seed(11)
    ck.restore_rng(back["rng"])  # the RNG states come back in the types the setters take
    assert not list(tmp_path.glob(".*tmp*"))


def test_what_a_checkpoint_cannot_hold_is_refused_at_save_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match=r"checkpoint\.env\.bag is a builtins\.object"):
        ck.save(tmp_path / "c.pt", {"env": {"bag": object()}})
    with pytest.raises(CheckpointError, match="numpy array of Python objects"):
        ck.save(tmp_path / "c.pt", {"a": np.array([object()])})
    assert not list(tmp_path.iterdir())  # nothing written, not even a temporary file


def test_a_truncated_checkpoint_is_a_clear_error(trained: Path, tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    path.write_bytes(trained.read_bytes()[: trained.stat().st_size // 2])
    with pytest.raises(CheckpointError, match="not a readable gymwright checkpoint") as e:
        ck.load(path)
    assert str(path) in str(e.value)


def test_a_safe_file_that_is_not_what_save_writes_is_a_clear_error(trained: Path, tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    ck.save(path, {"update": 1})
    with pytest.raises(CheckpointError, match="a gymwright checkpoint without spec_hash, spec_name") as e:
        ck.load(path)
    assert str(path) in str(e.value)
    raw = torch.load(trained, weights_only=True)
    raw["env"] = {ck.ARRAY: ["|O", [2]], "bytes": torch.zeros(16, dtype=torch.uint8)}  # an object array
    torch.save(raw, path)
    with pytest.raises(CheckpointError, match="holds a malformed array"):
        ck.load(path)
    torch.save([1, 2], path)
    with pytest.raises(CheckpointError, match="is not a gymwright checkpoint"):
        ck.load(path)
