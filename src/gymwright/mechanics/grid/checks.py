"""The `grid` section's checks: size, tiles, layout (fixed, generated, solved), starts and goals,
slip, pool, `can_move`, the `move` of a choice, and the names and variables it declares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gymwright.mechanics.grid.checked import CGrid
from gymwright.mechanics.grid.runtime import generate_layout
from gymwright.mechanics.grid.schema import DIRECTIONS, Grid
from gymwright.spec.checked import CChoice, CheckedSpec, CRole, CVar
from gymwright.spec.checks.context import CheckContext
from gymwright.spec.expr.check import Checked, Symbol, const_eval
from gymwright.spec.expr.types import INF, Info
from gymwright.spec.limits import MAX_GRID_POOL, MAX_GRID_SIDE, MAX_POOL_CELLS, MAX_SOLVE_SEED

if TYPE_CHECKING:
    from gymwright.spec.model import Choice


MOVE_TO = "move_to"
"""The name `grid.can_move` reads this step's move targets by (with `can_move_sees_actions`)."""


def grid_of(cs: CheckedSpec | CheckContext) -> CGrid | None:
    """The checked grid of a spec (None: it has no `grid:`)."""
    g = cs.mechanics.get("grid")
    assert g is None or isinstance(g, CGrid)
    return g


class GridChecks:
    """`grid` (and the `move` of a choice): the grid module's `ModuleChecks`."""

    def declare(self, ctx: CheckContext, section: Any) -> None:
        if section is None:
            _check_moves_without_grid(ctx)
            return
        assert isinstance(section, Grid)
        g = section
        h = ctx.const_int(g.height, "grid.height", "grid height", 1, MAX_GRID_SIDE)
        w = ctx.const_int(g.width, "grid.width", "grid width", 1, MAX_GRID_SIDE)
        if h is None or w is None:
            return
        kinds = list(g.tiles)
        chars = [t.char for t in g.tiles.values()]
        if len(set(chars)) != len(chars):
            ctx.error("grid.tiles", f"tile chars must be distinct, got {chars}")
        fixed = _grid_map(ctx, g.map, h, w, chars)
        densities = _check_tile_kinds(ctx, g)
        _check_densities(ctx, kinds, densities)
        n = ctx.n_agents
        if n > h * w:
            ctx.error("grid", f"a {h}x{w} grid has {h * w} cells but the spec has {n} agents, and each agent "
                      "stands on a cell of its own", "make the grid larger (grid.height, grid.width) or give fewer "
                      "agents (agents.ROLE.count)", value=n)
        starts = _grid_points(ctx, g.starts, "grid.starts", h, w, n)
        goals = _grid_points(ctx, g.goals, "grid.goals", h, w, n)
        avoid, avoid_kinds = _check_start_avoid(ctx, g, h, w, kinds, fixed)
        slip = ctx.expr(g.slip, ctx.scope("grid slip"), "grid.slip")
        pool = _check_pool(ctx, g, h, w)
        solve = _check_solve(ctx, g, h, w, densities, pool) if g.solve is not None else None
        _declare_grid_names(ctx, g, h, w, len(kinds), solve is not None)
        if fixed is not None:
            _check_fixed_layout(ctx, fixed, starts, goals, [t.blocked for t in g.tiles.values()])
        ctx.mechanics["grid"] = CGrid(
            h, w, kinds, chars, [(t.color[0], t.color[1], t.color[2]) for t in g.tiles.values()],
            densities, [t.blocked for t in g.tiles.values()], [t.passable for t in g.tiles.values()], fixed,
            starts, goals, slip, g.collision, None, n, g.goals != "none", pool, solve,
            _check_solve_seed(ctx, g) if solve is not None else None, avoid, avoid_kinds, g.can_move_sees_actions)

    def choice(self, ctx: CheckContext, role: CRole, cc: CChoice, choice: Choice) -> None:
        move = choice.move
        if move is None:
            return
        cc.fields["move"] = DIRECTIONS[move] if isinstance(move, str) else tuple(move)
        if len(cc.fields["move"]) != 2:
            ctx.error(f"{cc.path}.move", f"move must be a direction or [drow, dcol], got {move}")

    def after_actions(self, ctx: CheckContext) -> bool:
        """`grid.can_move` (it may read this step's actions)."""
        g, grid = ctx.spec.grid, grid_of(ctx)
        if g is None:
            return True
        if grid is None:
            return False
        extra = None
        if g.can_move_sees_actions:
            taken = ctx.symbols.get(MOVE_TO) or ctx.action_symbols.get(MOVE_TO)
            if taken is not None:
                ctx.error("grid.can_move_sees_actions", f"`can_move_sees_actions` lets can_move read `{MOVE_TO}` (the "
                          f"cell each agent's move aims at this step), but the spec declares a {taken.kind} `{MOVE_TO}`",
                          f"rename the spec's `{MOVE_TO}` (e.g. `{MOVE_TO}_cell`)")
                return False
            extra = {MOVE_TO: Symbol(MOVE_TO, "builtin", Info("int", (ctx.n_agents, 2), -1.0, float(max(grid.height, grid.width)), False),
                                     MOVE_TO, "per agent: the cell its move aims at this step (before slip and collisions)")}
        scope = ctx.scope("grid.can_move", per_agent=True, actions=g.can_move_sees_actions, extra=extra,
                          hidden=None if g.can_move_sees_actions else _unseen_actions(ctx))
        c = ctx.expr(g.can_move, scope, "grid.can_move")
        if c is not None and (c.info.dtype != "bool" or c.info.shape):
            ctx.error("grid.can_move", f"can_move must be a per-agent bool, got {c.info.describe()}")
        grid.can_move = c
        return c is not None and ctx.n_agents > 0

    def expressions(self, cs: CheckedSpec) -> list[Checked | None]:
        g = grid_of(cs)
        return [] if g is None else [g.can_move, g.slip, *g.densities, g.start_avoid]


