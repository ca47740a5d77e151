"""The `grid` module's entry in the registry: what it adds to each stage."""

from __future__ import annotations

from gymwright.mechanics.base import Mechanics
from gymwright.mechanics.grid.checks import GridChecks
from gymwright.mechanics.grid.functions import FUNCTIONS
from gymwright.mechanics.grid.render import legend
from gymwright.mechanics.grid.schema import CHOICE_FIELDS, Grid, Solve, TileKind

GRID = Mechanics(
    name="grid",
    section=Grid,
    doc="The grid mechanics module (positions, layouts, moves, collision modes).",
    checks=GridChecks(),
    models=(TileKind, Solve),
    choice_fields=CHOICE_FIELDS,
    maintained=frozenset({"moved", "conflict"}),
    implicit=frozenset({"tiles", "pos"}),
    functions=FUNCTIONS,
    function_doc="Grid helpers (need a `grid:` section)",
    python="gymwright.mechanics.grid.python",
    batch="gymwright.mechanics.grid.batch",
    legend=legend,
    size=lambda grid: (grid.height, grid.width),
    choice_card={"move": lambda move: f"move {list(move)}"},
    card=lambda g: f"{g.height} x {g.width}, tiles {', '.join(g.kinds)}, collision `{g.collision}`",
    runtime=("mechanics/grid/runtime.py", "mechanics/grid/runtime_batch.py", "mechanics/grid/runtime_solved.py"),
)
