"""The `grid` mechanics module's code generation for both backends: its module constants, layouts
at reset (fixed, generated, pooled, solved), moves with slip and collisions at each step, and the
goals it renders. Its checks are `spec/mechanics/grid.py`, its runtime `runtime/grid.py` (one env)
and `runtime/grid_batch.py` (B copies)."""

from __future__ import annotations

from gymwright.compile.npexpr import pad
from gymwright.compile.pygen.base import PyGenBase, is_true
from gymwright.compile.tables import grid_tables
from gymwright.compile.writer import Writer
from gymwright.spec.checked import CheckedSpec


class PyGrid(PyGenBase):
    """The Python backend's grid code."""

    def grid_constants(self) -> None:
        """The grid's module constants: its tables (shared with the batch backend), the solved pools
        (grid.solve) and each agent's move per action."""
        cs, w = self.cs, self.w
        grid_tables(w, cs)
        if cs.grid is not None and cs.grid.wait_ratio is not None:
            self.solved_table()
        if cs.grid is not None:
            moves = []
            for i in range(self.n):
                r = cs.role_of(i)
                moves.append([tuple(c.move or (0, 0)) for c in r.choices for _ in range(c.n)] + [(0, 0)])
            w("# per agent: (row, col) step of each action; the last entry (action -1) is no move")
            w(f"GRID_MOVES = {moves!r}")

    def grid_reset(self) -> None:
        g, w = self.cs.grid, self.w
        assert g is not None
        if g.wait_ratio is not None:  # grid.solve: layout k of the pool of solved MAPF instances
            w("config = self.solved_config()", comment="grid.solve: layout k of the pool of solved MAPF instances")
            w("k = min(int(v._rng.u(GRID_SITE - 1, 0, 1)[0] * config[0]), config[0] - 1)")
            w("tiles, starts, goals, cost = solved_layouts(*config, [k], SOLVED_POOLS)")
            w("v.tiles, starts, goals, v.optimal_cost = tiles[0], starts[0], goals[0], int(cost[0])")
            w("v.pos, v.goal = starts.copy(), goals.copy()")
            return
        dens, pool = self.layout_codes()
        w(f"pool = int({pool})", comment="grid: layout, starts and goals (from a pool, or fresh)")
        with w.block("if pool > 0:"):
            w(f"tiles, starts, goals = layout_pool(pool, {g.height}, {g.width}, {self.n}, [{dens}], GRID_BLOCKED, GRID_MAP, GRID_STARTS, GRID_GOALS, GRID_SITE)")
            w("k = min(int(v._rng.u(GRID_SITE - 1, 0, 1)[0] * pool), pool - 1)")
            w("v.tiles, starts, goals = tiles[k].copy(), starts[k], goals[k]")
        with w.block("else:"):
            w("uniforms = lambda stream, n: v._rng.u(GRID_SITE + stream, 0, n)")
            w(f"v.tiles, starts, goals = generate_layout({g.height}, {g.width}, {self.n}, [{dens}], GRID_BLOCKED, uniforms, GRID_MAP, GRID_STARTS, GRID_GOALS)")
        w("v.pos, v.goal = starts.copy(), goals.copy()" if g.has_goals else "v.pos = starts.copy()")

    def layout_codes(self) -> tuple[str, str]:
        """Code of the grid's tile densities (a list's items) and of its pool size."""
        g = self.cs.grid
        assert g is not None
        dens = ", ".join(("float(" + self.em()(d) + ")") if d is not None else "0.0" for d in g.densities)
        return dens, (self.em()(g.pool) if g.pool is not None else "0")

    def solved_table(self) -> None:
        """`SOLVED_POOLS`: the solved layout pools the module carries (empty: gymwright solves them)."""
        w = self.w
        if not self.solved_pools:
            w("SOLVED_POOLS = {}", comment="grid.solve: pools of solved layouts carried by this module (none: gymwright solves them)")
            return
        w("SOLVED_POOLS = {", comment="grid.solve: pools of solved layouts carried by this module (npz, base64)")
        for name, text in self.solved_pools.items():
            w(f"    {name!r}: (")
            for i in range(0, len(text), 88):
                w(f"        {text[i:i + 88]!r}")
            w("    ),")
        w("}")

    def solved_config(self) -> None:
        """`solved_config()`: the pool of solved layouts an instance draws from (grid.solve)."""
        g, w = self.cs.grid, self.w
        if g is None or g.wait_ratio is None:
            return
        dens, pool = self.layout_codes()
        with w.block("def solved_config(self):"):
            w('"""(pool size, height, width, agents, densities, blocked kinds, wait ratio, seed) of this')
            w('instance\'s layouts (grid.solve): the arguments of `solved_layouts`, and the name of the pool an')
            w('export carries."""')
            w("p = self.p")
            w(f"return (int({pool}), {g.height}, {g.width}, {self.n}, [{dens}], GRID_BLOCKED, "
              f"float({self.em()(g.wait_ratio)}), int({self.em()(g.solve_seed)}))")
        w("")

    def grid_step(self) -> None:
        g, w = self.cs.grid, self.w
        assert g is not None
        small = self.n <= 16  # resolve_moves_small: plain Python lists
        slip = g.slip is not None and g.slip.source not in ("0", "0.0")
        if small:
            w("delta = [GRID_MOVES[i][a] for i, a in enumerate(v.action)]", comment="grid: moves (the last entry, a = -1, is no move), slip, collisions")
        else:
            w(f"delta = np.zeros(({self.n}, 2), dtype=np.int64)", comment="grid: moves, slip, collisions")
            for r in self.cs.roles:
                for c in r.choices:
                    if c.move is not None and tuple(c.move) != (0, 0):
                        w(f"delta[v.{c.name}] = {list(c.move)!r}", comment=f"{c.path}.move")
        if is_true(g.can_move):
            w(f"can_move = [True] * {self.n}" if small else f"can_move = np.ones({self.n}, dtype=bool)")
        else:
            em = self.em(per_agent=True)
            if small:
                self.read_lists(self.flags_from_lists(em, [g.can_move.tree.body]))
            code = f"[{em(g.can_move)} for me in range({self.n})]"
            w(f"can_move = {code}" if small else f"can_move = np.array({code}, dtype=bool)", comment=f"grid.can_move: {g.can_move.source}")
        if slip:
            w(f"slip = float({self.em()(g.slip)})", comment=f"grid.slip: {g.slip.source}")
            with w.block("if slip > 0:"):
                if small:
                    w(f"delta = np.array(delta, dtype=np.int64).reshape({self.n}, 2)")
                w("delta = apply_slip(delta, slip, lambda stream, n: v._rng.u(GRID_SITE + stream, 0, n), 0)")
        if small:
            w(f"v.pos, v.moved, v.conflict = resolve_moves_small(v.pos, delta, can_move, v.tiles, {g.collision!r}, GRID_PASSABLE)")
        else:
            w(f"v.pos, v.moved, v.conflict = resolve_moves(v.pos, delta, can_move, GRID_PASSABLE[v.tiles], {g.collision!r})")
        self.replaced(["pos", "moved", "conflict"])

    def goals(self) -> str:
        assert self.cs.grid is not None
        return "self.v.goal" if self.cs.grid.has_goals else "np.zeros((0, 2), dtype=np.int64)"