def _check_moves_without_grid(ctx: CheckContext) -> None:
    """Without a `grid:` section, no choice may have a `move`."""
    for role, r in ctx.spec.actions.items():
        for i, ch in enumerate(r):
            if ch.move is not None:
                ctx.error(f"actions.{role}[{i}].move", "`move` needs a `grid:` section", "declare a grid, or remove move")


def _check_tile_kinds(ctx: CheckContext, g: Grid) -> list[Checked | None]:
    """Declare each tile kind's name; return each kind's checked density (None: absent or bad)."""
    densities: list[Checked | None] = []
    for k, (kname, tk) in enumerate(g.tiles.items()):
        ctx.builtin(kname, k, "tile kind", f"grid.tiles.{kname}")
        c = ctx.expr(tk.density, ctx.scope("grid density"), f"grid.tiles.{kname}.density")
        if c is not None and (c.info.dtype not in ("int", "float") or c.info.shape):
            ctx.error(f"grid.tiles.{kname}.density", f"density must be a number, got {c.info.describe()}")
            c = None
        densities.append(c)
    return densities


def _check_pool(ctx: CheckContext, g: Grid, h: int, w: int) -> Checked | None:
    """`grid.pool`: a constant int 0..MAX_GRID_POOL whose layouts fit MAX_POOL_CELLS (unless solved)."""
    pool = ctx.expr(g.pool, ctx.scope("grid pool"), "grid.pool")
    if pool is None:
        return None
    if pool.info.dtype != "int" or pool.info.shape or not pool.info.const:
        ctx.error("grid.pool", f"pool must be a constant int (a literal or an int param), got {pool.info.describe()}")
    elif pool.info.lo < 0 or pool.info.hi > MAX_GRID_POOL:
        ctx.error("grid.pool", f"pool must be 0..{MAX_GRID_POOL}", "0 draws a fresh layout at every reset")
    elif g.solve is None and int(const_eval(pool.tree.body)) * h * w > MAX_POOL_CELLS:
        layouts = int(const_eval(pool.tree.body))  # at the params checked (an instance may set another)
        ctx.error("grid.pool", f"a pool of {layouts:,} layouts of {h}x{w} cells holds {layouts * h * w:,} cells, "
                  f"all generated at the first reset; the limit is {MAX_POOL_CELLS:,}",
                  "give the pool fewer layouts, or `pool: 0` for a fresh layout at every reset")
    return pool


