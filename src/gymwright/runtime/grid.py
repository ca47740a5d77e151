"""Grid-world runtime: layout generation, movement, local views and rendering.

STANDALONE: this module imports only numpy and the standard library, because its source is
inlined verbatim into exported environment files.  Positions are ``(row, col)`` and integer
arrays are ``np.int64``.  Randomness never comes from ``np.random``: functions that need it take
``uniforms(stream, n)``, which must return ``n`` float64 values in ``[0, 1)`` deterministically
for a given ``(stream, n)``.
"""

import collections
from collections.abc import Callable, Sequence

import numpy as np

Uniforms = Callable[[int, int], np.ndarray]

COLLISION_RULES: tuple[str, ...] = ("none", "block")

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
    labels: np.ndarray, n_agents: int, uniforms: Uniforms, stream: int
) -> np.ndarray | None:
    """Distinct random free cells, preferring components with >= 2 cells."""
    flat = labels.ravel()
    free_idx = np.nonzero(flat >= 0)[0]
    sizes = np.bincount(flat[free_idx], minlength=1)
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
) -> tuple[np.ndarray, np.ndarray] | None:
    """Starts and goals for one attempt (random ones drawn within reachable components)."""
    if fixed_starts is not None and fixed_goals is not None:
        return fixed_starts.copy(), fixed_goals.copy()
    if fixed_goals is not None:
        order = _free_order(labels, uniforms, base + _STREAM_STARTS)
        return _assign_partners(fixed_goals, labels, order), fixed_goals.copy()
    starts = fixed_starts.copy() if fixed_starts is not None else None
    if starts is None:
        starts = _draw_starts(labels, n_agents, uniforms, base + _STREAM_STARTS)
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
    tiles: np.ndarray, lut: np.ndarray, need: int, uniforms: Uniforms, stream: int
) -> None:
    """Turn random blocked cells into floor until at least ``need`` cells are free (in place)."""
    flat = tiles.reshape(-1)
    blocked_idx = np.nonzero(lut[flat])[0]
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
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Deterministic fallback: place agents on free cells, then carve L paths to the goals."""
    tiles = tiles.copy()
    _clear_until(tiles, lut, min(tiles.size, max(n_agents, 2)), uniforms, base + _STREAM_CLEAR)
    one_component = np.where(lut[tiles], -1, 0).astype(np.int64)
    placed = _positions(one_component, n_agents, uniforms, base, fixed_starts, fixed_goals)
    if placed is None or min(placed[0].min(initial=0), placed[1].min(initial=0)) < 0:
        raise ValueError(f"cannot place {n_agents} agents on a {tiles.shape} grid")
    for start, goal in zip(*placed, strict=True):
        _carve_path(tiles, lut, start, goal)
    return tiles, placed[0], placed[1]


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
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Generate ``(tiles (H, W), starts (N, 2), goals (N, 2))`` with every goal reachable.

    Tile kinds are 0..K-1 (0 = floor); ``densities[k]`` is the per-cell probability of kind k
    (k >= 1) and ``blocked[k]`` marks kinds that paths must avoid.  Random starts are distinct
    free cells, random goals are distinct free cells in the start's component (different from
    the agent's own start when possible).  Random maps are redrawn up to ``max_tries`` times,
    then repaired by carving L-shaped paths (blocked cells on them become floor).  Fixed maps
    are never modified: an impossible fixed layout raises ValueError naming the agent.
    """
    lut = _validate_kinds(densities, blocked)
    fixed_tiles = _validate_tiles(fixed_tiles, height, width, len(lut))
    fixed_starts = _validate_cells(fixed_starts, "fixed_starts", n_agents, height, width)
    fixed_goals = _validate_cells(fixed_goals, "fixed_goals", n_agents, height, width)
    if n_agents < 0 or n_agents > height * width:
        raise ValueError(f"n_agents={n_agents} does not fit a {height}x{width} grid")
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
        placed = _positions(labels, n_agents, uniforms, base, fixed_starts, fixed_goals)
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
        return _carve_layout(tiles, lut, n_agents, uniforms, base, fixed_starts, fixed_goals)
    if relaxed is not None:
        return relaxed
    raise ValueError(f"fixed layout is not solvable: {problem}")


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


