"""The grid module's runtime for one env: layouts (generated, pooled), movement, lookups and
views (the Python backend's lowering of the grid functions) and rendering. `runtime_batch.py` has
the same over B copies, `runtime_solved.py` the layouts of `grid.solve`.

STANDALONE: this module imports only numpy and the standard library, because its source is
inlined verbatim into generated and exported environment files (the names it reads from
`runtime/core.py`, such as `uniforms`, are inlined before it).  Positions are ``(row, col)`` and integer
arrays are ``np.int64``.  Randomness never comes from ``np.random``: functions that need it take
``uniforms(stream, n)``, which must return ``n`` float64 values in ``[0, 1)`` deterministically
for a given ``(stream, n)``.
"""

import collections
from collections.abc import Callable, Sequence

import numpy as np

Uniforms = Callable[[int, int], np.ndarray]

COLLISION_RULES: tuple[str, ...] = ("none", "block", "vertex", "occupied")
"""`none`: agents may share cells. `block`: vertex and swap conflicts cancel the moves involved
(following a leaving agent is allowed). `vertex`: only vertex conflicts cancel (agents may swap
cells, passing through each other). `occupied`: a cell occupied at the start of the step blocks
every move into it, even if its occupant leaves (no following, no swaps); two agents entering
one empty cell both stay."""


AGENT_PALETTE: tuple[tuple[int, int, int], ...] = (
    (230, 25, 75),
    (60, 180, 75),
    (0, 130, 200),
    (245, 130, 48),
    (145, 30, 180),
    (70, 240, 240),
    (240, 50, 230),
    (210, 245, 60),
    (128, 0, 0),
    (0, 0, 128),
)

AGENT_SYMBOLS: str = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
GOAL_SYMBOLS: str = "abcdefghijklmnopqrstuvwxyz"

_NEIGHBOURS: tuple[tuple[int, int], ...] = ((-1, 0), (1, 0), (0, -1), (0, 1))
_STREAMS_PER_ATTEMPT: int = 16
_STREAM_TILES: int = 0
_STREAM_STARTS: int = 1
_STREAM_GOALS: int = 2
_STREAM_CLEAR: int = 3


# --------------------------------------------------------------------------- randomness


def _draw(uniforms: Uniforms, stream: int, n: int) -> np.ndarray:
    """Return ``n`` uniforms from ``stream`` as float64, checking the shape."""
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    values = np.asarray(uniforms(stream, n), dtype=np.float64)
    if values.shape != (n,):
        raise ValueError(f"uniforms({stream}, {n}) returned shape {values.shape}, expected ({n},)")
    return values


def _permutation(uniforms: Uniforms, stream: int, n: int) -> np.ndarray:
    """A deterministic random permutation of ``range(n)``."""
    return np.argsort(_draw(uniforms, stream, n), kind="stable").astype(np.int64)


# --------------------------------------------------------------------------- search


def _bfs_from(passable: np.ndarray, start: Sequence[int] | np.ndarray) -> np.ndarray:
    """Distances (int64, -1 = unreachable) from ``start`` over passable cells.

    The start cell itself gets distance 0 even when it is not passable. Plain lists inside:
    numpy element access is slow for the cell-by-cell walk.
    """
    height, width = passable.shape
    free = np.asarray(passable, dtype=bool).ravel().tolist()
    dist = [-1] * (height * width)
    s = int(start[0]) * width + int(start[1])
    dist[s] = 0
    queue = collections.deque([s])
    while queue:
        i = queue.popleft()
        r, c = divmod(i, width)
        d = dist[i] + 1
        if r > 0 and free[i - width] and dist[i - width] < 0:
            dist[i - width] = d
            queue.append(i - width)
        if r < height - 1 and free[i + width] and dist[i + width] < 0:
            dist[i + width] = d
            queue.append(i + width)
        if c > 0 and free[i - 1] and dist[i - 1] < 0:
            dist[i - 1] = d
            queue.append(i - 1)
        if c < width - 1 and free[i + 1] and dist[i + 1] < 0:
            dist[i + 1] = d
            queue.append(i + 1)
    return np.array(dist, dtype=np.int64).reshape(height, width)


def bfs_distance(
    passable: np.ndarray, start: Sequence[int] | np.ndarray, goal: Sequence[int] | np.ndarray
) -> int:
    """Shortest 4-neighbour path length from ``start`` to ``goal`` over passable cells.

    Returns 0 when ``start == goal`` and -1 when the goal is unreachable.  The start cell need
    not be passable (the agent is already standing there); every other cell on the path must be.
    """
    passable = np.asarray(passable, dtype=bool)
    return int(_bfs_from(passable, start)[int(goal[0]), int(goal[1])])


def _label_components(free: np.ndarray) -> np.ndarray:
    """Label 4-connected components of ``free`` cells 0, 1, ... (in row-major order of their
    first cell); blocked cells get -1."""
    height, width = free.shape
    cells = np.asarray(free, dtype=bool).ravel().tolist()
    labels = [-1] * (height * width)
    count = 0
    for s in range(height * width):
        if not cells[s] or labels[s] >= 0:
            continue
        labels[s] = count
        stack = [s]
        while stack:
            i = stack.pop()
            r, c = divmod(i, width)
            for j, ok in ((i - width, r > 0), (i + width, r < height - 1), (i - 1, c > 0), (i + 1, c < width - 1)):
                if ok and cells[j] and labels[j] < 0:
                    labels[j] = count
                    stack.append(j)
        count += 1
    return np.array(labels, dtype=np.int64).reshape(height, width)


# --------------------------------------------------------------------------- layout helpers


def _validate_kinds(densities: Sequence[float], blocked: Sequence[bool]) -> np.ndarray:
    """Check densities/blocked and return the blocked lookup table (bool per kind)."""
    if len(densities) != len(blocked) or len(blocked) == 0:
        raise ValueError(
            f"densities ({len(densities)}) and blocked ({len(blocked)}) need the same length >= 1"
        )
    extra = np.asarray(densities[1:], dtype=np.float64)
    if np.any(extra < 0) or float(extra.sum()) > 1.0 + 1e-9:
        raise ValueError(f"densities[1:] must be >= 0 and sum to <= 1, got {list(densities)}")
    lut = np.asarray(blocked, dtype=bool)
    if lut[0]:
        raise ValueError("blocked[0] must be False: kind 0 is the floor")
    return lut