def _declare_grid_names(ctx: CheckContext, g: Grid, h: int, w: int, n_kinds: int, solved: bool) -> None:
    """The names the grid declares: `height`, `width`, `tiles`, `optimal_cost` (solved layouts),
    and per agent `pos`, `goal` (with goals), `moved` and `conflict`."""
    ctx.builtin("height", h, "", "grid")
    ctx.builtin("width", w, "", "grid")
    side = float(max(h, w) - 1)
    ctx.builtin_var(CVar("tiles", "int", (h, w), None, 0.0, n_kinds - 1, False, doc="tile kind per cell", builtin=True), "grid")
    if solved:
        ctx.builtin_var(CVar("optimal_cost", "int", (), None, 0.0, INF, False, builtin=True,
                             doc="optimal sum of arrival times of this layout (grid.solve)"), "grid")
    points = [("pos", "position [row, col]")] + ([("goal", "goal [row, col]")] if g.goals != "none" else [])
    for name, doc in points:
        ctx.builtin_var(CVar(name, "int", (2,), None, 0.0, side, True, doc=doc, builtin=True), "grid")
    for name, doc in (("moved", "moved in the last step"), ("conflict", "last move cancelled by another agent")):
        ctx.builtin_var(CVar(name, "bool", (), None, 0.0, 1.0, True, doc=doc, builtin=True), "grid")


def _unseen_actions(ctx: CheckContext) -> dict[str, str]:
    """Why `grid.can_move` cannot read this step's actions and `move_to`, and how it can."""
    how = "grid.can_move reads it only with `can_move_sees_actions: true` (in grid:)"
    hidden = {name: f"is an action of this step; {how}" for name in ctx.action_names()}
    hidden[MOVE_TO] = f"is the cell each agent's move aims at this step; {how}"
    return hidden


def _check_start_avoid(ctx: CheckContext, g: Grid, h: int, w: int, kinds: list[str],
                       fixed: np.ndarray | None) -> tuple[Checked | None, list[bool] | None]:
    """`grid.start_avoid` (cells or a mask, params and consts only) and `grid.start_avoid_tiles`
    (tile kinds): what random starts never use."""
    if g.start_avoid is None and not g.start_avoid_tiles:
        return None, None
    if not _start_avoid_allowed(ctx, g):
        return None, None
    avoid_kinds = None
    if g.start_avoid_tiles:
        avoid_kinds = _check_avoid_tiles(ctx, g, kinds)
        if avoid_kinds is None:
            return None, None
    avoid = None
    if g.start_avoid is not None:
        avoid = _check_avoid_cells(ctx, g, h, w)
        if avoid is None:
            return None, avoid_kinds
    if ctx.n_agents:
        _check_room(ctx, g, h, w, avoid, avoid_kinds, fixed)
    return avoid, avoid_kinds


def _start_avoid_allowed(ctx: CheckContext, g: Grid) -> bool:
    """`start_avoid` and `start_avoid_tiles` need random starts and no `grid.solve`."""
    for key, given in (("start_avoid", g.start_avoid is not None), ("start_avoid_tiles", bool(g.start_avoid_tiles))):
        if given and g.starts != "random":
            ctx.error(f"grid.{key}", f"`{key}` says where random starts may not lie, but grid.starts is fixed",
                      f"remove grid.{key}, or set `starts: random`")
            return False
        if given and g.solve is not None:
            ctx.error(f"grid.{key}", "solved layouts (grid.solve) draw their starts themselves",
                      f"remove grid.{key}, or remove grid.solve")
            return False
    return True


