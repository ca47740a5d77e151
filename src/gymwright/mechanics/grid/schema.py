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
    """Layouts from an optimal multi-agent path finder (Conflict-Based Search), as in MAPF-FrozenLake.

    Every pooled layout is jointly solvable and solved once; `wait_ratio` of the pool need some
    agent to wait or detour for another; adds `optimal_cost` (state, int): the layout's optimal
    sum of arrival times, for metrics such as `sum(cost) == optimal_cost`. Needs a square grid of
    side 3..10, 1..5 agents, random starts and goals, one blocked tile kind (the holes, density
    at most 0.6, no other generated kind), `collision: block`, `pool` >= 1, and agents that stop
    on their goal at the first arrival (`can_move` false once there).
    """

    wait_ratio: Expr = Field(0.0, description="Share (0..1) of the pool's layouts whose optimal plan needs an agent to wait or detour for another (param expression; ignored with one agent).")
    seed: Expr = Field(0, description="Which family of pools the layouts come from (a constant int >= 0: a literal or an int param): pools of different seeds are independent draws, so instances held out for judging can be kept apart from those trained on.")



class Grid(_Strict):
    """The grid mechanics module: layout, start/goal placement, moves, collisions.

    Adds `pos`, `goal` (agent_state, [2] int), `tiles` (state, [height, width] int), `moved` and
    `conflict` (per-agent bools of the last step), one int constant per tile kind, and the
    helpers `tile(p)`, `manhattan(a, b)`, `view(p, r)`, `agents_view(p, r)`, `in_bounds(p)`.
    """

    height: int | str = Field(description="Rows (int or param expression).")
    width: int | str = Field(description="Columns.")
    tiles: dict[Name, TileKind] = Field(min_length=1, description="Tile kinds; the first is the floor.")
    map: list[str] | None = Field(None, description="Fixed layout, one string per row of tile chars. Omit to generate from densities.")
    starts: Literal["random"] | list[list[int]] = Field("random", description="`random` (distinct free cells) or one [row, col] per agent.")
    goals: Literal["random", "none"] | list[list[int]] = Field("random", description="`random` (reachable from the start), `none` (no goals: no `goal` variable), or one [row, col] per agent.")
    pool: Expr = Field(0, description="Draw layouts from a pool of this many, generated once per config (fast resets, as MAPF pools); 0 = a fresh layout every reset.")
    slip: Expr = Field(0.0, description="Probability a move is replaced by a perpendicular one.")
    collision: Literal["block", "none"] = Field("block", description="block: vertex and swap conflicts cancel the moves involved.")
    can_move: Expr = Field(True, description="Per-agent bool: whether the agent moves this step (e.g. `not done[me]`).")
    solve: Solve | None = Field(None, description="Draw pooled layouts that an optimal MAPF solver (CBS) solved: jointly solvable, a set share needing a wait, `optimal_cost` known. Omit for plain random layouts.")


Direction = Literal["up", "down", "left", "right", "stay"]
DIRECTIONS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1), "stay": (0, 0)}

CHOICE_FIELDS = {
    "move": (Direction | list[int] | None, key_field(None, description="grid specs: the move this choice makes (up/down/left/right/stay or [drow, dcol]).")),
}
"""The key a choice gains: the move it makes."""