def _validate_cells(
    cells: np.ndarray | None, name: str, n_agents: int, height: int, width: int
) -> np.ndarray | None:
    """Check a fixed (N, 2) array of in-bounds cells and return it as int64."""
    if cells is None:
        return None
    arr = np.asarray(cells, dtype=np.int64)
    if arr.shape != (n_agents, 2):
        raise ValueError(f"{name} must have shape ({n_agents}, 2), got {arr.shape}")
    inside = (arr[:, 0] >= 0) & (arr[:, 0] < height) & (arr[:, 1] >= 0) & (arr[:, 1] < width)
    if not inside.all():
        bad = int(np.nonzero(~inside)[0][0])
        raise ValueError(
            f"{name}[{bad}] = {arr[bad].tolist()} is outside the {height}x{width} grid"
        )
    return arr


def _validate_tiles(
    tiles: np.ndarray | None, height: int, width: int, n_kinds: int
) -> np.ndarray | None:
    """Check fixed tiles: shape (H, W) and kinds in range."""
    if tiles is None:
        return None
    arr = np.asarray(tiles, dtype=np.int64)
    if arr.shape != (height, width):
        raise ValueError(f"fixed_tiles must have shape ({height}, {width}), got {arr.shape}")
    if arr.size and (arr.min() < 0 or arr.max() >= n_kinds):
        raise ValueError(f"fixed_tiles kinds must lie in 0..{n_kinds - 1}")
    return arr


def _random_tiles(
    height: int, width: int, densities: Sequence[float], uniforms: Uniforms, stream: int
) -> np.ndarray:
    """Draw each cell's kind independently: kind k with probability densities[k] (k >= 1)."""
    u = _draw(uniforms, stream, height * width)
    cum = np.cumsum(np.asarray(densities[1:], dtype=np.float64))
    index = np.searchsorted(cum, u, side="right")
    kinds = np.where(index < len(cum), index + 1, 0).astype(np.int64)
    return kinds.reshape(height, width)


def _clear_cells(tiles: np.ndarray, lut: np.ndarray, *cell_sets: np.ndarray | None) -> None:
    """Set blocked tiles under the given (fixed) cells to floor, in place."""
    for cells in cell_sets:
        if cells is not None and len(cells):
            hit = lut[tiles[cells[:, 0], cells[:, 1]]]
            tiles[cells[hit, 0], cells[hit, 1]] = 0


