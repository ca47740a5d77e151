# gymwright runtime: solved layouts (inlined only into envs whose grid has `solve:`)
#
# Layouts come from a pool of optimally solved MAPF instances of the env's config. An exported
# module carries the pools of the params it was exported with (`baked`: packed text, made by
# gymwright.mapf.bake), so it runs without gymwright; at other params, and in gymwright's own
# process, the pools come from gymwright's solver (`gymwright.mapf`), solved on first draw.

import base64
import io

import numpy as np

_KEYS: dict = {}  # the arguments of solved_key -> its name (formatting the floats costs more)
_WHOLE: dict = {}  # (pool name, its baked text or None) -> every layout, as solved_layouts returns them


def _pool_name(size, height, width, n_agents, densities, blocked, wait_ratio, seed):
    """solved_key, kept per arguments (every reset asks for it)."""
    args = (size, height, width, n_agents, tuple(densities), tuple(blocked), wait_ratio, seed)
    key = _KEYS.get(args)
    if key is None:
        key = _KEYS[args] = solved_key(size, height, width, n_agents, densities, blocked, wait_ratio, seed)
    return key


def solved_key(size, height, width, n_agents, densities, blocked, wait_ratio, seed=0):
    """The name of one pool: map, agents, hole ratio, wait ratio, number of layouts and (when not 0)
    the seed of its family (`grid.solve.seed`)."""
    holes = [k for k, b in enumerate(blocked) if b]
    ratio = float(sum(densities[k] for k in holes))
    wait = float(wait_ratio) if n_agents > 1 else 0.0  # a lone agent never waits for another
    family = f" seed={int(seed)}" if int(seed) else ""
    return f"{int(height)}x{int(width)} agents={int(n_agents)} holes={ratio!r} wait={wait!r} pool={int(size)}{family}"


def unpack_pool(text):
    """holes [K, H, W] bool, starts and goals [K, N, 2], optimal cost [K] from a baked pool."""
    with np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False) as data:
        k, h, w = (int(x) for x in data["shape"])
        holes = np.unpackbits(data["holes"])[: k * h * w].reshape(k, h, w).astype(bool)
        return holes, data["starts"].astype(np.int64), data["goals"].astype(np.int64), data["cost"].astype(np.int64)


def solved_layouts(size, height, width, n_agents, densities, blocked, wait_ratio, seed, index, baked=None):
    """Layouts `index` (an int array) of the pool of `size` optimally solved MAPF instances of this
    config (`grid.solve`) in the family `seed`: tiles, starts, goals and optimal sums of arrival
    times, each with the leading axis of `index`. `baked`: the pools this module carries (name ->
    packed text).

    Once every layout of a pool is known (a baked pool, or a solver's pool with every slot
    filled: its layouts never change) the whole pool is kept in this form, and a draw is one
    gather (a copy) of each."""
    key = _pool_name(size, height, width, n_agents, densities, blocked, wait_ratio, seed)
    source = (key, baked.get(key) if baked else None)
    idx = np.asarray(index, dtype=np.int64)
    whole = _WHOLE.get(source)
    if whole is None:
        holes = [k for k, b in enumerate(blocked) if b]
        if source[1] is not None:
            lake, starts, goals, cost = unpack_pool(source[1])
        else:
            drawn, pool = _solve(key, baked, size, height, width, n_agents, densities, holes, wait_ratio, seed, idx)
            if pool is None:  # some slots not solved yet: the layouts drawn (copies)
                lake, starts, goals, cost = drawn
                return _tiles(lake, holes), starts, goals, cost
            lake, starts, goals, cost = pool
        whole = _WHOLE[source] = (_tiles(lake, holes), starts, goals, cost)
    return tuple(x[idx] for x in whole)


def _tiles(lake, holes):
    """Tile kinds of the hole maps `lake`: the first blocked kind on a hole, 0 elsewhere."""
    return np.where(lake, holes[0], 0).astype(np.int64)


def _solve(key, baked, size, height, width, n_agents, densities, holes, wait_ratio, seed, idx):
    """The layouts `idx` from gymwright's solver (the pools of other params than the baked ones),
    and the whole pool (holes, starts, goals, costs) once all its slots are filled, else None."""
    try:
        from gymwright.mapf import MapfError, PoolConfig
        from gymwright.mapf.lazy import solved_pool
    except ImportError as err:
        carried = "; ".join(sorted(baked or {})) or "none"
        raise ImportError(f"no solved layouts for {key} in this module (it carries: {carried}); other params "
                          "need gymwright's solver (pip install gymwright), or export the module again with "
                          "these params (gymwright export --param ...)") from err
    if height != width:
        raise MapfError(f"grid.solve needs a square grid, got {height}x{width}", path="grid.solve")
    ratio = float(sum(densities[k] for k in holes))
    wait_ratio = wait_ratio if n_agents > 1 else 0.0
    try:
        pool = solved_pool(PoolConfig(int(height), int(n_agents), ratio, float(wait_ratio)), int(size), int(seed))
        drawn = pool.take(idx)
    except MapfError as err:  # gymwright's own error type: the CLI reports it without a traceback
        raise MapfError(f"no solved layouts for a {height}x{width} lake, {n_agents} agents, hole ratio "
                        f"{ratio:g}, wait ratio {wait_ratio:g}: {err.message}", path="grid.solve",
                        hint=err.hint or "change the params") from err
    whole = (pool.holes, pool.starts, pool.goals, pool.optimal_soc) if pool.ready.all() else None
    return drawn, whole
