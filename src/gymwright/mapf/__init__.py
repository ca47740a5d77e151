"""MAPF-FrozenLake as a generator: an optimal CBS solver, solvable instances with their
optimal sum of costs, cached pools with a set share of wait-needing instances, mixtures of map
sizes, and episode scoring (valid, optimal, failure kind).

Semantics (matched to ``mapf_frozenlake.yaml`` and ``runtime/grid.py``): an agent parks on its
goal at its first arrival and keeps occupying it; vertex and swap conflicts are forbidden;
following and rotations of three or more are allowed. See ``gymwright.mapf.cbs``.
Measured costs are in ``README.md`` next to this file.
"""

from gymwright.mapf.cbs import Plan, find_conflicts, solve
from gymwright.mapf.errors import ConfigError, MapfError, SearchLimitError, UnsolvableError
from gymwright.mapf.instances import Instance, generate, solve_instance
from gymwright.mapf.mixture import MixtureConfig, SizeMix, make_mixture
from gymwright.mapf.pool import Pool, PoolConfig, make_pool
from gymwright.mapf.score import ACTION_DELTAS, KINDS, EpisodeScore, score_episode

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
    "SizeMix",
    "MixtureConfig",
    "make_mixture",
    # scoring
    "score_episode",
    "EpisodeScore",
    "KINDS",
    "ACTION_DELTAS",
    # errors
    "MapfError",
    "ConfigError",
    "SearchLimitError",
    "UnsolvableError",
]
