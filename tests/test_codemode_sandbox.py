"""Each layer of the sandbox on its own (issue 20, item 3): the others switched off, the attack
must still fail. The code runs at load time in a real worker and reports its outcome by
raising it; effects are checked from outside."""

from __future__ import annotations

import errno
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gymwright.codemode.checks import check_code
from gymwright.codemode.sandbox import START_CPU_S, Layers, Limits, Sandbox, SandboxError

NONE = dict(rlimits=False, netns=False, chroot=False, drop=False, hook=False, builtins=False)
REAL_OS = "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__"
ROOT = os.geteuid() == 0


def outcomes(attempts: list[str], layers: Layers, limits: Limits | None = None) -> list[str]:
    """Run each of `attempts` (statements) at load in one worker; what came of each, as text."""
    out = []
    with Sandbox(limits, layers) as sandbox:
        for attempt in attempts:
            body = "\n".join("    " + line for line in attempt.splitlines())
            code = (f"try:\n{body}\n    OUT = 'no error'\nexcept BaseException as e:\n"
                    "    OUT = type(e).__name__ + ': ' + str(e)\nraise ValueError('outcome ' + OUT)\n")
            with pytest.raises(SandboxError) as caught:
                sandbox.request({"op": "load", "code": code}, timeout=(limits or Limits()).call_s)
            message = caught.value.message
            assert "outcome " in message, message
            out.append(message.split("outcome ", 1)[1])
    return out


def outcome(attempt: str, layers: Layers, limits: Limits | None = None) -> str:
    return outcomes([attempt], layers, limits)[0]


@pytest.fixture
def server() -> Iterator[tuple[int, list[bytes]]]:
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.2)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            got.append(conn.recv(100) or b"<connected>")
            conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], got
    stop.set()
    t.join(2)
    srv.close()


CONNECT = "import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=2)\ns.sendall(b'x')"


# ------------------------------------------------------------------ the audit hook alone
def test_the_audit_hook_alone_refuses_writes_reads_sockets_processes_ctypes(
        tmp_path: Path, server: tuple[int, list[bytes]]) -> None:
    port, got = server
    hook = Layers(**{**NONE, "hook": True})
    target = tmp_path / "pwned"
    secret = Path(__file__)  # readable, outside the interpreter's own files
    found = outcomes([f"open({str(target)!r}, 'w').write('x')", f"open({str(secret)!r}).read()",
                      CONNECT.format(port=port), REAL_OS + "['system']('true')", REAL_OS + "['fork']()",
                      "import ctypes\nctypes.CDLL(None).system(b'true')",
                      REAL_OS + f"['kill']({os.getpid()}, 0)"], hook)
    assert found[0].startswith("RuntimeError: sandbox: open")
    # the read is refused at its first look at the path (realpath's lstat), or at the open
    assert found[1].startswith(("RuntimeError: sandbox: open", "RuntimeError: sandbox: os.lstat")), found[1]
    for text, event in zip(found[2:], ("socket", "os.system", "os.fork", "ctypes", "os.kill"), strict=True):
        assert f"sandbox: {event}" in text, (event, text)
    assert not target.exists() and got == []


# ------------------------------------------------------------------ the network namespace alone
def test_the_network_namespace_alone_leaves_no_route_to_loopback(server: tuple[int, list[bytes]]) -> None:
    port, got = server
    with Sandbox(layers=Layers(**{**NONE, "netns": True})) as sandbox:
        if not sandbox.layers()["own_network_namespace"]:
            pytest.skip("the kernel refuses network namespaces here (the layer degrades, and says so)")
    text = outcome(CONNECT.format(port=port), Layers(**{**NONE, "netns": True}))
    assert text.startswith("OSError") and "unreachable" in text.lower() or "Errno" in text, text
    assert got == []


