"""The `grid` section's schema (`Grid`, `TileKind`, `Solve`) and the key it adds to an action
choice (`move`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gymwright.spec.fields import Expr, Name, _Strict, key_field


class TileKind(_Strict):
    """A kind of grid tile; the first declared kind is the floor."""

    char: str = Field(min_length=1, max_length=1, description="Character in maps and ansi rendering.")
    color: list[int] = Field(default_factory=lambda: [200, 200, 200], min_length=3, max_length=3, description="RGB colour in rgb_array renderings.")
    density: Expr = Field(0, description="Share of generated cells of this kind (param expression).")
    blocked: bool = Field(False, description="Generated layouts keep every agent's goal reachable without crossing this kind.")
    passable: bool = Field(True, description="Agents can enter it (False = wall).")



class Solve(_Strict):
    """Layouts an optimal multi-agent path finder (CBS) solved, as in MAPF-FrozenLake: every pooled
    layout is jointly solvable; `wait_ratio` of them need an agent to wait or detour; adds
    `optimal_cost` (state, int: the layout's optimal sum of arrival times, e.g. for
    `sum(cost) == optimal_cost`). Needs a square grid of side 3..10, 1..5 agents, random starts and
    goals, one blocked tile kind (the holes, density at most 0.6, no other generated kind),
    `collision: block`, `pool` >= 1, and agents that stop on their goal (`can_move` false there).
    """

    wait_ratio: Expr = Field(0.0, description="Share (0..1) of the pool's layouts whose optimal plan needs an agent to wait or detour (param expression; ignored with one agent).")
    seed: Expr = Field(0, description="Which family of pools (a constant int >= 0): pools of different seeds are independent, so held-out instances stay apart from those trained on.")



class Grid(_Strict):
    """The grid mechanics module: layout, start/goal placement, simultaneous moves, collisions.

    Adds `pos`, `goal` (agent_state, [2] int), `tiles` (state, [height, width] int), `moved` and
    `conflict` (per-agent bools of the last step), one int constant per tile kind, and the
    helpers `tile(p)`, `manhattan(a, b)`, `view(p, r)`, `agents_view(p, r)`, `in_bounds(p)`.
    Collision modes block/vertex/occupied/none; random starts can avoid cells or tile kinds;
    `can_move` may read this step's actions.
    """

    height: int | str = Field(description="Rows (int or param expression).")
    width: int | str = Field(description="Columns.")
    tiles: dict[Name, TileKind] = Field(min_length=1, description="Tile kinds; the first is the floor.")
    map: list[str] | None = Field(None, description="Fixed layout, one string per row of tile chars. Omit to generate from densities.")
    starts: Literal["random"] | list[list[int]] = Field("random", description="`random` (distinct free cells) or one [row, col] per agent.")
    start_avoid: Expr | list[list[int]] | None = Field(None, description="Cells random starts never use: [[row, col], ...], or an expression (params, consts) of int cells [k, 2] or a bool [height, width] mask.")
    start_avoid_tiles: list[Name] = Field(default_factory=list, description="Tile kinds random starts never use.")
    goals: Literal["random", "none"] | list[list[int]] = Field("random", description="`random` (reachable from the start), `none` (no goals: no `goal` variable), or one [row, col] per agent.")
    pool: Expr = Field(0, description="Draw layouts from a pool of this many, made once per config (fast resets); 0 = a fresh layout every reset.")
    slip: Expr = Field(0.0, description="Probability a move is replaced by a perpendicular one.")
    collision: Literal["block", "vertex", "occupied", "none"] = Field("block", description="block: agents entering one cell, or swapping, stay; following a leaving agent is fine. vertex: swaps pass too. occupied: a cell occupied at the step's start blocks entry, even if its occupant leaves. none: cells are shared.")
    can_move: Expr = Field(True, description="Per-agent bool: whether the agent moves this step (e.g. `not done[me]`).")
    can_move_sees_actions: bool = Field(False, description="can_move may read this step's actions and `move_to` ([agents, 2] target cells), e.g. `tile(move_to[me]) != box or count(tile(move_to) == box) >= 2`.")
    solve: Solve | None = Field(None, description="Draw pooled layouts an optimal MAPF solver (CBS) solved: jointly solvable, a set share needing a wait, `optimal_cost` known.")


Direction = Literal["up", "down", "left", "right", "stay"]
DIRECTIONS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1), "stay": (0, 0)}

CHOICE_FIELDS = {
    "move": (Direction | list[int] | None, key_field(None, description="grid specs: the move this choice makes (up/down/left/right/stay or [drow, dcol]).")),
}
"""The key a choice gains: the move it makes."""
