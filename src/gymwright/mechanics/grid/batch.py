"""The grid module's part of the batch backend: its constants, a layout per copy at reset (fixed,
generated, pooled, solved), moves with slip and collisions at each step, the env's padded tiles,
and the lowering of its functions (B copies: `runtime_batch.py`)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from gymwright.compile.npexpr import NpEmitter, V, pad
from gymwright.mechanics.emit import BatchGen, BatchPart
from gymwright.mechanics.grid.checked import CGrid
from gymwright.mechanics.grid.checks import MOVE_TO, grid_of
from gymwright.mechanics.grid.tables import avoid_args, grid_tables
from gymwright.spec.checked import CheckedSpec


def _grid(gen: BatchGen) -> CGrid:
    g = grid_of(gen.cs)
    assert g is not None
    return g


# --------------------------------------------------------------------------- the functions' lowering

def _point(fn: str) -> Callable[[NpEmitter, ast.Call], tuple[str, int]]:
    def emit(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
        p = e.emit(node.args[0])
        kind = max(p.kind, 1)
        return f"{fn}({pad(p, kind, len(p.shape))})", kind
    return emit


def _window(fn: str, source: str, fill: str) -> Callable[[NpEmitter, ast.Call], tuple[str, int]]:
    def emit(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
        p, r = e.emit(node.args[0]), e.emit(node.args[1])
        if p.kind == 2 and fn == "agents_view_batch" and e.hoist is not None:
            return _window_sums(e, node, e.hoist(_plan(p, r))), 2
        if p.kind == 2:
            return f"{fn}({source}, {p.code}, {r.code}{fill})", 2
        return f"{fn}({source}, {pad(p, 1, 1)}[:, None, :], {r.code}{fill})[:, 0]", 1
    return emit


def _plan(center: V, radius: V) -> str:
    """Where the agents fall in the windows around one centre per agent (shared by the
    `agents_view` / `agents_view_of` calls of a method with the same centres and radius)."""
    return f"window_plan_batch(v.pos, {center.code}, {radius.code})"


def _window_sums(e: NpEmitter, node: ast.Call, args: str) -> str:
    """`window_sums_batch(args)`, recorded on `e` for `node` (`NpEmitter.window_sums`)."""
    code = f"window_sums_batch({args})"
    e.window_sums[id(node)] = (code, args)
    return code


def _agents_view_of(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
    p, r, x = (e.emit(a) for a in node.args)
    kind = max(p.kind, x.kind, 1)
    if p.kind == 2 and e.hoist is not None:
        return _window_sums(e, node, f"{e.hoist(_plan(p, r))}, {x.code}"), 2
    center = p.code if p.kind == 2 else f"{pad(p, 1, 1)}[:, None, :]"
    code = f"agents_view_of_batch(v.pos, {center}, {r.code}, {x.code})"
    return (code, 2) if kind == 2 else (f"{code}[:, 0]", 1)


def _manhattan(e: NpEmitter, node: ast.Call) -> tuple[str, int]:
    codes, kind = e.aligned(list(node.args))
    return f"b_manhattan({codes[0]}, {codes[1]})", kind


CALLS: dict[str, Callable[[NpEmitter, ast.Call], tuple[str, int]]] = {
    "tile": _point("(lambda q: tile_batch(v.tiles, q, self._pads))"),
    "in_bounds": _point("(lambda q: in_bounds_batch(v.tiles.shape[1:], q))"),
    "manhattan": _manhattan,
    "view": _window("view_batch", "v.tiles", ", -1, self._pads"),
    "agents_view": _window("agents_view_batch", "v.pos", ""),
    "agents_view_of": _agents_view_of,
}


class BatchGrid(BatchPart):
    """`BATCH` of the grid module (a `mechanics.emit.BatchPart`)."""

    calls = CALLS

    def tables(self, gen: BatchGen) -> None:
        """Each role's move per action, then the grid's tables (shared with the Python backend)."""
        for r in gen.cs.roles:
            if any(c.fields.get("move") is not None for c in r.choices):
                moves = [list(c.fields.get("move") or (0, 0)) for c in r.choices for _ in range(c.n)] + [[0, 0]]
                gen.w(f"MOVE_{r.name} = np.array({moves!r}, dtype=np.int64)", comment="(row, col) step per action; the last entry is no action")
        grid_tables(gen.w, _grid(gen))

    def fixed_start(self, cs: CheckedSpec) -> bool:
        return False  # a layout drawn at every reset (fresh, or from a pool)

    def reset(self, gen: BatchGen) -> None:
        """A layout per copy: fixed, generated, pooled or solved; and no move yet."""
        g, w, n = _grid(gen), gen.w, gen.n
        em = gen.em()
        _reset_arrays(gen, g, em)
        if g.wait_ratio is not None and g.solve_seed is not None:  # grid.solve: layouts of the pools of solved MAPF instances
            _reset_solved(gen, g, em)
        else:
            _reset_pooled(gen, g)
            _reset_fresh(gen, g)
            if g.has_goals:
                w("v.goal = goals")
        for name in ("moved", "conflict"):
            w(f"v.{name} = np.zeros((K, {n}), dtype=bool)")

    def step(self, gen: BatchGen) -> None:
        """Moves (v.action is -1 for no legal action: the last row of MOVE_<role>), slip, collisions."""
        g, w, n = _grid(gen), gen.w, gen.n
        roles = [r for r in gen.cs.roles if any(c.fields.get("move") is not None for c in r.choices)]
        if len(roles) == 1 and roles[0].count == n:
            w(f"delta = b_take_rows(MOVE_{roles[0].name}, v.action)",
              comment="grid: moves (v.action is -1 for no legal action: the last row), slip, collisions")
        else:
            w(f"delta = np.zeros((K, {n}, 2), dtype=np.int64)", comment="grid: moves, slip, collisions")
            for r in roles:
                sl = f"{r.start}:{r.start + r.count}"
                w(f"delta[:, {sl}] = MOVE_{r.name}[v.action[:, {sl}]]")
        gen.role_locals(0, n)
        if g.can_move_sees_actions:
            w("move_to = v.pos + delta", comment="grid.can_move_sees_actions: the cell each move aims at (before slip and collisions)")
        moves = {MOVE_TO: (MOVE_TO, 1)} if g.can_move_sees_actions else {}
        assert g.can_move is not None  # checked after the actions (GridChecks.after_actions)
        w(f"can_move = np.broadcast_to({pad(gen.em(True, None, **moves)(g.can_move), 2, 0)}, (K, {n}))", comment=f"grid.can_move: {g.can_move.source}")
        if g.slip is not None and g.slip.source not in ("0", "0.0"):
            w(f"slip = np.broadcast_to({pad(gen.em()(g.slip), 1, 0)}, (K,)).astype(np.float64)")
            with w.block("if (slip > 0).any():"):
                w(f"delta = apply_slip_batch(delta, slip, b_draw(r, GRID_SITE, None, {2 * n}))")
        w(f"v.pos, v.moved, v.conflict = resolve_moves_batch(v.pos, delta, can_move, v.tiles, {g.collision!r}, GRID_PASSABLE, self._pads)")

    def finish(self, gen: BatchGen) -> None:
        """`self._pads` (the tiles with a border, kept for `view_batch` and `tile_batch`) in
        `__init__` when the module uses it, and the restart's in-place write of the tiles
        mirrored into it."""
        lines = gen.w.lines
        if not any("self._pads" in line for line in lines):
            return
        at, indent = gen.restart_at
        lines[at:at] = [f"{indent}self._pads.put_rows(self.v.tiles, idx, v.tiles)  # the rows just put"]
        at, indent = gen.powers_at
        lines[at:at] = [f"{indent}# the tiles with a border of -1, kept between steps for view_batch",
                        f"{indent}self._pads = PaddedTiles()"]


def _reset_arrays(gen: BatchGen, g: CGrid, em: NpEmitter) -> None:
    """Reset's per-copy inputs (densities, pool sizes, avoided cells) and the arrays the layouts fill."""
    w, n = gen.w, gen.n
    dens = []
    for d in g.densities:
        if d is None:
            dens.append("np.zeros(K)")
        else:
            dv = em(d)
            dens.append(f"np.broadcast_to({pad(dv, 1, 0)}, (K,))")
    w(f"dens = np.stack([{', '.join(dens)}], axis=1)", comment="grid: layouts (one per copy)")
    w(f"v.tiles = np.zeros((K, {g.height}, {g.width}), dtype=np.int64)")
    w(f"v.pos = np.zeros((K, {n}, 2), dtype=np.int64)")
    w(f"goals = np.zeros((K, {n}, 2), dtype=np.int64)")
    pool = pad(em(g.pool), 1, 0) if g.pool is not None else "0"
    w(f"pools = np.broadcast_to({pool}, (K,)).astype(np.int64)")
    cells = g.height * g.width
    if g.start_avoid is not None:
        value = em(g.start_avoid)
        shape = g.start_avoid.info.shape
        w(f"avoids = np.broadcast_to({pad(value, 1, len(shape))}, (K, {', '.join(map(str, shape))}))",
          comment=f"grid.start_avoid: {g.start_avoid.source}")
        w(f"avoids = np.stack([start_avoid_mask({g.height}, {g.width}, a) for a in avoids]).reshape(K, {cells})")


