"""What the colours of a grid frame are (`runtime.render_rgb` paints them): the legend of the
frames `gymwright play --gif` and the reports draw."""

from __future__ import annotations

from gymwright.mechanics.grid.checks import grid_of
from gymwright.mechanics.grid.runtime import AGENT_PALETTE
from gymwright.spec.checked import CheckedSpec


def legend(cs: CheckedSpec) -> list[tuple[str, tuple[int, int, int], str]]:
    """(label, rgb, shape) of each agent (a disc, with its role; its goal the small square of its
    colour), then each tile kind (a tile); [] without a grid."""
    grid = grid_of(cs)
    if grid is None:
        return []
    goal = " and its goal (the small square)" if grid.has_goals else ""
    agents = [(f"{a} ({cs.role_of(i).name}){goal}", AGENT_PALETTE[i % len(AGENT_PALETTE)], "disc")
              for i, a in enumerate(cs.agent_ids)]
    return agents + [(kind, rgb, "tile") for kind, rgb in zip(grid.kinds, grid.colors, strict=True)]
