"""`compile_batch`: the batch backend of a spec, ready to step B copies at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gymwright.compile.batch_backend import generate_batch
from gymwright.compile.build import as_spec, load_module
from gymwright.errors import SpecError
from gymwright.spec.checker import check_spec
from gymwright.spec.model import EnvSpec


def batch_source(spec: EnvSpec | str | Path | dict[str, Any], params: dict[str, Any] | None = None) -> str:
    cs, diags = check_spec(as_spec(spec), params)
    if cs is None:
        raise SpecError([d for d in diags if d.severity.value == "error"])
    return generate_batch(cs)


def compile_batch(spec: EnvSpec | str | Path | dict[str, Any], params: dict[str, Any] | list[dict[str, Any]] | None = None,
                  batch_size: int = 1024) -> Any:
    """A `BatchEnv` of `batch_size` copies.

    `params` is one dict for all copies, or a list of dicts (one per copy) that differ only in
    non-structural params (a mixed batch, for curricula).
    """
    per_copy = params if isinstance(params, list) else [params or {}]
    structural_source = per_copy[0] if per_copy else {}
    es = as_spec(spec)
    module = load_module(batch_source(es, structural_source), f"{es.name}_batch")
    return module.BatchEnv(batch_size, per_copy if isinstance(params, list) else (params or {}))
