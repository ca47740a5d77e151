"""Each layer of the sandbox on its own (issue 20, item 3): the others switched off, the attack
must still fail. The code runs at load time in a real worker and reports its outcome by
raising it; effects are checked from outside."""

from __future__ import annotations

import ast
import errno
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gymwright.codemode import isolation
from gymwright.codemode.checks import check_code
from gymwright.codemode.namespaces import roots
from gymwright.codemode.sandbox import START_CPU_S, Layers, Limits, Sandbox, SandboxError
from tests.support.paths import MEET_ON_A_LINE

NONE = dict(namespaces=False, landlock=False, seccomp=False, require_kernel=False, rlimits=False, netns=False,
            chroot=False, drop=False, hook=False, builtins=False)
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


def test_the_worker_inherits_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GYMWRIGHT_TEST_SECRET", "do-not-leak")
    with Sandbox() as sandbox:
        layers = sandbox.layers()
        folder = Path(sandbox.cwd)
        assert "GYMWRIGHT_TEST_SECRET" not in layers["environment"]
        assert "HOME" not in layers["environment"] and "PATH" not in layers["environment"]
    assert not folder.exists()  # the private folder is removed afterwards
    text = outcome("e = dict(" + REAL_OS + "['environ'])\nraise KeyError(sorted(e))", Layers())
    assert "do-not-leak" not in text and "GYMWRIGHT_TEST_SECRET" not in text


def test_every_layer_the_kernel_gives_is_armed_by_default_and_reported() -> None:
    kernel = isolation.kernel()
    with Sandbox() as sandbox:
        layers = sandbox.layers()
    assert layers["audit_hook"] and layers["restricted_builtins"] and layers["rlimits"]
    assert layers["namespaces"] is kernel.namespaces and not layers["unconfined"]
    assert layers["seccomp"]["armed"] and (layers["landlock"]["armed"] if kernel.landlock else True)
    assert layers["chroot"] is (ROOT and not kernel.namespaces)
    assert layers["limits"]["file_size"] == [0, 0]
    soft, hard = layers["limits"]["cpu_s"]  # starting allowance; set again before each request
    assert soft == Limits().cpu_s + START_CPU_S and hard == -1
    if kernel.namespaces:
        assert layers["user"] == "uid 65534" and layers["own_network_namespace"]
    else:
        assert layers["user"] == ("nobody" if ROOT else f"uid {os.getuid()}")
        assert layers["limits"]["processes"] == [0, 0]


def test_nothing_of_the_model_is_imported_into_gymwrights_process() -> None:
    code = MEET_ON_A_LINE.read_text()
    before = set(sys.modules)
    report, _ = check_code(code, name="meet", episodes=2)
    assert report.passed, report.to_prompt()
    new = set(sys.modules) - before
    assert not any("model" in m or "meet" in m for m in new), new
    assert not any(getattr(m, "__file__", None) == "<model>" for m in list(sys.modules.values()))


# ------------------------------------------------------------------ the kernel's layers, each alone
OS = "import dataclasses\nos = dataclasses.sys.modules['os']\n"
SOCKET = "import dataclasses\nsocket = dataclasses.sys.modules['socket']\n"
needs_namespaces = pytest.mark.skipif(not isolation.kernel().namespaces,
                                      reason="bubblewrap cannot make namespaces on this machine")
needs_landlock = pytest.mark.skipif(isolation.kernel().landlock < 6, reason="Landlock ABI 6+ is not offered here")


@needs_namespaces
def test_the_namespaces_alone_hide_the_host_files_processes_and_network(
        tmp_path: Path, server: tuple[int, list[bytes]]) -> None:
    port, got = server
    ns = Layers(**{**NONE, "namespaces": True})
    found = outcomes([f"open({str(Path(__file__))!r}).read()", OS + "raise ValueError(sorted(os.listdir('/')))",
                      OS + f"os.kill({os.getpid()}, 0)", OS + f"open({str(tmp_path / 'new')!r}, 'w')",
                      CONNECT.format(port=port), OS + "raise ValueError(os.getuid())"], ns)
    assert found[0].startswith("FileNotFoundError"), found[0]
    # its root holds the system's libraries, /dev and the folders that lead to the interpreter's files
    listed = set(ast.literal_eval(found[1].removeprefix("ValueError: ")))
    leading = {Path(r).parts[1] for r in roots()}
    assert listed <= {"dev", "usr", "lib", "lib64", "lib32", "libx32"} | leading, listed
    assert not listed & {"etc", "home", "proc", "sys"}, listed
    assert found[2].startswith("ProcessLookupError"), found[2]  # the test's pid is not in its namespace
    assert found[3].startswith(("FileNotFoundError", "OSError", "PermissionError")), found[3]
    # its own loopback (bubblewrap brings it up) has nothing listening; the host's is out of reach
    assert found[4].startswith("ConnectionRefusedError"), found[4]
    assert found[5] == "ValueError: 65534"
    assert got == [] and not (tmp_path / "new").exists()


@needs_landlock
def test_landlock_alone_refuses_files_outside_tcp_and_signals(tmp_path: Path, server: tuple[int, list[bytes]]) -> None:
    port, got = server
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ll = Layers(**{**NONE, "landlock": True})
        found = outcomes([f"open({str(Path(__file__))!r}).read()", OS + f"open({str(tmp_path / 'new')!r}, 'w')",
                          CONNECT.format(port=port), OS + f"os.kill({victim.pid}, 9)",
                          "import numpy\nx = numpy.zeros(2).sum()"], ll)
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()
    assert all(text.startswith("PermissionError") for text in found[:4]), found
    assert found[4] == "no error"  # the interpreter's own files stay readable
    assert got == [] and not (tmp_path / "new").exists()


def test_seccomp_alone_refuses_processes_exec_sockets_ptrace_and_signals(
        tmp_path: Path, server: tuple[int, list[bytes]]) -> None:
    port, got = server
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        sc = Layers(**{**NONE, "seccomp": True})
        ptrace = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                  f"r = libc.ptrace(16, {victim.pid}, 0, 0)\nraise ValueError(r, ctypes.get_errno())")
        found = outcomes([OS + "os.fork()", OS + "os.execv('/bin/true', ['true'])", CONNECT.format(port=port),
                          OS + f"os.kill({victim.pid}, 9)", OS + "os.kill(-1, 9)", ptrace,
                          SOCKET + "socket.socket(socket.AF_UNIX)"], sc)
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()
    for text in found[:5] + found[6:]:
        assert text.startswith("PermissionError") and "Operation not permitted" in text, found
    assert found[5] == f"ValueError: (-1, {errno.EPERM})", found[5]
    assert got == []


def test_the_cpu_budget_is_per_request_so_a_long_run_lives() -> None:
    """Three requests of about 0.6 CPU seconds each under a 1 s budget: the worker lives (the
    old lifetime limit killed it in the second); one request over budget is still killed."""
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6:\n    pass\n"
    with Sandbox(Limits(cpu_s=1, call_s=30), Layers(**{**NONE, "rlimits": True})) as sandbox:
        for _ in range(3):
            with pytest.raises(SandboxError) as caught:
                sandbox.request({"op": "load", "code": busy})
            assert caught.value.kind == "code" and "no environment class" in caught.value.message
        assert sandbox.alive
