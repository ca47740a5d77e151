"""The Ray an RLlib run uses: a local one on loopback, or a cluster joined by `--ray-address`.

Ray (2.60 measured) listens on loopback only where the node's address is 127.0.0.1: `gcs_server`,
the raylet's node and object managers, every worker's core-worker server and the runtime-env agent
compare the node address with 127.0.0.1 (as do the dashboard and metrics agents of `ray[default]`)
and listen on every interface otherwise. But on Linux Ray replaces 127.0.0.1 by the machine's
network address wherever it reads it (`ray.init(_node_ip_address=...)`, a head's address,
`ray start --node-ip-address`), unless its single-machine mode is on (`ENABLE_RAY_CLUSTER` false,
its default on Windows and macOS; `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` in the environment before
Ray is imported). So a local Ray starts, and a head on loopback is joined, in that mode, and the
node's address is checked afterwards: a Ray that did not keep 127.0.0.1 is shut down and refused.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from gymwright.errors import GymwrightError

LOOPBACK = "127.0.0.1"
OPTION = "--ray-address"
LOCAL = (None, "local")
"""addresses that mean a Ray of this process's own, on loopback"""
SINGLE_MACHINE_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
FORMS = ("`HOST:PORT` of the head's GCS (`ray start --head` prints it; port 6379 by default), "
         "`auto` (the cluster `ray start` started last on this machine, or $RAY_ADDRESS), "
         "`ray://HOST:PORT` (Ray Client), or nothing for a local Ray on loopback")
LOOPBACK_HEAD = f"{SINGLE_MACHINE_ENV}=0 RAY_AUTH_MODE=token ray start --head --node-ip-address {LOOPBACK} --port 6379"
"""a head on this machine that listens on loopback only, with Ray's token authentication"""
TOKEN_HINT = ("set RAY_AUTH_MODE=token and give the cluster's token: ~/.ray/auth_token (where "
              "`ray get-auth-token` reads it), RAY_AUTH_TOKEN_PATH=FILE or RAY_AUTH_TOKEN")


def host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a `HOST:PORT` or `[IPv6]:PORT` address; None for `auto` and `ray://...`;
    `GymwrightError` naming --ray-address for anything else."""
    if address == "auto" or address.startswith("ray://"):
        return None
    host, sep, port = address.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or any(c.isspace() or c in "/[]@" for c in host) or "://" in address:
        raise GymwrightError(f"{address!r} is not a Ray cluster address", path=OPTION, value=address,
                             hint=f"give {FORMS}")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise GymwrightError(f"the port of {address!r} is not a port number (1 to 65535)", path=OPTION,
                             value=address, hint=f"give {FORMS}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an IP address) is this machine's loopback."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_reachable(address: str, host: str, port: int, timeout: float = 5.0) -> None:
    """Fail fast (instead of Ray's long retry loop) when the head does not answer."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as e:
        raise GymwrightError(
            f"cannot reach the Ray cluster at {address!r} ({e})", path=OPTION, value=address,
            hint="check the head node's address and port (`ray start --head` prints it), or omit "
            f"{OPTION} to train on a local Ray") from e


@contextmanager
def single_machine() -> Iterator[None]:
    """Ray's single-machine mode while `ray.init` runs, so that 127.0.0.1 stays 127.0.0.1.

    `ENABLE_RAY_CLUSTER` is private, and Ray reads it at each address it resolves; it is the one
    switch Ray has (the environment variable counts only before Ray is imported). Where a Ray has
    no such switch, setting it is harmless and `ensure_loopback` refuses the node it started."""
    from ray._private import ray_constants

    saved = ray_constants.__dict__.get("ENABLE_RAY_CLUSTER", True)
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved


def ensure_loopback(ray: Any) -> None:
    """Refuse (shutting it down) a local Ray whose node did not keep 127.0.0.1: its servers would
    listen on every interface."""
    node = ray.util.get_node_ip_address()
    if node == LOOPBACK:
        return
    ray.shutdown()
    raise GymwrightError(
        f"the local Ray got the node address {node} instead of {LOOPBACK}, so its servers would listen "
        f"on every interface (this Ray, {ray.__version__}, ignored its single-machine mode); refused",
        path=OPTION,
        hint=f"start a head on loopback yourself (`{LOOPBACK_HEAD}`) and pass {OPTION} {LOOPBACK}:6379, "
        "or install the Ray that gymwright was tested with (docs/interop.md, 'Keeping Ray private')")


def _refused_token(error: BaseException) -> bool:
    """Whether a connection failure was the cluster refusing this process's token: Ray raises an
    `AuthenticationError`, or quotes one in a `RuntimeError`'s text ("InvalidAuthToken")."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if type(cause).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(cause):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def join(ray: Any, address: str) -> None:
    """Connect to the cluster at `address`. A head on loopback (or `auto`, which may find one) is
    joined in Ray's single-machine mode, so that 127.0.0.1 is not replaced by the machine's
    network address; any other as Ray does. A head given as 127.0.0.1 that registered another
    address (started without that mode) is joined with a warning: it listens beyond loopback, as
    its owner started it."""
    where = host_port(address)
    if where is not None:
        check_reachable(address, *where)
    loopback = where is not None and is_loopback(where[0])
    try:
        with single_machine() if loopback or address == "auto" else nullcontext():
            ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    except Exception as e:  # Ray raises ConnectionError, RuntimeError, ... depending on the path
        if _refused_token(e):
            raise GymwrightError(
                f"the Ray cluster at {address!r} runs Ray's token authentication and refused this "
                f"process's token (none, or another cluster's; RAY_AUTH_MODE here: "
                f"{os.environ.get('RAY_AUTH_MODE', 'unset')})", path=OPTION, value=address, hint=TOKEN_HINT) from e
        raise GymwrightError(
            f"cannot connect to the Ray cluster at {address!r}: {e}", path=OPTION, value=address,
            hint="check that it is the address of a head's GCS (`ray start --head` prints it) and that the "
            f"cluster runs this machine's Ray and Python versions, or omit {OPTION} to train on a local Ray") from e
    node = ray.util.get_node_ip_address()
    if loopback and node != LOOPBACK:
        warnings.warn(f"{OPTION} {address}: that head registered its node as {node}, so the cluster "
                      f"listens on every interface, not on loopback only; for a private head: `{LOOPBACK_HEAD}`",
                      stacklevel=2)


def start_local(ray: Any, num_cpus: int) -> None:
    """A local Ray on loopback (without its dashboard), refused if Ray did not keep 127.0.0.1."""
    with single_machine():
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, _node_ip_address=LOOPBACK,
                 log_to_driver=False, configure_logging=False)
    ensure_loopback(ray)


def start_ray(ray: Any, address: str | None, num_cpus: int) -> bool:
    """Start or join Ray; return whether this call did it (and so must shut it down)."""
    if ray.is_initialized():
        return False
    if address is None or address == "local":
        start_local(ray, num_cpus)
    else:
        join(ray, address)
    return True


@contextmanager
def ray_session(address: str | None = None, num_cpus: int = 2) -> Iterator[None]:
    """Ray for several runs (a curriculum's stages): started or joined once, shut down after, if
    this call started it. `train_rllib` inside uses it and leaves it running."""
    from gymwright.train.rllib import _ray_classes

    ray = _ray_classes()["ray"]
    started = start_ray(ray, address, num_cpus)
    try:
        yield
    finally:
        if started:
            ray.shutdown()


__all__ = ["LOOPBACK", "host_port", "is_loopback", "ray_session", "start_ray"]
