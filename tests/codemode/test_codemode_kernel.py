"""Code mode's sandbox holds for every user, enforced by the kernel, and fails closed (issue 39).

The hostile battery (`tests/support/kernel_battery.py`, 87 attacks) runs:
- in the default suite: a spread of its cases under the default layers, as whoever runs the tests;
- as `slow`: every case under four configurations (all layers; the kernel's layers alone, the
  audit hook and restricted builtins off; each with namespaces and with Landlock instead), as
  root and as a normal user made for the test (CI runs as root), judged from outside.
Then: with the kernel's isolation refused (a seccomp filter on the test's own process makes
the kernel refuse user namespaces and Landlock), code mode refuses to run model code, and runs
it only on the explicit opt-in, which the layers record.
"""

from __future__ import annotations

import json
import os
import platform
import pwd
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gymwright.codemode import isolation
from gymwright.codemode.namespaces import python, roots
from gymwright.codemode.sandbox import Layers, Sandbox
from tests.support import kernel_battery as battery
from tests.support.paths import DOCS, MEET_ON_A_LINE

HERE = Path(__file__).resolve().parent
BATTERY = Path(battery.__file__).resolve()
ROOT = os.geteuid() == 0
USER = "gwbattery"
KERNEL = isolation.kernel()
# one case of each kind for the default suite; the slow tests run all of them
SPREAD = ["hook tables emptied by setattr, realpath replaced, then a secret read", "refusal reporter cleared, then a socket",
          "read the parent's environment in /proc", "create a file in the home folder",
          "connect to a unix socket file", "exec a shell", "kill a process of the same user",
          "ptrace a process of the same user", "CPU limit raised, then an endless loop"]


def test_the_battery_has_at_least_sixty_cases_and_the_spread_is_in_it() -> None:
    assert len(battery.CASES) >= 60 and set(SPREAD) <= set(battery.CASES)


@pytest.fixture(scope="module")
def scene() -> Iterator[battery.Scene]:
    made = battery.Scene.make()
    yield made
    made.close()


@pytest.mark.parametrize("name", SPREAD)
def test_each_attack_is_contained_with_a_clear_error(scene: battery.Scene, name: str) -> None:
    outcome = battery.run_case(scene, name, Layers())
    assert outcome.contained, outcome
    assert outcome.layers["seccomp"]["armed"] and not outcome.layers["unconfined"]


# ------------------------------------------------------------------ every case, every configuration, two users
def ensure_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", USER], check=True)
        return pwd.getpwnam(USER)


def closed_ancestors(paths: list[str]) -> list[str]:
    """The outermost folders above `paths` that others may not enter (`/root`, a clone in a
    `mktemp -d` folder): a normal user could not reach the interpreter or the tests through them."""
    found: set[str] = set()
    for path in paths:
        for folder in reversed(Path(path).parents):
            if str(folder) != "/" and not folder.stat().st_mode & 0o001:
                found.add(str(folder))
                break
    return sorted(f for f in found if not any(f.startswith(g + "/") for g in found))


def as_user(argv: list[str]) -> list[str]:
    """`argv` run as the test's normal user. Where the interpreter or the tests lie under a folder
    that user may not enter (`/root/.pyenv` here), a private mount namespace puts a world-readable
    tmpfs on that folder with only what is needed bound back: the host's folders are unchanged."""
    user = ensure_user()
    needed = [*roots(), str(BATTERY.parent)]
    lines = ["set -e"]
    for closed in closed_ancestors(needed):
        lines += ['keep=$(mktemp -d)', f'mount --bind {shlex.quote(closed)} "$keep"',
                  f"mount -t tmpfs -o mode=0755 tmpfs {shlex.quote(closed)}"]
        for path in needed:
            if path.startswith(closed + "/"):
                rel = shlex.quote(path[len(closed) + 1:])
                lines += [f"mkdir -p {shlex.quote(closed)}/{rel}", f'mount --bind "$keep"/{rel} {shlex.quote(closed)}/{rel}']
        lines += ['umount -l "$keep"']
    env = "env -i PATH=/usr/bin:/bin HOME=/tmp OMP_NUM_THREADS=1 LC_ALL=C.UTF-8"
    lines.append(f"exec setpriv --reuid={user.pw_uid} --regid={user.pw_gid} --clear-groups -- {env} "
                 + " ".join(shlex.quote(a) for a in argv))
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(lines)]


