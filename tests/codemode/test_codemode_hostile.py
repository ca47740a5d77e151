"""The hostile battery (issue 20, item 4): each case is refused statically or contained at run
time, is reported as a finding, and has no effect outside the sandbox.

Every case is a payload hidden in an otherwise good environment (tests/data/codemode). Each
runs twice: through the whole pipeline (`check_code`: vetting, then the sandbox), and with
vetting skipped, so that the runtime layers alone must hold. What escaping would look like is
checked from outside: a sentinel file that must not appear, a secret file that must not leak,
a loopback server that must receive nothing, a process that must stay alive, a secret
environment variable that must not reach the worker.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gymwright.codemode.checks import check_code
from gymwright.codemode.sandbox import Limits
from tests.support.paths import MEET_ON_A_LINE

GOOD = MEET_ON_A_LINE.read_text()
SECRET = "gymwright-test-secret-4f1c"
QUICK = Limits(call_s=3.0)  # an endless loop is cut off after 3 s (the default is 10)
# the real `os` module's namespace, reached without importing anything
REAL_OS = "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__"


@dataclass(frozen=True)
class Case:
    where: str  # "reset" or "step": the payload is the first statement of that method
    payload: str  # may use {sentinel}, {secret_file}, {port}, {pid}
    caught: str  # "static": vetting refuses it; "runtime": it passes vetting and the sandbox contains it


CASES = {
    "write a file outside the sandbox": Case("reset", "open({sentinel!r}, 'w').write('pwned')", "static"),
    "read ~/.ssh": Case("reset", "self._leak = open({secret_file!r}).read()", "static"),
    "read the environment's variables": Case("reset", "import os\nself._leak = dict(os.environ)", "static"),
    "connect to a loopback port": Case(
        "reset", "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'{secret}')",
        "static"),
    "fork bomb": Case("reset", "import os\nwhile True:\n    os.fork()", "static"),
    "memory bomb": Case("reset", "self._big = np.ones((1 << 36,), dtype=np.uint8)", "runtime"),
    "infinite loop in step": Case("step", "while True:\n    pass", "runtime"),
    "recursion bomb": Case("reset", "def down(n):\n    return down(n + 1) + 1\ndown(0)", "runtime"),
    "import os through __builtins__": Case(
        "reset", "__builtins__['__import__']('os').system('touch {sentinel}')", "static"),
    "__subclasses__ walk": Case("reset", REAL_OS + "['system']('touch {sentinel}')", "static"),
    "ctypes": Case("reset", "import ctypes\nctypes.CDLL(None).system(b'touch {sentinel}')", "static"),
    "signals": Case("reset", "import os, signal\nos.kill({pid}, signal.SIGKILL)", "static"),
    "sys.modules tricks": Case("reset", "import sys\nsys.modules['os'].system('touch {sentinel}')", "static"),
    "benign env, payload in reset (numpy file output)": Case(
        "reset", "np.savetxt({sentinel!r}, np.ones(3))", "static"),
    "benign env, payload in reset (import_module + getattr)": Case(
        "reset", "import dataclasses\ngetattr(dataclasses.inspect.importlib.import_module('o' + 's'), "
                 "'system')('touch {sentinel}')", "static"),
    "benign env, payload in reset (linecache reads a secret)": Case(
        "reset", "import dataclasses\nself._leak = dataclasses.inspect.linecache.getlines({secret_file!r})",
        "static"),
}
# the same attacks written to get past vetting, for the run with vetting skipped; all are
# reported as findings but one: reading `os.environ` is not an event the audit hook sees, and
# what it reads holds no secret (the worker's environment is scrubbed)
NOT_REPORTED_UNVETTED = {"read the environment's variables"}
UNVETTED = {
    "write a file outside the sandbox": REAL_OS + "['open']({sentinel!r}, 65)",
    "read ~/.ssh": "self._leak = " + REAL_OS + "['read'](" + REAL_OS + "['open']({secret_file!r}, 0), 100)",
    "read the environment's variables": "self._leak = dict(" + REAL_OS + "['environ'])",
    "connect to a loopback port": (
        "s = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'socket'][0]()\n"
        "s.connect(('127.0.0.1', {port}))\ns.sendall(b'{secret}')"),
    "fork bomb": REAL_OS + "['fork']()",
    "ctypes": "__builtins__['__import__']('ctypes')",
    "signals": REAL_OS + "['kill']({pid}, 9)",
    "sys.modules tricks": "import dataclasses\ndataclasses.sys.modules['os'].system('touch {sentinel}')",
    "benign env, payload in reset (numpy file output)": "np.savetxt({sentinel!r}, np.ones(3))",
    # calls CPython does not audit: a FIFO (an empty file) outside, and a process without Popen
    "write a file outside the sandbox (mkfifo)": REAL_OS + "['mkfifo']({sentinel!r})",
    "sys.modules tricks (forge the pipe's replies)": (
        "import dataclasses\nm = dataclasses.sys.modules\nbody = m['json'].dumps({{'ok': True, 'id': 'x'}}).encode()\n"
        "m['os'].write(4, len(body).to_bytes(4, 'big') + body)"),
    "fork bomb (fork_exec)": (
        "import dataclasses\nm = dataclasses.sys.modules\nr, w = m['os'].pipe()\n"
        "m['_posixsubprocess'].fork_exec([b'/usr/bin/touch', b'{sentinel}'], [b'/usr/bin/touch'], True, (w,), "
        "None, None, -1, -1, -1, -1, -1, -1, r, w, False, False, -1, None, None, None, -1, None, False)"),
}


@dataclass
class World:
    """What the attacks aim at, watched from outside the sandbox."""

    sentinel: Path
    secret_file: Path
    port: int
    pid: int
    received: list[bytes]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    monkeypatch.setenv("GYMWRIGHT_TEST_SECRET", SECRET)
    # world-readable in a world-traversable folder: file permissions do not protect it, the
    # sandbox must
    home = Path(tempfile.mkdtemp(prefix="gymwright-victim-"))
    home.chmod(0o755)
    secret_file = home / "id_rsa"
    secret_file.write_text(SECRET)
    secret_file.chmod(0o644)
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            received.append(b"<connected>" + conn.recv(100))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield World(tmp_path / "pwned", secret_file, server.getsockname()[1], victim.pid, received)
    finally:
        stop.set()
        thread.join(2)
        server.close()
        victim.kill()
        victim.wait()
        shutil.rmtree(home, ignore_errors=True)


def hostile(where: str, payload: str, w: World) -> str:
    text = payload.format(sentinel=str(w.sentinel), secret_file=str(w.secret_file), port=w.port,
                          pid=w.pid, secret=SECRET)
    body = "\n".join("        " + line for line in text.splitlines()) + "\n"
    anchor = "    def reset(self, seed=None, options=None):\n" if where == "reset" else \
        "    def step(self, actions):\n"
    assert anchor in GOOD
    return GOOD.replace(anchor, anchor + body)


def assert_no_escape(w: World, report_json: str) -> None:
    assert not w.sentinel.exists(), "a file was written outside the sandbox"
    assert w.received == [], f"the loopback server was reached: {w.received}"
    assert subprocess.run(["kill", "-0", str(w.pid)]).returncode == 0, "the victim process was killed"
    assert SECRET not in report_json, "a secret reached gymwright's process"


@pytest.mark.parametrize("name", list(CASES))
def test_each_hostile_case_is_refused_or_contained_and_reported(name: str, world: World) -> None:
    case = CASES[name]
    report, layers = check_code(hostile(case.where, case.payload, world), name="hostile", limits=QUICK)
    text = report.to_json()
    assert not report.passed, report.to_prompt()
    assert report.diagnostics[0].message  # a finding says what happened
    caught = "static" if report.stopped_at == "vet" else "runtime"
    assert caught == case.caught, report.to_prompt()
    if caught == "static":
        assert layers == {}  # nothing of it ran
        assert all(d.path.startswith("code:") for d in report.diagnostics if d.stage == "vet")
    assert_no_escape(world, text)


@pytest.mark.slow  # the kernel battery (tests/codemode/test_codemode_kernel.py) has the same attacks and more by default
@pytest.mark.parametrize("name", list(UNVETTED))
def test_the_runtime_layers_hold_without_vetting(name: str, world: World) -> None:
    code = hostile("reset", UNVETTED[name], world)
    report, layers = check_code(code, name="hostile", vet=False, limits=QUICK)
    assert report.passed is (name in NOT_REPORTED_UNVETTED), report.to_prompt()
    assert layers.get("audit_hook") is True or report.stopped_at == "load"
    assert_no_escape(world, report.to_json() + json.dumps(layers))


def test_the_battery_counts() -> None:
    """The closing note's counts: every case is caught one way or the other."""
    static = sum(c.caught == "static" for c in CASES.values())
    runtime = sum(c.caught == "runtime" for c in CASES.values())
    assert static + runtime == len(CASES) == 16
    assert (static, runtime) == (13, 3)  # issue 39: getattr and module attributes reaching `inspect` are refused statically
    assert {n.split(" (")[0] for n in UNVETTED} <= {n.split(" (")[0] for n in CASES}
    assert os.path.exists(__file__)
