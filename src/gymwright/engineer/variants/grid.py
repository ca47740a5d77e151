"""Obstacles in a grid: a new impassable tile kind, laid out at a density param."""

from __future__ import annotations

import re
from typing import Any

from gymwright.engineer.variants.base import Draft, Variant, declared
from gymwright.spec.checked import CheckedSpec

KIND = "obstacle"
COLOR = [96, 96, 96]
_VIEW = re.compile(r"view\(pos\[me\],\s*([^()]+)\)")


def _radius(data: dict[str, Any]) -> str:
    """The radius the spec's own window features use (`view(pos[me], R)`), else 1."""
    for features in data.get("observe", {}).values():
        for f in features:
            found = _VIEW.search(str(f.get("expr", "") if isinstance(f, dict) else f))
            if found:
                return found.group(1).strip()
    return "1"


def refuse(data: dict[str, Any], cs: CheckedSpec) -> str | None:
    grid = data.get("grid")
    if grid is None:
        return "it has no grid"
    if grid.get("map") is not None:
        return "its grid is a fixed map (`grid.map`): obstacles need generated layouts"
    if grid.get("solve") is not None:
        return ("its layouts come from the MAPF solver (`grid.solve`), which knows one blocked tile kind "
                "(the holes) only")
    walls = [k for k, t in grid.get("tiles", {}).items() if t.get("passable", True) is False]
    if walls:
        return f"it has impassable tiles already (`{walls[0]}`)"
    if KIND in declared(data, cs) or "obstacle_density" in data.get("params", {}):
        return f"it already declares `{KIND}`"
    return None


def build(draft: Draft, cs: CheckedSpec, params: dict[str, Any]) -> None:
    tiles = draft.data["grid"]["tiles"]
    used = {t.get("char") for t in tiles.values()}
    char = next(c for c in "#X%@&*" if c not in used)
    draft.add("params", "obstacle_density", {
        "default": 0.15, "min": 0.0, "max": 0.3,
        "doc": "share of cells that are obstacles: impassable blocks (every start keeps a path to its goal)"})
    draft.set(f"grid.tiles.{KIND}", {"char": char, "color": COLOR, "density": "obstacle_density", "blocked": True,
                                     "passable": False})
    radius = _radius(draft.data)
    for r, choices in draft.data["actions"].items():
        if any(c.get("move") is not None for c in choices):
            draft.append("observe", r, {"name": "obstacles_near", "expr": f"view(pos[me], {radius}) == {KIND}",
                                        "doc": "obstacles in my window"})
    draft.pin_probes({"obstacle_density": 0.0})
    draft.append("probes", None, {"name": "obstacles are laid out at their density",
                                  "params": {"obstacle_density": 0.3},
                                  "expect": [f"count(tiles == {KIND}) > 0"]})
    draft.append("probes", None, {"name": "without obstacles the grid is as before",
                                  "params": {"obstacle_density": 0.0}, "expect": [f"count(tiles == {KIND}) == 0"]})


OBSTACLES = Variant(
    "obstacles",
    "impassable obstacles are laid out on the grid: paths get longer and narrower, and agents must plan around "
    "them and each other",
    "a grid with generated layouts, no solver pool (`grid.solve`) and no impassable tile kind yet",
    refuse, build)