def run_battery(config: str, normal_user: bool) -> list[battery.Outcome]:
    argv = [python(), str(BATTERY), config]
    cmd = as_user(argv) if normal_user else argv
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, cwd="/tmp",
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return [battery.Outcome(**json.loads(line)) for line in done.stdout.splitlines() if line.startswith("{")]


USERS = [pytest.param(False, id="as-root" if ROOT else "as-this-user"),
         pytest.param(True, id="as-a-normal-user", marks=pytest.mark.skipif(not ROOT, reason="making a user needs root"))]


@pytest.mark.slow
@pytest.mark.parametrize("normal_user", USERS)
@pytest.mark.parametrize("config", list(battery.CONFIGS))
def test_the_whole_battery_is_contained(config: str, normal_user: bool) -> None:
    if "landlock" not in config and not KERNEL.namespaces:
        pytest.skip(f"no namespaces here: {KERNEL.namespaces_why}")
    if "landlock" in config and KERNEL.landlock < 1:
        pytest.skip("no Landlock here")
    outcomes = run_battery(config, normal_user)
    assert len(outcomes) == len(battery.CASES)
    loose = [o for o in outcomes if not o.contained]
    assert not loose, loose
    for o in outcomes:
        layers = o.layers
        assert layers["namespaces"] is ("landlock" not in config) and layers["seccomp"]["armed"], o
        assert layers["audit_hook"] is ("kernel-only" not in config)
        if "landlock" in config:  # as root it drops to nobody; a normal user's worker is unmapped (so
            # nobody) in the user namespace its network namespace needs, where the kernel gives one
            uid = pwd.getpwnam(USER).pw_uid if normal_user else os.getuid()
            unmapped = (ROOT and not normal_user) or layers["own_network_namespace"]
            assert layers["landlock"]["armed"] and layers["user"] == ("nobody" if unmapped else f"uid {uid}"), o


# ------------------------------------------------------------------ fail closed
REFUSE_ISOLATION = """
import errno, sys
from gymwright.codemode import seccomp as s
p = s.Program()
p.load(s.OFFSET_NR)
p.jump(s.JEQ, 272, "eperm", 0)      # unshare
p.jump(s.JEQ, 444, "nosys", 0)      # landlock_create_ruleset: as a kernel without Landlock
p.jump(s.JEQ, 435, "nosys", 0)      # clone3
p.jump(s.JEQ, 56, "clone", 0)
p.ret(s.RET_ALLOW)
p.label("clone")
p.load(s.arg_offset(0))
p.jump(s.JSET, 0x10000000, "eperm", "allow")   # CLONE_NEWUSER: as a kernel that refuses user namespaces
p.label("allow")
p.ret(s.RET_ALLOW)
p.label("eperm")
p.ret(s.RET_ERRNO | errno.EPERM)
p.label("nosys")
p.ret(s.RET_ERRNO | errno.ENOSYS)
s.load(p.assemble(), 317)
"""
refusing_kernel = pytest.mark.skipif(platform.machine() != "x86_64", reason="the refusing filter is x86-64's")


