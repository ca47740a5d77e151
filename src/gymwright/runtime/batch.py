# gymwright runtime: batch helpers (standalone: numpy only; inlined into generated batch modules)
#
# Values in batch code carry a leading copy axis B (and, in per-agent places, an agent axis).
# Random draws use the same counter-based stream as runtime/core.py, vectorized over copies:
# copy b at (seed_b, episode_b, step_b) draws exactly what the Python backend draws.

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def b_mix(x):
    """splitmix64 finalizer on uint64 arrays (the same function as mix64 in core)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def b_keys(seeds, episodes, steps, site: int):
    """Per-copy stream keys; equal to core.stream_key for each copy."""
    one = np.uint64(1)
    k = b_mix(seeds.astype(np.uint64))
    k = b_mix(k + episodes.astype(np.uint64) + one)
    k = b_mix(k + steps.astype(np.uint64) + one)
    return b_mix(k + np.uint64(site) + one)


def b_uniforms(keys, idx):
    """Uniforms in [0, 1): keys (B,) and element indices idx (..., n) -> (B, ..., n)."""
    idx = np.asarray(idx, dtype=np.uint64)
    k = keys.reshape((-1,) + (1,) * idx.ndim)
    h = b_mix(idx * _GOLDEN + k)
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


def b_draw(r, site: int, me, n: int, pairs: bool = False):
    """The uniforms of one random call: (B, n) globally, (B, A, n) per agent (me: (A,) indices).

    Element indices are me * n + j (2 * (me * n) + j for two-uniform draws), as in core.
    """
    keys = b_keys(r.seeds, r.episodes, r.steps, site)
    m = 2 * n if pairs else n
    if me is None:
        return b_uniforms(keys, np.arange(m))
    base = (2 * n if pairs else n) * np.asarray(me, dtype=np.int64)
    return b_uniforms(keys, base[:, None] + np.arange(m)[None, :])


def b_shape(u, prefix: int, shape: tuple):
    """Uniforms (prefix..., n) -> (prefix..., *shape)."""
    return u.reshape(u.shape[:prefix] + tuple(shape))


def b_normal(u, prefix: int, shape: tuple):
    z = np.sqrt(-2.0 * np.log1p(-u[..., 0::2])) * np.cos(2.0 * np.pi * u[..., 1::2])
    return z.reshape(z.shape[:prefix] + tuple(shape))


def b_permutation(u):
    return np.argsort(u, axis=-1, kind="stable").astype(np.int64)


class BatchDraws:
    """Random state of a batch: per-copy seed, episode counter and step."""

    def __init__(self, size: int) -> None:
        self.seeds = np.zeros(size, dtype=np.uint64)
        self.episodes = np.zeros(size, dtype=np.int64)
        self.steps = np.zeros(size, dtype=np.int64)

    def subset(self, idx):
        out = BatchDraws(0)
        out.seeds, out.episodes, out.steps = self.seeds[idx], self.episodes[idx], self.steps[idx]
        return out


# -- indexing and array helpers with a prefix of `axis` leading axes

def b_clip_index(i, n: int):
    """Indices wrapped like Python for -n..-1 and clipped into range (never raises)."""
    return np.clip(i, -n, n - 1)


_B_PICK_BASE: dict = {}  # n -> b * n for b = 0, 1, ... (b_pick)


def b_pick(x, i):
    """x[b, b_clip_index(i, n)[b]] per copy for x (B, n) and an int index i (B,): one gather from
    the flat array at b * n + i[b] (numpy's x[BI, i] walks both index arrays, several times
    slower); an index outside 0 .. n - 1 is wrapped or clipped first, as b_clip_index."""
    n = x.shape[1]
    i = np.asarray(i)
    if i.min() < 0 or i.max() >= n:
        i = b_clip_index(i, n)
        i = np.where(i < 0, i + n, i)
    base = _B_PICK_BASE.get(n)
    if base is None or len(base) < len(x):  # b * n for every copy b, kept (the longest, per n)
        base = _B_PICK_BASE[n] = np.arange(0, len(x) * n, n)
    return x.reshape(-1)[base[:len(x)] + i]


def b_push(w, x, axis: int):
    """Shift the window w along `axis` and append x (broadcast to one entry)."""
    x = np.expand_dims(x, axis)
    entry = w.shape[:axis] + (1,) + w.shape[axis + 1:]
    shape = np.broadcast_shapes(entry, x.shape)
    w = np.broadcast_to(w, shape[:axis] + (w.shape[axis],) + shape[axis + 1:])
    x = np.broadcast_to(x, shape)
    body = w[(slice(None),) * axis + (slice(1, None),)]
    return np.concatenate([body, x], axis=axis).astype(np.result_type(w, x))


def b_roll(x, k, axis: int):
    """np.roll along `axis` with a shift per copy (k broadcasts against the prefix)."""
    n = x.shape[axis]
    k = np.asarray(k)
    if k.ndim == 0:
        return np.roll(x, int(k), axis=axis)
    prefix = np.broadcast_shapes(x.shape[:axis], k.shape)
    x = np.broadcast_to(x, prefix + x.shape[axis:])
    # indices on k's own (often small: one shift per agent) shape; the gather broadcasts them
    k = k.reshape((1,) * (len(prefix) - k.ndim) + k.shape)
    if len(prefix) == 2 and k.shape[0] == 1 and n > 0:
        return _b_roll_per_agent(x, k[0], n)
    idx = (np.arange(n) - k[..., None]) % n
    idx = idx.reshape(idx.shape + (1,) * (x.ndim - idx.ndim))
    return np.take_along_axis(x, idx, axis=axis)


def _b_roll_per_agent(x, shifts, n: int):
    """b_roll of x (B, m, n, ...) along axis 2 by a shift per agent j (shifts (m,) or (1,), the same
    in every copy): two slice copies per agent (a gather broadcast over the copies costs ~10x)."""
    out = np.empty(x.shape, dtype=x.dtype)
    for j in range(x.shape[1]):
        s = int(shifts[j if len(shifts) > 1 else 0]) % n
        out[:, j, s:] = x[:, j, :n - s]
        out[:, j, :s] = x[:, j, n - s:]
    return out


FOLD_MAX = 8  # reduce axes of at most this many elements one slice at a time


def b_fold(op, x, axes: tuple):
    """ufunc.reduce of x over `axes` by applying the binary ufunc `op` slice by slice.

    numpy reduces a short axis row by row, paying a fixed cost per row (with B copies, per copy);
    a few whole-array operations are much cheaper. For exact operations only (logical and/or,
    integer add): the result equals op.reduce.
    """
    for axis in sorted(axes, reverse=True):
        n = x.shape[axis]
        lead = (slice(None),) * axis
        out = x[lead + (0,)]
        for i in range(1, n):
            out = op(out, x[lead + (i,)])
        x = out if n > 1 else np.array(out)  # a copy when nothing was combined: never a view
    return x


def b_others(x, i, prefix: int, rank: int):
    """others(x, i) per copy (and agent): x has `prefix` leading axes (or fewer: a constant) before
    its `rank` type axes, i one int per prefix entry; the entry i of x's first type axis is left
    out, the rest kept in index order. i outside 0 .. n - 1 is clipped into range (as b_clip_index)."""
    x, i = np.asarray(x), np.asarray(i)
    x = x.reshape((1,) * (prefix + rank - x.ndim) + x.shape)
    i = i.reshape((1,) * (prefix - i.ndim) + i.shape)
    n = x.shape[prefix]
    j = np.arange(n - 1)
    idx = j + (j >= np.clip(i, 0, n - 1)[..., None])
    lead = np.broadcast_shapes(x.shape[:prefix], idx.shape[:-1])
    x = np.broadcast_to(x, lead + x.shape[prefix:])
    idx = np.broadcast_to(idx.reshape(idx.shape + (1,) * (rank - 1)), lead + (n - 1,) + x.shape[prefix + 1:])
    return np.take_along_axis(x, idx, axis=prefix)


def b_transpose(x):
    """The last two axes of x (a 2-D type after its leading copy/agent axes) swapped."""
    x = np.asarray(x)
    return np.swapaxes(x, x.ndim - 2, x.ndim - 1)


def b_onehot(i, n: int):
    return (np.asarray(i)[..., None] == np.arange(n)).astype(np.float64)


def b_float(x):
    return np.asarray(x, dtype=np.float64)


def b_int(x, how: str):
    """floor / ceil / round (ties to even) / int (toward zero), as int64."""
    fn = {"floor": np.floor, "ceil": np.ceil, "round": np.rint, "int": np.trunc}[how]
    return fn(np.asarray(x)).astype(np.int64)


def rt_isclose(a, b):
    return np.isclose(a, b, rtol=1e-9, atol=1e-12)


def b_choice(a, u):
    """An element of the 1-D array a (constant or (B, [A,] n)) picked by uniforms u (B, [A,] 1)."""
    a = np.asarray(a)
    n = a.shape[-1]
    i = np.minimum((u[..., 0] * n).astype(np.int64), n - 1)
    if a.ndim == 1:
        return a[i]
    return np.take_along_axis(np.broadcast_to(a, i.shape + (n,)), i[..., None], axis=-1)[..., 0]


# -- whole copies: gather and scatter the rows of finished copies (auto-reset, episode results)

def _b_row_view(x):
    """x (B, ...) as B opaque rows (a 1-D view of the same memory), or None where it cannot be:
    numpy gathers and scatters such rows with one copy each, several times faster than
    indexing the leading axis of a (B, n) array item by item."""
    if x.ndim < 2 or not x.flags.c_contiguous or x.size == 0:
        return None
    return x.reshape(x.shape[0], -1).view(np.dtype((np.void, x.strides[0])))[:, 0]


def b_groups(configs):
    """(config, copies) for each distinct row of `configs` (K, C), in np.unique's order: the
    copies as an index array. One row shared by every copy (the usual batch) is found with one
    comparison; np.unique of rows sorts them as opaque records, about 0.25 ms even for a few
    hundred copies (MAPF's restart of the finished copies, every step)."""
    if not len(configs):
        return []
    if (configs == configs[0]).all():
        return [(configs[0], np.arange(len(configs)))]
    return [(c, np.flatnonzero((configs == c).all(axis=1))) for c in np.unique(configs, axis=0)]


def b_take_rows(x, idx):
    """x[idx] (a copy) for an index array idx of copies, or of the rows of a table (any shape)."""
    rows = _b_row_view(x)
    if rows is None:
        return x[idx]
    return rows[idx].view(x.dtype).reshape(np.shape(idx) + x.shape[1:])


def b_put_rows(dst, idx, src):
    """dst[idx] = src for an index array idx of copies (src: one row per index)."""
    src = np.asarray(src)
    rows = _b_row_view(dst)
    same = src.dtype == dst.dtype and src.shape == (len(idx),) + dst.shape[1:]
    from_rows = _b_row_view(src) if same else None
    if rows is None or from_rows is None:
        dst[idx] = src
    else:
        rows[idx] = from_rows


def b_copy_rows(dst, src, idx):
    """dst[idx] = src[idx] for an index array idx of copies (dst and src of one shape)."""
    b_put_rows(dst, idx, b_take_rows(src, idx))


def b_start_rows(x):
    """What reset keeps of a start array x (B, ...) to restart copies from (b_restart_rows): the
    first row alone, (1, ...), when every row has the same bytes as the first (a start shared by
    every copy), else a copy of x (C-ordered: a per-agent start such as `2 + me` may come
    column-major, whose rows cannot be viewed as bytes)."""
    x = np.array(x, order="C")
    if len(x) > 1 and x.size and (x.reshape(len(x), -1).view(np.uint8) == x[:1].reshape(1, -1).view(np.uint8)).all():
        return x[:1].copy()
    return x


def b_restart_rows(dst, start, idx):
    """dst[idx] = the start rows `start` of `b_start_rows` (one row shared by every copy, or one
    per copy): a shared row is written by one copy per index, with no gather."""
    if len(start) == len(dst):
        b_copy_rows(dst, start, idx)
        return
    rows = _b_row_view(dst)
    if rows is None:
        dst[idx] = start[0]
    else:
        rows[idx] = _b_row_view(start)[0]


def b_is_me(x, lo: int, n: int):
    """(B, n) bool, [b, j] = (x[b] == lo + j) for an int x per copy: `me == x` of a role whose
    agents are lo .. lo + n - 1 (numpy's broadcast of ME against x[:, None] runs a short inner
    loop of n per copy instead): up to 4 agents one column at a time, more by one scatter."""
    x = np.asarray(x)
    if n > 4:
        return b_at_turn(True, x, lo, n)
    out = np.empty(x.shape + (n,), dtype=bool)
    for j in range(n):
        np.equal(x, lo + j, out=out[..., j])
    return out


def b_at_turn(code, active, lo: int, n: int):
    """(B, n): code[b] (a scalar or one value per copy) in the column of agent active[b] (the
    role's agents are lo .. lo + n - 1), 0 / False elsewhere and where active[b] is none of them;
    intp, or bool for code True. Up to 4 agents one column at a time (a long loop each), more by
    one scatter of the copies' entries."""
    active = np.asarray(active)
    dtype = bool if code is True else np.intp
    if n <= 4:
        out = np.empty(active.shape + (n,), dtype=dtype)
        for j in range(n):
            np.multiply(code, active == lo + j, out=out[..., j])
        return out
    out = np.zeros(active.shape + (n,), dtype=dtype)
    j = active.astype(np.int64).reshape(-1) - lo
    rows = np.flatnonzero((j >= 0) & (j < n))
    out.reshape(-1)[rows * n + j[rows]] = code if np.ndim(code) == 0 else np.asarray(code).reshape(-1)[rows]
    return out


def b_turn_table(rows, n: int):
    """The whole mask rows (C * (n + 1), n * A) of a turn-based role of n agents from its
    MASK_ROWS (C, A): row code * (n + 1) + j holds rows[code] in agent j's entries and zeros in
    the others' (j = n: no agent of the role is active)."""
    c, a = rows.shape
    out = np.zeros((c, n + 1, n, a), dtype=rows.dtype)
    for j in range(n):
        out[:, j, j] = rows
    return out.reshape(c * (n + 1), n * a)


def b_turn_rows(table, code, active, lo: int, n: int, out):
    """out[b] = the role's mask rows for code[b] (per copy) in the column of agent active[b] and
    zeros elsewhere (all zeros where active[b] is none of the agents lo .. lo + n - 1), as
    MASK_ROWS[b_at_turn(code, active, lo, n)]: one gather of a whole row per copy from
    `b_turn_table`, not one per copy and agent."""
    j = np.subtract(active, lo, dtype=np.int64)
    j = np.minimum(j.view(np.uint64), n).view(np.int64)  # a negative j wraps to a huge one: n
    j += code * (n + 1)
    rows = out.reshape(len(j), -1) if out.flags.c_contiguous else None
    if rows is None:
        out[...] = np.take(table, j, axis=0).reshape(out.shape)
    else:
        np.take(table, j, axis=0, out=rows)


def b_set_obs(dst, x):
    """dst[...] = x for a view dst of a role's observation entries in the (B, N, D) buffer:
    (B, n) for one entry, (B, n, m) for a run of m. One entry, from a value per copy (B, 1) or
    per agent (B, n), up to 4 agents: cast once, then one agent column at a time, a long strided
    copy each, where numpy's cast into the strided buffer would run a short inner loop of n per
    copy. Anything else (a run of entries too) at once: numpy's own strided cast of a run was
    measured faster than a cast into a contiguous temporary copied as opaque rows (MAPF's
    observation 8.8 -> 7.9 ms at B = 8192; benchmarks/results/2026-12-03-throughput.md)."""
    x = np.asarray(x)
    if dst.ndim == 2 and x.ndim == 2 and x.shape[1] in (1, dst.shape[1]) and 1 < dst.shape[1] <= 4:
        x = x.astype(dst.dtype, copy=False)
        for j in range(dst.shape[1]):
            dst[:, j] = x[:, j if x.shape[1] > 1 else 0]
        return
    dst[...] = x


OBS_CHUNK_BYTES = 1 << 20  # the part of the observation buffer written at a time (fits an L2 cache)
OBS_HELD_BYTES = 4 << 20


class BatchObsWriter:
    """Writes a role's observation features into its agents' rows of the (B, N, D) buffer `out`
    (agents start .. start + count - 1), copy chunk by copy chunk: `add(lo, hi, value)` for
    entries lo:hi ((B, n, hi - lo) values) or `add(lo, None, value)` for entry lo alone ((B, n),
    or (B, 1) / (1, n) / a scalar, broadcast); `add_at` for entries that are zero but for a few
    values added at given (copy, agent, entry) places; `flush()` writes what is held.

    Why: numpy writes a run of a few entries into the wide (B, n, D) buffer with one short inner
    loop per (copy, agent), and that loop runs about twice as fast into a part of the buffer the
    cache holds as into a multi-megabyte buffer, so each chunk of the buffer takes every held
    feature before the next chunk (MAPF at B = 8192: its ten writes 2.7 -> 1.8 ms alone, its whole
    step 12.4 -> 11.8 ms). Values are held up to OBS_HELD_BYTES, then written: holding every
    feature of that batch grew the heap by about 15 MB a step, which the allocator handed back
    and took again as fresh pages (3,900 page faults a step, the step 13 -> 17 ms; with 8 MB
    held, 1,400); benchmarks/results/2026-12-05-throughput-batch-round4.md."""

    def __init__(self, out: np.ndarray, start: int = 0, count: int | None = None) -> None:
        count = out.shape[1] - start if count is None else count
        self.dst = out[:, start:start + count]
        self.n, self.start = count, start
        self.out = out
        self.adds_at = out.flags.c_contiguous  # add_at adds into the flat buffer
        self.parts: list = []
        self.later: list = []  # (lo, places, values) of add_at, added after the chunks are written
        self.places: tuple | None = None  # (copy, agent, entry, their flat places at entry 0)
        self.held = 0

    def add(self, lo: int, hi: int | None, x) -> None:
        x = np.asarray(x)
        self.parts.append((lo, hi, x))
        self.held += x.nbytes
        if self.held >= OBS_HELD_BYTES:
            self.flush()

    def add_at(self, lo: int, hi: int, copy, agent, entry, values) -> None:
        """Entries lo:hi zero, but values[i] added at entry lo + entry[i] of agent agent[i] of copy
        copy[i] (int64 index arrays; several at one place add up, in order, in float32: only for
        values whose sums float32 holds exactly). Needs `adds_at` (a C-contiguous buffer)."""
        rows = self.places
        if rows is None or rows[0] is not copy or rows[1] is not agent or rows[2] is not entry:
            _, n_all, dim = self.out.shape  # flat places in the buffer, made once for these pairs
            self.places = rows = (copy, agent, entry, (copy * n_all + agent + self.start) * dim + entry)
            self.held += rows[3].nbytes
        last = self.parts[-1] if self.parts else None
        if last is not None and last[1] == lo and last[2].ndim == 0 and last[2] == 0:
            self.parts[-1] = (last[0], hi, last[2])  # one zeroed run for adjacent ones
        else:
            self.parts.append((lo, hi, np.zeros((), dtype=self.out.dtype)))
        values = np.asarray(values, dtype=self.out.dtype)
        self.later.append((lo, rows[3], values))
        self.held += values.nbytes
        if self.held >= OBS_HELD_BYTES:
            self.flush()

    def flush(self) -> None:
        dst, size = self.dst, self.dst.shape[0]
        rows = max(1, OBS_CHUNK_BYTES // max(1, dst[:1].nbytes))
        for lo in range(0, size, rows):
            chunk = dst[lo:lo + rows]
            for a, b, x in self.parts:
                per_copy = x.ndim and x.shape[0] == size  # else the same for every copy (ME: (1, n))
                b_set_obs(chunk[:, :, a] if b is None else chunk[:, :, a:b], x[lo:lo + rows] if per_copy else x)
        flat = self.out.reshape(-1) if self.later else None
        for lo, at, values in self.later:
            np.add.at(flat, at + lo if lo else at, np.broadcast_to(values, at.shape))
        self.parts, self.later, self.held = [], [], 0


class BatchPowers:
    """Tables of base ** k for the int exponents k of a bounded range, one per param array of the
    batch (b_pow_int), made on first use. A table is kept with the array it was made from and
    serves another array only of the same values (a param array put back from a checkpoint); a
    subset's params are computed directly. Derived data: a checkpoint of the env skips it
    (`ENV_SKIP` in train/checkpoint.py), and a restored env makes its tables again."""

    def __init__(self) -> None:
        self.tables: dict = {}

    def __call__(self, name: str, base, lo: int, n: int):
        """(base, table, rows): base ** (lo + k) of copy b at table[k * B + b], rows = arange(B);
        None for a base array of other values or shape."""
        key = (name, lo, n)
        hit = self.tables.get(key)
        if hit is None:
            x = np.asarray(base, dtype=np.float64)
            table = np.empty((n, len(x)))
            for k in range(n):  # one full-length np.power per exponent: each entry as np.power computes it
                np.power(x, np.full(x.shape, lo + k, dtype=np.int64), out=table[k])
            hit = self.tables[key] = (base, table.reshape(-1), np.arange(len(x)))
        if hit[0] is base:
            return hit
        old = np.asarray(hit[0])
        new = np.asarray(base)
        if new.shape != old.shape or new.dtype != old.dtype or new.tobytes() != old.tobytes():  # bytes: -0.0 is not 0.0
            return None
        hit = self.tables[key] = (base, *hit[1:])
        return hit


def b_pow_int(powers, name: str, base, e, lo: int, n: int):
    """np.power(base, e) (float64) for a param array `base` (B,) and an int exponent e (B,) that
    mostly lies in lo .. lo + n - 1: a gather from the powers' table instead of a C pow per copy,
    with the same values; np.power itself for another base array or an exponent outside."""
    hit = powers(name, base, lo, n) if np.ndim(base) == 1 and np.shape(e) == np.shape(base) else None
    j = np.subtract(e, lo) if lo else np.asarray(e)
    if hit is None or not j.size or j.min() < 0 or j.max() >= n:
        return np.power(np.asarray(base, dtype=np.float64), e)
    _, table, rows = hit
    j = j * len(rows)
    j += rows
    return table[j]


def b_own(x, shape: tuple):
    """x as a float64 array of `shape` that no one else holds, for a value x that the caller's
    statement has just made (never a view of state): x itself where it already is one, else
    np.array(np.broadcast_to(x, shape), dtype=np.float64)."""
    if isinstance(x, np.ndarray) and x.shape == shape and x.dtype == np.float64 and x.flags.owndata and x.flags.writeable:
        return x
    return np.array(np.broadcast_to(x, shape), dtype=np.float64)


def b_agents(x, n: int):
    """(B, n): a copy of the per-copy x (B,) in each of n agent columns, as np.repeat(x[:, None],
    n, axis=1): up to 4 agents one column at a time (np.repeat copies item by item)."""
    x = np.asarray(x)
    if n > 4 or x.ndim != 1:
        return np.repeat(x[:, None], n, axis=1)
    out = np.empty((len(x), n), dtype=x.dtype)
    for j in range(n):
        out[:, j] = x
    return out


def b_wide(x, n: int):
    """A per-copy value x (B,) as the (B, n) operand of an elementwise operation against a role's
    agent axis: a copy in each of n columns (b_agents), which numpy then combines in long loops.
    Anything else as x[:, None] (a 0-d value as it is), which broadcasts the same."""
    x = np.asarray(x)
    if x.ndim == 0:
        return x
    if x.ndim != 1 or n > 4:
        return x[:, None]
    return b_agents(x, n)


# -- what callers hand in: seeds and actions (checked, never cast silently)

def b_seeds(seed, size: int):
    """Per-copy seeds (uint64, (size,)): an int s gives s + b to copy b, an integer array (size,)
    gives seed[b]. Every seed is an int in [0, 2**63), as in the Python backend (rt_seed);
    anything else raises ValueError naming the copy."""
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        seed = int(seed)
        if seed < 0 or seed + size > SEED_LIMIT:  # noqa: F821 - from core.py, inlined before
            raise ValueError(f"reset(seed={seed}) is out of range: copy b gets the seed {seed} + b and a seed is an int "
                             f"in [0, 2**63), so with {size} copies pass a seed in [0, 2**63 - {size}]")
        return np.arange(seed, seed + size, dtype=np.uint64)
    arr = np.asarray(seed) if isinstance(seed, np.ndarray | list | tuple) else None
    if arr is None or arr.dtype.kind not in "iu" or arr.shape != (size,):
        shown = f"an array of dtype {arr.dtype} and shape {arr.shape}" if arr is not None else f"{seed!r} ({type(seed).__name__})"
        raise ValueError(f"reset(seed=...) takes an int or an integer array of shape ({size},) (one seed per copy), "
                         f"got {shown}")
    bad = np.flatnonzero((arr < 0) | (arr >= SEED_LIMIT))  # noqa: F821 - from core.py, inlined before
    if len(bad):
        b = int(bad[0])
        raise ValueError(f"reset(seed=...): the seed {arr[b]} of copy {b} is out of range; a seed is an int in [0, 2**63)")
    return arr.astype(np.uint64)


def b_actions(actions, size: int, agents, roles):
    """step()'s actions as int64 (size, N): an integer array (or nested lists of ints) with -1 for
    no action and 0..n-1 for an agent whose role has n actions (`roles`: the ROLES table).
    Floats, bools, other shapes and values out of range raise ValueError naming the copy and the
    agent; nothing is cast or clipped."""
    a = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
    if a.dtype.kind not in "iu":
        raise ValueError(f"actions must be an integer array of shape ({size}, {len(agents)}) (-1 = no action), "
                         f"got dtype {a.dtype}; nothing is truncated or parsed here: convert whole-valued floats yourself")
    if a.shape != (size, len(agents)):
        raise ValueError(f"actions must have shape ({size}, {len(agents)}) (copies, agents), got {a.shape}")
    for _, start, count, _, n in roles:
        part = a[:, start:start + count]
        if part.size and (part.min() < -1 or part.max() >= n):
            b, j = (int(x) for x in np.argwhere((part < -1) | (part >= n))[0])
            raise ValueError(f"action {part[b, j]} of copy {b}, agent {agents[start + j]} is outside Discrete({n}): "
                             f"give 0..{n - 1}, or -1 for no action")
    return a if a.dtype == np.int64 else a.astype(np.int64)


def b_param_values(name: str, kind: str, per_copy, default, lo, hi) -> list:
    """The values of one param for each dict of `per_copy`, checked by rt_param (type, finite,
    range); a refusal names the copy when there are several dicts."""
    out = []
    for b, d in enumerate(per_copy):
        try:
            out.append(rt_param(name, kind, d.get(name, default), lo, hi))  # noqa: F821 - from core.py, inlined before
        except ValueError as e:
            if len(per_copy) == 1:
                raise
            raise ValueError(f"{e} (in the params of copy {b})") from None
    return out
