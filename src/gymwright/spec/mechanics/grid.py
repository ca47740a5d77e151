"""The `grid` mechanics module's schema (`Grid`, `TileKind`, `Solve`) and checks: size, tiles, layout (fixed, generated, solved), starts
and goals, slip, pool, `can_move`, and the built-in names and variables it declares."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from gymwright.spec.checked import CGrid, CVar
from gymwright.spec.checks.base import CheckerBase
from gymwright.spec.expr.check import Checked, Symbol, const_eval
from gymwright.spec.expr.types import INF, Info
from gymwright.spec.fields import Expr, Name, _Strict
from gymwright.spec.limits import MAX_GRID_POOL, MAX_GRID_SIDE, MAX_POOL_CELLS, MAX_SOLVE_SEED


class TileKind(_Strict):
    """A kind of grid tile; the first declared kind is the floor."""

    char: str = Field(min_length=1, max_length=1, description="Character in maps and ansi rendering.")
    color: list[int] = Field(default_factory=lambda: [200, 200, 200], min_length=3, max_length=3, description="RGB colour in rgb_array renderings.")
    density: Expr = Field(0, description="Share of generated cells of this kind (param expression).")
    blocked: bool = Field(False, description="Generated layouts keep every agent's goal reachable without crossing this kind.")
    passable: bool = Field(True, description="Agents can enter it (False = wall).")



class Solve(_Strict):
    """Layouts from an optimal multi-agent path finder (Conflict-Based Search), as in MAPF-FrozenLake.

    Every pooled layout is jointly solvable and solved once; `wait_ratio` of the pool need some
    agent to wait or detour for another; adds `optimal_cost` (state, int): the layout's optimal
    sum of arrival times, for metrics such as `sum(cost) == optimal_cost`. Needs a square grid of
    side 3..10, 1..5 agents, random starts and goals, one blocked tile kind (the holes, density
    at most 0.6, no other generated kind), `collision: block`, `pool` >= 1, and agents that stop
    on their goal at the first arrival (`can_move` false once there).
    """

    wait_ratio: Expr = Field(0.0, description="Share (0..1) of the pool's layouts whose optimal plan needs an agent to wait or detour for another (param expression; ignored with one agent).")
    seed: Expr = Field(0, description="Which family of pools the layouts come from (a constant int >= 0: a literal or an int param): pools of different seeds are independent draws, so instances held out for judging can be kept apart from those trained on.")



class Grid(_Strict):
    """The grid mechanics module: layout, start/goal placement, moves, collisions.

    Adds `pos`, `goal` (agent_state, [2] int), `tiles` (state, [height, width] int), `moved` and
    `conflict` (per-agent bools of the last step), one int constant per tile kind, and the
    helpers `tile(p)`, `manhattan(a, b)`, `view(p, r)`, `agents_view(p, r)`, `in_bounds(p)`.
    """

    height: int | str = Field(description="Rows (int or param expression).")
    width: int | str = Field(description="Columns.")
    tiles: dict[Name, TileKind] = Field(min_length=1, description="Tile kinds; the first is the floor.")
    map: list[str] | None = Field(None, description="Fixed layout, one string per row of tile chars. Omit to generate from densities.")
    starts: Literal["random"] | list[list[int]] = Field("random", description="`random` (distinct free cells) or one [row, col] per agent.")
    goals: Literal["random", "none"] | list[list[int]] = Field("random", description="`random` (reachable from the start), `none` (no goals: no `goal` variable), or one [row, col] per agent.")
    pool: Expr = Field(0, description="Draw layouts from a pool of this many, generated once per config (fast resets, as MAPF pools); 0 = a fresh layout every reset.")
    slip: Expr = Field(0.0, description="Probability a move is replaced by a perpendicular one.")
    collision: Literal["block", "none"] = Field("block", description="block: vertex and swap conflicts cancel the moves involved.")
    can_move: Expr = Field(True, description="Per-agent bool: whether the agent moves this step (e.g. `not done[me]`).")
    solve: Solve | None = Field(None, description="Draw pooled layouts that an optimal MAPF solver (CBS) solved: jointly solvable, a set share needing a wait, `optimal_cost` known. Omit for plain random layouts.")


DIRECTIONS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1), "stay": (0, 0)}


class GridChecks(CheckerBase):
    """`grid` (and `move` of actions without one)."""

    def check_grid(self) -> None:
        g = self.spec.grid
        if g is None:
            for role, r in self.spec.actions.items():
                for i, ch in enumerate(r):
                    if ch.move is not None:
                        self.error(f"actions.{role}[{i}].move", "`move` needs a `grid:` section", "declare a grid, or remove move")
            return
        h = self.const_int(g.height, "grid.height", "grid height", 1, MAX_GRID_SIDE)
        w = self.const_int(g.width, "grid.width", "grid width", 1, MAX_GRID_SIDE)
        if h is None or w is None:
            return
        kinds = list(g.tiles)
        chars = [t.char for t in g.tiles.values()]
        if len(set(chars)) != len(chars):
            self.error("grid.tiles", f"tile chars must be distinct, got {chars}")
        fixed = self._grid_map(g.map, h, w, chars)
        densities = []
        for k, (kname, tk) in enumerate(g.tiles.items()):
            self.declare(Symbol(kname, "builtin", Info("int", (), k, k, True, k), f"p.{kname}", "tile kind"), f"grid.tiles.{kname}")
            c = self.expr(tk.density, self.scope("grid density"), f"grid.tiles.{kname}.density")
            if c is not None and (c.info.dtype not in ("int", "float") or c.info.shape):
                self.error(f"grid.tiles.{kname}.density", f"density must be a number, got {c.info.describe()}")
                c = None
            densities.append(c)
        self._check_densities(kinds, densities)
        n = self.n_agents
        if n > h * w:
            self.error("grid", f"a {h}x{w} grid has {h * w} cells but the spec has {n} agents, and each agent "
                       "stands on a cell of its own", "make the grid larger (grid.height, grid.width) or give fewer "
                       "agents (agents.ROLE.count)", value=n)
        starts = self._grid_points(g.starts, "grid.starts", h, w, n)
        goals = self._grid_points(g.goals, "grid.goals", h, w, n)
        slip = self.expr(g.slip, self.scope("grid slip"), "grid.slip")
        pool = self.expr(g.pool, self.scope("grid pool"), "grid.pool")
        if pool is not None and (pool.info.dtype != "int" or pool.info.shape or not pool.info.const):
            self.error("grid.pool", f"pool must be a constant int (a literal or an int param), got {pool.info.describe()}")
        elif pool is not None and (pool.info.lo < 0 or pool.info.hi > MAX_GRID_POOL):
            self.error("grid.pool", f"pool must be 0..{MAX_GRID_POOL}", "0 draws a fresh layout at every reset")
        elif pool is not None and g.solve is None and int(const_eval(pool.tree.body)) * h * w > MAX_POOL_CELLS:
            layouts = int(const_eval(pool.tree.body))  # at the params checked (an instance may set another)
            self.error("grid.pool", f"a pool of {layouts:,} layouts of {h}x{w} cells holds {layouts * h * w:,} cells, "
                       f"all generated at the first reset; the limit is {MAX_POOL_CELLS:,}",
                       "give the pool fewer layouts, or `pool: 0` for a fresh layout at every reset")
        solve = self._check_solve(h, w, densities, pool) if g.solve is not None else None
        for sym in (Symbol("height", "builtin", Info("int", (), h, h, True, h), "p.height"),
                    Symbol("width", "builtin", Info("int", (), w, w, True, w), "p.width")):
            self.declare(sym, "grid")
        side = float(max(h, w) - 1)
        self.builtin_state.append(CVar("tiles", "int", (h, w), None, 0.0, len(kinds) - 1, False, doc="tile kind per cell", builtin=True))
        points = [("pos", "position [row, col]")] + ([("goal", "goal [row, col]")] if g.goals != "none" else [])
        for name, doc in points:
            self.builtin_agent_state.append(CVar(name, "int", (2,), None, 0.0, side, True, doc=doc, builtin=True))
        if solve is not None:
            self.builtin_state.append(CVar("optimal_cost", "int", (), None, 0.0, INF, False, builtin=True,
                                           doc="optimal sum of arrival times of this layout (grid.solve)"))
        for name, doc in (("moved", "moved in the last step"), ("conflict", "last move cancelled by another agent")):
            self.builtin_agent_state.append(CVar(name, "bool", (), None, 0.0, 1.0, True, doc=doc, builtin=True))
        for var in self.builtin_state + self.builtin_agent_state:
            shape = ((n,) if var.per_agent else ()) + var.shape
            self.declare(Symbol(var.name, "agent_state" if var.per_agent else "state",
                                Info(var.dtype, shape, var.lo, var.hi), f"v.{var.name}", var.doc), "grid")
        if fixed is not None:
            self._check_fixed_layout(fixed, starts, goals, [t.blocked for t in g.tiles.values()])
        self.grid = CGrid(h, w, kinds, chars, [tuple(t.color) for t in g.tiles.values()],  # type: ignore[misc]
                          densities, [t.blocked for t in g.tiles.values()],  # type: ignore[arg-type]
                          [t.passable for t in g.tiles.values()], fixed, starts, goals,
                          slip, g.collision, None, n, g.goals != "none", pool, solve,  # type: ignore[arg-type]
                          self._check_solve_seed() if solve is not None else None)

    def _check_densities(self, kinds: list[str], densities: list[Checked | None]) -> None:
        """A generated layout gives each kind after the floor its density's share of the cells: each
        share 0..1 and, over every param value the spec allows, together at most 1."""
        total, named = 0.0, []
        for k, c in enumerate(densities):
            if k == 0 or c is None:
                continue  # the floor takes what the others leave
            if c.info.lo < 0 or c.info.hi > 1:
                shown = f"is {c.info.lo:g}" if c.info.lo == c.info.hi else f"may be {c.info.lo:g}..{c.info.hi:g}"
                self.error(f"grid.tiles.{kinds[k]}.density", f"density {shown}; it is the share of the cells of this "
                           "kind, 0..1", "bound it to 0..1 (a literal, or a param's min and max)", value=c.source)
                return
            total += c.info.hi
            named.append(kinds[k])
        if total > 1:
            self.error("grid.tiles", f"the densities of {', '.join(named)} may reach {total:g} together; they share "
                       "the cells, so together at most 1", "bound the params so that their maxima sum to 1 or less")

    def _check_solve(self, h: int, w: int, densities: list[Checked | None], pool: Checked | None) -> Checked | None:
        """`grid.solve`: the layouts must be ones the MAPF generator can make; returns `wait_ratio`."""
        from gymwright.mapf.instances import AGENTS, MAX_HOLE_RATIO, SIZES

        g, where = self.spec.grid, "grid.solve"
        assert g is not None and g.solve is not None
        if h != w or not SIZES[0] <= h <= SIZES[1]:
            self.error(where, f"solved layouts need a square grid of side {SIZES[0]}..{SIZES[1]}, got {h}x{w}",
                       "make height and width the same param (e.g. `size`) with that range")
        if not AGENTS[0] <= self.n_agents <= AGENTS[1]:
            self.error(where, f"solved layouts take {AGENTS[0]}..{AGENTS[1]} agents, the spec has {self.n_agents}")
        fixed = [name for name, bad in (("map", g.map is not None), ("starts", g.starts != "random"),
                                        ("goals", g.goals != "random")) if bad]
        if fixed:
            self.error(where, f"solved layouts draw the lake, starts and goals themselves; grid.{fixed[0]} "
                       "must be left out (random)", f"remove grid.{fixed[0]}, or remove grid.solve")
        if g.collision != "block":
            self.error(where, "solved layouts assume vertex and swap conflicts are blocked", "set `collision: block`")
        kinds = list(g.tiles)
        holes = [k for k, t in enumerate(g.tiles.values()) if t.blocked]
        if len(holes) != 1:
            self.error(where, f"solved layouts need exactly one blocked tile kind (the holes), got {len(holes)}",
                       "mark the hole kind `blocked: true`")
        for k, c in enumerate(densities):
            if k in holes and c is not None and c.info.hi > MAX_HOLE_RATIO:
                self.error(f"grid.tiles.{kinds[k]}.density", f"the hole density may reach {c.info.hi:g}; "
                           f"solved layouts take at most {MAX_HOLE_RATIO}", f"bound it to 0..{MAX_HOLE_RATIO}")
            elif k and k not in holes and c is not None and (not c.info.const or c.info.hi != 0):
                self.error(f"grid.tiles.{kinds[k]}.density", "solved layouts generate only the floor and the holes",
                           "give this kind no density, or remove grid.solve")
        if pool is None or pool.info.lo < 1:
            self.error("grid.pool", "solved layouts are drawn from a pool, so `pool` must be at least 1",
                       "give pool a minimum of 1 (e.g. a param with min 1)")
        ratio = self.expr(g.solve.wait_ratio, self.scope("grid wait ratio"), f"{where}.wait_ratio")
        if ratio is not None and (ratio.info.dtype not in ("int", "float") or ratio.info.shape or not ratio.info.const):
            self.error(f"{where}.wait_ratio", f"wait_ratio must be a constant number (a literal or a param), got {ratio.info.describe()}")
        elif ratio is not None and (ratio.info.lo < 0 or ratio.info.hi > 1):
            self.error(f"{where}.wait_ratio", f"wait_ratio may be {ratio.info.lo:g}..{ratio.info.hi:g}; it is a share, 0..1",
                       "bound the param to 0..1")
        return ratio

    def _check_solve_seed(self) -> Checked | None:
        """`grid.solve.seed`: a constant int 0..MAX_SOLVE_SEED (which family of solved pools)."""
        g, where = self.spec.grid, "grid.solve.seed"
        assert g is not None and g.solve is not None
        seed = self.expr(g.solve.seed, self.scope("grid solve seed"), where)
        if seed is not None and (seed.info.dtype != "int" or seed.info.shape or not seed.info.const):
            self.error(where, f"seed must be a constant int (a literal or an int param), got {seed.info.describe()}",
                       "give an int literal, or an int param (`type: int`)")
        elif seed is not None and (seed.info.lo < 0 or seed.info.hi > MAX_SOLVE_SEED):
            self.error(where, f"seed may be {seed.info.lo:g}..{seed.info.hi:g}; it must lie in 0..{MAX_SOLVE_SEED}",
                       f"bound the param to 0..{MAX_SOLVE_SEED}")
        return seed

    def _check_fixed_layout(self, tiles: np.ndarray, starts: np.ndarray | None, goals: np.ndarray | None,
                            blocked: list[bool]) -> None:
        """A fixed map must admit the agents and keep each goal reachable (checked once, here)."""
        from gymwright.runtime.grid import generate_layout

        def uniforms(stream: int, n: int) -> np.ndarray:
            return np.random.default_rng(stream).random(n)

        try:
            generate_layout(tiles.shape[0], tiles.shape[1], self.n_agents, [0.0] * len(blocked), blocked,
                            uniforms, tiles, starts, goals)
        except ValueError as e:
            self.error("grid.map", f"the fixed layout does not work: {e}",
                       "open a path between each start and its goal, or move the starts/goals")

    def _grid_map(self, rows: list[str] | None, h: int, w: int, chars: list[str]) -> np.ndarray | None:
        if rows is None:
            return None
        if len(rows) != h:
            self.error("grid.map", f"map has {len(rows)} rows but grid.height is {h}")
            return None
        out = np.zeros((h, w), dtype=np.int64)
        for r, row in enumerate(rows):
            if len(row) != w:
                self.error(f"grid.map[{r}]", f"row has {len(row)} cells but grid.width is {w}", value=row)
                return None
            for c, ch in enumerate(row):
                if ch not in chars:
                    self.error(f"grid.map[{r}]", f"unknown tile char {ch!r} at column {c}", f"tile chars: {chars}", value=row)
                    return None
                out[r, c] = chars.index(ch)
        return out

    def _grid_points(self, pts: Any, path: str, h: int, w: int, n: int) -> np.ndarray | None:
        if pts in ("random", "none"):
            return None
        arr = np.asarray(pts, dtype=np.int64)
        if arr.shape != (n, 2):
            self.error(path, f"expected {n} positions [row, col] (one per agent), got shape {list(arr.shape)}")
            return None
        if (arr < 0).any() or (arr[:, 0] >= h).any() or (arr[:, 1] >= w).any():
            self.error(path, f"positions must lie inside the {h}x{w} grid", value=pts)
            return None
        return arr

    def check_grid_late(self) -> bool:
        g = self.spec.grid
        if g is None or self.grid is None:
            return False
        n = self.n_agents
        c = self.expr(g.can_move, self.scope("grid.can_move", per_agent=True), "grid.can_move")
        if c is not None and (c.info.dtype != "bool" or c.info.shape):
            self.error("grid.can_move", f"can_move must be a per-agent bool, got {c.info.describe()}")
        self.grid.can_move = c  # type: ignore[assignment]
        return c is not None and n > 0
