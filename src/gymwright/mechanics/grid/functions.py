"""The `grid` module's expression functions: `tile`, `manhattan`, `in_bounds`, `view`,
`agents_view`, `agents_view_of` (their entries of the function table; each backend's lowering is
in `python.py` and `batch.py` beside this file)."""

from __future__ import annotations

from typing import Any

from gymwright.spec.expr.functions import (
    ArgError,
    CallInfo,
    Func,
    all_const,
    check_size,
    const_int,
    need_numeric,
    shape_of,
)
from gymwright.spec.expr.types import INF, Info


def _need_grid(c: CallInfo) -> Any:
    g = c.mechanics.get("grid")
    if g is None:
        raise ArgError("is a grid helper; declare a `grid:` section to use it")
    return g


def _need_pos(i: Info, what: str) -> None:
    if i.shape[-1:] != (2,) or i.dtype == "float":
        raise ArgError(f"{what} must be an int position [row, col] (shape 2), got {i.describe()}")


def _tile(c: CallInfo) -> Info:
    g = _need_grid(c)
    _need_pos(c.args[0], "p")
    return Info("int", c.args[0].shape[:-1], -1.0, float(len(g.kinds) - 1), False)


def _manhattan(c: CallInfo) -> Info:
    a, b = c.args
    _need_pos(a, "a")
    _need_pos(b, "b")
    shape = shape_of(a, b)[:-1]
    g = c.mechanics.get("grid")
    hi = float(g.height + g.width - 2) if g is not None else INF
    return Info("int", shape, 0.0, hi, all_const(c))


def _in_bounds(c: CallInfo) -> Info:
    _need_grid(c)
    _need_pos(c.args[0], "p")
    return Info("bool", c.args[0].shape[:-1], 0.0, 1.0, False)


def _window(c: CallInfo) -> tuple[Any, tuple[int, ...]]:
    """The grid and the window shape of view()/agents_view(): one position and a constant radius."""
    g = _need_grid(c)
    p = c.args[0]
    _need_pos(p, "p")
    if p.shape != (2,):
        raise ArgError("p must be one position (shape 2), e.g. pos[me]")
    r = const_int(c, 1, "r")
    return g, check_size((2 * r + 1, 2 * r + 1))


def _view(c: CallInfo) -> Info:
    g, shape = _window(c)
    return Info("int", shape, -1.0, float(len(g.kinds) - 1), False)


def _agents_view(c: CallInfo) -> Info:
    g, shape = _window(c)
    return Info("int", shape, 0.0, float(g.n_agents), False)


def _agents_view_of(c: CallInfo) -> Info:
    g, shape = _window(c)
    x = c.args[2]
    need_numeric(x, "x")
    if x.shape != (g.n_agents,):
        raise ArgError(f"x must hold one value per agent (shape ({g.n_agents},)), got {x.describe()}")
    lo, hi = min(0.0, g.n_agents * x.lo), max(0.0, g.n_agents * x.hi)
    return Info("float" if x.dtype == "float" else "int", shape, lo, hi, False)


FUNCTIONS = (
    Func("tile", "tile(p)", "the tile kind at position p (-1 outside the grid)", "grid", _tile, (1, 1)),
    Func("manhattan", "manhattan(a, b)", "|a.row - b.row| + |a.col - b.col|", "grid", _manhattan, (2, 2)),
    Func("in_bounds", "in_bounds(p)", "true if p is inside the grid", "grid", _in_bounds, (1, 1)),
    Func("view", "view(p, r)", "the (2r+1)x(2r+1) window of tile kinds around p (-1 outside)", "grid", _view, (2, 2)),
    Func("agents_view", "agents_view(p, r)", "the (2r+1)x(2r+1) window of agent counts around p", "grid",
         _agents_view, (2, 2)),
    Func("agents_view_of", "agents_view_of(p, r, x)",
         "the (2r+1)x(2r+1) window around p of x[j] summed over the agents j in each cell (0 where none)",
         "grid", _agents_view_of, (3, 3)),
)
