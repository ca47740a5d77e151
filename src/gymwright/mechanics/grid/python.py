"""The grid module's part of the Python backend: its constants, the layout at reset (fixed,
generated, pooled, solved), moves with slip and collisions at each step, its rendering, and the
lowering of its functions (one env: `runtime.py`)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from gymwright.compile.agent_axis import AxisEmitter, NotOnAxis
from gymwright.compile.pyexpr import PyEmitter
from gymwright.mechanics.emit import PyGen, PythonPart
from gymwright.mechanics.grid.checked import CGrid
from gymwright.mechanics.grid.checks import MOVE_TO, grid_of
from gymwright.mechanics.grid.tables import avoid_args, grid_tables
from gymwright.spec.checked import CheckedSpec
from gymwright.spec.expr.types import Info, info_of
from gymwright.spec.names import ident

SMALL = 16
"""Up to this many agents a step resolves the moves in Python lists (`resolve_moves`); beyond, with
numpy (`resolve_moves_batch` on one copy)."""


def _grid(gen: PyGen) -> CGrid:
    g = grid_of(gen.cs)
    assert g is not None
    return g


# --------------------------------------------------------------------------- the functions' lowering

def _info(node: ast.AST) -> Info:
    return info_of(node)  # the checker's type of the node


def _cell(node: ast.AST) -> bool:
    return _info(node).shape == (2,)


def _call(template: str) -> Callable[[PyEmitter, ast.Call], str]:
    def emit(e: PyEmitter, node: ast.Call) -> str:
        return template.format(*e.args(node))
    return emit


CALLS: dict[str, Callable[[PyEmitter, ast.Call], str]] = {
    "tile": lambda e, n: (f"rt_tile1(v.tiles, {e.emit(n.args[0])})" if _cell(n.args[0])
                          else f"rt_tile(v.tiles, {e.emit(n.args[0])})"),
    "manhattan": lambda e, n: (f"rt_manhattan1({e.emit(n.args[0])}, {e.emit(n.args[1])})"
                               if _cell(n.args[0]) and _cell(n.args[1])
                               else f"rt_manhattan({e.emit(n.args[0])}, {e.emit(n.args[1])})"),
    "in_bounds": _call("rt_in_bounds(v.tiles, {0})"),
    "view": _call("rt_view(v, {0}, {1})"),
    "agents_view": _call("rt_agents_view(v, {0}, {1})"),
    "agents_view_of": _call("rt_agents_view_of(v, {0}, {1}, {2})"),
}


def _axis_manhattan(e: AxisEmitter, node: ast.Call) -> tuple[str, bool]:
    a, b = node.args
    if not (_info(a).shape == _info(b).shape == (2,) and _info(a).dtype == _info(b).dtype == "int"):
        raise NotOnAxis("manhattan of non-cells")
    (ca, x), (cb, y) = e.emit(a), e.emit(b)
    if not (x and y):
        raise NotOnAxis("manhattan off the axis")
    return f"np.abs(np.subtract({ca}, {cb})).sum(axis=1)", True


def _axis_window(helper: str) -> Callable[[AxisEmitter, ast.Call], tuple[str, bool]]:
    def emit(e: AxisEmitter, node: ast.Call) -> tuple[str, bool]:
        center, radius = node.args
        (cc, x), (cr, y) = e.emit(center), e.emit(radius)
        if not x or y or _info(center).shape != (2,):
            raise NotOnAxis("window")
        if helper == "rt_agents_view_rows":
            return e.share_window(cc, cr, None), True
        return e.share(f"{helper}(v, {cc}, {cr})"), True
    return emit


def _axis_agents_view_of(e: AxisEmitter, node: ast.Call) -> tuple[str, bool]:
    center, radius, x = node.args
    (cc, on), (cr, r_on), (cx, x_on) = e.emit(center), e.emit(radius), e.emit(x)
    if not on or r_on or x_on or _info(center).shape != (2,):
        raise NotOnAxis("window of values")
    return e.share_window(cc, cr, cx), True


AXIS_CALLS: dict[str, Callable[[AxisEmitter, ast.Call], tuple[str, bool]]] = {
    "manhattan": _axis_manhattan,
    "view": _axis_window("rt_view_rows"),
    "agents_view": _axis_window("rt_agents_view_rows"),
    "agents_view_of": _axis_agents_view_of,
}


class PyGrid(PythonPart):
    """`PYTHON` of the grid module (a `mechanics.emit.PythonPart`)."""

    calls = CALLS
    axis_calls = AXIS_CALLS

    def constants(self, gen: PyGen) -> None:
        """The grid's tables (shared with the batch backend), the solved pools (grid.solve) and
        each agent's move per action."""
        g, w = _grid(gen), gen.w
        grid_tables(w, g)
        if g.wait_ratio is not None:
            self.solved_table(gen)
        moves = []
        for i in range(gen.n):
            r = gen.cs.role_of(i)
            moves.append([tuple(c.fields.get("move") or (0, 0)) for c in r.choices for _ in range(c.n)] + [(0, 0)])
        w("# per agent: (row, col) step of each action; the last entry (action -1) is no move")
        w(f"GRID_MOVES = {moves!r}")

    def solved_table(self, gen: PyGen) -> None:
        """`SOLVED_POOLS`: the solved layout pools the module carries (empty: gymwright solves them)."""
        w = gen.w
        if not gen.solved_pools:
            w("SOLVED_POOLS = {}", comment="grid.solve: pools of solved layouts carried by this module (none: gymwright solves them)")
            return
        w("SOLVED_POOLS = {", comment="grid.solve: pools of solved layouts carried by this module (npz, base64)")
        for name, text in gen.solved_pools.items():
            w(f"    {name!r}: (")
            for i in range(0, len(text), 88):
                w(f"        {text[i:i + 88]!r}")
            w("    ),")
        w("}")

    def methods(self, gen: PyGen) -> None:
        """`solved_config()`: the pool of solved layouts an instance draws from (grid.solve)."""
        g, w = _grid(gen), gen.w
        if g.wait_ratio is None:
            return
        dens, pool = _layout_codes(gen, g)
        with w.block("def solved_config(self):"):
            w('"""(pool size, height, width, agents, densities, blocked kinds, wait ratio, seed) of this')
            w('instance\'s layouts (grid.solve): the arguments of `solved_layouts`, and the name of the pool an')
            w('export carries."""')
            w("p = self.p")
            w(f"return (int({pool}), {g.height}, {g.width}, {gen.n}, [{dens}], GRID_BLOCKED, "
              f"float({gen.em()(g.wait_ratio)}), int({gen.em()(g.solve_seed) if g.solve_seed is not None else 0}))")
        w("")

    def reset(self, gen: PyGen) -> None:
        """The layout, starts and goals (from a pool, fresh, or solved), and no move yet."""
        g, w = _grid(gen), gen.w
        if g.wait_ratio is not None:  # grid.solve: layout k of the pool of solved MAPF instances
            w("config = self.solved_config()", comment="grid.solve: layout k of the pool of solved MAPF instances")
            w("k = min(int(v._rng.u(GRID_SITE - 1, 0, 1)[0] * config[0]), config[0] - 1)")
            w("tiles, starts, goals, cost = solved_layouts(*config, [k], SOLVED_POOLS)")
            w("v.tiles, starts, goals, v.optimal_cost = tiles[0], starts[0], goals[0], int(cost[0])")
            w("v.pos, v.goal = starts.copy(), goals.copy()")
        else:
            dens, pool = _layout_codes(gen, g)
            avoid = avoid_args(g)
            w(f"pool = int({pool})", comment="grid: layout, starts and goals (from a pool, or fresh)")
            if g.start_avoid is not None:
                w(f"avoid = start_avoid_mask({g.height}, {g.width}, {gen.em()(g.start_avoid)})",
                  comment=f"grid.start_avoid: {g.start_avoid.source}")
            with w.block("if pool > 0:"):
                w(f"tiles, starts, goals = layout_pool(pool, {g.height}, {g.width}, {gen.n}, [{dens}], GRID_BLOCKED, GRID_MAP, GRID_STARTS, GRID_GOALS, GRID_SITE{avoid})")
                w("k = min(int(v._rng.u(GRID_SITE - 1, 0, 1)[0] * pool), pool - 1)")
                w("v.tiles, starts, goals = tiles[k].copy(), starts[k], goals[k]")
            with w.block("else:"):
                w("uniforms = lambda stream, n: v._rng.u(GRID_SITE + stream, 0, n)")
                w(f"v.tiles, starts, goals = generate_layout({g.height}, {g.width}, {gen.n}, [{dens}], GRID_BLOCKED, uniforms, GRID_MAP, GRID_STARTS, GRID_GOALS{avoid})")
            w("v.pos, v.goal = starts.copy(), goals.copy()" if g.has_goals else "v.pos = starts.copy()")
        for name in ("moved", "conflict"):
            w(f"v.{name} = np.zeros({gen.n}, dtype=bool)")

    def step(self, gen: PyGen) -> None:
        """Moves (the last entry of GRID_MOVES, a = -1, is no move), slip, collisions."""
        g, w, n = _grid(gen), gen.w, gen.n
        small = n <= SMALL
        _step_deltas(gen, n, small)
        if g.can_move_sees_actions:
            w("move_to = np.add(v.pos, delta)" if small else "move_to = v.pos + delta",
              comment="grid.can_move_sees_actions: the cell each move aims at (before slip and collisions)")
        _step_can_move(gen, g, n, small)
        _step_slip(gen, g, n, small)
        _step_resolve(gen, g, small)
        gen.replaced(["pos", "moved", "conflict"])
        gen.hook("grid")

    def array_reads(self, gen: PyGen) -> set[str]:
        """The choices with a move, read whole by `delta[v.<choice>] = move` beyond SMALL agents."""
        if gen.n <= SMALL:
            return set()
        return {c.name for r in gen.cs.roles for c in r.choices if c.fields.get("move") is not None}

    def frame(self, gen: PyGen, cell: int) -> str | None:
        size = "" if cell == 16 else f", {cell}"
        return f"render_rgb(self.v.tiles, GRID_COLORS, self.v.pos, {_goals(gen)}{size})"

    def text(self, gen: PyGen) -> str | None:
        return f"render_ansi(v.tiles, GRID_CHARS, v.pos, {_goals(gen)})"

    def carried(self, cs: CheckedSpec, make_env: Callable[[], Any]) -> dict[str, str]:
        """`grid.solve`: the solved layout pool of these params (solved here, once, by gymwright's
        MAPF solver), so that the export draws its layouts without gymwright."""
        g = grid_of(cs)
        if g is None or g.wait_ratio is None:
            return {}
        from gymwright.mapf.bake import solved_pools  # only MAPF exports need the solver

        return solved_pools(make_env())

    def carried_note(self, cs: CheckedSpec) -> str | None:
        g = grid_of(cs)
        if g is None or g.wait_ratio is None:
            return None
        return ("at the params it was generated with: it carries their solved layouts, and at other values of "
                "the layout pool's params it needs gymwright's solver")



