"""The hostile-code battery of issue 39: attacks a model-written module could make, each run at
load time in a fresh sandbox worker, judged from outside.

A `Scene` is what an attacker would want: a secret in the user's home, a file to truncate,
delete or rename, servers on loopback (TCP, UDP, a unix socket file, an abstract unix socket),
a process of the worker's own user to signal (as root: one running as `nobody`, the user the
worker used to share with every other worker), the harness itself with a secret in its
environment. After each case `effects()` lists what changed; the case is *contained* when
nothing did, and the worker's answer was a `SandboxError` (a clear error, never a raw
traceback of the parent) whose text holds no secret.

Every case ends by raising what it got, so an attack that silently "worked" is seen too. The
attacks skip vetting (it would refuse most of them; `tests/codemode/test_codemode_vet.py` tests that):
the runtime layers must hold on their own. Run as a program (`python tests/support/kernel_battery.py
CONFIG`) it plays every case under one configuration and prints one JSON line per case: how
the battery runs as a normal user.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymwright.codemode.sandbox import Layers, Limits, Sandbox, SandboxError

SECRET = "gw-battery-secret-7d2e"
LIMITS = Limits(call_s=4.0, start_s=60.0)
PRE = "import dataclasses\nM = dataclasses.sys.modules\nos = M['os']\n"
IMPORT = PRE + "imp = M['importlib'].import_module\n"
CT = IMPORT + "ct = imp('ctypes')\nlibc = ct.CDLL(None, use_errno=True)\nlibc.syscall.restype = ct.c_long\n"
SOCK = IMPORT + "socket = imp('socket')\n"
REAL_OS = "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__"
FORGE = "R = []\nfor fd in range(3, 40):\n    try:\n        R.append(os.write(fd, @FRAME@))\n    except OSError:\n        pass"
END = "\nraise RuntimeError('the attack ran to its end: ' + repr(R)[:300])\n"

# name -> the attack (tokens @SECRET@ @HOME@ @SENTINEL@ @VICTIM_FILE@ @PORT@ @UPORT@ @UPATH@ @ABSTRACT@
# @VICTIM@ @PPID@ @TMP@ are filled in by the scene)
CASES: dict[str, str] = {
    # ---- the audit hook switched off from inside (the critical finding), then an attack
    "hook tables emptied by setattr, realpath replaced, then a secret read": PRE + (
        "g = M['gymwright.codemode.guard']\nsetattr(g, 'REFUSED_EVENTS', frozenset())\n"
        "setattr(g, 'REFUSED_PREFIXES', ())\nsetattr(g, 'WRITE_FLAGS', 0)\n"
        "setattr(g, 'ALLOWED_ROOTS', frozenset(['os', 'socket', 'ctypes']))\n"
        "M['posixpath'].realpath = lambda p, *a, **k: M['sys'].prefix + '/x'\n"
        "R = os.read(os.open('@SECRET@', 0), 100)"),
    "hook tables emptied, then a file written": PRE + (
        "g = M['gymwright.codemode.guard']\nsetattr(g, 'REFUSED_EVENTS', frozenset())\nsetattr(g, 'WRITE_FLAGS', 0)\n"
        "M['posixpath'].realpath = lambda p, *a, **k: M['sys'].prefix + '/x'\n"
        "R = os.open('@SENTINEL@', os.O_CREAT | os.O_WRONLY)"),
    "hook's refuse replaced by a no-op, then a secret read": PRE + (
        "g = M['gymwright.codemode.guard']\ng._refuse = lambda *a, **k: None\n"
        "R = os.read(os.open('@SECRET@', 0), 100)"),
    "refusal reporter cleared, then a socket": SOCK + (
        "M['gymwright.codemode.guard']._reporter.clear()\n"
        "try:\n    socket.socket()\nexcept BaseException:\n    pass\nR = 'the refusal was caught'"),
    "real builtins' open restored": PRE + "R = M['builtins'].open('@SECRET@').read()",
    "a second audit hook and a tracer": PRE + "M['sys'].addaudithook(lambda *a: None)\nM['sys'].settrace(None)\nR = 1",
    "ctypes imported through importlib": IMPORT + "R = imp('ctypes').CDLL(None).system(b'touch @SENTINEL@')",
    "subclasses walk to the real os.system": "R = " + REAL_OS + "['system']('touch @SENTINEL@')",
    # ---- files: reads
    "read a secret in the home folder": PRE + "R = os.read(os.open('@SECRET@', 0), 100)",
    "read a secret through open()": PRE + "R = M['io'].open('@SECRET@').read()",
    "read a secret through linecache": PRE + "R = M['linecache'].getlines('@SECRET@')",
    "read a secret through numpy.fromfile": PRE + "R = M['numpy'].fromfile('@SECRET@', dtype='uint8').tobytes()",
    "read a secret through numpy.loadtxt": PRE + "R = M['numpy'].loadtxt('@SECRET@', dtype=str)",
    "list the home folder": PRE + "R = os.listdir('@HOME@')",
    "list the filesystem root": PRE + "R = [n for n in os.listdir('/') if n in ('home', 'root', 'etc', 'tmp', 'proc')]\n"
                                      "assert not R, R",
    "read /etc/passwd": PRE + "R = os.read(os.open('/etc/passwd', 0), 100)",
    "read /etc/shadow": PRE + "R = os.read(os.open('/etc/shadow', 0), 100)",
    "read the parent's environment in /proc": PRE + "R = os.read(os.open('/proc/@PPID@/environ', 0), 4000)",
    "read the parent's command line in /proc": PRE + "R = os.read(os.open('/proc/@PPID@/cmdline', 0), 4000)",
    "read the parent's memory map in /proc": PRE + "R = os.read(os.open('/proc/@PPID@/maps', 0), 400)",
    "write the parent's memory through /proc": PRE + "R = os.open('/proc/@PPID@/mem', os.O_RDWR)",
    "open the parent's pipes through /proc": PRE + "R = [os.open(f'/proc/@PPID@/fd/{i}', os.O_RDWR) for i in range(3)]",
    "read the host's network config in /sys": PRE + "R = os.listdir('/sys/class/net')",
    "read the worker's own environment": PRE + "R = dict(os.environ)",
    "read the test harness's own files": PRE + "R = os.read(os.open('@HARNESS@', 0), 100)",
    "load a shared library from outside": IMPORT + "R = imp('ctypes').CDLL('@SECRET@')",
    # ---- files: writes
    "create a file in a temporary folder": PRE + "R = os.open('@SENTINEL@', os.O_CREAT | os.O_WRONLY)",
    "create a file in the home folder": PRE + "R = os.open('@HOME@/gw-battery-made', os.O_CREAT | os.O_WRONLY)",
    "create a file in /dev/shm": PRE + "R = os.open('/dev/shm/gw-battery-made', os.O_CREAT | os.O_WRONLY)",
    "create a file in /tmp": PRE + "R = os.open('/tmp/gw-battery-made', os.O_CREAT | os.O_WRONLY)",
    "truncate a file": PRE + "R = os.truncate('@VICTIM_FILE@', 0)",
    "open a file with O_TRUNC": PRE + "R = os.open('@VICTIM_FILE@', os.O_WRONLY | os.O_TRUNC)",
    "delete a file": PRE + "R = os.unlink('@VICTIM_FILE@')",
    "rename a file": PRE + "R = os.rename('@VICTIM_FILE@', '@SENTINEL@')",
    "chmod a file": PRE + "R = os.chmod('@VICTIM_FILE@', 0o777)",
    "touch a file's times": PRE + "R = os.utime('@VICTIM_FILE@', (0, 0))",
    "symlink to a secret": PRE + "R = os.symlink('@SECRET@', '@SENTINEL@')",
    "hard link to a file": PRE + "R = os.link('@VICTIM_FILE@', '@SENTINEL@')",
    "make a folder": PRE + "R = os.mkdir('@SENTINEL@')",
    "make a fifo": PRE + "R = os.mkfifo('@SENTINEL@')",
    "make a device node": PRE + "R = os.mknod('@SENTINEL@', 0o600 | 0o020000, os.makedev(1, 3))",
    "write through numpy.savetxt": PRE + "R = M['numpy'].savetxt('@SENTINEL@', M['numpy'].ones(3))",
    "set an extended attribute": PRE + "R = os.setxattr('@VICTIM_FILE@', 'user.gw', b'x')",
    # ---- sockets
    "connect to a loopback TCP port": SOCK + "s = socket.create_connection(('127.0.0.1', @PORT@), timeout=2)\n"
                                             "s.sendall(b'@SECRET@')\nR = s.recv(10)",
    "send a UDP datagram to loopback": SOCK + "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                                              "R = s.sendto(b'@SECRET@', ('127.0.0.1', @UPORT@))",
    "connect to a unix socket file": SOCK + "s = socket.socket(socket.AF_UNIX)\ns.connect('@UPATH@')\n"
                                            "R = s.sendall(b'@SECRET@')",
    "connect to an abstract unix socket": SOCK + "s = socket.socket(socket.AF_UNIX)\ns.connect('\\0@ABSTRACT@')\n"
                                                 "R = s.sendall(b'@SECRET@')",
    "listen on every interface": SOCK + "s = socket.socket()\ns.bind(('0.0.0.0', 0))\ns.listen()\n"
                                        "R = s.getsockname()",
    "resolve a host name": SOCK + "R = socket.getaddrinfo('localhost', 80)",
    "open a raw packet socket": SOCK + "R = socket.socket(17, 3, 0)",
    "open a netlink socket": SOCK + "R = socket.socket(16, socket.SOCK_RAW, 0)",
    # ---- processes and signals
    "fork": PRE + "R = os.fork()\nif R == 0:\n    os._exit(0)",
    "fork bomb": PRE + "R = [os.fork() for _ in range(1000)]",
    "os.system": PRE + "R = os.system('touch @SENTINEL@')",
    "exec a shell": PRE + "R = os.execv('/bin/sh', ['sh', '-c', 'touch @SENTINEL@'])",
    "subprocess through importlib": IMPORT + "R = imp('subprocess').run(['touch', '@SENTINEL@'])",
    "posix_spawn": PRE + "R = os.posix_spawn('/usr/bin/touch', ['touch', '@SENTINEL@'], {})",
    "kill a process of the same user": PRE + "R = os.kill(@VICTIM@, 9)",
    "signal the parent": PRE + "R = os.kill(@PPID@, 10)",
    "signal every process": PRE + "R = os.kill(-1, 10)",
    "signal the parent's process group": PRE + "R = os.killpg(os.getpgid(@PPID@), 10)",
    "tgkill a process of the same user": CT + "R = libc.syscall(234, @VICTIM@, @VICTIM@, 9)\n"
                                              "assert R != 0, ct.get_errno()",
    "pidfd_open and pidfd_send_signal": CT + "fd = libc.syscall(434, @VICTIM@, 0)\nassert fd >= 0, ct.get_errno()\n"
                                             "R = libc.syscall(424, fd, 9, None, 0)\nassert R != 0",
    "ptrace a process of the same user": CT + "R = libc.ptrace(16, @VICTIM@, 0, 0)\nassert R != 0, ct.get_errno()",
    "read the parent's memory with process_vm_readv": CT + (
        "buf = ct.create_string_buffer(64)\nclass V(ct.Structure):\n    _fields_ = [('b', ct.c_void_p), ('n', ct.c_size_t)]\n"
        "local, remote = V(ct.cast(buf, ct.c_void_p), 64), V(0x400000, 64)\n"
        "R = libc.process_vm_readv(@PPID@, ct.byref(local), 1, ct.byref(remote), 1, 0)\nassert R < 0, R"),
    "lower a process's limits with prlimit": PRE + "R = M['resource'].prlimit(@VICTIM@, M['resource'].RLIMIT_NOFILE, (0, 0))",
    "a thread bomb": PRE + "t = M['_thread']\nR = [t.start_new_thread(M['time'].sleep, (30,)) for _ in range(5000)]",
    # ---- resources
    "memory bomb": "R = bytearray(1 << 36)",
    "numpy memory bomb": PRE + "R = M['numpy'].ones((1 << 34,), dtype='uint8')",
    "endless loop": "R = 0\nwhile True:\n    R += 1",
    "recursion bomb": "def down(n):\n    return down(n + 1) + 1\nR = down(0)",
    "CPU limit raised, then an endless loop": PRE + (
        "r = M['resource']\nr.setrlimit(r.RLIMIT_CPU, (r.RLIM_INFINITY, r.RLIM_INFINITY))\nR = 0\nwhile True:\n    R += 1"),
    "a flood of output on stdout and stderr": PRE + "R = [os.write(fd, b'x' * 100000) for fd in (1, 2) for _ in range(50)]",
    # ---- the pipe to the parent
    "forged frames on every descriptor": PRE + FORGE.replace("@FRAME@", "b'\\x00\\x00\\x00\\x05nope!'"),
    "a frame that claims 4 GB": PRE + FORGE.replace("@FRAME@", "b'\\xff\\xff\\xff\\xff'"),
    "close the pipes": PRE + "R = [os.close(fd) for fd in range(0, 12)]",
    # ---- the kernel's own state
    "unshare a user namespace": CT + "R = libc.unshare(0x10000000)\nassert R != 0, ct.get_errno()",
    "mount a tmpfs": CT + "R = libc.mount(b'none', b'/', b'tmpfs', 0, None)\nassert R != 0, ct.get_errno()",
    "chroot escape": CT + "R = libc.chroot(b'/')\nassert R != 0, ct.get_errno()\nos.chdir('..')",
    "bpf": CT + "R = libc.syscall(321, 0, None, 0)\nassert R != 0, ct.get_errno()",
    "keyctl": CT + "R = libc.syscall(250, 0, 0, 0, 0, 0)\nassert R < 0 and ct.get_errno() == 1, ct.get_errno()",
    "perf_event_open": CT + "R = libc.syscall(298, None, 0, -1, -1, 0)\nassert R < 0 and ct.get_errno() == 1, ct.get_errno()",
    "io_uring_setup": CT + "R = libc.syscall(425, 1, None)\nassert R < 0 and ct.get_errno() == 1, ct.get_errno()",
    "userfaultfd": CT + "R = libc.syscall(323, 0)\nassert R < 0, ct.get_errno()",
    "setuid to root": PRE + "R = os.setuid(0)",
    "inject keystrokes into the terminal": PRE + (
        "M['fcntl'].ioctl(0, 0x5412, b'x')\nR = os.open('/dev/tty', os.O_RDWR)"),
    "terminal escapes in an error": "raise ValueError('\\x1b[32mPASSED\\x1b[0m \\x1b]8;;file:///etc/passwd\\x07x\\x1b]8;;\\x07')",
}
# cases whose end is a refusal the parent must have logged even though the code caught it
LOGGED = {"refusal reporter cleared, then a socket"}


@dataclass
class Scene:
    """The things an attacker wants, and how to tell whether any of them changed."""

    root: Path
    home: Path
    secret: Path
    victim_file: Path
    sentinel: Path
    victim: subprocess.Popen[bytes]
    victim_mark: Path
    port: int
    uport: int
    upath: Path
    abstract: str
    got: list[bytes]
    signalled: list[int]

    @classmethod
    def make(cls) -> Scene:
        root = Path(tempfile.mkdtemp(prefix="gw-battery-"))
        os.chmod(root, 0o755)
        home = root / "home"
        (home / ".ssh").mkdir(parents=True)
        secret = home / ".ssh" / "id_rsa"
        secret.write_text(f"-----BEGIN KEY----- {SECRET} -----END KEY-----\n")
        secret.chmod(0o644)  # readable by everyone: only the sandbox may stand in the way
        victim_file = root / "keep.txt"
        victim_file.write_text("keep me\n")
        victim_file.chmod(0o666)
        mark = root / "victim" / "signalled"
        victim = _victim(mark)
        got: list[bytes] = []
        scene = cls(root, home, secret, victim_file, root / "sentinel", victim, mark, 0, 0, root / "u.sock",
                    f"gw-battery-{os.getpid()}", got, [])
        scene._serve()
        signal.signal(signal.SIGUSR1, lambda *a: scene.signalled.append(1))
        return scene

    def _serve(self) -> None:
        tcp = socket.create_server(("127.0.0.1", 0))
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        unix = socket.socket(socket.AF_UNIX)
        unix.bind(str(self.upath))
        os.chmod(self.upath, 0o777)
        unix.listen()
        abstract = socket.socket(socket.AF_UNIX)
        abstract.bind("\0" + self.abstract)
        abstract.listen()
        self.port, self.uport = tcp.getsockname()[1], udp.getsockname()[1]
        self.servers = [tcp, udp, unix, abstract]
        for s in self.servers:
            s.settimeout(0.2)
            threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def _accept(self, s: socket.socket) -> None:
        while s.fileno() >= 0:
            try:
                if s.type == socket.SOCK_DGRAM:
                    self.got.append(s.recv(100))
                    continue
                conn, _ = s.accept()
            except OSError:
                continue
            self.got.append(conn.recv(100) or b"<connected>")
            conn.close()

    def fill(self, code: str) -> str:
        tokens = {"@SECRET@": str(self.secret), "@HOME@": str(self.home), "@SENTINEL@": str(self.sentinel),
                  "@VICTIM_FILE@": str(self.victim_file), "@PORT@": str(self.port), "@UPORT@": str(self.uport),
                  "@UPATH@": str(self.upath), "@ABSTRACT@": self.abstract, "@VICTIM@": str(self.victim.pid),
                  "@PPID@": str(os.getpid()), "@HARNESS@": str(Path(__file__).resolve())}
        for token, value in tokens.items():
            code = code.replace(token, value)
        return code

    def effects(self) -> list[str]:
        """What changed outside the sandbox."""
        out = []
        made = [self.sentinel, self.home / "gw-battery-made", Path("/dev/shm/gw-battery-made"),
                Path("/tmp/gw-battery-made")]
        out += [f"{p} was made" for p in made if os.path.lexists(p)]
        try:
            st = self.victim_file.stat()
            if self.victim_file.read_text() != "keep me\n":
                out.append("the file was changed")
            if st.st_mode & 0o777 != 0o666 or st.st_mtime < 1e6:
                out.append("the file's mode or times were changed")
            if os.listxattr(self.victim_file):
                out.append("the file got an extended attribute")
        except OSError as e:
            out.append(f"the file is gone ({e})")
        if self.got:
            out.append(f"a server was reached: {self.got[:3]}")
        if self.victim.poll() is not None or self.victim_mark.exists():
            out.append("the victim process was killed or signalled")
        if self.signalled:
            out.append("the harness was signalled")
        return out

    def reset(self) -> None:
        """Undo what a contained case may still have left (nothing, when all holds)."""
        for p in (self.sentinel, self.home / "gw-battery-made", Path("/dev/shm/gw-battery-made"),
                  Path("/tmp/gw-battery-made")):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            elif os.path.lexists(p):
                p.unlink()
        self.got.clear()
        self.signalled.clear()
        self.victim_file.unlink(missing_ok=True)  # a new file: no mode, times or attributes kept
        self.victim_file.write_text("keep me\n")
        self.victim_file.chmod(0o666)
        if self.victim.poll() is not None or self.victim_mark.exists():
            self.victim_mark.unlink(missing_ok=True)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.victim.pid, signal.SIGKILL)
            self.victim.wait()
            self.victim = _victim(self.victim_mark)

    def close(self) -> None:
        for s in self.servers:
            s.close()
        os.killpg(self.victim.pid, signal.SIGKILL)
        self.victim.wait()
        shutil.rmtree(self.root, ignore_errors=True)


def _victim(mark: Path) -> subprocess.Popen[bytes]:
    """A process to attack: as root, one running as `nobody` (the user workers used to share);
    otherwise one of the user's own. SIGUSR1 makes it leave a mark (in a folder it may write)."""
    mark.parent.mkdir(exist_ok=True)
    mark.parent.chmod(0o777)
    script = f"trap 'touch {shlex.quote(str(mark))}' USR1; while true; do sleep 1 & wait $!; done"
    as_nobody = os.geteuid() == 0
    proc = subprocess.Popen(["/bin/sh", "-c", script], cwd="/", user=65534 if as_nobody else None,
                            group=65534 if as_nobody else None, extra_groups=[] if as_nobody else None,
                            start_new_session=True)
    time.sleep(0.2)  # its trap in place
    return proc


