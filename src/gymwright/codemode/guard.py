"""The worker's own defences, armed before the model's code exists in the process.

- `drop_privileges`: a worker started as root becomes `nobody` (no capabilities, file
  permissions apply, `RLIMIT_NPROC` is enforced, which the kernel never does for root).
- `enter_chroot`: the empty working directory becomes the worker's filesystem root (as root).
- `install_audit_hook`: first replaces the few world-changing calls CPython does not audit
  (`os.mkfifo`, `os.mknod`, `os.openpty`, `_posixsubprocess.fork_exec`) by refusing ones, then
  adds a `sys.addaudithook` hook (it cannot be removed) that refuses file
  opens other than reads of the interpreter's own files (its prefixes and the packages the
  worker loaded), directory listings outside them, every socket, subprocess, `os.system`,
  `exec*`/`spawn*`/`fork`, signals to other processes, `ctypes`, imports of modules outside the
  allowlist that are not loaded yet, frame and garbage-collector walks, tracing, and file
  changes (`os.remove`, `os.rename`, `shutil.*`, ...).
- `restricted_builtins`: the builtins the model's module sees: without `open`, `eval`, `exec`,
  `compile`, `globals`, `vars`, `input`, ..., with an `__import__` that gives only allowlisted,
  already loaded modules.

Each refusal raises `RuntimeError("sandbox: ...")` inside the model's code and is reported to
the parent at once, on the protocol pipe, before the error is raised (`report_to`): the log of
what the code tried lives in gymwright's process, where the code cannot clear it. The hook
keeps its own copies of its tables and of the functions it calls, so rebinding this module's
names from inside changes nothing it does. All of this is a tripwire on top of the kernel's
layers (namespaces or Landlock, and seccomp), never the only layer.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from gymwright.codemode.vet import ALLOWED_ROOTS, REFUSED_NAMES

NOBODY = 65534
REFUSED_EVENTS = frozenset({
    "os.system", "os.fork", "os.forkpty", "os.kill", "os.killpg", "os.remove", "os.rename",
    "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link", "os.symlink", "os.truncate",
    "os.utime", "os.chdir", "os.chroot", "os.chflags", "os.lchown", "os.setxattr", "os.removexattr",
    "os.putenv", "os.unsetenv", "os.startfile", "os.add_dll_directory", "os.posix_spawn",
    "os.posix_spawnp", "os.spawn", "os.exec", "pty.spawn", "subprocess.Popen", "signal.pthread_kill",
    "sys._getframe", "sys._current_frames", "sys._current_exceptions", "sys.settrace", "sys.setprofile",
    "sys.addaudithook", "sys.setrecursionlimit", "gc.get_objects", "gc.get_referrers",
    "gc.get_referents", "marshal.loads", "marshal.load", "mmap.__new__", "resource.setrlimit",
    "resource.prlimit", "webbrowser.open", "urllib.Request", "ftplib.connect", "http.client.connect",
    "smtplib.connect", "telnetlib.Telnet.open", "imaplib.open", "poplib.connect", "nntplib.connect",
    "syslog.openlog", "winreg.OpenKey", "code.__new__", "function.__new__", "sqlite3.connect",
    "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.move",
    "shutil.rmtree", "shutil.make_archive", "shutil.unpack_archive", "shutil.chown", "tempfile.mkstemp",
    "tempfile.mkdtemp", "fcntl.ioctl", "fcntl.fcntl", "fcntl.flock", "fcntl.lockf",
})
REFUSED_PREFIXES = ("socket.", "ctypes.", "subprocess.", "_posixsubprocess", "os.exec", "os.spawn",
                    "os.posix_spawn", "multiprocessing", "_thread.start", "signal.")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_reporter: list[Callable[[str], None]] = []  # set once by the worker: sends a refusal to the parent


def report_to(send: Callable[[str], None]) -> None:
    """Where each refusal goes the moment it happens (the worker's pipe to its parent); once only."""
    if not _reporter:
        _reporter.append(send)


def enter_chroot() -> bool:
    """Make the (empty, root-owned) working directory the filesystem's root, where the worker
    may (root, or a user namespace that owns its mount namespace): nothing outside it can be
    opened, listed, created or executed any more. Everything needed is loaded already."""
    try:
        os.chroot(".")
        os.chdir("/")
    except OSError:
        return False
    return True


def _refusing(name: str) -> Callable[..., Any]:
    def refused(*args: Any, **kwargs: Any) -> Any:
        _refuse(name, repr(args)[:120])

    return refused


# calls that change the world but raise no audit event in CPython 3.11
UNAUDITED = {"os": ("mkfifo", "mknod", "openpty", "login_tty"), "posix": ("mkfifo", "mknod", "openpty", "login_tty"),
             "_posixsubprocess": ("fork_exec",), "subprocess": ("_fork_exec",)}


def neuter_unaudited() -> None:
    """Replace the calls in UNAUDITED, in the modules loaded, by ones that refuse (and report)."""
    for module_name, names in UNAUDITED.items():
        module = sys.modules.get(module_name)
        for name in names:
            if module is not None and hasattr(module, name):
                setattr(module, name, _refusing(f"{module_name}.{name}"))


def drop_privileges() -> str:
    """Become `nobody` when running as root; the user the worker runs as."""
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    return "nobody" if os.getuid() == NOBODY else f"uid {os.getuid()}"


def own_roots() -> tuple[str, ...]:
    """The interpreter's own files: its prefixes and the folders of every loaded package."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file:
            roots.add(str(Path(file).resolve().parent))
    return tuple(sorted(os.path.realpath(r) + os.sep for r in roots if r))


def _refuse(event: str, detail: str, _sent: tuple[Callable[[str], None], ...] = ()) -> None:
    for send in _sent or tuple(_reporter):
        send(f"{event} {detail}"[:200])
    raise RuntimeError(f"sandbox: {event} is not allowed ({detail[:120]})")


def _inside(path: Any, roots: tuple[str, ...], resolve: bool = True, realpath: Callable[[str], str] = os.path.realpath,
            abspath: Callable[[str], str] = os.path.abspath) -> bool:
    """Whether `path` is among the interpreter's own files (`resolve`: following symlinks;
    without, lexically: the probes must not call the stat they wrap)."""
    if isinstance(path, int | bool) or path is None:
        return False  # an open file descriptor: the worker's own pipes are not the model's
    try:
        real = (realpath if resolve else abspath)(os.fsdecode(path))
    except (TypeError, ValueError):
        return False
    return any((real + os.sep).startswith(r) for r in roots)


def _ancestor(path: Any, roots: tuple[str, ...]) -> bool:
    """A folder above the interpreter's own files (what `realpath` itself looks at)."""
    try:
        folder = os.path.abspath(os.fsdecode(path)).rstrip(os.sep) + os.sep
    except (TypeError, ValueError):
        return False
    return any(r.startswith(folder) for r in roots)


