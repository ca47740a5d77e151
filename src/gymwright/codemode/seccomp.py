"""A seccomp filter for the sandbox worker, written as classic BPF and installed with ctypes.

The worker installs it on itself once its imports are loaded and before it reads any model
code; a filter cannot be removed, and `no_new_privs` (set first, as the kernel requires) keeps
it across everything that follows. It refuses (EPERM) what an environment never needs:

- debugging other processes: `ptrace`, `process_vm_readv`/`writev`, `kcmp`, `pidfd_getfd`;
- new processes and programs: `fork`, `vfork`, `clone` without `CLONE_THREAD`, `clone3`
  (ENOSYS, so the C library falls back to `clone` for a thread), `execve`, `execveat`;
- the network and local sockets: `socket` and `socketpair` of every family (the worker talks
  to its parent over two inherited pipes, never a socket), `io_uring_*` (which would bypass it);
- signals to anyone but itself: `kill` and `prlimit64` only for its own pid or 0, `tkill`,
  `tgkill`, `rt_sigqueueinfo`, `rt_tgsigqueueinfo` only for its own pid, `pidfd_*` not at all;
- changes to files' metadata, which Landlock does not govern: `chmod`, `chown`, `utime*` and
  `*xattr` writes in every form;
- the kernel's own state: `mount` and the new mount API, `pivot_root`, `chroot`, `unshare`,
  `setns`, `bpf`, `perf_event_open`, `userfaultfd`, keyrings, modules, `kexec`, `reboot`,
  swap, clocks, host names, `iopl`/`ioperm`, `personality`, `quotactl`, file handles.

Everything else is allowed. A call from another ABI than the table's (x32, or a 32-bit call
on x86-64) kills the process. Tables exist for x86-64 (tested) and aarch64 (not tested here);
on any other machine `available()` is False and the sandbox says so.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from dataclasses import dataclass

PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
CLONE_THREAD = 0x00010000
X32_SYSCALL_BIT = 0x40000000
# classic BPF opcodes
LD_ABS_W, JEQ, JGE, JSET, JA, RET = 0x20, 0x15, 0x35, 0x45, 0x05, 0x06
OFFSET_NR, OFFSET_ARCH = 0, 4


def arg_offset(i: int) -> int:
    """Offset of the low 32 bits of argument `i` in `struct seccomp_data` (little-endian)."""
    return 16 + 8 * i


@dataclass(frozen=True)
class Table:
    arch: int  # AUDIT_ARCH_*
    seccomp: int  # the seccomp syscall's own number
    refused: dict[str, int]
    checked: dict[str, int]  # allowed only with the arguments `Filter` checks
    x32: bool = False


# Refused outright, on both tables (the names are the kernel's).
REFUSED = ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "pidfd_open",
           "pidfd_send_signal", "fork", "vfork", "execve", "execveat", "socket", "socketpair",
           "io_uring_setup", "io_uring_enter", "io_uring_register", "mount", "umount2", "pivot_root",
           "chroot", "unshare", "setns", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount",
           "fspick", "mount_setattr", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key",
           "request_key", "init_module", "finit_module", "delete_module", "kexec_load",
           "kexec_file_load", "reboot", "swapon", "swapoff", "acct", "settimeofday", "clock_settime",
           "sethostname", "setdomainname", "iopl", "ioperm", "personality", "quotactl",
           "name_to_handle_at", "open_by_handle_at", "lookup_dcookie",
           "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes",
           "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
           "fremovexattr", "setxattrat", "removexattrat")
CHECKED = ("clone", "clone3", "kill", "prlimit64", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")

X86_64 = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "pidfd_getfd": 438,
    "pidfd_open": 434, "pidfd_send_signal": 424, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322,
    "socket": 41, "socketpair": 53, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250,
    "add_key": 248, "request_key": 249, "init_module": 175, "finit_module": 313, "delete_module": 176,
    "kexec_load": 246, "kexec_file_load": 320, "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163,
    "settimeofday": 164, "clock_settime": 227, "sethostname": 170, "setdomainname": 171, "iopl": 172,
    "ioperm": 173, "personality": 135, "quotactl": 179, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "lookup_dcookie": 212, "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "chown": 92,
    "fchown": 93, "lchown": 94, "fchownat": 260, "utime": 132, "utimes": 235, "futimesat": 261, "utimensat": 280,
    "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198,
    "fremovexattr": 199, "setxattrat": 463, "removexattrat": 466,
    "clone": 56, "clone3": 435, "kill": 62, "prlimit64": 302, "tkill": 200, "tgkill": 234,
    "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
}
AARCH64 = {  # the generic table: no fork, vfork, iopl, ioperm
    "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272, "pidfd_getfd": 438,
    "pidfd_open": 434, "pidfd_send_signal": 424, "execve": 221, "execveat": 281, "socket": 198,
    "socketpair": 199, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "mount": 40,
    "umount2": 39, "pivot_root": 41, "chroot": 51, "unshare": 97, "setns": 268, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
    "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219, "add_key": 217, "request_key": 218,
    "init_module": 105, "finit_module": 273, "delete_module": 106, "kexec_load": 104, "kexec_file_load": 294,
    "reboot": 142, "swapon": 224, "swapoff": 225, "acct": 89, "settimeofday": 170, "clock_settime": 112,
    "sethostname": 161, "setdomainname": 162, "personality": 92, "quotactl": 60, "name_to_handle_at": 264,
    "open_by_handle_at": 265, "lookup_dcookie": 18, "fchmod": 52, "fchmodat": 53, "fchmodat2": 452,
    "fchown": 55, "fchownat": 54, "utimensat": 88, "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7,
    "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16, "setxattrat": 463, "removexattrat": 466,
    "clone": 220, "clone3": 435, "kill": 129, "prlimit64": 261, "tkill": 130, "tgkill": 131,
    "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240,
}


def _table(numbers: dict[str, int], arch: int, seccomp: int, x32: bool) -> Table:
    return Table(arch, seccomp, {n: numbers[n] for n in REFUSED if n in numbers},
                 {n: numbers[n] for n in CHECKED}, x32)


TABLES = {"x86_64": _table(X86_64, 0xC000003E, 317, True), "aarch64": _table(AARCH64, 0xC00000B7, 277, False)}


def table() -> Table | None:
    """The table of this machine's architecture (None where there is none)."""
    return TABLES.get(platform.machine().lower())


