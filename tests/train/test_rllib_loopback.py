"""The Ray that gymwright starts for an RLlib run listens on loopback only, a head on 127.0.0.1 can
be joined, and a bad `--ray-address` says what is wrong (issue 39, item 9).

The listening sockets are read from the kernel (`/proc/net/tcp`, `/proc/net/tcp6` and each
process's open sockets), for this test process and every process it started, Ray's included:
gcs_server, the raylet, the runtime-env agent, the workers, and the driver itself.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import pytest

from gymwright.errors import GymwrightError
from gymwright.train import rllib_ray
from gymwright.train.rllib_ray import host_port, is_loopback
from tests.support.paths import ROOT

PROC = Path("/proc")
needs_proc = pytest.mark.skipif(not (PROC / "net" / "tcp").exists(), reason="reads Linux's /proc/net/tcp")
RAY_WARNING = "ignore:.*Overriding environment rllib-multi-agent-env-v0"
VENV_BIN = Path(sys.executable).parent

Listener = tuple[str, str, int]
"""(process, address, port) of a listening TCP socket"""


# --------------------------------------------------------------------------- reading the kernel
def _listening_inodes() -> dict[int, tuple[str, int]]:
    """inode -> (address, port) of every listening TCP socket in this network namespace."""
    found = {}
    for name in ("tcp", "tcp6"):
        path = PROC / "net" / name
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A":  # TCP_LISTEN
                continue
            hex_address, hex_port = fields[1].split(":")
            raw = bytes.fromhex(hex_address)
            words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))  # each 32-bit word is host order
            found[int(fields[9])] = (str(ipaddress.ip_address(words)), int(hex_port, 16))
    return found


def _process_tree(root: int) -> set[int]:
    """`root` and every process descended from it."""
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo += children.get(pid, [])
    return tree


def _name(pid: int) -> str:
    try:
        argv = (PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return f"pid {pid}"
    first = argv[0].decode(errors="replace")
    return first if first.startswith("ray::") else Path(first).name


def listeners(root: int) -> set[Listener]:
    """Every listening TCP socket held by `root` or a process it started."""
    listening = _listening_inodes()
    found = set()
    for pid in _process_tree(root):
        try:
            fds = list((PROC / str(pid) / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:[") and int(target[8:-1]) in listening:
                found.add((_name(pid), *listening[int(target[8:-1])]))
    return found


def beyond_loopback(found: set[Listener]) -> set[Listener]:
    """The sockets reachable from another machine: any address but 127.0.0.0/8 and ::1
    (an IPv4-mapped ::ffff:127.x is loopback; :: and 0.0.0.0 are every interface)."""
    def loopback(address: str) -> bool:
        ip = ipaddress.ip_address(address)
        mapped = getattr(ip, "ipv4_mapped", None)
        return (mapped or ip).is_loopback

    return {s for s in found if not loopback(s[1])}


@contextmanager
def watching(root: int, every: float = 0.2) -> Iterator[set[Listener]]:
    """Collect the listening sockets of `root`'s process tree all along the block."""
    seen: set[Listener] = set()
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            seen.update(listeners(root))
            stop.wait(every)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join()
        seen.update(listeners(root))


def _shut_down_ray() -> None:
    import ray

    if ray.is_initialized():  # left by another test: this test measures a Ray that gymwright starts
        ray.shutdown()


# --------------------------------------------------------------------------- a local Ray
@needs_proc
@pytest.mark.filterwarnings(RAY_WARNING)
@pytest.mark.slow  # a Ray start (10-15 s); CI runs it with -m slow
def test_an_rllib_run_listens_on_loopback_only(tmp_path: Path) -> None:
    pytest.importorskip("ray.rllib")
    from gymwright.train.rllib import train_rllib

    _shut_down_ray()
    with watching(os.getpid()) as seen:  # and once more after each iteration, while Ray surely runs
        result = train_rllib("cake_negotiation", {"discount": 0.5}, steps=256, out=tmp_path, seed=0,
                             progress=lambda info: seen.update(listeners(os.getpid())))
    assert result["iterations"] >= 1
    names = {name for name, _, _ in seen}
    assert {"gcs_server", "raylet"} <= names, f"Ray's servers were not seen listening: {sorted(seen)}"
    assert beyond_loopback(seen) == set(), f"listening beyond loopback: {sorted(beyond_loopback(seen))}"