def _reset_solved(gen: BatchGen, g: CGrid, em: NpEmitter) -> None:
    """`grid.solve`: each copy's layout drawn from the pool of solved MAPF instances of its config."""
    w, n = gen.w, gen.n
    assert g.wait_ratio is not None and g.solve_seed is not None
    w(f"waits = np.broadcast_to({pad(em(g.wait_ratio), 1, 0)}, (K,)).astype(np.float64)")
    w(f"families = np.broadcast_to({pad(em(g.solve_seed), 1, 0)}, (K,)).astype(np.float64)")
    w("u = b_draw(r, GRID_SITE - 1, None, 1)[:, 0]")
    w("configs = np.concatenate([dens, pools[:, None], waits[:, None], families[:, None]], axis=1)")
    w("v.optimal_cost = np.zeros(K, dtype=np.int64)")
    with w.block("for config, group in b_groups(configs):"):
        w("size = int(config[-3])")
        w("k = np.minimum((u[group] * size).astype(np.int64), size - 1)")
        w(f"v.tiles[group], v.pos[group], goals[group], v.optimal_cost[group] = solved_layouts(size, {g.height}, {g.width}, {n}, config[:-3].tolist(), GRID_BLOCKED, float(config[-2]), int(config[-1]), k)")
    w("v.goal = goals")