def _step_deltas(gen: PyGen, n: int, small: bool) -> None:
    """The step's `delta`: each agent's move, from its action (a list) or its choices' `move`."""
    w = gen.w
    if small:
        w("delta = [GRID_MOVES[i][a] for i, a in enumerate(v.action)]", comment="grid: moves (the last entry, a = -1, is no move), slip, collisions")
        return
    w(f"delta = np.zeros(({n}, 2), dtype=np.int64)", comment="grid: moves, slip, collisions")
    for r in gen.cs.roles:
        for c in r.choices:
            move = c.fields.get("move")
            if move is not None and tuple(move) != (0, 0):
                w(f"delta[v.{ident(c.name)}] = {list(move)!r}", comment=f"{c.path}.move")


def _step_can_move(gen: PyGen, g: CGrid, n: int, small: bool) -> None:
    """The step's `can_move`: every agent, or `grid.can_move` per agent."""
    w = gen.w
    if g.can_move is None or g.can_move.source == "True":
        w(f"can_move = [True] * {n}" if small else f"can_move = np.ones({n}, dtype=bool)")
        return
    em = gen.em(per_agent=True, **({MOVE_TO: MOVE_TO} if g.can_move_sees_actions else {}))
    if small:
        gen.read_lists(gen.flags_from_lists(em, [g.can_move.tree.body]))
    code = f"[{em(g.can_move)} for me in range({n})]"
    w(f"can_move = {code}" if small else f"can_move = np.array({code}, dtype=bool)", comment=f"grid.can_move: {g.can_move.source}")


