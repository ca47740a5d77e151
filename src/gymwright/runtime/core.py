# gymwright runtime: core (standalone: numpy and the standard library only; inlined into exported envs)
#
# Random numbers are counter-based: a draw is a pure function of
# (seed, episode, step, site, index), so the Python and batch backends draw the same numbers
# whatever order they evaluate things in. `site` numbers each random call in the spec.

import math
import os

import numpy as np

_MASK = 0xFFFFFFFFFFFFFFFF
_U53 = 1.0 / 9007199254740992.0


def mix64(x: int) -> int:
    """splitmix64 finalizer on a Python int (64-bit wrap)."""
    x &= _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def mix64_array(x: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer on a uint64 array (wraps like mix64)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def stream_key(seed: int, episode: int, step: int, site: int) -> int:
    """The key of one draw site at one step of one episode."""
    k = mix64(seed)
    k = mix64(k + episode + 1)
    k = mix64(k + step + 1)
    return mix64(k + site + 1)


# Up to this many values, `uniforms` and `rt_manhattan_rows` compute on Python ints: the same
# integer arithmetic, without numpy's cost per call, which dominates for one env's few values.
FEW_VALUES = 8


def uniforms(seed: int, episode: int, step: int, site: int, start: int, n: int) -> np.ndarray:
    """n floats in [0, 1) for element indices start .. start+n-1."""
    if n <= FEW_VALUES:  # the same 64-bit arithmetic, on Python ints
        k = stream_key(seed, episode, step, site)
        return np.array([(mix64(i * 0x9E3779B97F4A7C15 + k) >> 11) * _U53 for i in range(start, start + n)],
                        dtype=np.float64)
    key = np.uint64(stream_key(seed, episode, step, site))
    idx = np.arange(start, start + n, dtype=np.uint64)
    h = mix64_array(idx * np.uint64(0x9E3779B97F4A7C15) + key)
    return (h >> np.uint64(11)).astype(np.float64) * _U53


def new_seed() -> int:
    """A fresh seed from the OS, for reset(seed=None) before any seeding."""
    return int.from_bytes(os.urandom(8), "little") >> 1


class Draws:
    """The random source of one env: seed, episode counter and the current step."""

    def __init__(self) -> None:
        self.seed = new_seed()
        self.episode = -1
        self.step = 0

    def reset(self, seed: "int | None") -> None:
        if seed is not None:
            self.seed = rt_seed(seed)
            self.episode = 0
        else:
            self.episode += 1
        self.step = 0

    def u(self, site: int, start: int, n: int) -> np.ndarray:
        return uniforms(self.seed, self.episode, self.step, site, start, n)


# -- what callers hand in: seeds, actions, params (checked, never coerced silently)

SEED_LIMIT = 2**63  # seeds are ints in [0, 2**63): non-negative int64, as numpy's own seeds


def rt_seed(seed) -> int:
    """A reset seed: a Python or numpy int (not a bool) in [0, 2**63); ValueError otherwise.

    Nothing is reduced modulo 2**64 or truncated, so two different seeds never replay one episode.
    """
    if seed.__class__ is not int:
        if isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer):
            raise ValueError(f"reset(seed=...) takes None or an int in [0, 2**63), got {seed!r} ({type(seed).__name__}); "
                             "pass an int such as seed=0 (no floats, strings or bools)")
        seed = int(seed)
    if not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"reset(seed={seed}) is out of range: a seed is an int in [0, 2**63); "
                         "pass a non-negative seed below 2**63")
    return seed


def rt_close(unknown, known) -> str:
    """' (did you mean `x`?)' for the first of `unknown` names close to one of `known`; else ''."""
    import difflib

    for name in unknown:
        close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=0.6)
        if close:
            return f" (did you mean `{close[0]}` for `{name}`?)"
    return ""


