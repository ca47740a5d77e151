# gymwright runtime: solved layouts (inlined only into envs whose grid has `solve:`)
#
# The one runtime helper that needs gymwright itself: the optimal MAPF solver's pools
# (`gymwright.mapf`). An exported env whose spec has no `grid.solve` does not contain it.

import numpy as np


def solved_layouts(size, height, width, n_agents, densities, blocked, wait_ratio, index):
    """Layouts `index` (an int array) of the pool of `size` optimally solved MAPF instances of this
    config (`grid.solve`): tiles, starts, goals and optimal sums of arrival times, each with the
    leading axis of `index`."""
    try:
        from gymwright.mapf import MapfError, PoolConfig
        from gymwright.mapf.lazy import solved_pool
    except ImportError as err:
        raise ImportError("this environment's grid uses `solve:` (optimally solved MAPF layouts), which "
                          "needs gymwright installed: pip install gymwright") from err
    if height != width:
        raise MapfError(f"grid.solve needs a square grid, got {height}x{width}", path="grid.solve")
    holes = [k for k, b in enumerate(blocked) if b]
    ratio = float(sum(densities[k] for k in holes))
    wait_ratio = wait_ratio if n_agents > 1 else 0.0  # a lone agent never waits for another
    try:
        pool = solved_pool(PoolConfig(int(height), int(n_agents), ratio, float(wait_ratio)), int(size))
        lake, starts, goals, cost = pool.take(np.asarray(index, dtype=np.int64))
    except MapfError as err:  # gymwright's own error type: the CLI reports it without a traceback
        raise MapfError(f"no solved layouts for a {height}x{width} lake, {n_agents} agents, hole ratio "
                        f"{ratio:g}, wait ratio {wait_ratio:g}: {err.message}", path="grid.solve",
                        hint=err.hint or "change the params") from err
    tiles = np.where(lake, holes[0], 0).astype(np.int64)
    return tiles, starts.copy(), goals.copy(), cost.copy()
