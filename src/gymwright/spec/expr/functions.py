"""The function table: every function an expression may call, with its static typing rule.

Each entry has a signature and a one-line doc (they render the language reference), an
`infer` rule (argument infos -> result info, or an error message) and, for pure functions,
`impl`, a numpy implementation used to evaluate constant expressions at check time.
Backends keep their own emitters keyed by the same names.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gymwright.spec.expr.types import INF, Info, broadcast, numeric, promote, union
from gymwright.spec.limits import MAX_TABLE_SIZE

MAX_ARRAY_SIZE = 1_000_000


class ArgError(Exception):
    """A call's arguments do not fit the function; the message is shown to the author."""


@dataclass(frozen=True)
class CallInfo:
    """What an `infer` rule sees: argument infos and a way to get constant values."""

    args: list[Info]
    kwargs: dict[str, Info]
    const_value: Callable[[int | str], Any]  # position or keyword -> value (ArgError if not constant)
    mechanics: Mapping[str, Any] = field(default_factory=dict)  # module name -> its checked form (a grid helper reads the grid)


@dataclass(frozen=True)
class Func:
    name: str
    signature: str
    doc: str
    category: str
    infer: Callable[[CallInfo], Info]
    nargs: tuple[int, int]
    kwargs: tuple[str, ...] = ()
    impl: Callable[..., Any] | None = None
    random: bool = False


FUNCTIONS: dict[str, Func] = {}


def _register(name: str, signature: str, doc: str, category: str, nargs: tuple[int, int],
              kwargs: Sequence[str] = (), impl: Callable[..., Any] | None = None,
              random: bool = False) -> Callable[[Callable[[CallInfo], Info]], Callable[[CallInfo], Info]]:
    def deco(infer: Callable[[CallInfo], Info]) -> Callable[[CallInfo], Info]:
        register(Func(name, signature, doc, category, infer, nargs, tuple(kwargs), impl, random))
        return infer
    return deco


def register(func: Func) -> None:
    """Add `func` to the table (a mechanics module's functions come through here: see
    `gymwright/mechanics/registry.py`); a name is taken once."""
    if func.name in FUNCTIONS and FUNCTIONS[func.name] is not func:
        raise ValueError(f"function `{func.name}` is defined twice ({FUNCTIONS[func.name].category}, {func.category})")
    FUNCTIONS[func.name] = func


# --------------------------------------------------------------------------- helpers

def _shape_of(*infos: Info) -> tuple[int, ...]:
    shape: tuple[int, ...] = ()
    for i in infos:
        out = broadcast(shape, i.shape)
        if out is None:
            raise ArgError("arguments have shapes that do not broadcast: "
                           + ", ".join(x.describe() for x in infos))
        shape = out
    return shape


def _need_numeric(i: Info, what: str) -> None:
    if i.dtype not in ("bool", "int", "float"):
        raise ArgError(f"{what} must be numeric")


def _const_int(c: CallInfo, key: int | str, what: str, lo: int = 0) -> int:
    v = c.const_value(key)
    if isinstance(v, np.ndarray) and v.shape == ():
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not isinstance(v, int | np.integer) or isinstance(v, bool):
        raise ArgError(f"{what} must be a constant int (params and consts only), got {v!r}")
    if v < lo:
        raise ArgError(f"{what} must be >= {lo}, got {v}")
    return int(v)


def _shape_value(v: Any, what: str) -> tuple[int, ...]:
    """A constant shape: an int or a list/tuple of ints, each >= 1."""
    dims = list(v) if isinstance(v, tuple | list | np.ndarray) and np.ndim(v) <= 1 else [v]
    if isinstance(v, np.ndarray) and v.ndim > 1:
        dims = [None]
    out = []
    for d in dims:
        if isinstance(d, np.generic):
            d = d.item()
        if isinstance(d, float) and d.is_integer():
            d = int(d)
        if not isinstance(d, int) or isinstance(d, bool) or d < 1:
            shown = v.tolist() if isinstance(v, np.ndarray) else v
            raise ArgError(f"{what} must be an int or a list of ints, each >= 1, got {shown!r}")
        out.append(d)
    return _check_size(tuple(out))


def _shape_kw(c: CallInfo) -> tuple[int, ...]:
    if "shape" not in c.kwargs:
        return ()
    return _shape_value(c.const_value("shape"), "shape=")


