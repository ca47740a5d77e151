"""The parent's side of the sandbox: start a worker process, talk to it, kill it.

The kernel confines the worker before any model code exists in it (`codemode.isolation`
decides which layers this machine gives, and refuses to start a worker without enough):

- `namespaces`: bubblewrap runs the worker in its own user, mount, PID, network, IPC and UTS
  namespaces, as uid 65534 without capabilities, on a read-only root holding only the
  interpreter's files (`codemode.namespaces`);
- `landlock`: the worker confines itself to reading the interpreter's files, no TCP, no
  signals out of its domain (`codemode.landlock`); the layer where namespaces are not to be
  had, and a second one inside them;
- `seccomp`: the worker installs a filter that refuses `ptrace`, `process_vm_*`, new processes,
  `exec`, sockets, signals to other processes, mounts, `bpf`, keyrings, ... (`codemode.seccomp`).

Then, as before, and tested one at a time with the others off (`Layers`):

- `rlimits`: CPU seconds per request (`RLIMIT_CPU`, set again by the worker before each request,
  so a long training run lives as long as each request is bounded), address space
  (`RLIMIT_AS`), no file writes (`RLIMIT_FSIZE` = 0), no core files; and, outside the
  namespaces, no new processes (`RLIMIT_NPROC` = 0);
- `netns` (outside bubblewrap): a network namespace of its own, `unshare(2)` before exec;
- `chroot` and `drop` (outside bubblewrap, as root): the empty working directory becomes the
  worker's root, then it becomes `nobody`;
- `hook`: the worker's audit hook (`gymwright.codemode.guard`), which reports each refusal to
  this process the moment it happens: the refusal log lives here, out of the model's reach;
- `builtins`: the model's module sees restricted builtins;
- always: a wall-clock limit per request (the worker is killed with its process group), and an
  environment holding only thread-count settings: no inherited variables, so no secrets.

Nothing of the model's code is imported here: requests and replies are JSON frames
(`gymwright.codemode.wire`), decoded as untrusted data.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from typing import Any

from gymwright.codemode import isolation, namespaces
from gymwright.codemode.wire import WireError, frame_length, pack, unpack
from gymwright.errors import GymwrightError

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
START_CPU_S = 30  # CPU seconds the worker may spend starting, before its first request
MAX_REFUSALS = 1000  # refusals kept per worker (the count goes on: `refusal_count`)
WORKER_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "LC_ALL": "C.UTF-8"}


@dataclass(frozen=True)
class Limits:
    """What one worker may use."""

    cpu_s: int = 120  # CPU seconds one request may use (SIGXCPU); the worker sets the limit again
    # before each request, so a worker lives as long as its requests are bounded
    memory_mb: int = 1536  # address space
    call_s: float = 10.0  # wall-clock seconds one request may take
    start_s: float = 60.0  # wall-clock seconds to start (imports on a busy machine)


@dataclass(frozen=True)
class Layers:
    """Which layers to arm; all by default. Tests switch them off one at a time.

    `require_kernel`: refuse to start unless the kernel layers this machine gives confine the
    worker (seccomp, and namespaces or Landlock); only tests of the other layers alone turn
    it off."""

    namespaces: bool = True
    landlock: bool = True
    seccomp: bool = True
    require_kernel: bool = True
    rlimits: bool = True
    netns: bool = True
    chroot: bool = True
    drop: bool = True
    hook: bool = True
    builtins: bool = True


class SandboxError(GymwrightError):
    """The worker failed: `kind` is timeout, crashed, protocol or code (the model's code raised)."""

    def __init__(self, message: str, *, kind: str, line: int | None = None, where: str = "",
                 refused: list[str] | None = None, hint: str = "") -> None:
        self.kind, self.line, self.where, self.refused = kind, line, where, refused or []
        super().__init__(message, path=f"code:{line}" if line else "", hint=hint)


def _unshare_function() -> Any:
    """`unshare(flags)`, resolved here in gymwright's process: the child between fork and exec
    only calls it (no import there). `os.unshare` on Python 3.12+, else libc's through ctypes."""
    if hasattr(os, "unshare"):
        return os.unshare
    import ctypes

    return ctypes.CDLL(None, use_errno=True).unshare


def _unshare_net(unshare: Any) -> None:
    flags = CLONE_NEWNET if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNET
    with contextlib.suppress(OSError):
        unshare(flags)  # a refusal (libc returns -1, os.unshare raises) leaves the network shared


def _preexec(limits: Limits, layers: Layers, plan: isolation.Plan) -> Any:
    unshare = _unshare_function() if layers.netns and not plan.namespaces else None

    def run() -> None:  # in the child, between fork and exec: no model code exists yet
        if unshare is not None:
            _unshare_net(unshare)
        if layers.rlimits:
            cpu = limits.cpu_s + START_CPU_S  # the worker sets it again before each request
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, resource.RLIM_INFINITY))
            resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb << 20, limits.memory_mb << 20))
            resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if not plan.namespaces:  # bubblewrap must fork; seccomp refuses new processes instead
                resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    return run


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit status {code}"


