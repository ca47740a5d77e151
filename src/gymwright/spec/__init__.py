"""The spec language: models, expressions, mechanics and the checker.

The public names are loaded on first use (PEP 562): the mechanics modules' schemas and checks
(`gymwright/mechanics/`) build on `spec.fields`, `spec.checked` and `spec.checks.context`, and
`spec.model` builds on them, so importing one part of this package must not import the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gymwright.spec.checker import check_spec
    from gymwright.spec.loader import library_names, load_spec
    from gymwright.spec.model import EnvSpec

__all__ = ["EnvSpec", "check_spec", "library_names", "load_spec"]
_HOMES = {"EnvSpec": "gymwright.spec.model", "check_spec": "gymwright.spec.checker",
          "library_names": "gymwright.spec.loader", "load_spec": "gymwright.spec.loader"}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