def _check_size(shape: tuple[int, ...]) -> tuple[int, ...]:
    if math.prod(shape) > MAX_ARRAY_SIZE:
        raise ArgError(f"array of shape {shape} has more than {MAX_ARRAY_SIZE} elements")
    return shape


def _const(c: CallInfo) -> bool:
    return all(a.const for a in c.args) and all(k.const for k in c.kwargs.values())


def _mono(fn: Callable[[float], float], lo: float, hi: float) -> tuple[float, float]:
    try:
        a, b = fn(lo), fn(hi)
    except (ValueError, OverflowError):
        return -INF, INF
    return min(a, b), max(a, b)


# --------------------------------------------------------------------------- elementwise math

@_register("abs", "abs(x)", "absolute value", "math", (1, 1), impl=np.abs)
def _abs(c: CallInfo) -> Info:
    x = c.args[0]
    lo = 0.0 if x.lo <= 0 <= x.hi else min(abs(x.lo), abs(x.hi))
    return Info(numeric(x.dtype), x.shape, lo, max(abs(x.lo), abs(x.hi)), _const(c))


@_register("sign", "sign(x)", "-1, 0 or 1", "math", (1, 1), impl=np.sign)
def _sign(c: CallInfo) -> Info:
    x = c.args[0]
    return Info(numeric(x.dtype), x.shape, -1.0 if x.lo < 0 else 0.0, 1.0 if x.hi > 0 else 0.0, _const(c))


def _float_fn(name: str, doc: str, fn: Callable[[float], float], np_fn: Callable[..., Any],
              domain_lo: float) -> None:
    @_register(name, f"{name}(x)", doc, "math", (1, 1), impl=np_fn)
    def _infer(c: CallInfo) -> Info:
        x = c.args[0]
        lo, hi = (-INF, INF) if x.lo < domain_lo else _mono(fn, x.lo, x.hi)
        return Info("float", x.shape, lo, hi, _const(c))


_float_fn("sqrt", "square root (nan below 0)", lambda v: math.sqrt(v) if v != INF else INF, np.sqrt, 0.0)
_float_fn("exp", "e ** x", lambda v: math.exp(v) if v < 700 else INF, np.exp, -INF)
_float_fn("log", "natural logarithm (-inf at 0)", lambda v: math.log(v) if 0 < v < INF else (INF if v == INF else -INF), np.log, 0.0)


def _finite_int(x: Any) -> Any:
    x = np.asarray(x)
    if not np.all(np.isfinite(x)) or np.any(np.abs(x) > 2**62):
        raise ValueError("not representable as an int")
    out = x.astype(np.int64)
    return out.item() if out.shape == () else out


def _to_int_fn(name: str, doc: str, np_fn: Callable[..., Any]) -> None:
    @_register(name, f"{name}(x)", doc, "math", (1, 1), impl=lambda x: _finite_int(np_fn(x)))
    def _infer(c: CallInfo) -> Info:
        x = c.args[0]
        lo = math.floor(x.lo) if math.isfinite(x.lo) else -INF
        hi = math.ceil(x.hi) if math.isfinite(x.hi) else INF
        return Info("int", x.shape, lo, hi, _const(c))


_to_int_fn("floor", "largest int <= x", np.floor)
_to_int_fn("ceil", "smallest int >= x", np.ceil)
_to_int_fn("round", "nearest int (ties to even)", np.rint)
_to_int_fn("int", "convert to int (truncates toward 0)", np.trunc)


@_register("float", "float(x)", "convert to float", "math", (1, 1), impl=lambda x: np.asarray(x, dtype=np.float64))
def _float(c: CallInfo) -> Info:
    x = c.args[0]
    return Info("float", x.shape, x.lo, x.hi, _const(c))


@_register("bool", "bool(x)", "x != 0", "math", (1, 1), impl=lambda x: np.asarray(x) != 0)
def _bool(c: CallInfo) -> Info:
    return Info("bool", c.args[0].shape, 0.0, 1.0, _const(c))