@dataclass
class Outcome:
    name: str
    kind: str  # the SandboxError's kind, or "none" when the worker answered without an error
    message: str
    refused: list[str]
    effects: list[str]
    layers: dict[str, Any]  # what the worker had armed

    @property
    def contained(self) -> bool:
        clear = self.kind in ("code", "crashed", "timeout", "protocol") and bool(self.message)
        logged = self.name not in LOGGED or not self.layers.get("audit_hook") or bool(self.refused)
        return clear and logged and not self.effects and SECRET not in self.message + " ".join(self.refused)


def run_case(scene: Scene, name: str, layers: Layers) -> Outcome:
    code = scene.fill(CASES[name] + END)
    kind, message, refused, armed = "none", "", [], {}
    try:
        with Sandbox(LIMITS, layers) as sandbox:
            armed = sandbox.layers()
            try:
                sandbox.request({"op": "load", "code": code}, timeout=LIMITS.call_s)
            except SandboxError as e:
                kind, message = e.kind, e.message
            refused = list(sandbox.refused)
    except SandboxError as e:  # the worker did not start: not a containment, a broken test
        kind, message = "start", e.message
    time.sleep(0.05)  # a datagram or a signal in flight
    outcome = Outcome(name, kind, message, refused, scene.effects(), armed)
    scene.reset()
    return outcome


CONFIGS = {
    "all": {},
    "kernel-only": {"hook": False, "builtins": False},
    "landlock": {"namespaces": False},
    "landlock-kernel-only": {"namespaces": False, "hook": False, "builtins": False},
}


def main() -> None:
    layers = Layers(**CONFIGS[sys.argv[1]])
    scene = Scene.make()
    try:
        for name in CASES:
            print(json.dumps(run_case(scene, name, layers).__dict__), flush=True)
    finally:
        scene.close()


if __name__ == "__main__":
    main()
