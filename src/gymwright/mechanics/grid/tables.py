"""The grid module's constants in a generated module, the same in both backends: tile kinds,
colours, passability, the fixed map, starts and goals, and where its random draws start."""

from __future__ import annotations

from gymwright.compile.tables import literal
from gymwright.compile.writer import Writer
from gymwright.mechanics.grid.checked import CGrid

GRID_SITE = 1 << 20  # first draw site of grid layouts (expression sites are numbered from 1)


def grid_tables(w: Writer, g: CGrid) -> None:
    """`GRID_*`: kinds, passability, fixed map, starts and goals (and the kinds random starts
    avoid, with grid.start_avoid_tiles)."""
    w(f"GRID_CHARS = {g.chars!r}")
    w(f"GRID_COLORS = {[list(c) for c in g.colors]!r}")
    w(f"GRID_BLOCKED = {g.blocked!r}")
    w(f"GRID_PASSABLE = np.array({g.passable!r}, dtype=bool)")
    w(f"GRID_MAP = {literal(g.fixed_map) if g.fixed_map is not None else None}")
    w(f"GRID_STARTS = {literal(g.starts) if g.starts is not None else None}")
    w(f"GRID_GOALS = {literal(g.goals) if g.goals is not None else None}")
    w(f"GRID_SITE = {GRID_SITE}")
    if g.start_avoid_kinds is not None:
        w(f"GRID_AVOID_KINDS = {g.start_avoid_kinds!r}", comment="grid.start_avoid_tiles: kinds random starts avoid")


def avoid_args(g: CGrid) -> str:
    """The keyword arguments of `generate_layout` and `layout_pool` for the cells (a local `avoid`,
    made by the backend) and tile kinds random starts avoid ("" when none)."""
    args = (["avoid=avoid"] if g.start_avoid is not None else []) + (
        ["avoid_kinds=GRID_AVOID_KINDS"] if g.start_avoid_kinds is not None else [])
    return "".join(", " + a for a in args)
