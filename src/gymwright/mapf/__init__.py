"""MAPF-FrozenLake as a generator: an optimal CBS solver, solvable instances with their
optimal sum of costs, and cached pools with a set share of wait-needing instances (the layouts
of `grid.solve`). Episodes are scored by the spec's own metrics (`valid`, `optimal`); mixtures of
map sizes are the engineer's (`gymwright.engineer.mixture`).

Semantics (matched to ``mapf_frozenlake.yaml`` and ``mechanics/grid/runtime.py``): an agent parks on its
goal at its first arrival and keeps occupying it; vertex and swap conflicts are forbidden;
following and rotations of three or more are allowed. See ``gymwright.mapf.cbs``.
Measured costs are in ``README.md`` next to this file.
"""

from gymwright.mapf.cbs import Plan, find_conflicts, solve
from gymwright.mapf.errors import ConfigError, MapfError, SearchLimitError, UnsolvableError
from gymwright.mapf.instances import Instance, generate, solve_instance
from gymwright.mapf.pool import Pool, PoolConfig, make_pool

__all__ = [
    # solver
    "solve",
    "Plan",
    "find_conflicts",
    # instances and pools
    "Instance",
    "generate",
    "solve_instance",
    "PoolConfig",
    "Pool",
    "make_pool",
    # errors
    "MapfError",
    "ConfigError",
    "SearchLimitError",
    "UnsolvableError",
]