def _reset_pooled(gen: BatchGen, g: CGrid) -> None:
    """The copies with a pool (`grid.pool` > 0): a layout drawn from the pool of their config."""
    w, n = gen.w, gen.n
    w("pooled = np.flatnonzero(pools > 0)")
    with w.block("if len(pooled):"):
        w("u = b_draw(r, GRID_SITE - 1, None, 1)[:, 0]")
        if g.start_avoid is None:
            w("configs = np.concatenate([dens, pools[:, None]], axis=1)[pooled]")
        else:  # the avoided cells of a copy are part of its config (after the densities)
            w("configs = np.concatenate([dens, avoids, pools[:, None]], axis=1)[pooled]")
        with w.block("for config, at in b_groups(configs):"):
            w("group = pooled[at]")
            w("size = int(config[-1])")
            if g.start_avoid is not None:
                w(f"avoid = config[{len(g.densities)}:-1].reshape({g.height}, {g.width}) > 0")
            w(f"tiles, starts, gl = layout_pool(size, {g.height}, {g.width}, {n}, config[:{len(g.densities)}].tolist(), GRID_BLOCKED, GRID_MAP, GRID_STARTS, GRID_GOALS, GRID_SITE{avoid_args(g)})")
            w("k = np.minimum((u[group] * size).astype(np.int64), size - 1)")
            w("v.tiles[group], v.pos[group], goals[group] = tiles[k], starts[k], gl[k]")


def _reset_fresh(gen: BatchGen, g: CGrid) -> None:
    """The copies without a pool: a fresh layout each, generated from the copy's own seed and episode."""
    w, n = gen.w, gen.n
    with w.block("for j in np.flatnonzero(pools <= 0):"):
        w("seed_j, ep_j = int(r.seeds[j]), int(r.episodes[j])")
        w("uni = lambda stream, n, s=seed_j, e=ep_j: uniforms(s, e, 0, GRID_SITE + stream, 0, n)")
        if g.start_avoid is not None:
            w(f"avoid = avoids[j].reshape({g.height}, {g.width})")
        w(f"v.tiles[j], v.pos[j], goals[j] = generate_layout({g.height}, {g.width}, {n}, [float(x) for x in dens[j]], GRID_BLOCKED, uni, GRID_MAP, GRID_STARTS, GRID_GOALS{avoid_args(g)})")


BATCH = BatchGrid()
