"""Errors of the MAPF generator, all under gymwright's one hierarchy."""

from __future__ import annotations

from gymwright.errors import GymwrightError


class MapfError(GymwrightError):
    """A MAPF instance, plan, pool or mixture is wrong or cannot be made."""


class UnsolvableError(MapfError):
    """An instance has no plan for a reason found before search (a goal cut off, a start in a hole)."""


class SearchLimitError(MapfError):
    """CBS stopped at its node or time limit before proving an optimum.

    The instance may be unsolvable (with frozen goals some are: two agents that must swap in a
    corridor) or just hard; generators reject such instances.
    """


class ConfigError(MapfError):
    """A pool or mixture config is out of range, or asks for a share that cannot be drawn."""