def _minmax(c: CallInfo, is_max: bool) -> Info:
    if len(c.args) == 1:
        return _reduce_same(c)
    shape = _shape_of(*c.args)
    lo = (max if is_max else min)(a.lo for a in c.args)
    hi = (max if is_max else min)(a.hi for a in c.args)
    return Info(promote(*(numeric(a.dtype) for a in c.args)), shape, lo, hi, _const(c))


FUNCTIONS["max"] = Func("max", "max(a, b, ...) | max(x, axis=None)",
                        "elementwise maximum of 2+ args; the largest element of one array",
                        "math", lambda c: _minmax(c, True), (1, 8), ("axis",),
                        impl=lambda *a, axis=None: np.max(a[0], axis=axis) if len(a) == 1 else np.maximum.reduce(np.broadcast_arrays(*a)))
FUNCTIONS["min"] = Func("min", "min(a, b, ...) | min(x, axis=None)",
                        "elementwise minimum of 2+ args; the smallest element of one array",
                        "math", lambda c: _minmax(c, False), (1, 8), ("axis",),
                        impl=lambda *a, axis=None: np.min(a[0], axis=axis) if len(a) == 1 else np.minimum.reduce(np.broadcast_arrays(*a)))


@_register("clip", "clip(x, lo, hi)", "x limited to [lo, hi]", "math", (3, 3), impl=np.clip)
def _clip(c: CallInfo) -> Info:
    x, lo, hi = c.args
    dtype = promote(*(numeric(a.dtype) for a in c.args))
    return Info(dtype, _shape_of(x, lo, hi), max(min(x.lo, lo.lo), lo.lo), min(max(x.hi, hi.hi), hi.hi), _const(c))


@_register("isclose", "isclose(a, b)", "a and b equal within 1e-9 (relative) or 1e-12 (absolute)", "math", (2, 2),
           impl=lambda a, b: np.isclose(a, b, rtol=1e-9, atol=1e-12))
def _isclose(c: CallInfo) -> Info:
    return Info("bool", _shape_of(*c.args), 0.0, 1.0, _const(c))


@_register("where", "where(c, a, b)", "elementwise a where c else b", "math", (3, 3), impl=np.where)
def _where(c: CallInfo) -> Info:
    cond, a, b = c.args
    lo, hi = union(a, b)
    return Info(promote(a.dtype, b.dtype), _shape_of(cond, a, b), lo, hi, _const(c))


# --------------------------------------------------------------------------- reductions

def _axis(c: CallInfo, x: Info) -> int | None:
    if "axis" not in c.kwargs:
        return None
    ax = _const_int(c, "axis", "axis", lo=-len(x.shape))
    if not -len(x.shape) <= ax < len(x.shape):
        raise ArgError(f"axis {ax} is out of range for an array of shape {x.shape}")
    return ax % len(x.shape)


def _reduced(c: CallInfo) -> tuple[Info, tuple[int, ...], int]:
    x = c.args[0]
    if not x.shape:
        raise ArgError(f"expects an array, got a scalar ({x.describe()})")
    ax = _axis(c, x)
    if ax is None:
        return x, (), x.size
    return x, x.shape[:ax] + x.shape[ax + 1:], x.shape[ax]


def _reduce_same(c: CallInfo) -> Info:
    x, shape, _ = _reduced(c)
    return Info(numeric(x.dtype), shape, x.lo, x.hi, _const(c))


@_register("sum", "sum(x, axis=None)", "sum of the elements", "reduce", (1, 1), ("axis",), impl=np.sum)
def _sum(c: CallInfo) -> Info:
    x, shape, n = _reduced(c)
    return Info(numeric(x.dtype), shape, x.lo * n if x.lo > -INF else -INF, x.hi * n if x.hi < INF else INF, _const(c))


@_register("mean", "mean(x, axis=None)", "mean of the elements", "reduce", (1, 1), ("axis",), impl=np.mean)
def _mean(c: CallInfo) -> Info:
    x, shape, _ = _reduced(c)
    return Info("float", shape, x.lo, x.hi, _const(c))


@_register("count", "count(x, axis=None)", "number of true (non-zero) elements", "reduce", (1, 1), ("axis",), impl=np.count_nonzero)
def _count(c: CallInfo) -> Info:
    _, shape, n = _reduced(c)
    return Info("int", shape, 0.0, float(n), _const(c))