def rt_param(name: str, kind: str, x, lo=None, hi=None):
    """A param value of type `kind` ('bool', 'int' or 'float') in its range [lo, hi] (None: no bound),
    or ValueError naming the param, the value, the range and what to give instead. NaN and
    infinities are refused: they compare false against every range, so no range check could catch
    them later."""
    if kind == "bool":
        if isinstance(x, bool | np.bool_):
            return bool(x)
        raise ValueError(f"param `{name}` must be a bool, got {x!r} ({type(x).__name__}); give True or False")
    article = "an" if kind == "int" else "a"
    span = f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
    if isinstance(x, bool | np.bool_) or not isinstance(x, int | float | np.integer | np.floating):
        raise ValueError(f"param `{name}` must be {article} {kind}, got {x!r} ({type(x).__name__}); "
                         f"give {article} {kind} in {span}")
    try:
        finite = math.isfinite(x)
    except OverflowError:  # an int too large for a float
        finite = kind == "int"
    if not finite:
        raise ValueError(f"param `{name}` = {x!r} is not a finite number (NaN and infinities compare false "
                         f"against every range); give a finite {kind} in {span}")
    if kind == "int":
        if not isinstance(x, int | np.integer) and not float(x).is_integer():
            raise ValueError(f"param `{name}` must be an int, got {x!r}; give a whole number in {span}")
        x = int(x)
    else:
        x = float(x)
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        raise ValueError(f"param `{name}` = {x!r} is out of its range {span}; give {article} {kind} in {span}")
    return x


# -- random draws: arguments are checked (ValueError), the stream is never consulted for bad ones

def _arg(x) -> str:
    x = np.asarray(x)
    return repr(x.item()) if x.ndim == 0 else repr(x.tolist()) if x.size <= 8 else f"an array of shape {x.shape}"


def _bad_draw(call: str, rule: str, **args) -> None:
    got = ", ".join(f"{k}={_arg(x)}" for k, x in args.items())
    raise ValueError(f"{call} {rule}; got {got}")


def _ordered(lo, hi, strict: bool) -> bool:
    """Finite lo <= hi (lo < hi if strict), for every element of arrays."""
    if isinstance(lo, np.ndarray) or isinstance(hi, np.ndarray):
        lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
        return bool(np.all(np.isfinite(lo) & np.isfinite(hi) & ((lo < hi) if strict else (lo <= hi))))
    return -math.inf < lo < hi < math.inf if strict else -math.inf < lo <= hi < math.inf


def _probability(p) -> bool:
    """0 <= p <= 1 (NaN is not), for every element of arrays."""
    if isinstance(p, np.ndarray):
        return bool(np.all((p >= 0) & (p <= 1)))
    return 0 <= p <= 1


def _shaped(u: np.ndarray, shape: tuple):
    return u.reshape(shape) if shape else float(u[0])


def draw_uniform(d: Draws, site: int, index: int, shape: tuple, lo=0.0, hi=1.0):
    if not _ordered(lo, hi, strict=False):
        _bad_draw("uniform(lo, hi)", "draws a float in [lo, hi), so it needs finite lo <= hi", lo=lo, hi=hi)
    n = math.prod(shape)
    return lo + (hi - lo) * _shaped(d.u(site, index * n, n), shape)


def draw_normal(d: Draws, site: int, index: int, shape: tuple, mean=0.0, std=1.0):
    if not (_ordered(0.0, std, strict=False) and _ordered(mean, mean, strict=False)):
        _bad_draw("normal(mean, std)", "needs a finite mean and a finite std >= 0", mean=mean, std=std)
    n = math.prod(shape)
    u = d.u(site, 2 * index * n, 2 * n)
    z = np.sqrt(-2.0 * np.log1p(-u[0::2])) * np.cos(2.0 * np.pi * u[1::2])
    return mean + std * _shaped(z, shape)


def draw_randint(d: Draws, site: int, index: int, shape: tuple, lo, hi):
    if not _ordered(lo, hi, strict=True):
        _bad_draw("randint(lo, hi)", "draws an int in [lo, hi) (hi exclusive), so it needs finite lo < hi", lo=lo, hi=hi)
    n = math.prod(shape)
    span = np.asarray(hi) - np.asarray(lo)
    out = np.asarray(lo) + np.floor(d.u(site, index * n, n).reshape(shape or (1,)) * span).astype(np.int64)
    return out.astype(np.int64) if shape else int(out.reshape(-1)[0])


def draw_bernoulli(d: Draws, site: int, index: int, shape: tuple, p):
    if not _probability(p):
        _bad_draw("bernoulli(p)", "is true with probability p, so it needs 0 <= p <= 1", p=p)
    n = math.prod(shape)
    out = d.u(site, index * n, n).reshape(shape or (1,)) < np.asarray(p)
    return out if shape else bool(out.reshape(-1)[0])


def draw_choice(d: Draws, site: int, index: int, a):
    a = np.asarray(a)
    i = min(int(d.u(site, index, 1)[0] * len(a)), len(a) - 1)
    return a[i].item()