def under_refusal(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python(), "-c", REFUSE_ISOLATION + code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1", **env}, cwd=str(HERE))


@refusing_kernel
def test_without_the_kernel_s_isolation_code_mode_refuses_to_run_model_code(tmp_path: Path) -> None:
    probe = ("from gymwright.codemode import isolation\nfrom gymwright.codemode.sandbox import Sandbox\n"
             "k = isolation.kernel()\nprint('kernel', k.namespaces, k.landlock, k.seccomp, flush=True)\n"
             "try:\n    Sandbox()\nexcept isolation.IsolationError as e:\n    print('refused:', e)\n")
    done = under_refusal(probe)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "kernel False 0 True" in done.stdout
    assert "refused: code mode refuses to run code a model wrote" in done.stdout
    assert "namespaces (bubblewrap refused" in done.stdout and "apt install bubblewrap" in done.stdout
    assert f"{isolation.OPT_IN}={isolation.OPT_IN_VALUE}" in done.stdout
    # the command line says the same, without a traceback, and writes nothing
    out = tmp_path / "env.py"
    cli = ("from gymwright.cli import app\n"
           f"app(['export', {str(MEET_ON_A_LINE)!r}, '-o', {str(out)!r}])")
    done = under_refusal(cli)
    assert done.returncode == 1 and "Traceback" not in done.stderr + done.stdout
    assert "code mode refuses to run code a model wrote" in done.stderr + done.stdout
    assert not out.exists()


@refusing_kernel
def test_the_explicit_opt_in_runs_it_unconfined_loudly_and_on_the_record() -> None:
    probe = ("from gymwright.codemode.sandbox import Sandbox\nfrom gymwright.design.coded import describe_layers\n"
             "with Sandbox() as s:\n    l = s.layers()\n"
             "print('unconfined', l['unconfined'], l['namespaces'], 'landlock' in l, l['seccomp']['armed'])\n"
             "print(describe_layers(l))\n")
    done = under_refusal(probe, **{isolation.OPT_IN: isolation.OPT_IN_VALUE})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "unconfined True False False True" in done.stdout
    # what every design attempt records of its worker (the report shows it)
    assert "UNCONFINED on the user's opt-in" in done.stdout and "no namespaces; NO Landlock; seccomp filter" in done.stdout
    assert "WARNING: running model code UNCONFINED" in done.stderr
    wrong = under_refusal(probe, **{isolation.OPT_IN: "1"})  # only the named value opts in
    assert wrong.returncode != 0 and "code mode refuses to run code a model wrote" in wrong.stderr


def test_the_default_layers_are_confined_here_and_recorded() -> None:
    """This machine (and CI's) gives the kernel layers: the default suite's sandbox is the real one."""
    from gymwright.design.coded import describe_layers

    assert KERNEL.seccomp and (KERNEL.namespaces or KERNEL.landlock >= 1), isolation.missing(KERNEL)
    assert sys.platform == "linux"
    with Sandbox() as sandbox:
        said = describe_layers(sandbox.layers())
    assert "UNCONFINED" not in said and "seccomp filter" in said and "NO " not in said, said


# ------------------------------------------------------------------ a time bomb while training
BOMB = ("self.calls = getattr(self, 'calls', 0) + 1\nif self.calls > 150:\n    while True:\n        pass\n")


@pytest.mark.slow
def test_a_time_bomb_during_training_stops_the_run_with_a_clear_error(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gymwright.cli import app

    good = MEET_ON_A_LINE.read_text()
    head = "    def step(self, actions):\n"
    module = tmp_path / "bomb.py"
    module.write_text(good.replace(head, head + "".join(f"        {line}\n" for line in BOMB.splitlines())))
    result = CliRunner().invoke(app, ["train", str(module), "--num-envs", "4", "--rollout-len", "8", "--minibatches",
                                      "2", "--epochs", "1", "--hidden", "16", "--steps", "4000",
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert str(module) in result.output and "did not return within" in result.output, result.output


def test_the_docs_quote_the_battery_as_it_is() -> None:
    text = " ".join((DOCS / "designer.md").read_text().split())
    assert f"{len(battery.CASES)} attacks written to get past vetting" in text
    assert f"{len(SPREAD)} of them in the default suite" in text
