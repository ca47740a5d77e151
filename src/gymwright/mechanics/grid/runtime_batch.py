"""The grid module's runtime over B copies at once (the batch backend's): movement, lookups and
views, the vector forms of the scalar functions of ``runtime.py``.

STANDALONE: this module imports only numpy and the standard library, because its source is
inlined verbatim into generated modules after ``runtime.py``.  Its private helpers are prefixed
``_gb_`` so that they never shadow the helpers of ``runtime.py``.

Every function takes arrays with a leading copy axis B and returns exactly what the scalar
function of ``runtime.py`` (``resolve_moves``, ``rt_tile``, ``rt_view``, ...) returns for each
copy ``b``, stacked along that axis.  Positions are ``(row, col)`` and integer results are
``np.int64``.  Nothing here loops over copies or agents; the only loop is the fixpoint of
``resolve_moves_batch``, which runs at most N + 1 times.
"""

import numpy as np

_GB_COLLISION_RULES: tuple[str, ...] = ("none", "block", "vertex", "occupied")


# --------------------------------------------------------------------------- helpers


def _gb_cells(a: np.ndarray, name: str, batch: int | None = None) -> np.ndarray:
    """``a`` as int64 with shape (B, N, 2), checking the shape (and B when given)."""
    arr = np.asarray(a, dtype=np.int64)
    if arr.ndim != 3 or arr.shape[2] != 2 or (batch is not None and arr.shape[0] != batch):
        want = f"({batch if batch is not None else 'B'}, N, 2)"
        raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    return arr


def _gb_inside(height: int, width: int, p: np.ndarray) -> np.ndarray:
    """Whether each ``(row, col)`` in ``p[..., :]`` lies on a ``height`` x ``width`` grid: for
    int64 positions two unsigned compares (a negative int64 is a huge uint64), else four."""
    r, c = p[..., 0], p[..., 1]
    if p.dtype == np.int64:
        return (r.view(np.uint64) < height) & (c.view(np.uint64) < width)
    return (r >= 0) & (r < height) & (c >= 0) & (c < width)


def _gb_flat(shape: tuple[int, int, int], rows: np.ndarray, cols: np.ndarray, shift: int = 0) -> np.ndarray:
    """Indices into a flattened (B, H, W) grid of `shape` of the cells (rows + shift, cols + shift)
    of each copy: `rows` and `cols` int64 (B, ...), copy b's in grid b."""
    batch, height, width = shape
    flat = rows * width
    flat += cols
    flat += (np.arange(batch) * (height * width) + shift * (width + 1)).reshape((-1,) + (1,) * (rows.ndim - 1))
    return flat