class Sandbox:
    """One worker process. Use as a context manager; `request` sends one frame and waits."""

    def __init__(self, limits: Limits | None = None, layers: Layers | None = None) -> None:
        self.limits, self.switches = limits or Limits(), layers or Layers()
        sw = self.switches
        self.plan = isolation.plan(sw.namespaces, sw.landlock, sw.seccomp, sw.require_kernel)
        self.cwd = tempfile.mkdtemp(prefix="gymwright-sandbox-")
        os.chmod(self.cwd, 0o711)  # the worker (nobody) may stand in it, not write or list it
        config = {**asdict(sw), "namespaces": self.plan.namespaces, "landlock": self.plan.landlock,
                  "seccomp": self.plan.seccomp, "parent_netns": _netns(), "cpu_s": self.limits.cpu_s}
        argv = [namespaces.python(), "-I", "-m", "gymwright.codemode.worker", json.dumps(config)]
        if self.plan.namespaces:
            argv = namespaces.command(namespaces.bwrap() or "bwrap", argv)
        self._buf = b""
        self.refused: list[str] = []  # what the audit hook refused, even where the code caught it
        self.refusal_count = 0
        self.armed: dict[str, Any] = {}
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=self.cwd, env=dict(WORKER_ENV), close_fds=True, start_new_session=True,
            preexec_fn=_preexec(self.limits, sw, self.plan))  # noqa: PLW1509 - limits go in before exec
        try:
            self.armed = self._read(self.limits.start_s, "start").get("layers", {})
            self._check_armed()
        except SandboxError:
            self.close()
            raise

    def _check_armed(self) -> None:
        """Fail closed: a kernel layer the plan counts on that the worker could not arm stops it
        before it has read any model code."""
        failed = [name for name in ("landlock", "seccomp") if getattr(self.plan, name)
                  and not (isinstance(self.armed.get(name), dict) and self.armed[name].get("armed"))]
        if failed and self.switches.require_kernel and not self.plan.unconfined:
            why = "; ".join(f"{name}: {_arm_error(self.armed, name)}" for name in failed)
            raise self._fail("isolation", f"the sandbox worker could not arm {', '.join(failed)} ({why}): "
                             "no model code was run", "this kernel refused a layer it advertised; see docs/designer.md")

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def layers(self) -> dict[str, Any]:
        """The layers armed in this worker, as it measured them before any model code ran."""
        return {"rlimits": self.switches.rlimits, "wall_clock_s": self.limits.call_s, **self.armed,
                "namespaces": self.plan.namespaces, "unconfined": self.plan.unconfined}

    def request(self, message: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one request, wait for its reply; raises SandboxError (kind code for a failure
        inside the model's code, which leaves the worker usable; any other kind kills it).
        What the audit hook refused is added to `refused`, whether the code caught it or not."""
        self.send(message, timeout)
        return self.receive(str(message.get("op", "request")), timeout)

    def send(self, message: dict[str, Any], timeout: float | None = None) -> None:
        """The first half of `request` (to keep several workers busy at once)."""
        if not self.alive:
            raise SandboxError("the sandbox worker is not running", kind="crashed")
        self._write(pack(message), timeout or self.limits.call_s, str(message.get("op", "request")))

    def receive(self, what: str, timeout: float | None = None) -> dict[str, Any]:
        """The second half of `request`: the reply to what `send` sent."""
        before = self.refusal_count
        reply = self._read(timeout or self.limits.call_s, what)
        if not reply.get("ok"):
            raise SandboxError(str(reply.get("error", "the request failed"))[:400], kind="code",
                               line=reply.get("line") if isinstance(reply.get("line"), int) else None,
                               where=str(reply.get("where", what)), refused=self.refused[before:][:20])
        return reply

    def _note_refusal(self, frame: dict[str, Any]) -> None:
        """A refusal the worker's hook reported as it happened (kept here, out of the model's reach)."""
        self.refusal_count += 1
        if len(self.refused) < MAX_REFUSALS:
            self.refused.append(str(frame.get("refused"))[:200])

    # ------------------------------------------------------------------ framing
    def _fail(self, kind: str, message: str, hint: str = "") -> SandboxError:
        self.close()
        return SandboxError(message, kind=kind, hint=hint)

    def _write(self, data: bytes, timeout: float, what: str) -> None:
        assert self.proc.stdin is not None
        fd, deadline, view = self.proc.stdin.fileno(), time.monotonic() + timeout, memoryview(data)
        os.set_blocking(fd, False)
        while view:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                raise self._fail("timeout", f"`{what}`: the worker did not take the request within {timeout:g} s")
            try:
                view = view[os.write(fd, view):]
            except BrokenPipeError:
                raise self._crashed(what) from None

    def _read(self, timeout: float, what: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd, deadline = self.proc.stdout.fileno(), time.monotonic() + timeout
        need: int | None = None
        while True:
            if need is None and len(self._buf) >= 4:
                try:
                    need = frame_length(self._buf[:4])
                except WireError as e:
                    raise self._fail("protocol", f"`{what}`: the worker broke the protocol: {e}") from None
            if need is not None and len(self._buf) >= 4 + need:
                body, self._buf = self._buf[4:4 + need], self._buf[4 + need:]
                try:
                    frame = unpack(body)
                except WireError as e:
                    raise self._fail("protocol", f"`{what}`: the worker sent {e}") from None
                if set(frame) != {"refused"}:
                    return frame
                self._note_refusal(frame)
                need = None
                continue
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise self._fail("timeout", f"`{what}` did not return within {timeout:g} s (an endless "
                                 "loop, or far too much work per call)",
                                 "make every call finish quickly: bound every loop")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise self._crashed(what)
            self._buf += chunk

    def _crashed(self, what: str) -> SandboxError:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        status = _describe_exit(self.proc.poll())
        hint = {"killed by SIGXCPU": f"one call used more than its {self.limits.cpu_s} CPU seconds: bound its work",
                "killed by SIGKILL": "the code was killed: CPU or memory limit, or an endless loop",
                "killed by SIGSEGV": "the interpreter crashed (for example an unbounded recursion)"}
        return self._fail("crashed", f"`{what}`: the sandbox worker died ({status})", hint.get(status, ""))

    def close(self) -> None:
        """Kill the worker and its process group, remove its working directory."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]  # stdin and stdout are pipes (Popen(stdin=PIPE, stdout=PIPE)), never None
        shutil.rmtree(self.cwd, ignore_errors=True)


def _netns() -> str:
    try:
        return os.readlink("/proc/self/ns/net")
    except OSError:
        return ""


def _arm_error(armed: dict[str, Any], name: str) -> str:
    got = armed.get(name)
    return str(got.get("error", "not armed"))[:200] if isinstance(got, dict) else "not reported"


__all__ = ["Layers", "Limits", "Sandbox", "SandboxError"]
