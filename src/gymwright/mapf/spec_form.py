"""A spec of MAPF-FrozenLake's form, told from its data: a `walker` role on a grid whose layouts are
solved (`grid.solve`), with `reached` and `clashed` walker state. The planners built on the solver
(the imitation lever's demonstrator, the partners lever's plan follower) act only in such a spec;
these are the facts they share about it."""

from __future__ import annotations

from typing import Any

import numpy as np

MOVES = {(0, -1): "left", (1, 0): "down", (0, 1): "right", (-1, 0): "up", (0, 0): "wait"}
"""(row, col) step of a plan -> the walker's action name"""


def is_mapf_form(data: dict[str, Any]) -> bool:
    """Whether the spec's data has MAPF-FrozenLake's form (see the module)."""
    grid = data.get("grid") or {}
    state = data.get("agent_state") or {}
    walker = (data.get("actions") or {}).get("walker")
    return bool(grid.get("solve") and walker and {"reached", "clashed"} <= set(state))


def walker_actions(data: dict[str, Any]) -> list[str]:
    """The walker's action names in the order of its action indices."""
    return [a["name"] for a in data["actions"]["walker"]]


def blocked_tiles(data: dict[str, Any]) -> np.ndarray:
    """bool per tile kind (in the spec's order): whether it blocks (a hole)."""
    return np.array([bool(t.get("blocked")) for t in data["grid"]["tiles"].values()])


def layout_key(holes: np.ndarray, starts: np.ndarray, goals: np.ndarray) -> bytes:
    """One instance as bytes, to tell whether two layouts are the same."""
    return b"|".join(np.ascontiguousarray(x).astype(np.int64).tobytes() for x in (holes, starts, goals))