def _legal_moves(
    pos: np.ndarray, delta: np.ndarray, can_move: np.ndarray, passable: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Targets and which agents attempt a legal (in-grid, passable, non-zero) move."""
    height, width = passable.shape
    target = pos + delta
    inside = (
        (target[:, 0] >= 0) & (target[:, 0] < height) & (target[:, 1] >= 0) & (target[:, 1] < width)
    )
    rows = np.clip(target[:, 0], 0, height - 1)
    cols = np.clip(target[:, 1], 0, width - 1)
    ok = can_move & np.any(delta != 0, axis=1) & inside & passable[rows, cols]
    return target, ok


def _blocked_moves(pos: np.ndarray, target: np.ndarray, attempt: np.ndarray) -> np.ndarray:
    """Attempting agents that hit a vertex conflict or a swap conflict."""
    n = len(pos)
    others = ~np.eye(n, dtype=bool)
    final = np.where(attempt[:, None], target, pos)
    vertex = np.any(np.all(final[:, None, :] == final[None, :, :], axis=2) & others, axis=1)
    into = np.all(target[:, None, :] == pos[None, :, :], axis=2)
    swap = np.any(into & into.T & attempt[:, None] & attempt[None, :] & others, axis=1)
    return attempt & (vertex | swap)


def resolve_moves(
    pos: np.ndarray,
    delta: np.ndarray,
    can_move: np.ndarray,
    passable: np.ndarray,
    collision: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Apply simultaneous moves; return ``(new_pos, moved, conflict)``.

    Moves off the grid or into impassable cells leave the agent in place (not a conflict).
    ``collision="none"`` lets agents share cells; ``"block"`` cancels vertex conflicts (several
    agents ending in one cell, including a cell whose occupant stays) and swap conflicts,
    repeating until no conflict remains.  Following a leaving agent (and rotating cycles of
    three or more) is allowed.  ``conflict[i]`` marks moves cancelled because of other agents.
    """
    if collision not in COLLISION_RULES:
        raise ValueError(f"unknown collision rule {collision!r}; valid: {list(COLLISION_RULES)}")
    pos = np.asarray(pos, dtype=np.int64).reshape(-1, 2)
    delta = np.asarray(delta, dtype=np.int64).reshape(-1, 2)
    can_move = np.asarray(can_move, dtype=bool).reshape(-1)
    target, attempt = _legal_moves(pos, delta, can_move, np.asarray(passable, dtype=bool))
    conflict = np.zeros(len(pos), dtype=bool)
    while collision == "block":
        cancel = _blocked_moves(pos, target, attempt)
        if not cancel.any():
            break
        attempt = attempt & ~cancel
        conflict |= cancel
    new_pos = np.where(attempt[:, None], target, pos).astype(np.int64)
    return new_pos, attempt, conflict


# --------------------------------------------------------------------------- views


def _window_bounds(size: int, centre: int, radius: int) -> tuple[int, int, int]:
    """Source start, source stop and destination offset along one axis."""
    lo, hi = max(0, centre - radius), min(size, centre + radius + 1)
    return lo, hi, lo - (centre - radius)


def view(
    tiles: np.ndarray, center: Sequence[int] | np.ndarray, radius: int, fill: int
) -> np.ndarray:
    """The (2r+1, 2r+1) window of ``tiles`` centred on ``center``; outside cells are ``fill``."""
    tiles = np.asarray(tiles)
    side = 2 * radius + 1
    out = np.full((side, side), fill, dtype=np.int64)
    r0, r1, dr = _window_bounds(tiles.shape[0], int(center[0]), radius)
    c0, c1, dc = _window_bounds(tiles.shape[1], int(center[1]), radius)
    if r1 > r0 and c1 > c0:
        out[dr : dr + r1 - r0, dc : dc + c1 - c0] = tiles[r0:r1, c0:c1]
    return out


def agents_view(pos: np.ndarray, center: Sequence[int] | np.ndarray, radius: int) -> np.ndarray:
    """Number of agents in each cell of the window centred on ``center`` (centre included)."""
    side = 2 * radius + 1
    rel = np.asarray(pos, dtype=np.int64).reshape(-1, 2) - np.asarray(center, dtype=np.int64)
    rel = rel + radius
    inside = np.all((rel >= 0) & (rel < side), axis=1)
    counts = np.zeros((side, side), dtype=np.int64)
    np.add.at(counts, (rel[inside, 0], rel[inside, 1]), 1)
    return counts


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
