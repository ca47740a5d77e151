"""What a module written by `gymwright export` of a code-mode design calls: the model's code,
checked against the digest the export wrote, vetted again, loaded into a sandbox worker of its
own and driven over the pipe (`source.parallel_env_of`)."""

from __future__ import annotations

import hashlib
from typing import Any

from pettingzoo.utils.conversions import parallel_to_aec

from gymwright.codemode.source import OwnedParallelEnv, parallel_env_of
from gymwright.errors import GymwrightError


def sandboxed_env(code: str, env_class: str, sha256: str, name: str,
                  params: dict[str, Any] | None = None) -> OwnedParallelEnv:
    """One sandboxed instance of the exported module's class, made with `params` (keyword
    arguments its `__init__` declares with defaults; checked here); the caller closes it."""
    if not isinstance(code, str) or hashlib.sha256(code.encode("utf-8")).hexdigest() != sha256:
        raise GymwrightError("the exported module's MODEL_CODE does not match its SHA256: it was changed after "
                             "the export", path=f"{name}.MODEL_CODE",
                             hint="export the design again with `gymwright export DESIGN.py -o FILE.py`")
    env = parallel_env_of(code, name, params)
    env.metadata = {**env.metadata, "name": name, "class": env_class}
    return env


def aec_env(parallel: OwnedParallelEnv) -> Any:
    """The AEC view of a sandboxed parallel env (PettingZoo's own conversion)."""
    return parallel_to_aec(parallel)


__all__ = ["aec_env", "sandboxed_env"]