def _bool_reduce(name: str, doc: str, fn: Callable[..., Any]) -> None:
    @_register(name, f"{name}(x, axis=None)", doc, "reduce", (1, 1), ("axis",), impl=fn)
    def _infer(c: CallInfo) -> Info:
        _, shape, _ = _reduced(c)
        return Info("bool", shape, 0.0, 1.0, _const(c))


_bool_reduce("any", "true if any element is true", np.any)
_bool_reduce("all", "true if every element is true", np.all)


def _arg_reduce(name: str, doc: str, fn: Callable[..., Any]) -> None:
    @_register(name, f"{name}(x, axis=None)", doc, "reduce", (1, 1), ("axis",), impl=fn)
    def _infer(c: CallInfo) -> Info:
        x, shape, n = _reduced(c)
        if "axis" not in c.kwargs and len(x.shape) > 1:
            raise ArgError("argmax/argmin over a multi-axis array needs axis=")
        return Info("int", shape, 0.0, float(n - 1), _const(c))


_arg_reduce("argmax", "index of the largest element (first on ties)", np.argmax)
_arg_reduce("argmin", "index of the smallest element (first on ties)", np.argmin)


@_register("dot", "dot(a, b)", "sum(a * b) of two 1-D arrays", "reduce", (2, 2), impl=np.dot)
def _dot(c: CallInfo) -> Info:
    a, b = c.args
    if len(a.shape) != 1 or a.shape != b.shape:
        raise ArgError(f"expects two 1-D arrays of equal length, got {a.describe()} and {b.describe()}")
    from gymwright.spec.expr.types import interval_mul
    lo, hi = interval_mul(a, b)
    n = a.shape[0]
    return Info(promote(numeric(a.dtype), numeric(b.dtype)), (), lo * n if lo > -INF else -INF, hi * n if hi < INF else INF, _const(c))


# --------------------------------------------------------------------------- array constructors

@_register("arange", "arange(n)", "the ints 0 .. n-1", "array", (1, 1), impl=lambda n: np.arange(n, dtype=np.int64))
def _arange(c: CallInfo) -> Info:
    n = _const_int(c, 0, "n", lo=1)
    _check_size((n,))
    return Info("int", (n,), 0.0, float(n - 1), True)


@_register("linspace", "linspace(a, b, n)", "n evenly spaced floats from a to b", "array", (3, 3), impl=np.linspace)
def _linspace(c: CallInfo) -> Info:
    a, b, _ = c.args
    if a.shape or b.shape:
        raise ArgError(f"endpoints must be scalars, got {a.describe()} and {b.describe()}")
    n = _const_int(c, 2, "n", lo=1)
    _check_size((n,))
    lo, hi = union(a, b)
    return Info("float", (n,), lo, hi, _const(c))


def _filled(name: str, doc: str, value: float) -> None:
    @_register(name, f"{name}(shape)", doc, "array", (1, 1),
               impl=lambda s: np.full(np.asarray(s).tolist(), value, dtype=np.float64))
    def _infer(c: CallInfo) -> Info:
        return Info("float", _shape_value(c.const_value(0), "shape"), value, value, True)


_filled("zeros", "float array of zeros", 0.0)
_filled("ones", "float array of ones", 1.0)


@_register("onehot", "onehot(i, n)", "float array of length n with a 1 at index i (all 0 if i is out of range)", "array", (2, 2))
def _onehot(c: CallInfo) -> Info:
    i = c.args[0]
    if i.dtype == "float":
        raise ArgError("index i must be an int; use int(x) or round(x)")
    n = _const_int(c, 1, "n", lo=1)
    return Info("float", _check_size(i.shape + (n,)), 0.0, 1.0, _const(c))


@_register("push", "push(window, x)", "the window shifted by one along its first axis, with x as the newest (last) entry", "array", (2, 2))
def _push(c: CallInfo) -> Info:
    w, x = c.args
    if not w.shape:
        raise ArgError("window must be an array whose first axis is the history length")
    if broadcast(w.shape[1:], x.shape) != w.shape[1:]:
        raise ArgError(f"x ({x.describe()}) does not fit one entry of the window ({w.describe()})")
    lo, hi = union(w, x)
    return Info(promote(w.dtype, x.dtype), w.shape, lo, hi, _const(c))