def _step_slip(gen: PyGen, g: CGrid, n: int, small: bool) -> None:
    """`grid.slip` (none when absent or a literal 0): turn some moves aside."""
    if g.slip is None or g.slip.source in ("0", "0.0"):
        return
    w = gen.w
    w(f"slip = float({gen.em()(g.slip)})", comment=f"grid.slip: {g.slip.source}")
    with w.block("if slip > 0:"):
        if small:
            w(f"delta = np.array(delta, dtype=np.int64).reshape({n}, 2)")
        w("delta = apply_slip(delta, slip, lambda stream, n: v._rng.u(GRID_SITE + stream, 0, n), 0)")


def _step_resolve(gen: PyGen, g: CGrid, small: bool) -> None:
    """Apply the moves and collisions: the scalar form up to SMALL agents, else the vector form."""
    w = gen.w
    if small:
        w(f"v.pos, v.moved, v.conflict = resolve_moves(v.pos, delta, can_move, v.tiles, {g.collision!r}, GRID_PASSABLE)")
        return
    w(f"pos, moved, conflict = resolve_moves_batch(v.pos[None], delta[None], can_move[None], v.tiles[None], {g.collision!r}, GRID_PASSABLE)",
      comment="the vector form, on one copy")
    w("v.pos, v.moved, v.conflict = pos[0], moved[0], conflict[0]")



def _layout_codes(gen: PyGen, g: CGrid) -> tuple[str, str]:
    """Code of the grid's tile densities (a list's items) and of its pool size."""
    dens = ", ".join(("float(" + gen.em()(d) + ")") if d is not None else "0.0" for d in g.densities)
    return dens, (gen.em()(g.pool) if g.pool is not None else "0")


def _goals(gen: PyGen) -> str:
    return "self.v.goal" if _grid(gen).has_goals else "np.zeros((0, 2), dtype=np.int64)"



PYTHON = PyGrid()