def draw_permutation(d: Draws, site: int, index: int, n: int):
    return np.argsort(d.u(site, index * n, n), kind="stable").astype(np.int64)


# -- arithmetic with numpy semantics (no exceptions on division by zero)

def _arrayish(a, b) -> bool:
    return isinstance(a, np.ndarray) or isinstance(b, np.ndarray)


def rt_div(a, b):
    if _arrayish(a, b) or b == 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.true_divide(a, b)
    return a / b


def rt_floordiv(a, b):
    if _arrayish(a, b) or b == 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.floor_divide(a, b)
    return a // b


def rt_mod(a, b):
    if _arrayish(a, b) or b == 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.mod(a, b)
    return a % b


def rt_pow(a, b):
    """Powers are computed in float64; overflow gives inf, never unbounded work."""
    if not _arrayish(a, b):
        try:
            out = float(a) ** float(b)
            if not isinstance(out, complex):
                return out
        except (OverflowError, ZeroDivisionError):
            pass
    with np.errstate(all="ignore"):
        out = np.power(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return out if out.shape else float(out)


def rt_div_s(a, b):
    """Scalar a / b; numpy's inf/nan (not an exception) when b == 0."""
    return a / b if b else rt_div(a, b)


def rt_floordiv_s(a, b):
    return a // b if b else rt_floordiv(a, b)


def rt_mod_s(a, b):
    return a % b if b else rt_mod(a, b)


def rt_pow_s(a, b):
    """Scalar power in float; overflow gives inf, a complex result nan."""
    try:
        out = float(a) ** b
    except (OverflowError, ZeroDivisionError):
        return rt_pow(a, b)
    return out if out.__class__ is float else math.nan


# -- array helpers

def rt_onehot(i, n: int):
    i = np.asarray(i)
    return (i[..., None] == np.arange(n)).astype(np.float64)


def rt_push(window, x):
    out = np.empty_like(window, dtype=np.result_type(window, np.asarray(x)))
    out[:-1] = window[1:]
    out[-1] = x
    return out


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


def rt_roll(x, k):
    """np.roll(x, k, axis=0), faster for the small arrays of one env."""
    n = len(x)
    k = int(k) % n
    return np.concatenate((x[n - k:], x[:n - k])) if k else x.copy()


def rt_tile1(tiles, p):
    """The tile kind at one position (-1 outside the grid)."""
    r, c = int(p[0]), int(p[1])
    h, w = tiles.shape
    return int(tiles[r, c]) if 0 <= r < h and 0 <= c < w else -1


def rt_manhattan1(a, b):
    return abs(int(a[0]) - int(b[0])) + abs(int(a[1]) - int(b[1]))


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


def rt_agents_view(pos, p, r: int):
    """Agent counts in the (2r+1)x(2r+1) window around p."""
    out = np.zeros((2 * r + 1, 2 * r + 1), dtype=np.int64)
    r0, c0 = int(p[0]) - r, int(p[1]) - r
    for row, col in pos.tolist():
        dr, dc = row - r0, col - c0
        if 0 <= dr <= 2 * r and 0 <= dc <= 2 * r:
            out[dr, dc] += 1
    return out


def rt_agents_view_v(v, p, r: int):
    """rt_agents_view(v.pos, p, r) from a padded grid of agent counts kept on v (rebuilt when
    v.pos is replaced, as every step does): every agent's window is then one slice. A view:
    callers copy before they write."""
    row, col = int(p[0]), int(p[1])
    h, w = v.tiles.shape
    if not (0 <= row < h and 0 <= col < w):
        return rt_agents_view(v.pos, p, r)
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
    """rt_agents_view_v(v, c, r) for each row c of `centers` (n, 2), stacked: (n, S, S)."""
    return rt_agents_windows_rows(v, centers, r, None)[0]


def rt_agents_windows_rows(v, centers, r: int, *values):
    """For each entry of `values`, the windows around `centers` over the agents: the agent counts
    (`rt_agents_view_rows`) for None, else the sums of x (`rt_agents_view_of_rows`), each
    (n, S, S). The features of a role that read several such windows around the same centres
    make one call: the centres and the pairs (`_window_pairs`) are looked up once."""
    centres = _centres(v, centers)
    if centres[1] is None:
        return [np.stack([rt_agents_view_v(v, c, r) for c in centers]) if x is None
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


def rt_manhattan(a, b):
    out = np.abs(np.asarray(a) - np.asarray(b)).sum(axis=-1)
    return out if out.shape else int(out)


def rt_manhattan_rows(a, b):
    """manhattan(a[i], b[i]) of (n, 2) integer cells: (n,) int64, the columns added (a numpy sum
    over a last axis of two costs more; a list in Python costs as much for one row, 1.3 against
    0.9 µs for four, 2.0 against 0.9 for eight: measured 2026-12-05)."""
    d = np.abs(np.subtract(a, b))
    return d[:, 0] + d[:, 1]


def rt_int(x):
    return np.trunc(x).astype(np.int64) if isinstance(x, np.ndarray) else int(x)


def rt_round(x):
    return np.rint(x).astype(np.int64) if isinstance(x, np.ndarray) else int(np.rint(x))


def rt_floor(x):
    return np.floor(x).astype(np.int64) if isinstance(x, np.ndarray) else math.floor(x)


def rt_ceil(x):
    return np.ceil(x).astype(np.int64) if isinstance(x, np.ndarray) else math.ceil(x)


def resolve_moves_small(pos, delta, can_move, passable, collision, kinds=None):
    """grid.resolve_moves in plain Python, for the few agents of one env (same results).

    Moves off the grid or into impassable cells stay put; under "block", vertex conflicts
    (several agents ending in one cell, a staying occupant included) and swaps cancel the
    moves involved, repeated until none is left; following is allowed. `delta` and `can_move`
    may be lists; with `kinds` (passable or not, per tile kind) `passable` is the tile array.
    """
    P = pos.tolist()  # cells as [row, col] lists (compared with ==, as the targets are)
    D = delta.tolist() if isinstance(delta, np.ndarray) else delta
    h, w = passable.shape
    n = len(P)
    if isinstance(kinds, np.ndarray):
        kinds = kinds.tolist()  # a list's item is a plain read, a numpy array's a scalar made
    target = []  # where each agent attempts to go (its own cell when it attempts nothing)
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
    if True not in attempt:  # nobody moves: every agent stays, nothing to cancel
        return np.array(pos, dtype=np.int64).reshape(n, 2), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    conflict = [False] * n
    final = target[:]  # where each agent ends the step, as the moves still attempted say
    if collision == "block":
        while True:
            cancel = []  # the moves in a vertex conflict or a swap, all found before any is cancelled
            for i in range(n):
                if attempt[i]:
                    t = final[i]
                    if final.count(t) > 1:  # several agents end the step on one cell
                        cancel.append(i)
                    elif t in P:  # a swap: j, on i's target, attempts i's cell
                        for j in range(n):
                            if j != i and attempt[j] and P[j] == t and target[j] == P[i]:
                                cancel.append(i)
                                break
            if not cancel:
                break
            for i in cancel:
                attempt[i] = False
                conflict[i] = True
                final[i] = P[i]
    clashed = np.array(conflict, dtype=bool) if True in conflict else np.zeros(n, dtype=bool)
    return np.array(final, dtype=np.int64).reshape(n, 2), np.array(attempt, dtype=bool), clashed


POOL_SEED = 0x5EED5EED5EED5EED
_POOLS: dict = {}


def layout_pool(size, height, width, n_agents, densities, blocked, fixed_tiles, fixed_starts, fixed_goals, site):
    """`size` grid layouts generated once per config and cached; entry k draws its numbers from
    the stream (POOL_SEED, k), so every env and both backends build the same pool."""
    key = (size, height, width, n_agents, tuple(float(d) for d in densities), tuple(blocked),
           None if fixed_tiles is None else fixed_tiles.tobytes(),
           None if fixed_starts is None else fixed_starts.tobytes(),
           None if fixed_goals is None else fixed_goals.tobytes())
    pool = _POOLS.get(key)
    if pool is None:
        tiles = np.zeros((size, height, width), dtype=np.int64)
        starts = np.zeros((size, n_agents, 2), dtype=np.int64)
        goals = np.zeros((size, n_agents, 2), dtype=np.int64)
        for k in range(size):
            def uni(stream, n, k=k):
                return uniforms(POOL_SEED, k, 0, site + stream, 0, n)
            tiles[k], starts[k], goals[k] = generate_layout(  # noqa: F821 - from grid.py, inlined after
                height, width, n_agents, list(densities), list(blocked), uni, fixed_tiles, fixed_starts, fixed_goals)
        pool = _POOLS[key] = (tiles, starts, goals)
    return pool