@_register("roll", "roll(x, k)", "x rotated by k along its first axis", "array", (2, 2))
def _roll(c: CallInfo) -> Info:
    x, k = c.args
    if not x.shape or k.shape or k.dtype == "float":
        raise ArgError("expects an array and an int shift")
    return Info(x.dtype, x.shape, x.lo, x.hi, _const(c))


@_register("others", "others(x, i)", "x without entry i of its first axis, the rest in order: `others(x, me)` is every other agent's x", "array", (2, 2),
           impl=lambda x, i: np.delete(np.asarray(x), int(i), axis=0))
def _others(c: CallInfo) -> Info:
    x, i = c.args
    if not x.shape or x.shape[0] < 2:
        raise ArgError(f"x must be an array with 2 or more entries along its first axis, got {x.describe()}")
    if i.shape or i.dtype != "int":
        raise ArgError(f"i must be one int (e.g. `me`), got {i.describe()}")
    n = x.shape[0]
    if i.hi < INF and i.lo > -INF and (i.lo < 0 or i.hi >= n):
        raise ArgError(f"i in [{i.lo:g}, {i.hi:g}] reaches outside the {n} entries of x (0 .. {n - 1})")
    return Info(x.dtype, (n - 1, *x.shape[1:]), x.lo, x.hi, _const(c))


@_register("stack", "stack(a, b, ...)", "k numbers per element on a new last axis ([..., j] is argument j): windows stacked read cell by cell", "array", (2, 16),
           impl=lambda *a: np.stack(np.broadcast_arrays(*a), axis=-1))
def _stack(c: CallInfo) -> Info:
    for a in c.args:
        _need_numeric(a, "arguments")
    shape = _shape_of(*c.args)
    lo, hi = min(a.lo for a in c.args), max(a.hi for a in c.args)
    return Info(promote(*(a.dtype for a in c.args)), _check_size((*shape, len(c.args))), lo, hi, _const(c))


@_register("transpose", "transpose(m)", "m (2-D) with rows and columns swapped (`m.T`)", "array", (1, 1),
           impl=np.transpose)
def _transpose(c: CallInfo) -> Info:
    m = c.args[0]
    if len(m.shape) != 2:
        raise ArgError(f"expects a 2-D array, got {m.describe()}")
    return Info(m.dtype, (m.shape[1], m.shape[0]), m.lo, m.hi, _const(c))


# --------------------------------------------------------------------------- tables (computed when the env is built)

@_register("len", "len(x)", "length of x's first axis (a constant)", "table", (1, 1))
def _len(c: CallInfo) -> Info:
    x = c.args[0]
    if not x.shape:
        raise ArgError(f"expects an array, got a scalar ({x.describe()})")
    n = x.shape[0]
    return Info("int", (), float(n), float(n), True, n)


def _table(rows: int, cols: int, what: str) -> None:
    """Refuse a table past MAX_TABLE_SIZE before it is made (its size is counted, not enumerated)."""
    if rows * cols > MAX_TABLE_SIZE:
        size = f"{rows:,} rows of {cols} = {rows * cols:,} elements" if rows <= MAX_TABLE_SIZE else \
            f"more than {MAX_TABLE_SIZE:,} rows"
        raise ArgError(f"{what} has {size}; the limit (MAX_TABLE_SIZE) is {MAX_TABLE_SIZE:,}: give it smaller arguments")


def _comb_capped(n: int, k: int) -> int:
    """C(n, k), or MAX_TABLE_SIZE + 1 once it is known to be larger (cheap for any n, k)."""
    k = min(k, n - k)
    out = 1
    for i in range(1, k + 1):
        out = out * (n - k + i) // i  # C(n - k + i, i): grows with i
        if out > MAX_TABLE_SIZE:
            return MAX_TABLE_SIZE + 1
    return out


def _table_info(value: np.ndarray, dtype: str) -> Info:
    return Info(dtype, value.shape, float(value.min()), float(value.max()), True, value)


def _const_vector(c: CallInfo, key: int, info: Info, what: str) -> np.ndarray:
    if len(info.shape) != 1:
        raise ArgError(f"{what} must be a 1-D array, got {info.describe()}")
    return np.asarray(c.const_value(key))


