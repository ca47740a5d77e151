"""The grid options that let more worlds use the module (issue 42, point 9): collision modes
(`occupied`: a cell occupied at the start of the step blocks a move into it even if its occupant
leaves; `vertex`: swaps allowed), cells and tile kinds random starts avoid, and a `can_move` that
reads this step's actions. Each on both backends, which agree."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch
from gymwright.errors import SpecError
from gymwright.mechanics.grid.runtime import generate_layout, resolve_moves
from gymwright.mechanics.grid.runtime_batch import resolve_moves_batch
from tests.compile.test_batch_differential import compare

UP, DOWN, LEFT, RIGHT, STAY = range(5)

BASE: dict = {
    "gymwright": 1,
    "name": "grid_options",
    "description": "Walkers on an open grid.",
    "params": {"size": {"default": 3, "min": 2, "max": 8, "type": "int"}},
    "agents": {"walker": {"count": 2}},
    "grid": {
        "height": "size", "width": "size",
        "tiles": {"floor": {"char": "."}, "wall": {"char": "#", "passable": False}},
        "goals": "none",
    },
    "actions": {"walker": [
        {"name": "up", "move": "up"}, {"name": "down", "move": "down"},
        {"name": "left", "move": "left"}, {"name": "right", "move": "right"},
        {"name": "stay", "move": "stay"},
    ]},
    "truncate": "t >= 20",
    "rewards": {"walker": [{"name": "moved", "expr": "moved[me]"}]},
    "observe": {"walker": [{"name": "where", "expr": "pos[me]"}]},
}


def spec(**grid) -> dict:
    s = copy.deepcopy(BASE)
    s["grid"].update(grid)
    return s


def both_step(s: dict, actions: list[int]) -> tuple[list, list]:
    """Positions after one step from the fixed starts, in the Python env and in the batch env."""
    env = compile_spec(s).parallel_env()
    env.reset(seed=0)
    env.step({f"walker_{i}": a for i, a in enumerate(actions)})
    benv = compile_batch(s, {}, batch_size=1)
    benv.reset(seed=0)
    benv.step(np.array([actions]))
    return env.v.pos.tolist(), benv.v.pos[0].tolist()


# --------------------------------------------------------------------------- collision modes


def test_occupied_blocks_a_move_into_a_cell_whose_occupant_leaves_on_both_backends() -> None:
    # walker 1 at [0, 1] moves right; walker 0 at [0, 0] follows it into [0, 1]
    s = spec(starts=[[0, 0], [0, 1]], collision="occupied")
    python, batch = both_step(s, [RIGHT, RIGHT])
    assert python == batch == [[0, 0], [0, 2]]  # the follower stays, the leader moves
    s = spec(starts=[[0, 0], [0, 1]], collision="block")
    python, batch = both_step(s, [RIGHT, RIGHT])
    assert python == batch == [[0, 1], [0, 2]]  # block (the default) lets it follow


def test_occupied_sets_conflict_for_the_blocked_follower() -> None:
    env = compile_spec(spec(starts=[[0, 0], [0, 1]], collision="occupied")).parallel_env()
    env.reset(seed=0)
    env.step({"walker_0": RIGHT, "walker_1": RIGHT})
    assert env.v.conflict.tolist() == [True, False]
    assert env.v.moved.tolist() == [False, True]


def test_vertex_lets_agents_swap_and_block_does_not() -> None:
    python, batch = both_step(spec(starts=[[0, 0], [0, 1]], collision="vertex"), [RIGHT, LEFT])
    assert python == batch == [[0, 1], [0, 0]]
    python, batch = both_step(spec(starts=[[0, 0], [0, 1]], collision="block"), [RIGHT, LEFT])
    assert python == batch == [[0, 0], [0, 1]]
    # vertex conflicts still cancel: two walkers entering one cell both stay
    python, batch = both_step(spec(starts=[[0, 0], [0, 2]], collision="vertex"), [RIGHT, LEFT])
    assert python == batch == [[0, 0], [0, 2]]


@pytest.mark.parametrize("rule", ["none", "block", "vertex", "occupied"])
def test_every_collision_rule_has_one_answer_in_both_runtime_forms(rule: str) -> None:
    rng = np.random.default_rng(7)
    moves = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]])
    for _ in range(300):
        n, h, w = int(rng.integers(1, 7)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
        pos = np.stack([rng.integers(0, h, n), rng.integers(0, w, n)], axis=1)
        delta = moves[rng.integers(0, len(moves), n)]
        can = rng.random(n) < 0.9
        passable = rng.random((h, w)) < 0.9
        scalar = resolve_moves(pos, delta, can, passable, rule)
        vector = resolve_moves_batch(pos[None], delta[None], can[None], passable[None], rule)
        for a, b in zip(scalar, vector, strict=True):
            np.testing.assert_array_equal(a, b[0])
        new = scalar[0]
        start = {tuple(p) for p in pos.tolist()}
        for i in np.flatnonzero(scalar[1]):
            if rule == "occupied":  # nobody enters a cell that was occupied at the start
                assert tuple(new[i]) not in start
        if rule != "none" and len(start) == n:  # distinct starts stay distinct
            assert len({tuple(p) for p in new.tolist()}) == n


def test_an_unknown_collision_rule_is_refused_with_the_valid_ones() -> None:
    with pytest.raises(SpecError) as e:
        compile_spec(spec(collision="swap"))
    text = str(e.value)
    assert "grid.collision" in text and "occupied" in text and "vertex" in text


# --------------------------------------------------------------------------- starts that avoid cells


def _starts_over_seeds(s: dict, seeds: int = 40) -> list[list[int]]:
    """Every random start of the Python env and of the batch env over many seeds (they agree)."""
    compiled = compile_spec(s)
    benv = compile_batch(s, {}, batch_size=seeds)
    benv.reset(seed=100)
    cells = []
    for b in range(seeds):
        env = compiled.parallel_env()
        env.reset(seed=100 + b)
        assert env.v.pos.tolist() == benv.v.pos[b].tolist()
        cells += env.v.pos.tolist()
    return cells


def test_random_starts_never_land_on_avoided_cells_on_both_backends() -> None:
    box = [[0, 0], [0, 1], [1, 0], [1, 1]]
    cells = _starts_over_seeds(spec(start_avoid=box))
    assert not [c for c in cells if c in box]
    assert len({tuple(c) for c in cells}) == 9 - 4  # every other cell is used


def test_random_starts_avoid_cells_given_by_an_expression_of_params() -> None:
    s = spec(start_avoid="[[box_row, box_col], [box_row, box_col + 1], [box_row + 1, box_col], [box_row + 1, box_col + 1]]")
    s["params"].update(box_row={"default": 1, "min": 0, "max": 2, "type": "int"},
                       box_col={"default": 1, "min": 0, "max": 2, "type": "int"}, size={"default": 4, "min": 4, "max": 8, "type": "int"})
    cells = _starts_over_seeds(s)
    box = [[1, 1], [1, 2], [2, 1], [2, 2]]
    assert cells and not [c for c in cells if c in box]


def test_each_batch_copy_avoids_the_cells_of_its_own_params() -> None:
    s = spec(start_avoid="[[box_row, 0], [box_row, 1], [box_row, 2]]")
    s["params"]["box_row"] = {"default": 0, "min": 0, "max": 2, "type": "int"}
    rows = [0, 2, 1, 0]
    for pool in (0, 4):
        s["grid"]["pool"] = pool
        benv = compile_batch(s, [{"box_row": r} for r in rows], batch_size=len(rows))
        benv.reset(seed=3)
        compiled = compile_spec(s)
        for b, row in enumerate(rows):
            env = compiled.parallel_env(box_row=row)
            env.reset(seed=3 + b)
            assert env.v.pos.tolist() == benv.v.pos[b].tolist()
            assert row not in env.v.pos[:, 0].tolist()


def test_random_starts_avoid_a_bool_mask_and_a_pool() -> None:
    s = spec(start_avoid="[[True, True, True], [False, False, False], [False, False, False]]", pool=5)
    cells = _starts_over_seeds(s)
    assert cells and all(c[0] != 0 for c in cells)


def test_random_starts_never_land_on_avoided_tile_kinds() -> None:
    s = spec(map=["..Z", "..Z", "ZZZ"], start_avoid_tiles=["zone"])
    s["grid"]["tiles"]["zone"] = {"char": "Z"}
    cells = _starts_over_seeds(s)
    assert cells and all(c[0] < 2 and c[1] < 2 for c in cells)


def test_generated_layouts_keep_avoided_kinds_free_of_starts() -> None:
    for seed in range(60):
        rng = np.random.default_rng(seed)
        tiles, starts, _ = generate_layout(5, 5, 3, [0.0, 0.4], [False, False], lambda s, n, r=rng: r.random(n),
                                           avoid_kinds=[False, True], avoid=np.eye(5, dtype=bool))
        for r, c in starts.tolist():
            assert tiles[r, c] != 1 and r != c


def test_dense_walls_still_leave_starts_outside_the_avoided_cells() -> None:
    avoid = np.zeros((4, 4), dtype=bool)
    avoid[:3] = True  # only the last row is left for the starts
    for seed in range(40):
        rng = np.random.default_rng(seed)
        tiles, starts, goals = generate_layout(4, 4, 3, [0.0, 0.9], [False, True], lambda s, n, r=rng: r.random(n),
                                               avoid=avoid)
        assert (starts[:, 0] == 3).all() and len({tuple(c) for c in starts.tolist()}) == 3
        assert not tiles[starts[:, 0], starts[:, 1]].any()


@pytest.mark.parametrize("grid, where, words", [
    ({"start_avoid": [[0, 0], [0, 5]]}, "grid.start_avoid", "outside the 3x3 grid"),
    ({"start_avoid": "[1, 2, 3]"}, "grid.start_avoid", "[row, col]"),
    ({"start_avoid": [[r, c] for r in range(3) for c in range(3) if (r, c) != (2, 2)]}, "grid.start_avoid",
     "leaves 1 cell for the random starts of 2 agents"),
    ({"start_avoid_tiles": ["lava"]}, "grid.start_avoid_tiles", "`lava` is not a tile kind"),
    ({"starts": [[0, 0], [1, 1]], "start_avoid": [[0, 1]]}, "grid.start_avoid", "set `starts: random`"),
    ({"start_avoid": "pos[0]"}, "grid.start_avoid", "not drawn yet"),
])
def test_bad_start_avoid_is_refused_where_and_how_to_fix(grid: dict, where: str, words: str) -> None:
    with pytest.raises(SpecError) as e:
        compile_spec(spec(**grid))
    assert where in str(e.value) and words in str(e.value), str(e.value)


# --------------------------------------------------------------------------- can_move reads the actions


def heavy_box(**grid) -> dict:
    """A heavy box (tile `box`) two walkers can enter only together: can_move reads this step's
    moves (`move_to`)."""
    return spec(map=["...", "BB.", "..."], starts=[[0, 0], [0, 1]],
                tiles={"floor": {"char": "."}, "box": {"char": "B"}},
                can_move="tile(move_to[me]) != box or count(tile(move_to) == box) >= 2",
                can_move_sees_actions=True, **grid)


def test_can_move_reads_this_steps_moves_a_box_entered_only_together() -> None:
    python, batch = both_step(heavy_box(), [DOWN, STAY])  # one alone cannot push the box
    assert python == batch == [[0, 0], [0, 1]]
    python, batch = both_step(heavy_box(), [DOWN, DOWN])  # both at once can
    assert python == batch == [[1, 0], [1, 1]]
    python, batch = both_step(heavy_box(), [RIGHT, RIGHT])  # moves off the box are free
    assert python == batch == [[0, 1], [0, 2]]


def test_can_move_reads_the_choice_flags_of_this_step() -> None:
    s = spec(starts=[[0, 0], [2, 2]], can_move="not down[1 - me]", can_move_sees_actions=True)
    python, batch = both_step(s, [RIGHT, DOWN])  # walker 1 moves down (off the grid: stays); 0 may not move
    assert python == batch == [[0, 0], [2, 2]]
    python, batch = both_step(s, [RIGHT, UP])
    assert python == batch == [[0, 1], [1, 2]]


def test_can_move_without_the_option_names_it_when_it_reads_actions() -> None:
    for source, name in (("not down[me]", "down"), ("tile(move_to[me]) != wall", "move_to")):
        with pytest.raises(SpecError) as e:
            compile_spec(spec(can_move=source))
        text = str(e.value)
        assert "grid.can_move" in text and name in text and "can_move_sees_actions: true" in text, text


def test_can_move_sees_actions_refuses_a_spec_name_move_to() -> None:
    s = heavy_box()
    s["state"] = {"move_to": {"type": "int", "init": 0}}
    with pytest.raises(SpecError) as e:
        compile_spec(s)
    text = str(e.value)
    assert "grid.can_move_sees_actions" in text and "rename the spec's `move_to`" in text, text


# --------------------------------------------------------------------------- the backends agree in play


def _predator_prey_with_options(**defaults) -> dict:
    from gymwright.spec.loader import LIBRARY_DIR

    s = yaml.safe_load((LIBRARY_DIR / "predator_prey.yaml").read_text())
    s["grid"].update(collision="occupied", start_avoid="[[0, 0], [0, size - 1], [size - 1, 0]]",
                     can_move="not caught[me] and (is_prey[me] or not stay[me])", can_move_sees_actions=True)
    for name, value in defaults.items():
        s["params"][name]["default"] = value
    s["probes"] = []
    return s


def _heavy_box_in_play() -> dict:
    s = heavy_box(collision="vertex", start_avoid_tiles=["box"], pool=3)
    s["grid"]["starts"] = "random"
    return s


@pytest.mark.parametrize("make", [
    _predator_prey_with_options,
    lambda: _predator_prey_with_options(num_predators=6, num_prey=4, size=6, wall_density=0.0),
    _heavy_box_in_play,
])
def test_backends_agree_in_random_play_with_the_options(make) -> None:
    compare(make(), {}, size=4, seed=5, steps=40, policy_seed=1)


def test_backends_agree_beyond_sixteen_agents_with_the_options() -> None:
    # beyond 16 agents the Python backend resolves moves with the vector form on one copy
    s = spec(collision="occupied", start_avoid="transpose([arange(size), arange(size)])",
             can_move="tile(move_to[me]) != -1 or stay[me]", can_move_sees_actions=True)
    s["agents"]["walker"]["count"] = 20
    s["params"]["size"] = {"default": 6, "min": 6, "max": 8, "type": "int"}
    compare(s, {}, size=3, seed=9, steps=30, policy_seed=2)