def _no_single_machine_mode() -> nullcontext[None]:
    return nullcontext()


@needs_proc
@pytest.mark.slow  # about 10 s: one Ray start, of a Ray that does not exist (the one above is the guard)
def test_a_ray_that_does_not_keep_loopback_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ray without the single-machine switch (simulated: the switch left off) puts its node on
    the machine's network address; gymwright shuts it down and says why."""
    ray = pytest.importorskip("ray")
    from ray._common.network_utils import node_ip_address_from_perspective

    if is_loopback(node_ip_address_from_perspective(None)):
        pytest.skip("this machine has no network address besides loopback: Ray has nothing to replace 127.0.0.1 with")
    _shut_down_ray()
    monkeypatch.setattr(rllib_ray, "single_machine", _no_single_machine_mode)
    with pytest.raises(GymwrightError) as info:
        with rllib_ray.ray_session():
            pass
    error = info.value
    assert error.path == "--ray-address"
    assert error.message.startswith("the local Ray got the node address ")
    assert error.message.endswith(" instead of 127.0.0.1, so its servers would listen on every interface "
                                  f"(this Ray, {ray.__version__}, ignored its single-machine mode); refused")
    assert "ray start --head --node-ip-address 127.0.0.1" in error.hint
    assert not ray.is_initialized()


# --------------------------------------------------------------------------- a head on 127.0.0.1
CLIENT = """
import json, sys
from gymwright.errors import GymwrightError
from gymwright.train.rllib import train_rllib
try:
    result = train_rllib("cake_negotiation", {"discount": 0.5}, steps=256, out=sys.argv[2], seed=0,
                         ray_address=sys.argv[1])
except GymwrightError as e:
    print(json.dumps({"error": str(e)}))
else:
    print(json.dumps({"iterations": result["iterations"]}))
"""


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