@_register("compositions", "compositions(total, parts)", "every split of total into parts ints >= 0, a row each, in lexicographic order", "table", (2, 2))
def _compositions(c: CallInfo) -> Info:
    total, parts = _const_int(c, 0, "total"), _const_int(c, 1, "parts", lo=1)
    rows = _comb_capped(total + parts - 1, parts - 1)
    _table(rows, parts, f"compositions({total}, {parts})")
    bars = np.array(list(itertools.combinations(range(total + parts - 1), parts - 1)), dtype=np.int64).reshape(rows, parts - 1)
    edges = np.concatenate([np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), total + parts - 1)], axis=1)
    return _table_info(np.diff(edges, axis=1) - 1, "int")  # stars between bars; bar order is lexicographic


@_register("combinations", "combinations(a, k)", "every choice of k entries of the 1-D array a, a row each, in order", "table", (2, 2))
def _combinations(c: CallInfo) -> Info:
    a, k = _const_vector(c, 0, c.args[0], "a"), _const_int(c, 1, "k", lo=1)
    if k > len(a):
        raise ArgError(f"k = {k} is more than the {len(a)} entries of a")
    _table(_comb_capped(len(a), k), k, f"combinations of {k} of {len(a)}")
    return _table_info(np.array(list(itertools.combinations(a.tolist(), k))), c.args[0].dtype)


@_register("product", "product(a, b, ..., repeat=1)", "every pick of one entry of each 1-D array, a row each (the last varies fastest)", "table", (1, 8), ("repeat",))
def _product(c: CallInfo) -> Info:
    arrays = [_const_vector(c, i, a, f"argument {i + 1}").tolist() for i, a in enumerate(c.args)]
    repeat = _const_int(c, "repeat", "repeat", lo=1) if "repeat" in c.kwargs else 1
    arrays *= repeat
    rows = 1
    for a in arrays:  # capped as it grows: repeat may be large
        rows = min(rows * len(a), MAX_TABLE_SIZE + 1)
    _table(rows, len(arrays), "the product")
    return _table_info(np.array(list(itertools.product(*arrays))), promote(*(a.dtype for a in c.args)))


@_register("filter", "filter(x, keep)", "the rows of x where keep (one bool per row) holds", "table", (2, 2))
def _filter(c: CallInfo) -> Info:
    x, keep = c.args
    if not x.shape or keep.dtype != "bool" or keep.shape != x.shape[:1]:
        raise ArgError(f"keep must be one bool per row of x ({x.shape[:1] or 'none'}), got {keep.describe()}")
    rows = np.asarray(c.const_value(0))[np.asarray(c.const_value(1), dtype=bool)]
    if not len(rows):
        raise ArgError("keep holds for no row: the table would be empty")
    return _table_info(rows, x.dtype)


# --------------------------------------------------------------------------- random (seeded, counter-based)

def _random(name: str, signature: str, doc: str, dtype: str, arity: tuple[int, int],
            bounds: Callable[[list[Info]], tuple[float, float]],
            valid: Callable[[list[Info]], str | None]) -> None:
    @_register(name, signature, doc, "random", arity, ("shape",), random=True)
    def _infer(c: CallInfo) -> Info:
        for a in c.args:
            _need_numeric(a, "arguments")
        shape = _shape_of(*c.args)
        kw = _shape_kw(c)
        if shape and kw and broadcast(shape, kw) != kw:
            raise ArgError(f"arguments of shape {shape} do not fit shape={kw}")
        problem = valid(c.args)
        if problem:
            raise ArgError(problem)
        lo, hi = bounds(c.args)
        return Info(dtype, kw or shape, lo, hi, False)