def _check_avoid_tiles(ctx: CheckContext, g: Grid, kinds: list[str]) -> list[bool] | None:
    """`grid.start_avoid_tiles`: tile kinds of grid.tiles; per kind, whether starts avoid it."""
    unknown = [k for k in g.start_avoid_tiles if k not in kinds]
    if unknown:
        ctx.error("grid.start_avoid_tiles", f"`{unknown[0]}` is not a tile kind of grid.tiles",
                  f"name tile kinds: {', '.join(kinds)}", value=g.start_avoid_tiles)
        return None
    return [k in g.start_avoid_tiles for k in kinds]


def _check_avoid_cells(ctx: CheckContext, g: Grid, h: int, w: int) -> Checked | None:
    """`grid.start_avoid` (given): int cells or a bool mask of the grid, from params and consts."""
    src = _avoid_source(ctx, g)
    if src is None:
        return None
    where = "grid.start_avoid"
    scope = ctx.scope("grid.start_avoid", hidden={
        "pos": "is not drawn yet when the starts are (start_avoid may read params and consts)",
        "tiles": "is not drawn yet when the starts are; name tile kinds in grid.start_avoid_tiles"})
    avoid = ctx.expr(src, scope, where)
    if avoid is None:
        return None
    i = avoid.info
    cells = i.dtype == "int" and (i.shape == (2,) or (len(i.shape) == 2 and i.shape[1] == 2))
    mask = i.dtype == "bool" and i.shape == (h, w)
    if not (cells or mask):
        ctx.error(where, f"start_avoid must be int cells [row, col] (shape [k, 2]) or a bool mask of the grid's "
                  f"shape [{h}, {w}], got {i.describe()}",
                  "give a list of [row, col] pairs, e.g. `[[0, 0], [0, 1]]`, or a [height, width] bool array",
                  value=g.start_avoid)
        return None
    if not i.const:
        ctx.error(where, "start_avoid is fixed before the episode starts: it may read params and consts, "
                  "not state, actions or random draws", "compute it from params and consts", value=g.start_avoid)
        return None
    value = np.asarray(const_eval(avoid.tree.body))
    if cells and not _avoid_cells_inside(ctx, g, value, h, w):
        return None
    return avoid


def _avoid_source(ctx: CheckContext, g: Grid) -> str | int | float | None:
    """The source of `grid.start_avoid`: an expression, or a list of cells as a list literal."""
    src = g.start_avoid
    if not isinstance(src, list):  # an expression
        return src
    if not src or any(len(cell) != 2 for cell in src):  # [[row, col], ...]: checked as a list literal
        ctx.error("grid.start_avoid", "a list of cells must hold one or more [row, col] pairs", "give "
                  "[[row, col], ...], or remove grid.start_avoid to let random starts use every free cell",
                  value=src)
        return None
    return repr(src)


def _avoid_cells_inside(ctx: CheckContext, g: Grid, value: np.ndarray, h: int, w: int) -> bool:
    """A literal list of cells in `grid.start_avoid` (its `value`) must lie on the grid."""
    arr = value.astype(np.int64).reshape(-1, 2)
    off = (arr[:, 0] < 0) | (arr[:, 0] >= h) | (arr[:, 1] < 0) | (arr[:, 1] >= w)
    if isinstance(g.start_avoid, list) and off.any():
        ctx.error("grid.start_avoid", f"cell {arr[off][0].tolist()} lies outside the {h}x{w} grid",
                  "give cells with 0 <= row < height and 0 <= col < width", value=g.start_avoid)
        return False
    return True


def _check_room(ctx: CheckContext, g: Grid, h: int, w: int, avoid: Checked | None, avoid_kinds: list[bool] | None,
                fixed: np.ndarray | None) -> None:
    """The cells left to random starts (at the params' defaults) must hold every agent."""
    from gymwright.mechanics.grid.runtime import start_avoid_mask

    bad = np.zeros((h, w), dtype=bool)
    if avoid is not None:
        bad |= start_avoid_mask(h, w, np.asarray(const_eval(avoid.tree.body)))
    if fixed is not None:
        passable = np.array([not t.blocked and t.passable for t in g.tiles.values()])
        bad |= ~passable[fixed]
        if avoid_kinds is not None:
            bad |= np.asarray(avoid_kinds, dtype=bool)[fixed]
    left = int((~bad).sum())
    if left < ctx.n_agents:
        keys = " and ".join(k for k, on in (("grid.start_avoid", avoid is not None),
                                            ("grid.start_avoid_tiles", avoid_kinds is not None)) if on)
        ctx.error("grid.start_avoid" if avoid is not None else "grid.start_avoid_tiles",
                  f"{keys} leave{'s' if ' and ' not in keys else ''} {left} cell{'s' if left != 1 else ''} for the random starts of "
                  f"{ctx.n_agents} agents, each on a cell of its own", "avoid fewer cells, or make the grid larger")


