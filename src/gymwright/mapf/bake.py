"""Solved layout pools packed into an exported module, so that it runs without gymwright.

`solved_pools(compiled)` solves every slot of the pool the exported instance draws from (its
`solved_config()`) and packs it as text: holes as bits, starts and goals as int8, the optimal
costs as int16, in a compressed npz, base64. `gymwright.mechanics.grid.runtime_solved.unpack_pool` reads it.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np

from gymwright.mapf.lazy import LazyPool, solved_pool
from gymwright.mapf.pool import PoolConfig
from gymwright.mechanics.grid.runtime_solved import solved_key


def pack_pool(holes: np.ndarray, starts: np.ndarray, goals: np.ndarray, cost: np.ndarray) -> str:
    """One pool as text (see the module doc)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, shape=np.array(holes.shape, dtype=np.int64), holes=np.packbits(holes.reshape(-1)),
                        starts=starts.astype(np.int8), goals=goals.astype(np.int8), cost=cost.astype(np.int16))
    return base64.b64encode(buf.getvalue()).decode("ascii")


def pool_of(env: Any) -> LazyPool:
    """The pool a `grid.solve` env instance draws from (its slots filled on demand)."""
    size, height, _, n_agents, densities, blocked, wait, seed = env.solved_config()
    ratio = float(sum(densities[k] for k, b in enumerate(blocked) if b))
    return solved_pool(PoolConfig(int(height), int(n_agents), ratio, float(wait) if n_agents > 1 else 0.0), int(size),
                       int(seed))


def solved_pools(env: Any) -> dict[str, str]:
    """{pool name: packed pool} of the pool a `grid.solve` env instance draws from (solved whole)."""
    return {solved_key(*env.solved_config()): pack_pool(*pool_of(env).whole())}
