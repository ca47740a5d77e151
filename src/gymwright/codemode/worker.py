"""The sandbox worker: a separate interpreter that runs the model's environment module.

Started by `gymwright.codemode.sandbox` as `python -I -m gymwright.codemode.worker CONFIG`
(inside bubblewrap's namespaces where the kernel gives them) with resource limits and a
scrubbed environment. Before it reads any model code it loads what environments may import,
moves the protocol off fds 0/1 (both then point at /dev/null, so a `print` goes nowhere),
confines itself with Landlock, (outside the namespaces, as root) makes its empty working
directory its root and drops root, installs its seccomp filter and the audit hook, and says
which layers are armed. Then it answers requests (length-prefixed JSON,
`gymwright.codemode.wire`) one at a time, with a fresh CPU budget for each:

    load {code, class}      exec the module with restricted builtins; find the class
    make {params}           an instance (params: keyword arguments of the class): its id,
                            agents and spaces (as data)
    reset {id, seed, options} / step {id, actions} / close {id}
    reset_many / step_many  the same for many instances at once (training copies)

A failure in the model's code answers `{ok: false, error, line}` (the line in the module).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sys
import traceback
from collections.abc import Callable
from typing import Any

PRELOAD = ("numpy", "numpy.random", "numpy.linalg", "numpy.fft", "numpy.polynomial", "numpy.ma", "math", "random", "functools", "itertools",
           "dataclasses", "typing", "collections", "copy", "enum", "gymnasium", "gymnasium.spaces",
           "pettingzoo", "pettingzoo.utils", "encodings.idna", "json", "base64", "struct")
MODEL_FILE = "<model>"
LIMITS = {"cpu_s": resource.RLIMIT_CPU, "memory": resource.RLIMIT_AS, "file_size": resource.RLIMIT_FSIZE,
          "processes": resource.RLIMIT_NPROC}


def preload() -> None:
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)


def model_line(exc: BaseException) -> int | None:
    """The line of the model's module where `exc` was raised (its innermost frame there)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == MODEL_FILE]
    return frames[-1].lineno if frames else getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None


class Worker:
    def __init__(self, builtins_of_model: Any) -> None:
        self.builtins_of_model = builtins_of_model  # () -> the builtins dict the module sees
        self.env_class: Any = None
        self.envs: dict[int, Any] = {}
        self.next_id = 0

    # ------------------------------------------------------------------ requests
    def load(self, msg: dict[str, Any]) -> dict[str, Any]:
        code = compile(str(msg["code"]), MODEL_FILE, "exec")
        namespace: dict[str, Any] = {"__name__": "gymwright_model", "__builtins__": self.builtins_of_model()}
        exec(code, namespace)  # noqa: S102 - the sandbox's purpose
        name = msg.get("class")
        cls = namespace.get(name) if name else None
        if cls is None:
            from pettingzoo import ParallelEnv

            found = [v for v in namespace.values() if isinstance(v, type) and issubclass(v, ParallelEnv)
                     and v is not ParallelEnv]
            cls = found[0] if len(found) == 1 else None
        if not isinstance(cls, type):
            raise LookupError(f"the module defines no environment class {name or ''}".strip())
        self.env_class = cls
        return {}

    def make(self, msg: dict[str, Any]) -> dict[str, Any]:
        from gymwright.codemode.spaces import describe

        params = msg.get("params") or {}
        if not (isinstance(params, dict) and all(isinstance(k, str) and k.isidentifier() and isinstance(v, int | float | bool)
                                                 for k, v in params.items())):
            raise TypeError("params must map names to numbers")
        env = self.env_class(**params)
        agents = [str(a) for a in env.possible_agents]
        desc = {a: {"observation": describe(env.observation_space(a)),
                    "action": describe(env.action_space(a))} for a in agents}
        self.envs[self.next_id] = env
        self.next_id += 1
        return {"id": self.next_id - 1, "agents": agents, "spaces": desc, "text": text_hook(env)}

    def reset(self, msg: dict[str, Any]) -> dict[str, Any]:
        env = self.envs[int(msg["id"])]
        obs, infos = env.reset(seed=msg.get("seed"), options=msg.get("options"))
        return {"obs": obs, "infos": infos, "agents": list(env.agents)}

    def step(self, msg: dict[str, Any]) -> dict[str, Any]:
        env = self.envs[int(msg["id"])]
        obs, rew, term, trunc, infos = env.step(msg["actions"])
        return {"obs": obs, "rewards": rew, "terminations": term, "truncations": trunc,
                "infos": infos, "agents": list(env.agents)}

    def close(self, msg: dict[str, Any]) -> dict[str, Any]:
        env = self.envs.pop(int(msg["id"]), None)
        if env is not None and hasattr(env, "close"):
            env.close()
        return {}

    def reset_many(self, msg: dict[str, Any]) -> dict[str, Any]:
        return {"results": [self.reset({"id": i, "seed": s}) for i, s in zip(msg["ids"], msg["seeds"], strict=True)]}

    def step_many(self, msg: dict[str, Any]) -> dict[str, Any]:
        return {"results": [self.step({"id": i, "actions": a}) for i, a in zip(msg["ids"], msg["actions"], strict=True)]}

    def answer(self, msg: dict[str, Any]) -> dict[str, Any]:
        op = msg.get("op")
        handler = getattr(self, op, None) if op in OPS else None
        if handler is None:
            return {"ok": False, "error": f"unknown request {op!r}"}
        try:
            return {"ok": True, **handler(msg)}
        except (Exception, SystemExit) as e:  # noqa: BLE001 - every failure of the model's code is a finding
            first = (str(e).splitlines() or [""])[0][:300]
            return {"ok": False, "error": f"{type(e).__name__}: {first}", "line": model_line(e), "where": op}