def _check_densities(ctx: CheckContext, kinds: list[str], densities: list[Checked | None]) -> None:
    """A generated layout gives each kind after the floor its density's share of the cells: each
    share 0..1 and, over every param value the spec allows, together at most 1."""
    total, named = 0.0, []
    for k, c in enumerate(densities):
        if k == 0 or c is None:
            continue  # the floor takes what the others leave
        if c.info.lo < 0 or c.info.hi > 1:
            shown = f"is {c.info.lo:g}" if c.info.lo == c.info.hi else f"may be {c.info.lo:g}..{c.info.hi:g}"
            ctx.error(f"grid.tiles.{kinds[k]}.density", f"density {shown}; it is the share of the cells of this "
                      "kind, 0..1", "bound it to 0..1 (a literal, or a param's min and max)", value=c.source)
            return
        total += c.info.hi
        named.append(kinds[k])
    if total > 1:
        ctx.error("grid.tiles", f"the densities of {', '.join(named)} may reach {total:g} together; they share "
                  "the cells, so together at most 1", "bound the params so that their maxima sum to 1 or less")


def _check_solve(ctx: CheckContext, g: Grid, h: int, w: int, densities: list[Checked | None],
                 pool: Checked | None) -> Checked | None:
    """`grid.solve`: the layouts must be ones the MAPF generator can make; returns `wait_ratio`."""
    from gymwright.mapf.instances import AGENTS, MAX_HOLE_RATIO, SIZES

    where = "grid.solve"
    assert g.solve is not None
    if h != w or not SIZES[0] <= h <= SIZES[1]:
        ctx.error(where, f"solved layouts need a square grid of side {SIZES[0]}..{SIZES[1]}, got {h}x{w}",
                  "make height and width the same param (e.g. `size`) with that range")
    if not AGENTS[0] <= ctx.n_agents <= AGENTS[1]:
        ctx.error(where, f"solved layouts take {AGENTS[0]}..{AGENTS[1]} agents, the spec has {ctx.n_agents}")
    fixed = [name for name, bad in (("map", g.map is not None), ("starts", g.starts != "random"),
                                    ("goals", g.goals != "random")) if bad]
    if fixed:
        ctx.error(where, f"solved layouts draw the lake, starts and goals themselves; grid.{fixed[0]} "
                  "must be left out (random)", f"remove grid.{fixed[0]}, or remove grid.solve")
    if g.collision != "block":
        ctx.error(where, "solved layouts assume vertex and swap conflicts are blocked", "set `collision: block`")
    kinds = list(g.tiles)
    holes = [k for k, t in enumerate(g.tiles.values()) if t.blocked]
    if len(holes) != 1:
        ctx.error(where, f"solved layouts need exactly one blocked tile kind (the holes), got {len(holes)}",
                  "mark the hole kind `blocked: true`")
    for k, c in enumerate(densities):
        if k in holes and c is not None and c.info.hi > MAX_HOLE_RATIO:
            ctx.error(f"grid.tiles.{kinds[k]}.density", f"the hole density may reach {c.info.hi:g}; "
                      f"solved layouts take at most {MAX_HOLE_RATIO}", f"bound it to 0..{MAX_HOLE_RATIO}")
        elif k and k not in holes and c is not None and (not c.info.const or c.info.hi != 0):
            ctx.error(f"grid.tiles.{kinds[k]}.density", "solved layouts generate only the floor and the holes",
                      "give this kind no density, or remove grid.solve")
    if pool is None or pool.info.lo < 1:
        ctx.error("grid.pool", "solved layouts are drawn from a pool, so `pool` must be at least 1",
                  "give pool a minimum of 1 (e.g. a param with min 1)")
    ratio = ctx.expr(g.solve.wait_ratio, ctx.scope("grid wait ratio"), f"{where}.wait_ratio")
    if ratio is not None and (ratio.info.dtype not in ("int", "float") or ratio.info.shape or not ratio.info.const):
        ctx.error(f"{where}.wait_ratio", f"wait_ratio must be a constant number (a literal or a param), got {ratio.info.describe()}")
    elif ratio is not None and (ratio.info.lo < 0 or ratio.info.hi > 1):
        ctx.error(f"{where}.wait_ratio", f"wait_ratio may be {ratio.info.lo:g}..{ratio.info.hi:g}; it is a share, 0..1",
                  "bound the param to 0..1")
    return ratio


