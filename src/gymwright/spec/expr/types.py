"""Static types of expressions: a dtype, a concrete shape and an interval of values."""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, replace
from typing import Any

DTYPES = ("bool", "int", "float")
_RANK = {d: i for i, d in enumerate(DTYPES)}
INF = math.inf


def promote(*dtypes: str) -> str:
    """The widest of the dtypes (bool < int < float)."""
    return max(dtypes, key=_RANK.__getitem__)


def numeric(dtype: str) -> str:
    """Arithmetic on bools gives ints."""
    return "int" if dtype == "bool" else dtype


@dataclass(frozen=True)
class Info:
    """What is statically known about an expression (or a symbol)."""

    dtype: str
    shape: tuple[int, ...] = ()
    lo: float = -INF
    hi: float = INF
    const: bool = False  # depends only on literals, params and consts
    value: Any = None  # the value, when known at check time (consts, params)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def describe(self) -> str:
        shape = "scalar" if not self.shape else "array of shape " + "x".join(map(str, self.shape))
        return f"{self.dtype} {shape}"

    def with_(self, **kw: Any) -> Info:
        return replace(self, **kw)


def broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy broadcasting of two shapes, or None if they do not broadcast."""
    out = []
    for x, y in zip(reversed((1,) * (len(b) - len(a)) + a), reversed((1,) * (len(a) - len(b)) + b), strict=True):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(reversed(out))


def safe_mul(x: float, y: float) -> float:
    if x == 0 or y == 0:
        return 0.0
    return x * y


def interval_mul(a: Info, b: Info) -> tuple[float, float]:
    c = [safe_mul(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    return min(c), max(c)


def interval_div(a: Info, b: Info) -> tuple[float, float]:
    if b.lo <= 0 <= b.hi:
        return -INF, INF
    inv = Info("float", lo=1 / b.hi if b.hi != INF else 0.0, hi=1 / b.lo if b.lo != -INF else 0.0)
    if b.hi < 0:
        inv = Info("float", lo=1 / b.hi, hi=1 / b.lo if b.lo != -INF else 0.0)
    return interval_mul(a, inv)


def union(a: Info, b: Info) -> tuple[float, float]:
    return min(a.lo, b.lo), max(a.hi, b.hi)


# A checked tree carries what `spec/expr/check.py` found: an `Info` on each expression node and a
# draw-site number on each random call, read by every backend. They are attributes that `ast`
# does not declare, so they are set and read here only, under these names.
_INFO = "gw"
_SITE = "gw_site"


def set_info(node: ast.AST, info: Info) -> None:
    setattr(node, _INFO, info)


def info_of(node: ast.AST) -> Info:
    """The `Info` the checker put on `node` (AttributeError on a node it did not type)."""
    info: Info = getattr(node, _INFO)
    return info


def found_info(node: ast.AST) -> Info | None:
    """The `Info` on `node`, or None where the checker put none (a slice, a keyword's tuple)."""
    info: Info | None = getattr(node, _INFO, None)
    return info


def set_site(node: ast.AST, site: int) -> None:
    setattr(node, _SITE, site)


def site_of(node: ast.AST) -> int:
    """The draw-site number of a random call (AttributeError on any other node)."""
    site: int = getattr(node, _SITE)
    return site


def draws(node: ast.AST) -> bool:
    """Whether `node` is a random call (one with a draw site)."""
    return hasattr(node, _SITE)
