"""A code-mode design as a source for the trainer and the evaluator: a module file ending in `.py`.

The file is read as text, never imported: `read_code` gives its text (the limit of vetting
applies; from a sandboxed module, `gymwright design --mode code`'s or `gymwright export`'s, the
model's code it holds), `code_identity` its sha256 and name (what a checkpoint pins, as `spec_identity` does
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
    """The model's module (read, never imported): the file's text, or where the file is a
    sandboxed module (`export.proxy_module`: what `gymwright design --mode code` and
    `gymwright export` write) the model's code it holds, checked against its digest."""
    try:
        source = Path(path).read_bytes()[: MAX_CODE_CHARS * 8 + 1].decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise GymwrightError(f"cannot read the module: {e}", path=str(path),
                             hint="give a UTF-8 Python file written by `gymwright design --mode code`") from None
    return model_code_in(source, str(path))


def model_code_in(text: str, label: str = "the module") -> str:
    """The model's code held by a sandboxed module (its `MODEL_CODE`, whose sha256 must be its
    `SHA256`), found by parsing the text (never running it); any other text as it is."""
    import ast

    if "gymwright.codemode.exported" not in text:
        return text
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text  # vetting reports it
    if not any(isinstance(n, ast.ImportFrom) and n.module == "gymwright.codemode.exported" for n in tree.body):
        return text
    found = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name) and isinstance(n.value, ast.Constant)
             and isinstance(n.value.value, str)}
    code, sha = found.get("MODEL_CODE"), found.get("SHA256")
    if code is None or sha is None:
        return text
    if hashlib.sha256(code.encode("utf-8")).hexdigest() != sha:
        raise GymwrightError("the module's MODEL_CODE does not match its SHA256: it was changed after gymwright "
                             "wrote it", path=f"{label}: MODEL_CODE",
                             hint="design or export it again (`gymwright export DESIGN.py -o FILE.py`)")
    return code


def code_identity(path: str | Path) -> tuple[str, str]:
    """(sha256 of the module's text, its name): what a checkpoint trained on it pins."""
    return hashlib.sha256(read_code(path).encode("utf-8")).hexdigest(), Path(path).stem


def check_code_params(path: str | Path, params: list[dict[str, Any]]) -> dict[str, Any]:
    """The one config of `params` held to the module's params (the keyword arguments of its
    class's `__init__` with literal defaults: `codemode.params`); several configs are refused
    (the copies of a code-mode env share one). A module without such keyword arguments takes none."""
    configs = [dict(p) for p in params if p]
    if len({tuple(sorted(c.items())) for c in configs}) > 1:
        raise GymwrightError(f"{path} is a code-mode module: all its copies take one config of params, "
                             f"given {len(configs)} different ones", path="params",
                             hint="give one config (--param NAME=VALUE), not a mixture")
    if not configs:
        return {}
    return code_params(read_code(path), str(path), configs[0])


def code_params(code: str, label: str, given: dict[str, Any]) -> dict[str, Any]:
    """`given` checked against the params the module `code` declares."""
    from gymwright.codemode.params import check_params, declared_params

    return check_params(label, declared_params(code), given)


def batch_env(path: str | Path, params: list[dict[str, Any]], size: int, workers: int | None = None) -> SandboxedBatchEnv:
    """`size` sandboxed copies of the module at `path`, over `workers` workers (default: one
    per CPU core, at most MAX_WORKERS and at most one per copy)."""
    given = check_code_params(path, params)
    count = workers if workers is not None else min(os.cpu_count() or 1, MAX_WORKERS)
    return SandboxedBatchEnv(read_code(path), batch_size=size, workers=count, name=str(path), params=given)


class OwnedParallelEnv(SandboxedParallelEnv):
    """A `SandboxedParallelEnv` with a worker of its own, stopped by `close`."""

    def close(self) -> None:
        super().close()
        self.sandbox.close()


def parallel_env(path: str | Path, params: dict[str, Any] | None = None) -> OwnedParallelEnv:
    """One sandboxed instance of the module at `path`, made with `params` (the caller closes it)."""
    return parallel_env_of(read_code(path), str(path), params)


def parallel_env_of(code: str, label: str = "the module", params: dict[str, Any] | None = None) -> OwnedParallelEnv:
    """One sandboxed instance of the module whose text is `code` (e.g. a stored code-mode
    design), made with `params` (checked against its class's keyword arguments); `label` names
    it in a vetting error. The caller closes it."""
    vetted = vet_source(code)
    if not vetted.passed:
        raise vetting_error(label, vetted.diagnostics)
    given = code_params(code, label, params or {})
    sandbox = load_module(code, vetted.env_class)
    try:
        return OwnedParallelEnv(sandbox, given)
    except BaseException:
        sandbox.close()
        raise


__all__ = ["batch_env", "check_code_params", "code_identity", "code_params", "is_code_source", "model_code_in", "parallel_env",
           "parallel_env_of", "read_code"]