def _gb_at(grid: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(grid[b, p[b, ..., 0], p[b, ..., 1]], inside)`` for int64 positions ``p`` (B, ..., 2):
    the value where the position lies on the grid, and whether it does; where it does not, the
    value is some cell's (mask it with ``inside``): one clipped gather reads them."""
    inside = _gb_inside(grid.shape[1], grid.shape[2], p)
    flat = _gb_flat(grid.shape, p[..., 0], p[..., 1])
    return np.take(np.ascontiguousarray(grid).reshape(-1), flat, mode="clip"), inside


def _gb_cell_ids(p: np.ndarray) -> np.ndarray:
    """One int64 per ``(row, col)`` (equal ids = same cell), for any row and |col| < 2**31."""
    return p[..., 0] * (1 << 32) + p[..., 1]


def _gb_same_cell(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, N, B) bool: cell ids ``a[i, b]`` and ``b[j, b]`` ((N, B), copy axis last) are equal."""
    return a[:, None, :] == b[None, :, :]


# --------------------------------------------------------------------------- movement


def apply_slip_batch(delta: np.ndarray, slip: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``apply_slip`` for every copy: (B, N, 2) moves, (B,) slip probabilities, (B, 2N) uniforms.

    ``u[b]`` must be the values the scalar path draws with ``uniforms(stream, 2 * N)``: value
    ``2i`` decides whether agent i slips (``u < slip``), value ``2i + 1`` picks the side
    (``< 0.5``: the left turn ``(-dc, dr)``, else its opposite).  Zero moves never slip.
    ``slip`` may also be a scalar shared by all copies.
    """
    delta = _gb_cells(delta, "delta")
    batch, n = delta.shape[0], delta.shape[1]
    u = np.asarray(u, dtype=np.float64)
    if u.shape != (batch, 2 * n):
        raise ValueError(f"u must have shape ({batch}, {2 * n}), got {u.shape}")
    slip = np.broadcast_to(np.asarray(slip, dtype=np.float64), (batch,))
    u = u.reshape(batch, n, 2)
    moving = np.any(delta != 0, axis=2)
    slips = moving & (u[:, :, 0] < slip[:, None])
    left = np.stack([-delta[:, :, 1], delta[:, :, 0]], axis=2)
    turned = np.where((u[:, :, 1] < 0.5)[:, :, None], left, -left)
    return np.where(slips[:, :, None], turned, delta).astype(np.int64)


def _gb_legal_moves(
    pos: np.ndarray,
    delta: np.ndarray,
    can_move: np.ndarray,
    passable: np.ndarray,
    passable_kinds: np.ndarray | None = None,
    pads: "PaddedTiles | None" = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Targets and which agents attempt a legal (in-grid, passable, non-zero) move."""
    target = pos + delta
    moving = (delta[..., 0] != 0) | (delta[..., 1] != 0)
    kinds = _gb_padded_at(pads, passable, target) if passable_kinds is not None else None
    if kinds is not None:  # -1 off the grid: the last entry, impassable
        return target, can_move & moving & np.append(passable_kinds, False)[kinds]
    at, inside = _gb_at(passable, target)
    if passable_kinds is not None:
        at = passable_kinds[at]
    ok = can_move & moving & inside & at
    return target, ok


def _gb_conflict_tables(pos: np.ndarray, target: np.ndarray, collision: str = "block") -> tuple[np.ndarray, np.ndarray]:
    """The pairwise tables the fixpoint needs, which do not change while moves are cancelled,
    (N, N, B) with the copy axis last (numpy then runs long inner loops over the copies instead
    of short ones of N per copy).

    For an attempting agent i and another agent j, i is blocked by j when j attempts too and
    ``moving[i, j, b]`` holds (same target, or a swap under ``"block"``, or i's target is j's
    start cell under ``"occupied"``), or when j stays and ``staying[i, j, b]`` holds (i's target
    is j's cell).
    """
    n = pos.shape[1]
    others = ~np.eye(n, dtype=bool)[:, :, None]
    pos, target = np.ascontiguousarray(_gb_cell_ids(pos).T), np.ascontiguousarray(_gb_cell_ids(target).T)
    into = _gb_same_cell(target, pos)
    same = _gb_same_cell(target, target)
    if collision == "occupied":
        same |= into
    elif collision == "block":
        same |= into & into.transpose(1, 0, 2)  # a swap
    moving = same & others
    staying = into & others
    return moving, staying


def _gb_blocked(moving: np.ndarray, staying: np.ndarray, attempt: np.ndarray) -> np.ndarray:
    """Attempting agents ((N, B), copy axis last) that hit a vertex conflict or a swap conflict
    (as ``resolve_moves`` cancels them)."""
    other_attempts = attempt[None, :, :]
    hit = (moving & other_attempts) | (staying & ~other_attempts)
    return attempt & hit.any(axis=1)


def resolve_moves_batch(
    pos: np.ndarray,
    delta: np.ndarray,
    can_move: np.ndarray,
    passable: np.ndarray,
    collision: str,
    passable_kinds: np.ndarray | None = None,
    pads: "PaddedTiles | None" = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``resolve_moves`` (runtime.py) for every copy; returns ``(new_pos (B,N,2), moved (B,N), conflict (B,N))``.

    ``pos`` and ``delta`` are (B, N, 2), ``can_move`` is (B, N) bool (or broadcastable to it)
    and ``passable`` is (B, H, W) bool; or, with ``passable_kinds`` (a bool per tile kind),
    ``passable`` is the (B, H, W) tile kinds and only the targets are looked up (in ``pads``, the
    env's padded tiles, when they serve: `tile_batch`).  Under ``"block"`` every copy runs the scalar fixpoint:
    cancel all vertex and swap conflicts of the still-attempting moves, repeat until none is
    left; copies that are already settled are unaffected by further rounds. ``"vertex"`` and
    ``"occupied"`` run the same fixpoint with their own conflicts (``resolve_moves``).
    """
    if collision not in _GB_COLLISION_RULES:
        valid = list(_GB_COLLISION_RULES)
        raise ValueError(f"unknown collision rule {collision!r}; valid: {valid}")
    pos = _gb_cells(pos, "pos")
    batch, n = pos.shape[0], pos.shape[1]
    delta = _gb_cells(delta, "delta", batch)
    if delta.shape[1] != n:
        raise ValueError(f"delta must have shape {pos.shape}, got {delta.shape}")
    can_move = np.broadcast_to(np.asarray(can_move, dtype=bool), (batch, n))
    passable = np.asarray(passable, dtype=bool if passable_kinds is None else None)
    if passable.ndim != 3 or passable.shape[0] != batch:
        raise ValueError(f"passable must have shape ({batch}, H, W), got {passable.shape}")
    target, attempt = _gb_legal_moves(pos, delta, can_move, passable, passable_kinds, pads)
    conflict = np.zeros((batch, n), dtype=bool)
    if collision != "none":
        moving, staying = _gb_conflict_tables(pos, target, collision)
        # rounds on the copies whose last round cancelled a move (the others have settled)
        rows, att = np.arange(batch), np.ascontiguousarray(attempt.T)  # (N, B)
        while True:
            cancel = _gb_blocked(moving, staying, att)
            hit = np.flatnonzero(cancel.any(axis=0))
            if not len(hit):
                break
            rows, cancel = rows[hit], cancel[:, hit]
            att = att[:, hit] & ~cancel
            attempt[rows] = att.T
            conflict[rows] |= cancel.T
            moving, staying = moving[:, :, hit], staying[:, :, hit]
    # each (row, col) as one opaque 16-byte cell: a pick per agent, not a broadcast over a last axis of 2
    cell = np.dtype((np.void, 16))
    picked = np.where(attempt, np.ascontiguousarray(target).view(cell)[..., 0], np.ascontiguousarray(pos).view(cell)[..., 0])
    return picked.view(np.int64).reshape(pos.shape), attempt, conflict


# --------------------------------------------------------------------------- views


def _gb_centers(center: np.ndarray, batch: int) -> np.ndarray:
    """Window centres as int64 (B, K, 2) (truncated like ``int()`` in the scalar ``rt_view``)."""
    arr = np.asarray(center)
    if arr.ndim != 3 or arr.shape[0] != batch or arr.shape[2] != 2:
        raise ValueError(f"center must have shape ({batch}, K, 2), got {arr.shape}")
    return arr.astype(np.int64)


def _gb_small_dtype(tiles: np.ndarray, fill: int) -> np.dtype:
    """The smallest signed integer dtype that holds every tile and `fill` (int8 for tile kinds
    and a fill of -1, where numpy's promotion of uint8 and int8 gives int16): the signed types
    of the least value and of -1 - the greatest."""
    lo, hi = min(int(tiles.min()), fill, -1), max(int(tiles.max()), fill, 0)
    return np.result_type(np.min_scalar_type(lo), np.min_scalar_type(-1 - hi))


def _gb_pad(tiles: np.ndarray, border: int, fill: int, small: np.dtype) -> np.ndarray:
    """(B, H, W) tiles in a (B, H + 2 border, W + 2 border) grid of `fill`, in dtype `small`."""
    batch, height, width = tiles.shape
    padded = np.empty((batch, height + 2 * border, width + 2 * border), dtype=small)
    padded[:, :border] = fill
    padded[:, height + border:] = fill
    padded[:, border:height + border, :border] = fill
    padded[:, border:height + border, width + border:] = fill
    # the tiles, cast once (a long loop), then copied in as one opaque row of W cells each (a cast
    # into the strided inside of `padded` runs a short inner loop of W)
    row = np.dtype((np.void, width * np.dtype(small).itemsize))
    padded[:, border:height + border, border:width + border].view(row)[..., 0] = tiles.astype(small).view(row)[..., 0]
    return padded


class PaddedTiles:
    """A batch env's tiles with a border of `fill`, kept between steps for `view_batch`.

    Made from the tiles array `view_batch` is given, and used again while it is given that same
    array object (its views then cost no scan of the tiles, no new grid). The env writes the
    rows it restarts in place into its tiles and, with `put_rows`, into this copy; every other
    change of the tiles replaces the array (a rule's `set`, a scenario, a restored checkpoint),
    which the next call notices. Tiles of fewer copies (the few a restart observes) are padded
    for that call alone: they do not displace the env's; tiles of more copies do (the env's
    whole batch, were a restart's few the first asked). Derived data: a checkpoint of the env
    skips it."""

    def __init__(self) -> None:
        self.tiles: np.ndarray | None = None  # the array `padded` was made from
        self.padded = np.zeros((0, 0, 0), dtype=np.int8)
        self.border, self.fill = 0, 0

    def get(self, tiles: np.ndarray, radius: int, fill: int) -> tuple[np.ndarray, int]:
        """(padded, border) of `tiles` with a border of at least 2 * radius cells of `fill`."""
        if self.tiles is tiles and self.fill == fill and self.border >= 2 * radius:
            return self.padded, self.border
        border = max(2 * radius, self.border if self.tiles is tiles else 0)
        padded = _gb_pad(tiles, border, fill, _gb_small_dtype(tiles, fill))
        if self.serves(tiles):
            self.tiles, self.padded, self.border, self.fill = tiles, padded, border, fill
        return padded, border

    def serves(self, tiles: np.ndarray) -> bool:
        """Whether `get(tiles)` keeps what it makes: nothing kept yet, tiles of the kept shape,
        or of more copies than the kept ones."""
        kept = self.tiles
        return kept is None or kept.shape == tiles.shape or tiles.shape[0] > kept.shape[0]

    def put_rows(self, tiles: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> None:
        """Mirror ``tiles[idx] = rows`` (just written) in the padded copy, if it is of `tiles`."""
        if self.tiles is not tiles or not len(idx):
            return
        info = np.iinfo(self.padded.dtype)
        if rows.min() < info.min or rows.max() > info.max:
            self.tiles = None  # a tile kind beyond the copy's dtype: made again when next asked
            return
        b, (height, width) = self.border, tiles.shape[1:]
        self.padded[idx, b:b + height, b:b + width] = rows


def _gb_padded_at(pads: PaddedTiles | None, tiles: np.ndarray, p: np.ndarray) -> np.ndarray | None:
    """``tiles[b, p[b, ..., 0], p[b, ..., 1]]`` with -1 off the grid, read from the env's padded
    tiles (`PaddedTiles`, fill -1) for int64 positions ``p`` (B, ..., 2): a gather from a small
    dtype (int8 for tile kinds: a quarter of a megabyte per 8192 8x8 grids against two of int64)
    with no bounds test, when every position lies within the padding's border. None when one does
    not, or when `pads` is not kept for arrays of this shape (a restart's few copies): the caller
    then reads `tiles` itself."""
    if pads is None or not pads.serves(tiles):
        return None
    padded, border = pads.get(tiles, 1, -1)
    if not _gb_inside(padded.shape[1], padded.shape[2], p + border).all():
        return None
    return np.take(padded.reshape(-1), _gb_flat(padded.shape, p[..., 0], p[..., 1], border), mode="clip")


def view_batch(tiles: np.ndarray, center: np.ndarray, radius: int, fill: int,
               pads: PaddedTiles | None = None) -> np.ndarray:
    """``rt_view`` for every copy and centre (with any `fill`): (B, H, W) tiles, (B, K, 2) centres -> (B, K, S, S).

    ``S = 2 * radius + 1``; window cells outside the grid are ``fill``. ``pads``: the env's
    padded tiles kept between steps (`PaddedTiles`), used when they are of these tiles.
    """
    tiles = np.asarray(tiles)
    if tiles.ndim != 3:
        raise ValueError(f"tiles must have shape (B, H, W), got {tiles.shape}")
    batch, height, width = tiles.shape
    center = _gb_centers(center, batch)
    side = 2 * radius + 1
    if side < 1:
        raise ValueError(f"radius must be >= 0, got {radius}")
    if tiles.size == 0:
        return np.full(center.shape[:2] + (side, side), fill, dtype=np.int64)
    # A copy of the tiles with a border of `fill` (in the smallest dtype that holds them): each
    # window is then one strided slice, and advanced indexing copies S x S blocks. The border
    # is the radius when every centre is on the grid, else twice that (always twice, kept);
    # centres further off than the radius see only `fill`.
    rows, cols = center[..., 0], center[..., 1]
    on_grid = bool(_gb_inside(height, width, center).all())
    if pads is not None:
        padded, border = pads.get(tiles, radius, fill)
    else:
        border = radius if on_grid else 2 * radius
        padded = _gb_pad(tiles, border, fill, _gb_small_dtype(tiles, fill))
    # each window is the S x S block of `padded` at its top-left corner: one flat gather
    shift = border - radius
    flat_w = width + 2 * border
    if on_grid:  # every corner inside the padded grid already (the common case: no clip)
        corner = _gb_flat(padded.shape, rows, cols, shift)
    else:
        top = np.clip(rows + shift, 0, height + 2 * shift - 1)
        left = np.clip(cols + shift, 0, width + 2 * shift - 1)
        corner = _gb_flat(padded.shape, top, left)
    block = (np.arange(side)[:, None] * flat_w + np.arange(side)).reshape(-1)
    # gathered window cell by window cell (S*S, B*K), long loops over the windows, then turned
    window_first = padded.reshape(-1)[block[:, None] + corner.reshape(-1)[None, :]]
    out = np.ascontiguousarray(window_first.T, dtype=np.int64).reshape(center.shape[:2] + (side, side))
    if not on_grid:
        far = (rows < -radius) | (rows >= height + radius) | (cols < -radius) | (cols >= width + radius)
        if far.any():
            out[far] = fill
    return out


def _gb_window_centers(pos: np.ndarray, center: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pos = _gb_cells(pos, "pos")
    center = np.asarray(center, dtype=np.int64)
    if center.ndim != 3 or center.shape[0] != pos.shape[0] or center.shape[2] != 2:
        raise ValueError(f"center must have shape ({pos.shape[0]}, K, 2), got {center.shape}")
    return pos, center


def window_plan_batch(pos: np.ndarray, center: np.ndarray, radius: int) -> tuple:
    """Where the agents at (B, N, 2) positions fall in the windows around (B, K, 2) centres:
    the flat cell (into (B, K, S, S), ``S = 2 * radius + 1``) of every (centre, agent) pair
    that lies in the window, where each such pair's value is read, and the windows' shape. One plan serves
    every `agents_view` / `agents_view_of` of the same positions, centres and radius
    (`window_sums_batch`).

    The pairwise offsets are computed with the copy axis last, (K, N, B): numpy then runs long
    inner loops over the copies instead of one short loop of N or 2 per copy and centre, and in
    int32 where every position and the radius fit well inside it (a quarter less time than int64
    at 8192 copies of 4 agents)."""
    pos, center = _gb_window_centers(pos, center)
    side = 2 * radius + 1
    if side < 1:
        raise ValueError(f"radius must be >= 0, got {radius}")
    batch, k = center.shape[:2]
    far = max(-int(pos.min()), int(pos.max()), -int(center.min()), int(center.max())) if pos.size and center.size else 0
    ints, uints = (np.int32, np.uint32) if max(far, radius) < 2**29 else (np.int64, np.uint64)
    p_t, c_t = np.ascontiguousarray(pos.T, dtype=ints), np.ascontiguousarray(center.T, dtype=ints)  # (2, N, B), (2, K, B)
    rows = p_t[0][None] - c_t[0][:, None]  # (K, N, B)
    rows += radius
    cols = p_t[1][None] - c_t[1][:, None]
    cols += radius
    inside = (rows.view(uints) < side) & (cols.view(uints) < side)  # 0 <= offset < side
    # the pairs inside, in (K, N, B) order: their indices, then the runs of each (centre, agent)
    # (no boolean gather over (K, N, B), nor a division)
    pair = np.flatnonzero(inside)
    n = pos.shape[1]
    counts = np.count_nonzero(inside.reshape(k * n, batch), axis=1)
    centre_agent = np.repeat(np.arange(k * n), counts)
    copy = pair - centre_agent * batch
    agent = np.repeat(np.tile(np.arange(n), k), counts)
    centre = np.repeat(np.repeat(np.arange(k), n), counts)
    cell = rows.reshape(-1)[pair].astype(np.int64) * side
    cell += cols.reshape(-1)[pair]
    flat = (copy * k + centre) * (side * side) + cell
    # where each pair's value is read: flat into (B, K, N), into (B, N), and its agent; then the
    # pairs' copy, centre and window cell apart (`window_sums_obs`)
    return (flat, (copy * (k * n) + centre_agent, copy * n + agent, agent, n), (batch, k, side, side),
            (copy, centre, cell))


def _gb_window_values(plan: tuple, x: np.ndarray) -> np.ndarray:
    """The value of each (centre, agent) pair of `plan`: x (N,), (B, N) or per centre (B, K, N)."""
    _, (at_centre, at_copy, agent, n), shape = plan[:3]
    full = {1: (n,), 2: (shape[0], n)}.get(x.ndim, (shape[0], shape[1], n))
    if x.shape != full:  # a value shared along an axis: spelled out
        x = np.broadcast_to(x, full)
    return np.ascontiguousarray(x).reshape(-1)[{1: agent, 2: at_copy}.get(x.ndim, at_centre)]


def window_sums_batch(plan: tuple, x: np.ndarray | None = None) -> np.ndarray:
    """Per cell of each window of `plan` (`window_plan_batch`): the agents in it counted, or
    their values `x` summed ((N,), (B, N) or per centre (B, K, N)) -> (B, K, S, S); int64
    unless `x` is float."""
    flat, _, shape = plan[:3]
    n_cells = shape[0] * shape[1] * shape[2] * shape[3]
    if x is None:
        return np.bincount(flat, minlength=n_cells).astype(np.int64, copy=False).reshape(shape)
    x = np.asarray(x)
    values = _gb_window_values(plan, x)
    if x.dtype.kind == "f":
        return np.bincount(flat, weights=values.astype(np.float64), minlength=n_cells).reshape(shape)
    sums = np.zeros(n_cells, dtype=np.int64)  # integer sums exactly, in int64
    np.add.at(sums, flat, values.astype(np.int64))
    return sums.reshape(shape)


def window_sums_obs(obs, lo: int, hi: int, plan: tuple, x: np.ndarray | None = None) -> None:
    """``obs.add(lo, hi, window_sums_batch(plan, x))`` for a `BatchObsWriter` of the role whose
    agents are the plan's centres, but added into the observation buffer itself (`add_at`): the
    entries zeroed in the writer's chunked pass, then every (centre, agent) pair's value added at
    its window cell, instead of a (B, K, S, S) int64 array of mostly zeros written in a pass of
    its own (MAPF's three such features at B = 8192: its step 11.3 -> 10.3 ms). Taken when it is
    exact: counts, or bool or integer values whose every sum float32 holds (|x| * N < 2**24),
    and one centre per agent of the role; anything else is the plain ``add``."""
    _, (_, _, _, n), (batch, k, side, _), (copy, centre, cell) = plan
    if x is not None:
        x = np.asarray(x)
    exact = x is None or x.dtype.kind == "b" or (
        x.dtype.kind in "iu" and (not x.size or max(int(x.max()), -int(x.min())) * n < 2**24))
    if not exact or k != obs.n or hi - lo != side * side or not obs.adds_at:
        obs.add(lo, hi, window_sums_batch(plan, x).reshape(batch, k, side * side))
        return
    obs.add_at(lo, hi, copy, centre, cell, 1.0 if x is None else _gb_window_values(plan, x))


def agents_view_batch(pos: np.ndarray, center: np.ndarray, radius: int) -> np.ndarray:
    """``rt_agents_view`` for every copy and centre: (B, N, 2) positions, (B, K, 2) centres.

    Returns (B, K, S, S) int64 agent counts per window cell (``S = 2 * radius + 1``).
    """
    return window_sums_batch(window_plan_batch(pos, center, radius))


def agents_view_of_batch(pos: np.ndarray, center: np.ndarray, radius: int, x: np.ndarray) -> np.ndarray:
    """``rt_agents_view_of`` for every copy and centre: (B, N, 2) positions, (B, K, 2) centres and
    values (N,), (B, N) or per centre (B, K, N) -> (B, K, S, S): per window cell, the sum of x
    over the agents in it."""
    x = np.asarray(x)
    center = np.asarray(center)
    if x.ndim == 3 and x.shape[1] > center.shape[1]:  # one centre per copy, values per agent: one window each
        center = np.broadcast_to(center, (center.shape[0], x.shape[1], 2))
    return window_sums_batch(window_plan_batch(pos, center, radius), x)


# --------------------------------------------------------------------------- lookups


def tile_batch(tiles: np.ndarray, p: np.ndarray, pads: PaddedTiles | None = None) -> np.ndarray:
    """``rt_tile`` for every copy: the tile kind at ``p[b, ...]`` in ``tiles[b]``, -1 outside.

    ``tiles`` is (B, H, W) and ``p`` is (B, ..., 2) integer; the result is (B, ...) int64.
    ``pads``: the env's padded tiles kept between steps (`PaddedTiles`), read when they serve.
    """
    tiles = np.asarray(tiles)
    p = np.asarray(p)
    if tiles.ndim != 3 or p.ndim < 2 or p.shape[0] != tiles.shape[0] or p.shape[-1] != 2:
        raise ValueError(f"need tiles (B, H, W) and p (B, ..., 2), got {tiles.shape}, {p.shape}")
    p = p.astype(np.int64, copy=False)
    padded = _gb_padded_at(pads, tiles, p)
    if padded is not None:
        return padded.astype(np.int64)
    at, inside = _gb_at(tiles, p)
    return np.where(inside, at, -1).astype(np.int64, copy=False)


def in_bounds_batch(shape_hw: tuple[int, int], p: np.ndarray) -> np.ndarray:
    """``rt_in_bounds`` for every copy: whether ``p[..., :]`` lies on an H x W grid (bool)."""
    p = np.asarray(p)
    if p.ndim < 1 or p.shape[-1] != 2:
        raise ValueError(f"p must have shape (B, ..., 2), got {p.shape}")
    height, width = shape_hw
    return np.asarray(_gb_inside(int(height), int(width), p), dtype=bool)


def b_manhattan(a, b):
    """``manhattan`` of cells with a leading copy axis (int64 (..., 2) -> (...))."""
    d = np.abs(np.asarray(a) - np.asarray(b))
    return d[..., 0] + d[..., 1]  # not .sum(axis=-1): numpy reduces a short last axis row by row