def text_hook(env: Any) -> Any:
    """The class's `TEXT` (its text form, docs/text-games.md) as plain JSON data, or None."""
    text = getattr(type(env), "TEXT", None)
    if not isinstance(text, dict):
        return None
    try:
        return json.loads(json.dumps(text))
    except (TypeError, ValueError, RecursionError):
        return None


OPS = frozenset({"load", "make", "reset", "step", "close", "reset_many", "step_many"})


def read_exact(fd: int, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, n - got)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def send(fd: int, message: dict[str, Any]) -> None:
    from gymwright.codemode.wire import WireError, pack

    try:
        data = pack(message)
    except (WireError, ValueError, TypeError, RecursionError) as e:
        data = pack({"ok": False, "error": f"the reply cannot cross the pipe: {e}", "where": "wire"})
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def layers(config: dict[str, Any], armed: dict[str, Any]) -> dict[str, Any]:
    """What is armed, measured from inside, before any model code exists here."""
    netns = armed.pop("netns", "")
    own_netns = bool(config.get("namespaces")) or (bool(netns) and netns != config.get("parent_netns"))
    return {**armed, "restricted_builtins": bool(config.get("builtins", True)),
            "own_network_namespace": own_netns,
            "limits": {k: list(resource.getrlimit(v)) for k, v in LIMITS.items()},
            "environment": sorted(os.environ)}


def _no_hook(_event: str) -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()


def set_cpu_budget(cpu_s: int, permit: Callable[[str], Any] = _no_hook) -> None:
    """RLIMIT_CPU (soft) to the CPU seconds used so far plus `cpu_s`: each request gets `cpu_s`,
    however long the worker has lived (a long training run is many bounded requests)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if soft == resource.RLIM_INFINITY:
        return  # the rlimits layer is off
    usage = resource.getrusage(resource.RUSAGE_SELF)
    new = int(usage.ru_utime + usage.ru_stime) + 1 + cpu_s
    with permit("resource.setrlimit"):
        resource.setrlimit(resource.RLIMIT_CPU, (new if hard == resource.RLIM_INFINITY else min(new, hard), hard))


def _layer(arm_it: Callable[[], Any]) -> dict[str, Any]:
    """Arm one kernel layer: what holds, or the kernel's refusal (the parent then stops the worker)."""
    try:
        held = arm_it()
    except OSError as e:
        return {"armed": False, "error": str(e)[:300]}
    return {"armed": True, **(held if isinstance(held, dict) else {})}


def arm(config: dict[str, Any]) -> tuple[dict[str, Any], Callable[[str], Any]]:
    """The worker's own layers, in order: what it measured before each took effect; and the
    hook's `permit` for the worker's own calls between requests."""
    from gymwright.codemode import guard, landlock, seccomp

    try:
        netns = os.readlink("/proc/self/ns/net")
    except OSError:
        netns = ""  # no /proc inside the namespaces
    armed: dict[str, Any] = {"netns": netns, "cwd": os.getcwd()}
    roots = guard.own_roots()
    if config.get("landlock"):
        armed["landlock"] = _layer(lambda: landlock.restrict(list(roots)))
    outside = not config.get("namespaces")
    armed["chroot"] = guard.enter_chroot() if outside and config.get("chroot", True) else False
    armed["user"] = guard.drop_privileges() if outside and config.get("drop", True) else f"uid {os.getuid()}"
    if config.get("seccomp"):
        armed["seccomp"] = _layer(seccomp.install)
    permit: Callable[[str], Any] = _no_hook
    if config.get("hook", True):
        permit = guard.install_audit_hook(roots)
    armed["audit_hook"] = bool(config.get("hook", True))
    return armed, permit


def main() -> None:
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    fd_in, fd_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    preload()
    import builtins

    from gymwright.codemode import guard, spaces, wire  # noqa: F401 - loaded before the hook

    guard.report_to(lambda refused: send(fd_out, {"refused": refused}))
    armed, permit = arm(config)
    worker = Worker(guard.restricted_builtins if config.get("builtins", True) else lambda: vars(builtins))
    send(fd_out, {"ok": True, "layers": layers(config, armed)})
    cpu_s = int(config.get("cpu_s", 120))
    while True:
        try:
            n = wire.frame_length(read_exact(fd_in, 4))
            msg = wire.unpack(read_exact(fd_in, n))
        except EOFError:
            return
        set_cpu_budget(cpu_s, permit)
        send(fd_out, worker.answer(msg))


if __name__ == "__main__":
    main()