def _to_cells(flat: np.ndarray, width: int) -> np.ndarray:
    """Flat indices -> (n, 2) int64 (row, col)."""
    flat = np.asarray(flat, dtype=np.int64)
    return np.stack([flat // width, flat % width], axis=1).reshape(-1, 2)


def _draw_starts(
    labels: np.ndarray, n_agents: int, uniforms: Uniforms, stream: int, start_ok: np.ndarray | None = None
) -> np.ndarray | None:
    """Distinct random free cells, preferring components with >= 2 cells; with ``start_ok`` (a
    flat bool per cell) only cells it allows."""
    flat = labels.ravel()
    free_idx = np.nonzero(flat >= 0)[0]
    sizes = np.bincount(flat[free_idx], minlength=1)
    if start_ok is not None:
        free_idx = free_idx[start_ok[free_idx]]
    roomy = free_idx[sizes[flat[free_idx]] >= 2]
    pool = roomy if roomy.size >= n_agents else free_idx
    if pool.size < n_agents:
        return None
    chosen = pool[_permutation(uniforms, stream, pool.size)[:n_agents]]
    return _to_cells(chosen, labels.shape[1])


def _free_order(labels: np.ndarray, uniforms: Uniforms, stream: int) -> np.ndarray:
    """Flat indices of all free cells in a random order."""
    free_idx = np.nonzero(labels.ravel() >= 0)[0]
    return free_idx[_permutation(uniforms, stream, free_idx.size)]


def _assign_partners(anchors: np.ndarray, labels: np.ndarray, order: np.ndarray) -> np.ndarray:
    """For each anchor cell pick a distinct free cell in the same component.

    Cells are taken in ``order``; a cell different from the anchor is preferred.  Agents that
    cannot be served get (-1, -1).
    """
    flat = labels.ravel()
    width = labels.shape[1]
    anchor_flat = anchors[:, 0] * width + anchors[:, 1]
    used = np.zeros(flat.size, dtype=bool)
    picks = np.full(len(anchors), -1, dtype=np.int64)
    for i, a in enumerate(anchor_flat):
        cand = order[(flat[order] == flat[a]) & ~used[order]] if flat[a] >= 0 else order[:0]
        if cand.size:
            other = cand[cand != a]
            picks[i] = other[0] if other.size else cand[0]
            used[picks[i]] = True
    _fix_self_pairs(picks, anchor_flat, flat)
    cells = _to_cells(np.maximum(picks, 0), width)
    cells[picks < 0] = -1
    return cells


def _fix_self_pairs(picks: np.ndarray, anchor_flat: np.ndarray, flat: np.ndarray) -> None:
    """Swap partners so that no agent is paired with its own anchor when avoidable."""
    for i in np.nonzero(picks == anchor_flat)[0]:
        for j in range(len(picks)):
            same = flat[anchor_flat[j]] == flat[anchor_flat[i]]
            ok = picks[j] >= 0 and picks[j] != anchor_flat[i] and anchor_flat[j] != anchor_flat[i]
            if j != i and same and ok:
                picks[i], picks[j] = picks[j], anchor_flat[i]
                break


def _positions(
    labels: np.ndarray,
    n_agents: int,
    uniforms: Uniforms,
    base: int,
    fixed_starts: np.ndarray | None,
    fixed_goals: np.ndarray | None,
    start_ok: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Starts and goals for one attempt (random ones drawn within reachable components; random
    starts only on the cells ``start_ok``, a flat bool per cell, allows)."""
    if fixed_starts is not None and fixed_goals is not None:
        return fixed_starts.copy(), fixed_goals.copy()
    if fixed_goals is not None:
        order = _free_order(labels, uniforms, base + _STREAM_STARTS)
        if start_ok is not None:
            order = order[start_ok[order]]
        return _assign_partners(fixed_goals, labels, order), fixed_goals.copy()
    starts = fixed_starts.copy() if fixed_starts is not None else None
    if starts is None:
        starts = _draw_starts(labels, n_agents, uniforms, base + _STREAM_STARTS, start_ok)
        if starts is None:
            return None
    order = _free_order(labels, uniforms, base + _STREAM_GOALS)
    return starts, _assign_partners(starts, labels, order)


def _reach_problem(labels: np.ndarray, starts: np.ndarray, goals: np.ndarray) -> str | None:
    """A message naming the first agent whose goal is not reachable, else None."""
    for i, (s, g) in enumerate(zip(starts.tolist(), goals.tolist(), strict=True)):
        if min(s + g) < 0:
            return f"agent {i}: no free cell for its start/goal (start {s}, goal {g})"
        if s == g:
            continue
        if labels[s[0], s[1]] < 0 or labels[s[0], s[1]] != labels[g[0], g[1]]:
            return f"agent {i}: goal {g} is not reachable from start {s}"
    return None


def _needless_self_goals(starts: np.ndarray, goals: np.ndarray, fixed_pairs: np.ndarray) -> bool:
    """True when some agent's start equals its goal although not both were fixed that way."""
    same = np.all(starts == goals, axis=1)
    return bool(np.any(same & ~fixed_pairs))


def _clear_until(
    tiles: np.ndarray, lut: np.ndarray, need: int, uniforms: Uniforms, stream: int,
    avoid: np.ndarray | None = None,
) -> None:
    """Turn random blocked cells into floor until at least ``need`` cells are free (in place);
    with ``avoid`` ((H, W) bool), ``need`` cells outside it."""
    flat = tiles.reshape(-1)
    blocked = lut[flat]
    if avoid is not None:
        allowed = ~np.asarray(avoid, dtype=bool).reshape(-1)
        blocked_idx = np.nonzero(blocked & allowed)[0]
        missing = need - int(np.count_nonzero(~blocked & allowed))
    else:
        blocked_idx = np.nonzero(blocked)[0]
        missing = need - (flat.size - blocked_idx.size)
    if missing > 0:
        flat[blocked_idx[_permutation(uniforms, stream, blocked_idx.size)[:missing]]] = 0


def _carve_path(tiles: np.ndarray, lut: np.ndarray, start: np.ndarray, goal: np.ndarray) -> None:
    """Clear blocked cells on the row-then-column L path from start to goal (in place)."""
    (sr, sc), (gr, gc) = start.tolist(), goal.tolist()
    rows = np.arange(min(sr, gr), max(sr, gr) + 1)
    cols = np.arange(min(sc, gc), max(sc, gc) + 1)
    path = [(rows, np.full_like(rows, sc)), (np.full_like(cols, gr), cols)]
    for rr, cc in path:
        hit = lut[tiles[rr, cc]]
        tiles[rr[hit], cc[hit]] = 0


def _carve_layout(
    tiles: np.ndarray,
    lut: np.ndarray,
    n_agents: int,
    uniforms: Uniforms,
    base: int,
    fixed_starts: np.ndarray | None,
    fixed_goals: np.ndarray | None,
    avoid: np.ndarray | None = None,
    avoid_kinds: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Deterministic fallback: place agents on free cells, then carve L paths to the goals."""
    tiles = tiles.copy()
    _clear_until(tiles, lut, min(tiles.size, max(n_agents, 2)), uniforms, base + _STREAM_CLEAR)
    if avoid is not None:  # enough free cells outside the ones random starts avoid
        _clear_until(tiles, lut, n_agents, uniforms, base + _STREAM_CLEAR + 1, avoid)
    one_component = np.where(lut[tiles], -1, 0).astype(np.int64)
    start_ok = _start_ok(tiles, avoid, avoid_kinds)
    placed = _positions(one_component, n_agents, uniforms, base, fixed_starts, fixed_goals, start_ok)
    if placed is None or min(placed[0].min(initial=0), placed[1].min(initial=0)) < 0:
        why = " outside the cells random starts avoid (grid.start_avoid)" if start_ok is not None else ""
        raise ValueError(f"cannot place {n_agents} agents on a {tiles.shape} grid{why}")
    for start, goal in zip(*placed, strict=True):
        _carve_path(tiles, lut, start, goal)
    return tiles, placed[0], placed[1]


def _start_ok(tiles: np.ndarray, avoid: np.ndarray | None, avoid_kinds: np.ndarray | None) -> np.ndarray | None:
    """Flat bool per cell: where a random start may lie (None: anywhere free)."""
    if avoid is None and avoid_kinds is None:
        return None
    bad = np.zeros(tiles.size, dtype=bool)
    if avoid is not None:
        bad |= np.asarray(avoid, dtype=bool).reshape(-1)
    if avoid_kinds is not None:
        bad |= np.asarray(avoid_kinds, dtype=bool)[tiles.reshape(-1)]
    return ~bad


def start_avoid_mask(height: int, width: int, value) -> np.ndarray:
    """The (H, W) bool mask of the cells random starts avoid (grid.start_avoid): ``value`` is a
    bool mask of that shape, or int cells ``[row, col]`` (one, or (k, 2)); cells off the grid
    are ignored."""
    arr = np.asarray(value)
    if arr.dtype == bool and arr.shape == (height, width):
        return arr.copy()
    cells = arr.astype(np.int64).reshape(-1, 2)
    mask = np.zeros((height, width), dtype=bool)
    inside = (cells[:, 0] >= 0) & (cells[:, 0] < height) & (cells[:, 1] >= 0) & (cells[:, 1] < width)
    mask[cells[inside, 0], cells[inside, 1]] = True
    return mask


# --------------------------------------------------------------------------- layout


def generate_layout(
    height: int,
    width: int,
    n_agents: int,
    densities: Sequence[float],
    blocked: Sequence[bool],
    uniforms: Uniforms,
    fixed_tiles: np.ndarray | None = None,
    fixed_starts: np.ndarray | None = None,
    fixed_goals: np.ndarray | None = None,
    max_tries: int = 32,
    avoid: np.ndarray | None = None,
    avoid_kinds: Sequence[bool] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Generate ``(tiles (H, W), starts (N, 2), goals (N, 2))`` with every goal reachable.

    Tile kinds are 0..K-1 (0 = floor); ``densities[k]`` is the per-cell probability of kind k
    (k >= 1) and ``blocked[k]`` marks kinds that paths must avoid.  Random starts are distinct
    free cells, random goals are distinct free cells in the start's component (different from
    the agent's own start when possible).  Random maps are redrawn up to ``max_tries`` times,
    then repaired by carving L-shaped paths (blocked cells on them become floor).  Fixed maps
    are never modified: an impossible fixed layout raises ValueError naming the agent.
    Random starts never lie on a cell of ``avoid`` ((H, W) bool) nor on a tile of a kind
    ``avoid_kinds`` (a bool per kind) marks (grid.start_avoid, grid.start_avoid_tiles).
    """
    lut = _validate_kinds(densities, blocked)
    fixed_tiles = _validate_tiles(fixed_tiles, height, width, len(lut))
    fixed_starts = _validate_cells(fixed_starts, "fixed_starts", n_agents, height, width)
    fixed_goals = _validate_cells(fixed_goals, "fixed_goals", n_agents, height, width)
    if n_agents < 0 or n_agents > height * width:
        raise ValueError(f"n_agents={n_agents} does not fit a {height}x{width} grid")
    kinds_avoided = None if avoid_kinds is None or not any(avoid_kinds) else np.asarray(avoid_kinds, dtype=bool)
    if avoid is not None:
        avoid = np.asarray(avoid, dtype=bool)
        if avoid.shape != (height, width):
            raise ValueError(f"avoid must have shape ({height}, {width}), got {avoid.shape}")
        if fixed_starts is None and height * width - int(avoid.sum()) < n_agents:
            raise ValueError(f"grid.start_avoid leaves {height * width - int(avoid.sum())} cells for the random "
                             f"starts of {n_agents} agents")
        if not avoid.any():
            avoid = None
    if fixed_starts is not None:
        avoid = kinds_avoided = None  # fixed starts are where they are
    fixed_pairs = np.zeros(n_agents, dtype=bool)
    if fixed_starts is not None and fixed_goals is not None:
        fixed_pairs = np.all(fixed_starts == fixed_goals, axis=1)
        if fixed_tiles is not None:
            max_tries = 1
    tries = max(1, max_tries)
    relaxed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    problem = "no attempt made"
    for attempt in range(tries):
        base = attempt * _STREAMS_PER_ATTEMPT
        if fixed_tiles is None:
            tiles = _random_tiles(height, width, densities, uniforms, base + _STREAM_TILES)
            _clear_cells(tiles, lut, fixed_starts, fixed_goals)
        else:
            tiles = fixed_tiles.copy()
        labels = _label_components(~lut[tiles])
        start_ok = _start_ok(tiles, avoid, kinds_avoided)
        placed = _positions(labels, n_agents, uniforms, base, fixed_starts, fixed_goals, start_ok)
        if placed is None:
            problem = f"fewer than {n_agents} non-blocked cells for the agents' starts"
            continue
        problem = _reach_problem(labels, *placed) or ""
        if problem:
            continue
        if not _needless_self_goals(*placed, fixed_pairs):
            return tiles, placed[0], placed[1]
        if relaxed is None:
            relaxed = (tiles, placed[0], placed[1])
    if fixed_tiles is None:
        base = tries * _STREAMS_PER_ATTEMPT
        return _carve_layout(tiles, lut, n_agents, uniforms, base, fixed_starts, fixed_goals, avoid, kinds_avoided)
    if relaxed is not None:
        return relaxed
    if placed is None and (avoid is not None or kinds_avoided is not None):
        problem += " outside the cells random starts avoid (grid.start_avoid, grid.start_avoid_tiles)"
    raise ValueError(f"fixed layout is not solvable: {problem}")


# --------------------------------------------------------------------------- layout pools


POOL_SEED = 0x5EED5EED5EED5EED


_POOLS: dict = {}


def layout_pool(size, height, width, n_agents, densities, blocked, fixed_tiles, fixed_starts, fixed_goals, site,
                avoid=None, avoid_kinds=None):
    """`size` grid layouts generated once per config and cached; entry k draws its numbers from
    the stream (POOL_SEED, k), so every env and both backends build the same pool. ``avoid`` and
    ``avoid_kinds``: the cells and tile kinds random starts avoid (`generate_layout`)."""
    key = (size, height, width, n_agents, tuple(float(d) for d in densities), tuple(blocked),
           None if fixed_tiles is None else fixed_tiles.tobytes(),
           None if fixed_starts is None else fixed_starts.tobytes(),
           None if fixed_goals is None else fixed_goals.tobytes(),
           None if avoid is None else np.asarray(avoid, dtype=bool).tobytes(),
           None if avoid_kinds is None else tuple(bool(k) for k in avoid_kinds))
    pool = _POOLS.get(key)
    if pool is None:
        tiles = np.zeros((size, height, width), dtype=np.int64)
        starts = np.zeros((size, n_agents, 2), dtype=np.int64)
        goals = np.zeros((size, n_agents, 2), dtype=np.int64)
        for k in range(size):
            def uni(stream, n, k=k):
                return uniforms(POOL_SEED, k, 0, site + stream, 0, n)  # noqa: F821 - runtime/core.py's, inlined before
            tiles[k], starts[k], goals[k] = generate_layout(
                height, width, n_agents, list(densities), list(blocked), uni, fixed_tiles, fixed_starts, fixed_goals,
                avoid=avoid, avoid_kinds=avoid_kinds)
        pool = _POOLS[key] = (tiles, starts, goals)
    return pool


# --------------------------------------------------------------------------- movement


def apply_slip(delta: np.ndarray, slip: float, uniforms: Uniforms, stream: int) -> np.ndarray:
    """With probability ``slip`` turn each non-zero move into a perpendicular one (50/50).

    Uses ``uniforms(stream, 2 * N)``: value ``2i`` decides whether agent i slips, value
    ``2i + 1`` picks the side.  Zero moves (waiting) never slip.
    """
    delta = np.asarray(delta, dtype=np.int64).reshape(-1, 2)
    u = _draw(uniforms, stream, 2 * len(delta)).reshape(-1, 2)
    moving = np.any(delta != 0, axis=1)
    slips = moving & (u[:, 0] < slip)
    left = np.stack([-delta[:, 1], delta[:, 0]], axis=1)
    turned = np.where((u[:, 1] < 0.5)[:, None], left, -left)
    return np.where(slips[:, None], turned, delta).astype(np.int64)


def resolve_moves(pos, delta, can_move, passable, collision, kinds=None):
    """Apply one env's simultaneous moves; return ``(new_pos (N, 2), moved (N,), conflict (N,))``.

    Moves off the grid or into impassable cells leave the agent in place (not a conflict).
    ``collision="none"`` lets agents share cells; ``"block"`` cancels vertex conflicts (several
    agents ending in one cell, a staying occupant included) and swap conflicts, repeating until
    none is left.  Following a leaving agent (and rotating cycles of three or more) is allowed.
    ``"vertex"`` cancels vertex conflicts only (two agents may swap cells); ``"occupied"`` also
    cancels every move into a cell some agent stood on at the start of the step, even one that
    leaves it (no following, no swaps, no rotations).
    ``conflict[i]`` marks moves cancelled because of other agents.  ``delta`` and ``can_move``
    may be lists; with ``kinds`` (passable or not, per tile kind) ``passable`` is the tile array.

    The scalar form, in plain Python lists: for the few agents of one env it is several times
    faster than numpy (the Python backend uses it up to 16 agents); ``resolve_moves_batch`` in
    ``runtime_batch.py`` is the vector form (B copies, or one env of many agents), with the same
    results.
    """
    if collision not in COLLISION_RULES:
        raise ValueError(f"unknown collision rule {collision!r}; valid: {list(COLLISION_RULES)}")
    P = pos.tolist()  # cells as [row, col] lists (compared with ==, as the targets are)
    D = delta.tolist() if isinstance(delta, np.ndarray) else delta
    n = len(P)
    if isinstance(kinds, np.ndarray):
        kinds = kinds.tolist()  # a list's item is a plain read, a numpy array's a scalar made
    target, attempt = _move_targets(P, D, can_move, passable, kinds)
    if True not in attempt:  # nobody moves: every agent stays, nothing to cancel
        return np.array(pos, dtype=np.int64).reshape(n, 2), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    conflict = [False] * n
    final = target[:]  # where each agent ends the step, as the moves still attempted say
    if collision != "none":
        _cancel_conflicts(P, target, attempt, final, conflict, collision)
    clashed = np.array(conflict, dtype=bool) if True in conflict else np.zeros(n, dtype=bool)
    return np.array(final, dtype=np.int64).reshape(n, 2), np.array(attempt, dtype=bool), clashed


def _move_targets(P, D, can_move, passable, kinds):
    """Each agent's target cell (its own when it attempts nothing) and whether it attempts a move:
    a move allowed by ``can_move`` into a passable cell on the grid."""
    h, w = passable.shape
    target = []
    attempt = []
    for p, (dr, dc), can in zip(P, D, can_move, strict=True):
        ok = False
        if can and (dr != 0 or dc != 0):
            tr, tc = p[0] + dr, p[1] + dc
            if 0 <= tr < h and 0 <= tc < w:
                at = passable.item(tr, tc)
                ok = bool(at if kinds is None else kinds[at])
        target.append([tr, tc] if ok else p)
        attempt.append(ok)
    return target, attempt


def _cancel_conflicts(P, target, attempt, final, conflict, collision):
    """Cancel the moves in conflict under ``collision`` (not "none"), in place in ``attempt``,
    ``final`` and ``conflict``, repeating until none is left."""
    swaps, occupied = collision == "block", collision == "occupied"
    while True:
        cancel = _conflicting_moves(P, target, attempt, final, swaps, occupied)
        if not cancel:
            return
        for i in cancel:
            attempt[i] = False
            conflict[i] = True
            final[i] = P[i]


def _conflicting_moves(P, target, attempt, final, swaps, occupied):
    """The moves in a vertex conflict (with ``occupied``, into a start cell; with ``swaps``, in a
    swap), all found before any is cancelled."""
    cancel = []
    n = len(P)
    for i in range(n):
        if attempt[i]:
            t = final[i]
            if final.count(t) > 1:  # several agents end the step on one cell
                cancel.append(i)
            elif occupied and t in P:  # the target was occupied at the start of the step
                cancel.append(i)
            elif swaps and t in P:  # a swap: j, on i's target, attempts i's cell
                for j in range(n):
                    if j != i and attempt[j] and P[j] == t and target[j] == P[i]:
                        cancel.append(i)
                        break
    return cancel


# --------------------------------------------------------------------------- lookups and views
#
# The Python backend's lowering of the grid functions. `tile`, `manhattan`: one cell (`rt_tile1`,
# `rt_manhattan1`) or arrays of cells. `view`, `agents_view`, `agents_view_of`: one window
# (`rt_view`, `rt_agents_view`, `rt_agents_view_of`, read from grids padded once per state and
# kept on `v`), or the windows of a role's agents at once (`*_rows`, for features lowered over the
# agent axis: compile/agent_axis.py). `runtime_batch.py` has the batch backend's forms.


def rt_tile(tiles, p):
    p = np.asarray(p)
    r, c = p[..., 0], p[..., 1]
    h, w = tiles.shape
    inside = (r >= 0) & (r < h) & (c >= 0) & (c < w)
    out = np.where(inside, tiles[np.clip(r, 0, h - 1), np.clip(c, 0, w - 1)], -1)
    return out if out.shape else int(out)


def rt_in_bounds(tiles, p):
    p = np.asarray(p)
    h, w = tiles.shape
    out = (p[..., 0] >= 0) & (p[..., 0] < h) & (p[..., 1] >= 0) & (p[..., 1] < w)
    return out if out.shape else bool(out)


def rt_tile1(tiles, p):
    """The tile kind at one position (-1 outside the grid)."""
    r, c = int(p[0]), int(p[1])
    h, w = tiles.shape
    return int(tiles[r, c]) if 0 <= r < h and 0 <= c < w else -1


def rt_manhattan1(a, b):
    return abs(int(a[0]) - int(b[0])) + abs(int(a[1]) - int(b[1]))


def rt_manhattan(a, b):
    out = np.abs(np.asarray(a) - np.asarray(b)).sum(axis=-1)
    return out if out.shape else int(out)


def rt_manhattan_rows(a, b):
    """manhattan(a[i], b[i]) of (n, 2) integer cells: (n,) int64, the columns added (a numpy sum
    over a last axis of two costs more; a list in Python costs as much for one row, 1.3 against
    0.9 µs for four, 2.0 against 0.9 for eight: measured 2026-12-05)."""
    d = np.abs(np.subtract(a, b))
    return d[:, 0] + d[:, 1]


def _tiles_pad(v, r: int):
    """v.tiles with a border of -1 at least r wide, kept on v until v.tiles is replaced."""
    pad = getattr(v, "_tiles_pad", None)
    if pad is None or v._tiles_src is not v.tiles or v._pad_r < r:
        v._pad_r = k = max(r, getattr(v, "_pad_r", 0))
        h, w = v.tiles.shape
        v._tiles_pad = pad = np.full((h + 2 * k, w + 2 * k), -1, dtype=v.tiles.dtype)  # np.pad, faster
        pad[k:k + h, k:k + w] = v.tiles
        v._tiles_src = v.tiles
    return pad


def rt_view(v, p, r: int):
    """The (2r+1)x(2r+1) window of tiles around p, -1 outside (from a padded copy kept on v)."""
    pad = _tiles_pad(v, r)
    o = v._pad_r - r
    row, col = int(p[0]) + o, int(p[1]) + o
    return pad[row:row + 2 * r + 1, col:col + 2 * r + 1]


def _agents_view_loop(pos, p, r: int):
    """Agent counts in the (2r+1)x(2r+1) window around p, agent by agent (`rt_agents_view` for a
    centre off the grid)."""
    out = np.zeros((2 * r + 1, 2 * r + 1), dtype=np.int64)
    r0, c0 = int(p[0]) - r, int(p[1]) - r
    for row, col in pos.tolist():
        dr, dc = row - r0, col - c0
        if 0 <= dr <= 2 * r and 0 <= dc <= 2 * r:
            out[dr, dc] += 1
    return out


def rt_agents_view(v, p, r: int):
    """Agent counts in the (2r+1)x(2r+1) window around p, from a padded grid of agent counts
    kept on v (rebuilt when v.pos is replaced, as every step does): every agent's window is then
    one slice. A view: callers copy before they write."""
    row, col = int(p[0]), int(p[1])
    h, w = v.tiles.shape
    if not (0 <= row < h and 0 <= col < w):
        return _agents_view_loop(v.pos, p, r)
    grid = _agents_pad(v, r)
    o = v._agents_r - r
    return grid[row + o:row + o + 2 * r + 1, col + o:col + o + 2 * r + 1]


def _agents_pad(v, r: int):
    """Agent counts per cell of a grid padded by at least r, kept on v until v.pos is replaced."""
    pos = v.pos
    grid = getattr(v, "_agents_pad", None)
    if grid is None or v._agents_src is not pos or v._agents_r < r:
        h, w = v.tiles.shape
        v._agents_r = big = max(r, getattr(v, "_agents_r", 0))
        v._agents_pad = grid = np.zeros((h + 2 * big, w + 2 * big), dtype=np.int64)
        v._agents_src = pos
        for pr, pc in pos.tolist():
            if -big <= pr < h + big and -big <= pc < w + big:
                grid[pr + big, pc + big] += 1
    return grid


def _grid_cells(v, centers):
    """`centers` (n, 2) as a list of int (row, col) pairs (truncated like int()), or None when
    one lies off the grid."""
    c = np.asarray(centers)
    cells = (c if c.dtype.kind in "iu" else c.astype(np.int64)).tolist()
    h, w = v.tiles.shape
    for a, b in cells:
        if not (0 <= a < h and 0 <= b < w):
            return None
    return cells


def _centres(v, centers):
    """(key, cells, kept, centers) of `centers` (n, 2): `_grid_cells` of them, and a dict of what the
    window helpers derive from them (`_window_rows`, `_window_pairs`). Kept on v for the last
    centres seen (v.pos by identity, others by their type and bytes: the features of one role
    share them; an env's grid keeps its shape)."""
    kept = getattr(v, "_centres_kept", None)
    if centers is v.pos:  # the agents' own cells: v.pos is replaced, never written in place
        if kept is None or kept[3] is not centers:
            kept = v._centres_kept = (None, _grid_cells(v, centers), {}, centers)
        return kept
    c = np.asarray(centers)
    key = (c.dtype.char, c.shape, c.tobytes())
    if kept is None or kept[0] != key:
        kept = (key, _grid_cells(v, c), {}, centers)
    elif kept[3] is not centers:
        kept = (*kept[:3], centers)
    v._centres_kept = kept
    return kept


_WINDOW_OFFSETS: dict = {}


def _window_rows(pad, centres, o: int, r: int):
    """The (2r+1)x(2r+1) windows of `pad` around each cell of `centres` (from `_centres`,
    shifted by o), as one gather: (n, S, S)."""
    _, cells, kept, _ = centres
    width = pad.shape[1]
    index = kept.get((width, o, r))
    if index is None:
        starts = np.array([(a + o) * width + b + o for a, b in cells], dtype=np.int64)
        index = kept[width, o, r] = _window_index(width, starts, 2 * r + 1)
    return pad.reshape(-1)[index]


def _window_index(width: int, starts, side: int):
    """Flat indices (n, S, S) into a grid `width` wide of the S x S windows whose top-left cells
    are the flat `starts` (n,)."""
    offsets = _WINDOW_OFFSETS.get((width, side))
    if offsets is None:
        offsets = _WINDOW_OFFSETS[width, side] = np.arange(side)[:, None] * width + np.arange(side)
    return starts[:, None, None] + offsets


# Up to this many entries (grid cells times window cells: 128 KiB of int64 per env and radius),
# `rt_view_rows` keeps every cell's window of tiles and takes the centres' rows from it; beyond,
# it gathers the centres' windows (many envs in one process keep their memory small).
TILE_WINDOWS_MAX = 1 << 14


def _tile_windows(v, r: int):
    """Every grid cell's (2r+1)x(2r+1) window of tiles (-1 outside), (h * w, S, S) by flat cell
    index row * w + col, kept on v until v.tiles is replaced (a reset: rules replace arrays, never
    write into them); None for a grid too large to keep them (TILE_WINDOWS_MAX)."""
    kept = getattr(v, "_tile_windows", None)
    if kept is None or kept[0] is not v.tiles:
        kept = v._tile_windows = (v.tiles, {})
    by_radius = kept[1]
    if r not in by_radius:
        h, w = v.tiles.shape
        side = 2 * r + 1
        if h * w * side * side > TILE_WINDOWS_MAX:
            by_radius[r] = None
        else:
            pad = _tiles_pad(v, r)
            o, width = v._pad_r - r, pad.shape[1]
            starts = ((np.arange(h)[:, None] + o) * width + np.arange(w) + o).reshape(-1)
            by_radius[r] = pad.reshape(-1)[_window_index(width, starts, side)]
    return by_radius[r]


def rt_view_rows(v, centers, r: int):
    """rt_view(v, c, r) for each row c of `centers` (n, 2), stacked: (n, S, S)."""
    centres = _centres(v, centers)
    if centres[1] is None:
        return np.stack([rt_view(v, c, r) for c in centers])
    windows = _tile_windows(v, r)
    if windows is None:
        return _window_rows(_tiles_pad(v, r), centres, v._pad_r - r, r)
    w = v.tiles.shape[1]
    return windows.take([a * w + b for a, b in centres[1]], axis=0)


def _window_pairs(v, centres, r: int):
    """(slots, agents): for every agent j that stands in the window around centre i (centres i
    in order, and for each the agents j in order), the window cell as a flat index
    i * S * S + k into the (n, S, S) windows, and j; as int64 arrays. Kept with `centres` while
    v.pos is the same object: every window over the agents is then one bincount."""
    _, cells, kept, _ = centres
    pairs = kept.get(("pairs", r))
    if pairs is not None and pairs[0] is v.pos:
        return pairs[1:]
    side = 2 * r + 1
    slots, agents = [], []
    positions = v.pos.tolist()
    for i, (a, b) in enumerate(cells):
        a -= r  # the window's corner: an agent is in it when both offsets lie in [0, side)
        b -= r
        first = i * side
        for j, (pr, pc) in enumerate(positions):
            dr = pr - a
            if 0 <= dr < side:
                dc = pc - b
                if 0 <= dc < side:
                    slots.append((first + dr) * side + dc)
                    agents.append(j)
    pairs = kept["pairs", r] = (v.pos, np.array(slots, dtype=np.int64), np.array(agents, dtype=np.int64))
    return pairs[1:]


def rt_agents_view_rows(v, centers, r: int):
    """rt_agents_view(v, c, r) for each row c of `centers` (n, 2), stacked: (n, S, S)."""
    return rt_agents_windows_rows(v, centers, r, None)[0]


def rt_agents_windows_rows(v, centers, r: int, *values):
    """For each entry of `values`, the windows around `centers` over the agents: the agent counts
    (`rt_agents_view_rows`) for None, else the sums of x (`rt_agents_view_of_rows`), each
    (n, S, S). The features of a role that read several such windows around the same centres
    make one call: the centres and the pairs (`_window_pairs`) are looked up once."""
    centres = _centres(v, centers)
    if centres[1] is None:
        return [np.stack([rt_agents_view(v, c, r) for c in centers]) if x is None
                else np.stack([rt_agents_view_of(v, c, r, x) for c in centers]) for x in values]
    slots, agents = _window_pairs(v, centres, r)
    side = 2 * r + 1
    size = len(centres[1]) * side * side
    return [np.bincount(slots, minlength=size).astype(np.int64, copy=False).reshape(-1, side, side) if x is None
            else _window_sums(v, slots, agents, size, side, x) for x in values]


# An integer sum in float64 is exact while every partial sum stays within 2**53.
_EXACT = 2**53


def _values_pad(v, r: int, x):
    """x[j] summed into the cell of each agent j, on the grid padded by r cells."""
    h, w = v.tiles.shape
    x = np.asarray(x)
    grid = np.zeros((h + 2 * r, w + 2 * r), dtype=np.float64 if x.dtype.kind == "f" else np.int64)
    for (pr, pc), value in zip(v.pos.tolist(), x.tolist(), strict=True):
        if -r <= pr < h + r and -r <= pc < w + r:
            grid[pr + r, pc + r] += value
    return grid


def rt_agents_view_of(v, p, r: int, x):
    """The (2r+1)x(2r+1) window around p of x[j] summed over the agents j in each cell.

    For a centre on the grid it is a slice (a view: callers copy before they write) of the
    grid of x kept on v for this value of x and v.pos (`_values_kept`): the agents of a role
    that all pass the same x build that grid once."""
    side = 2 * r + 1
    x = np.asarray(x)
    row, col = int(p[0]), int(p[1])
    h, w = v.tiles.shape
    if 0 <= row < h and 0 <= col < w:
        return _values_kept(v, r, x)[row:row + side, col:col + side]
    out = np.zeros((side, side), dtype=np.float64 if x.dtype.kind == "f" else np.int64)
    r0, c0 = int(p[0]) - r, int(p[1]) - r
    for (row, col), value in zip(v.pos.tolist(), x.tolist(), strict=True):
        dr, dc = row - r0, col - c0
        if 0 <= dr < side and 0 <= dc < side:
            out[dr, dc] += value
    return out


def _values_kept(v, r: int, x):
    """_values_pad(v, r, x), kept on v while v.pos is the same object, for each distinct value
    of x (keyed by its bytes, so an x changed in place is never served a stale grid)."""
    kept = getattr(v, "_values_by_x", None)
    if kept is None or v._values_src is not v.pos or len(kept) > 8:
        v._values_by_x = kept = {}
        v._values_src = v.pos
    key = (r, x.dtype.str, x.shape, x.tobytes())
    grid = kept.get(key)
    if grid is None:
        grid = kept[key] = _values_pad(v, r, x)
    return grid


def rt_agents_view_of_rows(v, centers, r: int, x):
    """rt_agents_view_of(v, c, r, x) for each row c of `centers` (n, 2), stacked: (n, S, S)."""
    return rt_agents_windows_rows(v, centers, r, x)[0]


def _window_sums(v, slots, agents, size: int, side: int, x):
    """The windows' sums of x over the (slot, agent) pairs: one bincount weighted by x, per cell
    the same additions in the same order as rt_agents_view_of's (from 0, agents in order), in
    float64. Integers are summed so only while no partial sum can pass 2**53 (then exact);
    beyond, with np.add.at in int64."""
    x = np.asarray(x)
    if len(x) != len(v.pos):
        raise ValueError(f"agents_view_of takes one value per agent ({len(v.pos)}), got {len(x)}")
    kind = x.dtype.kind
    if kind == "f" or kind == "b" or len(slots) * _int_bound(x) < _EXACT:
        out = np.bincount(slots, weights=x[agents], minlength=size)  # (int64 when no agent is near)
        return out.astype(np.float64 if kind == "f" else np.int64, copy=False).reshape(-1, side, side)
    out = np.zeros(size, dtype=np.int64)
    np.add.at(out, slots, x[agents].astype(np.int64))
    return out.reshape(-1, side, side)


def _int_bound(x) -> int:
    """The largest |x[j]| of an integer array, as a Python int (a few entries: from the list)."""
    values = x.tolist()
    return max(max(values), -min(values)) if values else 0


# --------------------------------------------------------------------------- rendering


def render_ansi(tiles: np.ndarray, chars: Sequence[str], pos: np.ndarray, goals: np.ndarray) -> str:
    """Text picture: tile k as ``chars[k]``, agent i's goal as 'a'+i, agent i as 0-9/A-Z.

    Agents are drawn over goals and tiles; on shared cells the lowest index wins.
    """
    grid = [[chars[int(k)] for k in row] for row in np.asarray(tiles)]
    goals = np.asarray(goals, dtype=np.int64).reshape(-1, 2)
    pos = np.asarray(pos, dtype=np.int64).reshape(-1, 2)
    for i in range(len(goals) - 1, -1, -1):
        grid[goals[i, 0]][goals[i, 1]] = GOAL_SYMBOLS[i % len(GOAL_SYMBOLS)]
    for i in range(len(pos) - 1, -1, -1):
        grid[pos[i, 0]][pos[i, 1]] = AGENT_SYMBOLS[i % len(AGENT_SYMBOLS)]
    return "\n".join("".join(row) for row in grid)


def _agent_masks(cell: int) -> tuple[np.ndarray, np.ndarray]:
    """Boolean (cell, cell) masks: a small centred goal square and an agent disc."""
    centre = (cell - 1) / 2.0
    yy, xx = np.mgrid[0:cell, 0:cell]
    half = max(1, cell // 6)
    square = (np.abs(yy - centre) <= half) & (np.abs(xx - centre) <= half)
    disc = (yy - centre) ** 2 + (xx - centre) ** 2 <= (0.4 * cell) ** 2
    return square, disc


def _paint(image: np.ndarray, cell: int, at: np.ndarray, mask: np.ndarray, rgb: np.ndarray) -> None:
    """Paint ``mask`` in colour ``rgb`` into the cell at ``at`` (in place)."""
    r, c = int(at[0]) * cell, int(at[1]) * cell
    image[r : r + cell, c : c + cell][mask] = rgb


def render_rgb(
    tiles: np.ndarray,
    colors: Sequence[tuple[int, int, int]],
    pos: np.ndarray,
    goals: np.ndarray,
    cell: int = 16,
) -> np.ndarray:
    """RGB picture (H*cell, W*cell, 3) uint8: tiles, goal squares and agent discs.

    Agent i (and its goal) uses ``AGENT_PALETTE[i % 10]``; the lowest index is drawn on top.
    """
    lut = np.asarray(colors, dtype=np.uint8).reshape(-1, 3)
    image = np.repeat(np.repeat(lut[np.asarray(tiles, dtype=np.int64)], cell, 0), cell, 1)
    palette = np.asarray(AGENT_PALETTE, dtype=np.uint8)
    square, disc = _agent_masks(cell)
    goals = np.asarray(goals, dtype=np.int64).reshape(-1, 2)
    pos = np.asarray(pos, dtype=np.int64).reshape(-1, 2)
    for i in range(len(goals) - 1, -1, -1):
        _paint(image, cell, goals[i], square, palette[i % len(palette)])
    for i in range(len(pos) - 1, -1, -1):
        _paint(image, cell, pos[i], disc, palette[i % len(palette)])
    return np.ascontiguousarray(image)