# ------------------------------------------------------------------ dropping root alone
@pytest.mark.skipif(not ROOT, reason="the worker drops privileges only when started as root")
def test_dropping_root_alone_makes_file_permissions_hold(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.write_text("secret")
    private.chmod(0o600)
    drop = Layers(**{**NONE, "drop": True})
    assert outcome(f"open({str(private)!r}).read()", drop).startswith("PermissionError")
    assert outcome(f"open({str(tmp_path / 'new')!r}, 'w')", drop).startswith("PermissionError")
    assert not (tmp_path / "new").exists()


# ------------------------------------------------------------------ the chroot alone
@pytest.mark.skipif(not ROOT, reason="the worker enters its chroot only when started as root")
def test_the_chroot_alone_leaves_nothing_outside_to_open_create_or_run(tmp_path: Path) -> None:
    chroot = Layers(**{**NONE, "chroot": True})
    os_ = "import dataclasses\nos = dataclasses.sys.modules['os']\n"
    found = outcomes([f"open({str(Path(__file__))!r}).read()", os_ + f"os.mkfifo({str(tmp_path / 'fifo')!r})",
                      os_ + "os.execv('/bin/sh', ['sh'])"], chroot)
    assert all(text.startswith("FileNotFoundError") for text in found), found
    assert not (tmp_path / "fifo").exists()


def test_the_hook_refuses_the_calls_cpython_does_not_audit(tmp_path: Path) -> None:
    hook = Layers(**{**NONE, "hook": True})
    m = "import dataclasses\nm = dataclasses.sys.modules\n"
    found = outcomes([m + f"m['os'].mkfifo({str(tmp_path / 'fifo')!r})", m + f"m['posix'].mknod({str(tmp_path / 'node')!r})",
                      m + "m['_posixsubprocess'].fork_exec()"], hook)
    for text, call in zip(found, ("os.mkfifo", "posix.mknod", "_posixsubprocess.fork_exec"), strict=True):
        assert text.startswith(f"RuntimeError: sandbox: {call} is not allowed"), text
    assert not (tmp_path / "fifo").exists() and not (tmp_path / "node").exists()


# ------------------------------------------------------------------ resource limits alone
def test_the_memory_limit_alone_stops_a_memory_bomb() -> None:
    limits = Layers(**{**NONE, "rlimits": True})
    assert outcome("b = bytearray(1 << 36)", limits).startswith("MemoryError")


def test_the_file_size_limit_alone_lets_no_byte_be_written(tmp_path: Path) -> None:
    limits = Layers(**{**NONE, "rlimits": True})
    target = tmp_path / "big"
    text = outcome(f"f = open({str(target)!r}, 'wb', buffering=0)\nf.write(b'x' * 10)", limits)
    assert text.startswith("OSError") and f"[Errno {errno.EFBIG}]" in text, text
    assert target.stat().st_size == 0  # the file may be created empty, never written


@pytest.mark.skipif(not ROOT, reason="with a non-root user the limit holds without dropping")
def test_the_process_limit_stops_forks_once_root_is_dropped() -> None:
    layers = Layers(**{**NONE, "rlimits": True, "drop": True})
    assert outcome("import os\nos.fork()", layers).startswith("BlockingIOError")


def test_the_cpu_limit_kills_a_busy_loop() -> None:
    layers = Layers(**{**NONE, "rlimits": True})
    with Sandbox(Limits(cpu_s=1, call_s=30), layers) as sandbox:
        with pytest.raises(SandboxError) as caught:
            sandbox.request({"op": "load", "code": "while True:\n    pass\n"})
    assert caught.value.kind == "crashed" and "SIGXCPU" in caught.value.message + caught.value.hint


# ------------------------------------------------------------------ the always-on layers
def test_the_wall_clock_limit_kills_an_endless_loop_and_its_process_group() -> None:
    with Sandbox(Limits(call_s=1.0)) as sandbox:
        with pytest.raises(SandboxError) as caught:
            sandbox.request({"op": "load", "code": "while True:\n    pass\n"})
        assert caught.value.kind == "timeout" and not sandbox.alive


def test_restricted_builtins_alone_have_no_open_and_import_only_the_allowlist() -> None:
    only = Layers(**{**NONE, "builtins": True})
    assert outcome("open('/etc/hostname')", only).startswith("NameError")
    assert outcome("import os", only).startswith("ImportError: sandbox: import of 'os'")
    assert outcome("import numpy\nx = numpy.zeros(2).sum()", only) == "no error"


def test_the_worker_inherits_no_environment_and_stands_in_an_empty_folder(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GYMWRIGHT_TEST_SECRET", "do-not-leak")
    with Sandbox() as sandbox:
        layers = sandbox.layers()
        cwd = Path(layers["cwd"])
        assert "GYMWRIGHT_TEST_SECRET" not in layers["environment"]
        assert "HOME" not in layers["environment"] and "PATH" not in layers["environment"]
        assert cwd.exists() and list(cwd.iterdir()) == []
    assert not cwd.exists()
    text = outcome("e = dict(" + REAL_OS + "['environ'])\nraise KeyError(sorted(e))", Layers())
    assert "do-not-leak" not in text and "GYMWRIGHT_TEST_SECRET" not in text


def test_every_layer_is_armed_by_default_and_reported() -> None:
    with Sandbox() as sandbox:
        layers = sandbox.layers()
    assert layers["audit_hook"] and layers["restricted_builtins"] and layers["rlimits"]
    assert layers["chroot"] is ROOT
    assert layers["limits"]["file_size"] == [0, 0] and layers["limits"]["processes"] == [0, 0]
    soft, hard = layers["limits"]["cpu_s"]  # tightened from the start allowance to used + cpu_s
    assert Limits().cpu_s < soft < Limits().cpu_s + START_CPU_S and hard == soft + 1
    assert layers["user"] == ("nobody" if ROOT else f"uid {os.getuid()}")


def test_nothing_of_the_model_is_imported_into_gymwrights_process() -> None:
    code = (Path(__file__).parent / "data" / "codemode" / "meet_on_a_line.py").read_text()
    before = set(sys.modules)
    report, _ = check_code(code, name="meet", episodes=2)
    assert report.passed, report.to_prompt()
    new = set(sys.modules) - before
    assert not any("model" in m or "meet" in m for m in new), new
    assert not any(getattr(m, "__file__", None) == "<model>" for m in list(sys.modules.values()))