def _check_solve_seed(ctx: CheckContext, g: Grid) -> Checked | None:
    """`grid.solve.seed`: a constant int 0..MAX_SOLVE_SEED (which family of solved pools)."""
    where = "grid.solve.seed"
    assert g.solve is not None
    seed = ctx.expr(g.solve.seed, ctx.scope("grid solve seed"), where)
    if seed is not None and (seed.info.dtype != "int" or seed.info.shape or not seed.info.const):
        ctx.error(where, f"seed must be a constant int (a literal or an int param), got {seed.info.describe()}",
                  "give an int literal, or an int param (`type: int`)")
    elif seed is not None and (seed.info.lo < 0 or seed.info.hi > MAX_SOLVE_SEED):
        ctx.error(where, f"seed may be {seed.info.lo:g}..{seed.info.hi:g}; it must lie in 0..{MAX_SOLVE_SEED}",
                  f"bound the param to 0..{MAX_SOLVE_SEED}")
    return seed


def _check_fixed_layout(ctx: CheckContext, tiles: np.ndarray, starts: np.ndarray | None, goals: np.ndarray | None,
                        blocked: list[bool]) -> None:
    """A fixed map must admit the agents and keep each goal reachable (checked once, here)."""
    def uniforms(stream: int, n: int) -> np.ndarray:
        return np.random.default_rng(stream).random(n)

    try:
        generate_layout(tiles.shape[0], tiles.shape[1], ctx.n_agents, [0.0] * len(blocked), blocked,
                        uniforms, tiles, starts, goals)
    except ValueError as e:
        ctx.error("grid.map", f"the fixed layout does not work: {e}",
                  "open a path between each start and its goal, or move the starts/goals")


def _grid_map(ctx: CheckContext, rows: list[str] | None, h: int, w: int, chars: list[str]) -> np.ndarray | None:
    if rows is None:
        return None
    if len(rows) != h:
        ctx.error("grid.map", f"map has {len(rows)} rows but grid.height is {h}")
        return None
    out = np.zeros((h, w), dtype=np.int64)
    for r, row in enumerate(rows):
        if len(row) != w:
            ctx.error(f"grid.map[{r}]", f"row has {len(row)} cells but grid.width is {w}", value=row)
            return None
        for c, ch in enumerate(row):
            if ch not in chars:
                ctx.error(f"grid.map[{r}]", f"unknown tile char {ch!r} at column {c}", f"tile chars: {chars}", value=row)
                return None
            out[r, c] = chars.index(ch)
    return out


def _grid_points(ctx: CheckContext, pts: Any, path: str, h: int, w: int, n: int) -> np.ndarray | None:
    if pts in ("random", "none"):
        return None
    arr = np.asarray(pts, dtype=np.int64)
    if arr.shape != (n, 2):
        ctx.error(path, f"expected {n} positions [row, col] (one per agent), got shape {list(arr.shape)}")
        return None
    if (arr < 0).any() or (arr[:, 0] >= h).any() or (arr[:, 1] >= w).any():
        ctx.error(path, f"positions must lie inside the {h}x{w} grid", value=pts)
        return None
    return arr
