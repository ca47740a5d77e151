"""What the kernel confines a sandbox worker with, and the refusal to run model code without it.

Code mode needs two kernel layers before it runs a line a model wrote:

- **a seccomp filter** (`codemode.seccomp`), always; and
- **a confinement of the filesystem and of other processes**: namespaces made by bubblewrap
  (`codemode.namespaces`: own user, mount, PID, network and IPC namespaces, a read-only root
  holding only the interpreter's files), or, where those are not to be had, Landlock
  (`codemode.landlock`: reads beneath the interpreter's files only, no TCP, no signals out).

Both are the kernel's, and need no cooperation from Python: the audit hook and the restricted
builtins (`codemode.guard`) stay on top as tripwires that report what the code tried.

Where the kernel gives neither confinement, or no seccomp, code mode refuses to start a worker
and says what is missing and how to get it (`IsolationError`). Running anyway takes the
environment variable `GYMWRIGHT_UNCONFINED_MODEL_CODE=yes-run-model-code-unconfined`; the
worker's layers then say `unconfined: true`, which every report and stored attempt records,
and a warning goes to stderr each time such a worker starts.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass

from gymwright.codemode import landlock, namespaces, seccomp
from gymwright.errors import GymwrightError

OPT_IN = "GYMWRIGHT_UNCONFINED_MODEL_CODE"
OPT_IN_VALUE = "yes-run-model-code-unconfined"
HOW_TO = {
    "namespaces": "install bubblewrap (Debian/Ubuntu: `apt install bubblewrap`; Fedora: `dnf install "
                  "bubblewrap`) and allow unprivileged user namespaces (`sysctl kernel.unprivileged_userns_clone=1` "
                  "on Debian's older kernels; on Ubuntu 24.04 the bubblewrap package's AppArmor profile allows it)",
    "landlock": "or run a kernel with Landlock enabled (Linux 5.13+, `lsm=...,landlock` on the kernel command line)",
    "seccomp": "run a Linux kernel with seccomp filters (CONFIG_SECCOMP_FILTER) on x86-64 or aarch64",
}


class IsolationError(GymwrightError):
    """The kernel does not give the isolation code mode needs, so no model code runs."""


@dataclass(frozen=True)
class Kernel:
    """What this machine's kernel gives a worker (probed once per process)."""

    namespaces: bool
    namespaces_why: str  # why not, in bubblewrap's or our words
    landlock: int  # the Landlock ABI, 0 for none
    seccomp: bool


@functools.cache
def kernel() -> Kernel:
    usable, why = namespaces.usable()
    return Kernel(usable, why, landlock.abi(), seccomp.available())


@dataclass(frozen=True)
class Plan:
    """The kernel layers one worker gets."""

    namespaces: bool
    landlock: bool
    seccomp: bool
    unconfined: bool  # started without them, on the user's explicit opt-in

    @property
    def confined(self) -> bool:
        return self.seccomp and (self.namespaces or self.landlock)


def opted_in() -> bool:
    return os.environ.get(OPT_IN, "") == OPT_IN_VALUE


def missing(k: Kernel) -> list[str]:
    """What the kernel lacks for a confined worker, each with how to get it."""
    out = []
    if not k.namespaces and k.landlock < 1:
        out.append(f"namespaces ({k.namespaces_why}): {HOW_TO['namespaces']}, {HOW_TO['landlock']}")
    if not k.seccomp:
        out.append(f"a seccomp filter: {HOW_TO['seccomp']}")
    return out


def plan(want_namespaces: bool, want_landlock: bool, want_seccomp: bool, require: bool) -> Plan:
    """The layers to arm, from what is asked for and what the kernel gives; raises
    IsolationError when `require` holds and the result would not be confined."""
    k = kernel()
    chosen = Plan(want_namespaces and k.namespaces, want_landlock and k.landlock >= 1,
                  want_seccomp and k.seccomp, unconfined=False)
    if chosen.confined or not require:
        return chosen
    if not opted_in():
        lacking = missing(k) or ["layers switched off by the caller"]
        raise IsolationError(
            "code mode refuses to run code a model wrote: this machine's kernel does not give the isolation it "
            "needs. Missing: " + "; ".join(lacking),
            hint=f"get what is missing (above); to run model code without it, knowing that it can then read and "
                 f"change your files and reach your network, set {OPT_IN}={OPT_IN_VALUE} (reports record it)")
    print(f"gymwright: WARNING: running model code UNCONFINED ({OPT_IN} is set): it can read and change your "
          "files, reach your network and signal your processes", file=sys.stderr)
    return Plan(chosen.namespaces, chosen.landlock, chosen.seccomp, unconfined=True)


__all__ = ["OPT_IN", "OPT_IN_VALUE", "IsolationError", "Kernel", "Plan", "kernel", "missing", "plan"]