@contextmanager
def loopback_head(token: str) -> Iterator[str]:
    """`ray start --head` on 127.0.0.1 as docs/interop.md says (`LOOPBACK_HEAD`: single-machine
    mode, token authentication) on free ports, in a temp dir of its own, with the token given;
    stopped after, its process group with it."""
    port, client_port = _free_ports(2)
    temp = tempfile.mkdtemp(prefix="gw-ray-", dir="/tmp")  # short: Ray's unix sockets live under it
    words = shlex.split(rllib_ray.LOOPBACK_HEAD)
    at = words.index("ray")
    assigned = dict(w.split("=", 1) for w in words[:at])
    argv = [str(VENV_BIN / "ray"), *words[at + 1:]]
    argv[argv.index("--port") + 1] = str(port)  # not 6379: whatever else runs here keeps its ports
    argv += ["--block", "--ray-client-server-port", str(client_port), "--num-cpus", "1",
             "--include-dashboard", "false", "--disable-usage-stats", "--temp-dir", temp]
    head = subprocess.Popen(argv, env={**os.environ, **assigned, "RAY_AUTH_TOKEN": token}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        lines = []
        assert head.stdout is not None
        for line in head.stdout:
            lines.append(line)
            if "Ray runtime started" in line:
                break
        else:
            pytest.fail("`ray start --head` did not start:\n" + "".join(lines[-30:]))
        yield f"127.0.0.1:{port}"
    finally:
        head.terminate()  # `ray start --block` stops its processes on SIGTERM (about 2 s; the group's: 30 s)
        try:
            head.wait(30)
        finally:
            try:
                os.killpg(head.pid, signal.SIGKILL)  # anything of the head's still there
            except ProcessLookupError:
                pass
            shutil.rmtree(temp, ignore_errors=True)


def _client(address: str, out: Path, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    done = subprocess.run([sys.executable, "-c", CLIENT, address, str(out)], env={**clean, **env},
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@needs_proc
@pytest.mark.slow  # about 45 s: a head, a run on it from another process, a refused one, the head's stop
def test_a_run_joins_a_head_on_loopback_and_nothing_listens_beyond_it(tmp_path: Path) -> None:
    pytest.importorskip("ray.rllib")
    token = secrets.token_hex(32)
    with watching(os.getpid()) as seen, loopback_head(token) as address:
        joined = _client(address, tmp_path / "run", RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token)
        refused = _client(address, tmp_path / "refused", RAY_gcs_server_port_wait_time_s="2")
    assert joined.get("iterations", 0) >= 1, joined
    port = address.rsplit(":", 1)[1]
    assert refused["error"] == (
        f"--ray-address: the Ray cluster at '127.0.0.1:{port}' runs Ray's token authentication and refused "
        "this process's token (none, or another cluster's; RAY_AUTH_MODE here: unset)\n"
        f"  hint: {rllib_ray.TOKEN_HINT}")
    names = {name for name, _, _ in seen}
    assert {"gcs_server", "raylet"} <= names, f"the head's servers were not seen listening: {sorted(seen)}"
    assert any(name.startswith("ray::") for name in names), f"no worker of the head was seen: {sorted(seen)}"
    assert beyond_loopback(seen) == set(), f"listening beyond loopback: {sorted(beyond_loopback(seen))}"


def test_the_docs_quote_the_head_this_file_starts() -> None:
    doc = (ROOT / "docs" / "interop.md").read_text()
    assert f"\n{rllib_ray.LOOPBACK_HEAD}\n" in doc


# --------------------------------------------------------------------------- bad addresses
FORMS = rllib_ray.FORMS


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("localhost", "'localhost' is not a Ray cluster address"),
        ("http://10.0.0.5:6379", "'http://10.0.0.5:6379' is not a Ray cluster address"),
        (":6379", "':6379' is not a Ray cluster address"),
        ("my head:6379", "'my head:6379' is not a Ray cluster address"),
        ("127.0.0.1:99999", "the port of '127.0.0.1:99999' is not a port number (1 to 65535)"),
        ("127.0.0.1:port", "the port of '127.0.0.1:port' is not a port number (1 to 65535)"),
        ("127.0.0.1:", "the port of '127.0.0.1:' is not a port number (1 to 65535)"),
    ],
)
def test_a_bad_address_says_what_is_wrong_and_what_to_give(address: str, message: str) -> None:
    with pytest.raises(GymwrightError) as info:
        host_port(address)
    assert str(info.value) == f"--ray-address: {message}\n  hint: give {FORMS}"
    assert info.value.value == address


def test_addresses_ray_takes() -> None:
    assert host_port("127.0.0.1:6379") == ("127.0.0.1", 6379)
    assert host_port("[::1]:6379") == ("::1", 6379)
    assert host_port("head.example.org:6380") == ("head.example.org", 6380)
    assert host_port("auto") is None and host_port("ray://10.0.0.5:10001") is None
    assert [is_loopback(h) for h in ("127.0.0.1", "127.0.1.1", "::1", "localhost", "10.0.0.5", "head", "0.0.0.0")] == \
        [True, True, True, True, False, False, False]


def test_a_bad_address_is_refused_before_any_ray_starts(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    from gymwright.train.rllib import train_rllib

    with pytest.raises(GymwrightError, match=r"^--ray-address: 'localhost' is not a Ray cluster address"):
        train_rllib("cake_negotiation", {}, steps=64, out=tmp_path, ray_address="localhost")
    assert not ray.is_initialized()


@needs_proc
def test_the_listener_reader_sees_a_socket_on_every_interface() -> None:
    """The reader behind the tests above can fail: a socket of this process on 0.0.0.0 is beyond
    loopback, one on 127.0.0.1 is not."""
    with socket.socket() as wide, socket.socket() as narrow:
        wide.bind(("0.0.0.0", 0))
        narrow.bind(("127.0.0.1", 0))
        wide.listen()
        narrow.listen()
        mine = {s for s in listeners(os.getpid()) if s[2] in (wide.getsockname()[1], narrow.getsockname()[1])}
        assert beyond_loopback(mine) == {(_name(os.getpid()), "0.0.0.0", wide.getsockname()[1])}
        assert len(mine) == 2
