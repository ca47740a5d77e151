"""Per-spec parametrizations that keep the default suite fast: every library spec stays a case,
but only two representatives (a bargaining game and a grid game) run by default; the others are
marked `slow`, so CI's `pytest -m slow` run still checks every spec."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from gymwright.spec import library_names

REPRESENTATIVES = ("cake_negotiation", "mapf_frozenlake")


def every_spec(names: Iterable[str] | None = None, keep: Iterable[str] = REPRESENTATIVES) -> list[Any]:
    """`names` (default: the library) as pytest params, those outside `keep` marked slow."""
    kept = set(keep)
    return [name if name in kept else pytest.param(name, marks=pytest.mark.slow)
            for name in (library_names() if names is None else names)]
