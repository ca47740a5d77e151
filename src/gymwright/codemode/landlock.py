"""Landlock rules for the sandbox worker: read-only access to the interpreter's own files and
nothing else, no TCP, no signals or abstract unix sockets beyond its own domain.

Landlock (Linux 5.13+) is an unprivileged access-control layer a process puts on itself; it
cannot be lifted afterwards. The worker builds the ruleset from its allowed roots (the
interpreter's prefixes and the folders of the packages it loaded) before it reads any model
code; everything the running kernel's ABI knows is handled, and only `READ_FILE` and
`READ_DIR` are granted, beneath those roots. With ABI 4+ TCP `bind` and `connect` are
refused; with ABI 6+ the worker may neither signal nor reach an abstract unix socket of any
process outside its own Landlock domain. A Landlocked process may not `ptrace` (so neither read
nor write `/proc/PID/mem`) of a process outside its domain.
"""

from __future__ import annotations

import ctypes
import os
import struct

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same on x86-64 and aarch64
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
READ_FILE, READ_DIR = 1 << 2, 1 << 3
# every filesystem right each ABI knows (v1: 13 rights, v2: REFER, v3: TRUNCATE, v5: IOCTL_DEV)
FS_RIGHTS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi() -> int:
    """The Landlock ABI the running kernel offers (0: none, or turned off)."""
    try:
        version = _libc().syscall(CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def _check(value: int, what: str) -> int:
    if value < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock {what} failed: {os.strerror(err)}")
    return value


def ruleset(version: int) -> bytes:
    """`struct landlock_ruleset_attr` for `version`: all rights handled, as far as it knows."""
    fs = FS_RIGHTS.get(version, FS_RIGHTS[5])
    if version < 4:
        return struct.pack("=Q", fs)
    net = NET_BIND_TCP | NET_CONNECT_TCP
    if version < 6:
        return struct.pack("=QQ", fs, net)
    return struct.pack("=QQQ", fs, net, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)


def restrict(roots: list[str]) -> dict[str, object]:
    """Confine this process (it must be its only thread) to reading beneath `roots`. Returns
    what holds; raises OSError where the kernel refuses."""
    version = abi()
    if version < 1:
        raise OSError(38, "the kernel offers no Landlock (Linux 5.13+ with landlock among its LSMs)")
    libc = _libc()
    attr = ruleset(version)
    fd = _check(libc.syscall(CREATE_RULESET, attr, len(attr), 0), "create_ruleset")
    try:
        for root in roots:
            try:
                parent = os.open(root, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a root that does not exist needs no rule
            try:
                rights = READ_FILE | (READ_DIR if os.path.isdir(root) else 0)
                rule = struct.pack("=Qi", rights, parent)
                _check(libc.syscall(ADD_RULE, fd, RULE_PATH_BENEATH, rule, 0), f"add_rule({root})")
            finally:
                os.close(parent)
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
        _check(libc.syscall(RESTRICT_SELF, fd, 0), "restrict_self")
    finally:
        os.close(fd)
    return {"abi": version, "files": "read-only beneath the interpreter's own folders",
            "tcp": "refused" if version >= 4 else "not handled by this ABI",
            "signals_and_abstract_sockets": "own domain only" if version >= 6 else "not handled by this ABI"}


__all__ = ["abi", "restrict"]