class Program:
    """A tiny assembler: instructions with symbolic jump targets, resolved at `assemble`."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int | str, int | str, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((LD_ABS_W, 0, 0, offset))

    def jump(self, op: int, k: int, true: int | str = 0, false: int | str = 0) -> None:
        self.code.append((op, true, false, k))

    def ret(self, value: int) -> None:
        self.code.append((RET, 0, 0, value))

    def assemble(self) -> bytes:
        out = bytearray()
        for i, (op, true, false, k) in enumerate(self.code):
            jt, jf = (self.labels[t] - i - 1 if isinstance(t, str) else t for t in (true, false))
            if op == JA:
                k, jt, jf = jt, 0, 0
            if not (0 <= jt < 256 and 0 <= jf < 256):
                raise ValueError(f"a jump at instruction {i} is out of reach")
            out += struct.pack("=HBBI", op, jt, jf, k & 0xFFFFFFFF)
        return bytes(out)


def build(t: Table, pid: int) -> bytes:
    """The filter for a process whose own pid (as it sees it) is `pid`."""
    p = Program()
    p.load(OFFSET_ARCH)
    p.jump(JEQ, t.arch, 0, "kill")
    p.load(OFFSET_NR)
    if t.x32:
        p.jump(JGE, X32_SYSCALL_BIT, "kill", 0)
    for nr in t.refused.values():
        p.jump(JEQ, nr, "deny", 0)
    c = t.checked
    p.jump(JEQ, c["clone"], "clone", 0)
    p.jump(JEQ, c["clone3"], "nosys", 0)
    for name in ("kill", "prlimit64"):
        p.jump(JEQ, c[name], "self_or_zero", 0)
    for name in ("tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        p.jump(JEQ, c[name], "self", 0)
    p.ret(RET_ALLOW)
    p.label("clone")  # a thread shares the process: allowed; a new process is not
    p.load(arg_offset(0))
    p.jump(JSET, CLONE_THREAD, "allow", "deny")
    p.label("self_or_zero")
    p.load(arg_offset(0))
    p.jump(JEQ, 0, "allow", 0)
    p.label("self")
    p.load(arg_offset(0))
    p.jump(JEQ, pid, "allow", "deny")
    p.label("allow")
    p.ret(RET_ALLOW)
    p.label("deny")
    p.ret(RET_ERRNO | errno.EPERM)
    p.label("nosys")
    p.ret(RET_ERRNO | errno.ENOSYS)
    p.label("kill")
    p.ret(RET_KILL_PROCESS)
    return p.assemble()


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def available() -> bool:
    """Whether this machine has a table and its kernel seccomp filters (`/proc` permitting)."""
    if table() is None:
        return False
    try:
        with open("/proc/self/status") as f:
            return any(line.startswith("Seccomp:") for line in f)
    except OSError:
        return True  # no /proc to ask (inside the namespaces): installing will tell


def install() -> None:
    """Install the filter on this process, all its threads included; raises OSError where the
    kernel refuses (the worker then reports the layer missing and the parent refuses to go on)."""
    t = table()
    if t is None:
        raise OSError(errno.ENOSYS, f"no seccomp table for {platform.machine()}")
    load(build(t, os.getpid()), t.seccomp)


def load(code: bytes, seccomp_nr: int) -> None:
    """Install the assembled filter `code` (after `no_new_privs`, as the kernel requires)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    buf = ctypes.create_string_buffer(code, len(code))
    prog = SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.syscall(seccomp_nr, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, ctypes.byref(prog)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp(SET_MODE_FILTER) failed: {os.strerror(err)}")


__all__ = ["Program", "available", "build", "install", "load", "table"]