def make_hook(roots: tuple[str, ...], permitted: list[str]) -> Callable[[str, tuple[Any, ...]], None]:
    """The hook, with its tables, the functions it calls and the reporter bound now, in its
    closure: rebinding `guard.REFUSED_EVENTS` or `posixpath.realpath` later changes nothing.
    `permitted` (the worker's own, never the model's) lets one event through while it is set."""
    refused, prefixes, allowed = frozenset(REFUSED_EVENTS), tuple(REFUSED_PREFIXES), frozenset(ALLOWED_ROOTS)
    inside, refuse, modules, write_flags = _inside, _refuse, sys.modules, WRITE_FLAGS
    sent = tuple(_reporter)
    realpath, abspath = os.path.realpath, os.path.abspath

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if permitted and event == permitted[-1]:
            return
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, 0))[:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & write_flags)
            if writes or not inside(path, roots, True, realpath, abspath):
                refuse("open", f"{path!r} mode {mode!r}", sent)
        elif event in ("os.listdir", "os.scandir"):
            if not inside(args[0] if args else ".", roots, True, realpath, abspath):
                refuse(event, repr(args[0] if args else "."), sent)
        elif event == "import":
            name = str(args[0]) if args else ""
            if name not in modules and name.split(".")[0] not in allowed:
                refuse("import", name, sent)
        elif event in refused or event.startswith(prefixes):
            refuse(event, repr(args)[:120], sent)

    return hook


PROBES = ("stat", "lstat", "access")  # look at files, raise no audit event


def watch_probes(roots: tuple[str, ...]) -> None:
    """`os.stat`, `os.lstat`, `os.access` (and posix's) refuse, and report, paths outside the
    interpreter's own files: a probe of `~/.ssh` is then seen even where the file is missing."""
    for module in (sys.modules["os"], sys.modules["posix"]):
        for name in PROBES:
            real = getattr(module, name)

            def probe(path: Any, *args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
                if not isinstance(path, int) and not _inside(path, roots, resolve=False) \
                        and not _ancestor(path, roots):
                    _refuse(f"os.{_name}", repr(path))
                return _real(path, *args, **kwargs)

            setattr(module, name, probe)


def install_audit_hook(roots: tuple[str, ...] | None = None) -> Callable[[str], contextlib.AbstractContextManager[None]]:
    """Install the hook; returns `permit(event)`, a context manager that lets the worker's own
    trusted code raise `event` (its per-request CPU limit) between requests."""
    roots = roots if roots is not None else own_roots()
    neuter_unaudited()
    watch_probes(roots)
    permitted: list[str] = []

    @contextlib.contextmanager
    def permit(event: str) -> Iterator[None]:
        permitted.append(event)
        try:
            yield
        finally:
            permitted.clear()

    sys.addaudithook(make_hook(roots, permitted))
    return permit


_real_import = builtins.__import__


def _allowlisted_import(name: str, globals: Any = None, locals: Any = None,
                        fromlist: Any = (), level: int = 0) -> Any:
    """The model's `__import__`: modules of the allowlisted packages only. numpy's C code
    imports its own submodules through the builtins of the calling frame (the model's), so a
    submodule of an allowlisted package is allowed here; vetting refuses them in the source."""
    if level or name.split(".")[0] not in ALLOWED_ROOTS:
        raise ImportError(f"sandbox: import of {name!r} is not allowed")
    return _real_import(name, globals, locals, fromlist, level)


def restricted_builtins() -> dict[str, Any]:
    """The builtins of the model's module (a new dict; the worker's own are untouched)."""
    out = {k: v for k, v in vars(builtins).items() if k not in REFUSED_NAMES}
    out["__import__"] = _allowlisted_import
    return out


__all__ = ["drop_privileges", "install_audit_hook", "make_hook", "report_to", "restricted_builtins"]
