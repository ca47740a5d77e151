"""A code-mode design as a source for the trainer and the evaluator: a module file ending in `.py`.

The file is read as text, never imported: `read_code` gives its text (the limit of vetting
applies), `code_identity` its sha256 and name (what a checkpoint pins, as `spec_identity` does
for a spec), `batch_env` its sandboxed batch copies (`vector.SandboxedBatchEnv`) and
`parallel_env` one sandboxed instance (`proxy.SandboxedParallelEnv`) with its own worker
(`parallel_env_of` the same from the module's text).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from gymwright.codemode.proxy import SandboxedParallelEnv, load_module
from gymwright.codemode.vector import SandboxedBatchEnv, vetting_error
from gymwright.codemode.vet import MAX_CODE_CHARS, vet_source
from gymwright.errors import GymwrightError

MAX_WORKERS = 8  # sandbox workers per batch env (each is one process stepping its share of copies)


def is_code_source(spec: Any) -> bool:
    """True for a code-mode module: a path (str or Path) ending in `.py`."""
    return isinstance(spec, str | Path) and str(spec).endswith(".py")


def read_code(path: str | Path) -> str:
    """The module's text (read, never imported)."""
    try:
        source = Path(path).read_bytes()[: MAX_CODE_CHARS * 4 + 1].decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise GymwrightError(f"cannot read the module: {e}", path=str(path),
                             hint="give a UTF-8 Python file written by `gymwright design --mode code`") from None
    return source


def code_identity(path: str | Path) -> tuple[str, str]:
    """(sha256 of the module's text, its name): what a checkpoint trained on it pins."""
    return hashlib.sha256(read_code(path).encode("utf-8")).hexdigest(), Path(path).stem


def check_no_params(path: str | Path, params: list[dict[str, Any]]) -> None:
    """A code-mode module has no spec params: only empty configs are accepted."""
    given = sorted({k for p in params for k in p})
    if given:
        raise GymwrightError(f"{path} is a code-mode module, which takes no params (given: {', '.join(given)})",
                             path="params", hint="drop --param / `params:`; a code-mode env sets its own constants")


def batch_env(path: str | Path, params: list[dict[str, Any]], size: int, workers: int | None = None) -> SandboxedBatchEnv:
    """`size` sandboxed copies of the module at `path`, over `workers` workers (default: one
    per CPU core, at most MAX_WORKERS and at most one per copy)."""
    check_no_params(path, params)
    count = workers if workers is not None else min(os.cpu_count() or 1, MAX_WORKERS)
    return SandboxedBatchEnv(read_code(path), batch_size=size, workers=count, name=str(path))


class OwnedParallelEnv(SandboxedParallelEnv):
    """A `SandboxedParallelEnv` with a worker of its own, stopped by `close`."""

    def close(self) -> None:
        super().close()
        self.sandbox.close()


def parallel_env(path: str | Path) -> OwnedParallelEnv:
    """One sandboxed instance of the module at `path` (the caller closes it)."""
    return parallel_env_of(read_code(path), str(path))


def parallel_env_of(code: str, label: str = "the module") -> OwnedParallelEnv:
    """One sandboxed instance of the module whose text is `code` (e.g. a stored code-mode
    design); `label` names it in a vetting error. The caller closes it."""
    vetted = vet_source(code)
    if not vetted.passed:
        raise vetting_error(label, vetted.diagnostics)
    sandbox = load_module(code, vetted.env_class)
    try:
        return OwnedParallelEnv(sandbox)
    except BaseException:
        sandbox.close()
        raise


__all__ = ["batch_env", "check_no_params", "code_identity", "is_code_source", "parallel_env", "parallel_env_of",
           "read_code"]