class BatchGrid:
    """The batch backend's grid code (a part of `_BatchGen` in `compile/batch_backend.py`, whose
    `em`, `value` and `role_locals` it uses)."""

    cs: CheckedSpec
    w: Writer
    n: int

    def grid_init(self) -> None:
        g, w = self.cs.grid, self.w
        assert g is not None
        em = self.em()
        dens = []
        for d in g.densities:
            if d is None:
                dens.append("np.zeros(K)")
            else:
                dv = em(d)
                dens.append(f"np.broadcast_to({pad(dv, 1, 0)}, (K,))")
        w(f"dens = np.stack([{', '.join(dens)}], axis=1)", comment="grid: layouts (one per copy)")
        w(f"v.tiles = np.zeros((K, {g.height}, {g.width}), dtype=np.int64)")
        w(f"v.pos = np.zeros((K, {self.n}, 2), dtype=np.int64)")
        w(f"goals = np.zeros((K, {self.n}, 2), dtype=np.int64)")
        pool = pad(em(g.pool), 1, 0) if g.pool is not None else "0"
        w(f"pools = np.broadcast_to({pool}, (K,)).astype(np.int64)")
        if g.wait_ratio is not None:  # grid.solve: layouts of the pools of solved MAPF instances
            w(f"waits = np.broadcast_to({pad(em(g.wait_ratio), 1, 0)}, (K,)).astype(np.float64)")
            w(f"families = np.broadcast_to({pad(em(g.solve_seed), 1, 0)}, (K,)).astype(np.float64)")
            w("u = b_draw(r, GRID_SITE - 1, None, 1)[:, 0]")
            w("configs = np.concatenate([dens, pools[:, None], waits[:, None], families[:, None]], axis=1)")
            w("v.optimal_cost = np.zeros(K, dtype=np.int64)")
            with w.block("for config, group in b_groups(configs):"):
                w("size = int(config[-3])")
                w("k = np.minimum((u[group] * size).astype(np.int64), size - 1)")
                w(f"v.tiles[group], v.pos[group], goals[group], v.optimal_cost[group] = solved_layouts(size, {g.height}, {g.width}, {self.n}, config[:-3].tolist(), GRID_BLOCKED, float(config[-2]), int(config[-1]), k)")
            w("v.goal = goals")
            return
        w("pooled = np.flatnonzero(pools > 0)")
        with w.block("if len(pooled):"):
            w("u = b_draw(r, GRID_SITE - 1, None, 1)[:, 0]")
            w("configs = np.concatenate([dens, pools[:, None]], axis=1)[pooled]")
            with w.block("for config, at in b_groups(configs):"):
                w("group = pooled[at]")
                w("size = int(config[-1])")
                w(f"tiles, starts, gl = layout_pool(size, {g.height}, {g.width}, {self.n}, config[:-1].tolist(), GRID_BLOCKED, GRID_MAP, GRID_STARTS, GRID_GOALS, GRID_SITE)")
                w("k = np.minimum((u[group] * size).astype(np.int64), size - 1)")
                w("v.tiles[group], v.pos[group], goals[group] = tiles[k], starts[k], gl[k]")
        with w.block("for j in np.flatnonzero(pools <= 0):"):
            w("seed_j, ep_j = int(r.seeds[j]), int(r.episodes[j])")
            w("uni = lambda stream, n, s=seed_j, e=ep_j: uniforms(s, e, 0, GRID_SITE + stream, 0, n)")
            w(f"v.tiles[j], v.pos[j], goals[j] = generate_layout({g.height}, {g.width}, {self.n}, [float(x) for x in dens[j]], GRID_BLOCKED, uni, GRID_MAP, GRID_STARTS, GRID_GOALS)")
        if g.has_goals:
            w("v.goal = goals")

    def grid_step(self) -> None:
        g, w = self.cs.grid, self.w
        assert g is not None
        roles = [r for r in self.cs.roles if any(c.move is not None for c in r.choices)]
        if len(roles) == 1 and roles[0].count == self.n:
            w(f"delta = b_take_rows(MOVE_{roles[0].name}, v.action)",
              comment="grid: moves (v.action is -1 for no legal action: the last row), slip, collisions")
        else:
            w(f"delta = np.zeros((K, {self.n}, 2), dtype=np.int64)", comment="grid: moves, slip, collisions")
            for r in roles:
                sl = f"{r.start}:{r.start + r.count}"
                w(f"delta[:, {sl}] = MOVE_{r.name}[v.action[:, {sl}]]")
        self.role_locals(0, self.n)
        w(f"can_move = np.broadcast_to({pad(self.em(True)(g.can_move), 2, 0)}, (K, {self.n}))", comment=f"grid.can_move: {g.can_move.source}")
        if g.slip is not None and g.slip.source not in ("0", "0.0"):
            w(f"slip = np.broadcast_to({pad(self.em()(g.slip), 1, 0)}, (K,)).astype(np.float64)")
            with w.block("if (slip > 0).any():"):
                w(f"delta = apply_slip_batch(delta, slip, b_draw(r, GRID_SITE, None, {2 * self.n}))")
        w(f"v.pos, v.moved, v.conflict = resolve_moves_batch(v.pos, delta, can_move, v.tiles, {g.collision!r}, GRID_PASSABLE, self._pads)")
