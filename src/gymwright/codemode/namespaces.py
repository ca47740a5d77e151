"""The worker's namespaces, made by bubblewrap (`bwrap`, Debian's and Ubuntu's `bubblewrap`).

Why bubblewrap rather than our own `unshare` + `pivot_root`: it is small, audited, packaged
everywhere, runs the same for root and a normal user (through an unprivileged user namespace),
and is what Flatpak and Anthropic's sandbox runtime trust; on Ubuntu 24.04, where AppArmor
refuses user namespaces to ordinary programs, it is the program the distribution's profile
allows. Our own code would need the same care and get less review.

The worker runs in new user, mount, PID, network, IPC, UTS and (where possible) cgroup
namespaces, as uid/gid 65534 without capabilities, in its own session, killed when gymwright
dies, unable to make further user namespaces. Its root is an empty tmpfs, remounted read-only,
holding only read-only binds of what the interpreter needs: the system's shared libraries
(`/usr/lib*` and the `/lib*` links), Python's prefixes, the folders on `sys.path`, and
gymwright's own package folder. There is no `/proc` and no `/sys` (nothing of the host's
processes is visible; a PID namespace shows none of them anyway), `/dev` holds only the
standard null, zero, random and tty nodes, and there is no network but a loopback that is down.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

FLAGS = ("--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
         "--unshare-cgroup-try", "--disable-userns", "--die-with-parent", "--new-session",
         "--cap-drop", "ALL", "--uid", "65534", "--gid", "65534")
SYSTEM_LIBS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32", "/usr/local/lib")
TOP_LINKS = ("/lib", "/lib64", "/lib32", "/libx32")
PROBE_S = 20.0


def bwrap() -> str | None:
    """The bubblewrap program, if installed."""
    return shutil.which("bwrap") or next((p for p in ("/usr/bin/bwrap", "/bin/bwrap") if os.access(p, os.X_OK)),
                                         None)


def roots() -> list[str]:
    """What the worker's interpreter reads: Python's prefixes and library folders, the site
    folders, and gymwright's own package folder. Never the parent's `sys.path`, which may hold
    the current directory (the user's project)."""
    import site
    import sysconfig

    import gymwright

    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             str(Path(gymwright.__file__).resolve().parent), os.path.dirname(os.path.realpath(sys.executable))}
    found.update(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib"))
    found.update(site.getsitepackages())
    out: set[str] = set()
    for path in found:
        if path and os.path.exists(path):
            out.add(os.path.abspath(path))
            out.add(os.path.realpath(path))  # a link's target must be there too
    return _outermost(out)


def python() -> str:
    """The interpreter to run, as a path that exists inside the namespaces too (`sys.executable`
    may be `tests/../.venv/bin/python`, through a folder that is not bound)."""
    return os.path.abspath(sys.executable)


def _outermost(paths: set[str]) -> list[str]:
    """Drop the paths that lie inside another one of the set."""
    keep: list[str] = []
    for p in sorted(paths, key=len):
        if not any(p == k or p.startswith(k.rstrip("/") + "/") for k in keep):
            keep.append(p)
    return keep


def _system() -> list[str]:
    args: list[str] = []
    for path in SYSTEM_LIBS:
        if os.path.isdir(path) and not os.path.islink(path):
            args += ["--ro-bind", path, path]
    for path in TOP_LINKS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def command(program: str, argv: list[str], extra_roots: list[str] | None = None) -> list[str]:
    """The bwrap command line that runs `argv` inside the namespaces."""
    binds: list[str] = []
    for root in _outermost(set(roots()) | set(extra_roots or [])):
        if root != "/":
            binds += ["--ro-bind", root, root]
    return [program, *FLAGS, "--tmpfs", "/", *_system(), *binds, "--dev", "/dev",
            "--remount-ro", "/", "--chdir", "/", "--", *argv]


@functools.cache
def usable() -> tuple[bool, str]:
    """Whether bubblewrap can make the worker's namespaces here, and if not, why (its own words)."""
    program = bwrap()
    if program is None:
        return False, "bubblewrap (`bwrap`) is not installed"
    probe = command(program, [python(), "-I", "-S", "-c", "pass"])
    try:
        done = subprocess.run(probe, capture_output=True, timeout=PROBE_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"bubblewrap could not run: {e}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return False, f"bubblewrap refused: {said[-1][:200] if said else f'exit status {done.returncode}'}"
    return True, ""


__all__ = ["bwrap", "command", "python", "roots", "usable"]
