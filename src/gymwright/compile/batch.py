"""`compile_batch`: the batch backend of a spec, ready to step B copies at once."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from gymwright.compile.batch_backend import generate_batch
from gymwright.compile.build import as_spec, load_module
from gymwright.compile.common import spec_hash
from gymwright.errors import SpecError
from gymwright.spec.checked import CheckedSpec
from gymwright.spec.checker import check_spec
from gymwright.spec.model import EnvSpec


def _checked(es: EnvSpec, params: dict[str, Any] | None) -> CheckedSpec:
    cs, diags = check_spec(es, params)
    if cs is None:
        raise SpecError([d for d in diags if d.severity.value == "error"])
    return cs


_SOURCES: OrderedDict[tuple[str, str], str] = OrderedDict()
_SOURCES_LOCK = threading.Lock()
MAX_KEPT_SOURCES = 128
"""Generated batch sources kept per process (the most recently used): an evaluation or a curriculum
builds the same configs again and again, and generating and auditing one costs about 0.1 s."""


def _generated(cs: CheckedSpec, params: dict[str, Any] | None) -> str:
    """`generate_batch(cs)` for `cs = check_spec(spec, params)`, kept by the spec's content (its
    hash) and the params (the source is a function of both, and load_module keeps the module by
    its text)."""
    key = (spec_hash(cs), repr(sorted((params or {}).items())))
    with _SOURCES_LOCK:
        source = _SOURCES.get(key)
        if source is not None:
            _SOURCES.move_to_end(key)
            return source
    source = generate_batch(cs)
    with _SOURCES_LOCK:
        _SOURCES[key] = source
        while len(_SOURCES) > MAX_KEPT_SOURCES:
            _SOURCES.popitem(last=False)
    return source


def batch_source(spec: EnvSpec | str | Path | dict[str, Any], params: dict[str, Any] | None = None) -> str:
    return _generated(_checked(as_spec(spec), params), params)


def compile_batch(spec: EnvSpec | str | Path | dict[str, Any], params: dict[str, Any] | list[dict[str, Any]] | None = None,
                  batch_size: int = 1024) -> Any:
    """A `BatchEnv` of `batch_size` copies.

    `params` is one dict for all copies, or a list of dicts (one per copy: a mixed batch, for
    curricula). Where the list's structural params (those that size arrays or count agents,
    e.g. a map size) differ, the result is a `MixedBatchEnv`: one generated module per distinct
    structural signature, composed into one batch with the same interface (the observation and
    action shapes must still agree across the configs).
    """
    per_copy = params if isinstance(params, list) else [params or {}]
    structural_source = per_copy[0] if per_copy else {}
    es = as_spec(spec)
    cs = _checked(es, structural_source)
    if isinstance(params, list) and len(per_copy) > 1:
        defaults = {n: p.default for n, p in es.params.items() if n in cs.structural}
        signatures = [tuple((n, d.get(n, v)) for n, v in sorted(defaults.items())) for d in per_copy]
        if len(set(signatures)) > 1:
            return _mixed(es, cs, per_copy, signatures, defaults, batch_size)
    module = load_module(_generated(cs, structural_source), f"{es.name}_batch")
    return module.BatchEnv(batch_size, per_copy if isinstance(params, list) else (params or {}))


def _mixed(es: EnvSpec, cs: CheckedSpec, per_copy: list[dict[str, Any]], signatures: list[tuple[Any, ...]],
           defaults: dict[str, Any], batch_size: int) -> Any:
    from gymwright.compile.mixed import MixedBatchEnv

    if len(per_copy) != batch_size:
        raise ValueError(f"got {len(per_copy)} param dicts for a batch of {batch_size}")
    order: dict[tuple[Any, ...], list[int]] = {}
    for b, sig in enumerate(signatures):
        order.setdefault(sig, []).append(b)
    groups = []
    for k, copies in enumerate(order.values()):
        first = per_copy[copies[0]]
        checked = cs if k == 0 else _checked(es, first)
        module = load_module(_generated(checked, first), f"{es.name}_batch")
        env = module.BatchEnv(len(copies), [per_copy[b] for b in copies])
        groups.append((np.asarray(copies, dtype=np.int64), env, first))
    return MixedBatchEnv(groups, structural=defaults)