def _known(i: Info) -> np.ndarray | None:
    """The value of a constant argument (literals, params at this assignment, consts) as floats."""
    if not i.const or i.value is None:
        return None
    try:
        return np.asarray(i.value, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _shown(x: np.ndarray) -> str:
    return f"{x.item():g}" if x.ndim == 0 else str(x.tolist()) if x.size <= 8 else f"an array of shape {x.shape}"


def _ordered(lo: Info | None, hi: Info | None, default: tuple[float, float], strict: bool, what: str) -> str | None:
    """None if finite lo <= hi (lo < hi if strict) can hold, else why not: for constant arguments
    by their values, for the others when their intervals rule it out for every value."""
    x = _known(lo) if lo is not None else np.asarray(default[0])
    y = _known(hi) if hi is not None else np.asarray(default[1])
    need = "lo < hi" if strict else "lo <= hi"
    for v, name in ((x, "lo"), (y, "hi")):
        if v is not None and not np.all(np.isfinite(v)):
            return f"{what}, so {name} must be finite; got {name}={_shown(v)}"
    if x is not None and y is not None:
        if not np.all(x < y if strict else x <= y):
            return f"{what}, so it needs {need}; got lo={_shown(x)}, hi={_shown(y)}"
        return None
    lo_min = float(x.min()) if x is not None else lo.lo if lo is not None else default[0]
    hi_max = float(y.max()) if y is not None else hi.hi if hi is not None else default[1]
    if (lo_min >= hi_max) if strict else (lo_min > hi_max):
        return f"{what}, so it needs {need}, but lo >= {lo_min:g} and hi <= {hi_max:g} everywhere"
    return None


def _valid_uniform(a: list[Info]) -> str | None:
    return _ordered(a[0] if a else None, a[1] if len(a) > 1 else None, (0.0, 1.0), False,
                    "draws a float in [lo, hi)")


def _valid_randint(a: list[Info]) -> str | None:
    return _ordered(a[0], a[1], (0.0, 1.0), True, "draws an int in lo .. hi-1 (hi is exclusive)")


def _valid_normal(a: list[Info]) -> str | None:
    for i, name in ((a[0] if a else None, "mean"), (a[1] if len(a) > 1 else None, "std")):
        v = _known(i) if i is not None else None
        if v is not None and not np.all(np.isfinite(v)):
            return f"needs a finite {name}; got {name}={_shown(v)}"
    std = a[1] if len(a) > 1 else None
    v = _known(std) if std is not None else None
    if v is not None and not np.all(v >= 0):
        return f"needs std >= 0; got std={_shown(v)}"
    if std is not None and v is None and std.hi < 0:
        return f"needs std >= 0, but std <= {std.hi:g} everywhere"
    return None


def _valid_bernoulli(a: list[Info]) -> str | None:
    p = a[0]
    v = _known(p)
    if v is not None and not np.all((v >= 0) & (v <= 1)):
        return f"is true with probability p, so it needs 0 <= p <= 1; got p={_shown(v)}"
    if v is None and (p.hi < 0 or p.lo > 1):
        return f"is true with probability p, so it needs 0 <= p <= 1, but p is in [{p.lo:g}, {p.hi:g}]"
    return None


_random("uniform", "uniform(lo=0, hi=1, shape=())", "uniform float in [lo, hi); needs finite lo <= hi (lo == hi gives lo)",
        "float", (0, 2), lambda a: (a[0].lo if a else 0.0, a[1].hi if len(a) > 1 else 1.0), _valid_uniform)
_random("normal", "normal(mean=0, std=1, shape=())", "normal float; needs a finite mean and a finite std >= 0",
        "float", (0, 2), lambda a: (-INF, INF), _valid_normal)
_random("randint", "randint(lo, hi, shape=())", "uniform int in lo .. hi-1 (hi exclusive); needs lo < hi",
        "int", (2, 2), lambda a: (a[0].lo, a[1].hi - 1), _valid_randint)
_random("bernoulli", "bernoulli(p, shape=())", "true with probability p; needs 0 <= p <= 1",
        "bool", (1, 1), lambda a: (0.0, 1.0), _valid_bernoulli)


@_register("choice", "choice(a)", "a uniformly drawn element of the 1-D array a", "random", (1, 1), random=True)
def _choice(c: CallInfo) -> Info:
    a = c.args[0]
    if len(a.shape) != 1:
        raise ArgError(f"expects a 1-D array, got {a.describe()}")
    return Info(a.dtype, (), a.lo, a.hi, False)


@_register("permutation", "permutation(n)", "a uniformly drawn ordering of 0 .. n-1", "random", (1, 1), random=True)
def _permutation(c: CallInfo) -> Info:
    n = _const_int(c, 0, "n", lo=1)
    return Info("int", _check_size((n,)), 0.0, float(n - 1), False)


# What a mechanics module's functions build on (`gymwright/mechanics/*/functions.py`).
shape_of, need_numeric, const_int, check_size, all_const = _shape_of, _need_numeric, _const_int, _check_size, _const
