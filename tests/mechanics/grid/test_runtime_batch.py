"""Tests for the batched grid runtime: every function equals its scalar counterpart per copy (or,
for a window with any fill, a loop over the cells)."""

import ast
import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gymwright.mechanics.grid import runtime as grid
from gymwright.mechanics.grid import runtime_batch as grid_batch
from gymwright.mechanics.grid.runtime import _agents_view_loop as agents_view
from gymwright.mechanics.grid.runtime import apply_slip, resolve_moves, rt_in_bounds, rt_tile
from gymwright.mechanics.grid.runtime_batch import (
    PaddedTiles,
    agents_view_batch,
    agents_view_of_batch,
    apply_slip_batch,
    in_bounds_batch,
    resolve_moves_batch,
    tile_batch,
    view_batch,
    window_plan_batch,
    window_sums_batch,
    window_sums_obs,
)
from gymwright.mechanics.grid.tables import GRID_SITE
from gymwright.runtime import core
from gymwright.runtime.batch import BatchObsWriter

PUBLIC = {
    "b_manhattan",
    "apply_slip_batch",
    "resolve_moves_batch",
    "view_batch",
    "agents_view_batch",
    "agents_view_of_batch",
    "window_plan_batch",
    "window_sums_batch",
    "window_sums_obs",
    "tile_batch",
    "in_bounds_batch",
    "PaddedTiles",
}
UNIT_MOVES = [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)]


def view(tiles: np.ndarray, center: np.ndarray, radius: int, fill: int) -> np.ndarray:
    """The (2r+1)x(2r+1) window of `tiles` around `center`, cell by cell (`fill` outside)."""
    side = 2 * radius + 1
    out = np.full((side, side), fill, dtype=np.int64)
    r0, c0 = int(center[0]) - radius, int(center[1]) - radius
    for i in range(side):
        for j in range(side):
            if 0 <= r0 + i < tiles.shape[0] and 0 <= c0 + j < tiles.shape[1]:
                out[i, j] = tiles[r0 + i, c0 + j]
    return out


# --------------------------------------------------------------------------- standalone


def _top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_names_do_not_shadow_grid_module() -> None:
    names = _top_level_names(ast.parse(inspect.getsource(grid_batch)))
    assert names & _top_level_names(ast.parse(inspect.getsource(grid))) == set()
    assert {n for n in names if not n.startswith(("_gb_", "_GB_"))} == PUBLIC


def test_no_python_loops_but_the_fixpoint() -> None:
    tree = ast.parse(inspect.getsource(grid_batch))
    loops = [
        type(node).__name__
        for node in ast.walk(tree)
        if isinstance(node, ast.For | ast.comprehension | ast.While)
    ]
    assert loops == ["While"]


def test_source_runs_inlined_after_grid() -> None:
    namespace: dict = {}
    source = inspect.getsource(grid) + "\n\n" + inspect.getsource(grid_batch)
    exec(compile(source, "inlined_grid_batch", "exec"), namespace)
    pos = np.array([[[0, 0], [0, 2]]])
    delta = np.array([[[0, 1], [0, -1]]])
    passable = np.ones((1, 1, 3), dtype=bool)
    new_pos, moved, conflict = namespace["resolve_moves_batch"](
        pos, delta, np.ones((1, 2), bool), passable, "block"
    )
    assert new_pos.tolist() == pos.tolist()
    assert moved.tolist() == [[False, False]] and conflict.tolist() == [[True, True]]
    single = namespace["resolve_moves"](pos[0], delta[0], np.ones(2, bool), passable[0], "block")
    assert single[0].tolist() == pos[0].tolist()


# --------------------------------------------------------------------------- strategies


@st.composite
def move_batches(draw, off_grid: bool = False):
    """(pos, delta, can_move, passable): B<=16 copies, N<=6 agents, grids up to 6x6."""
    batch = draw(st.integers(1, 16))
    n = draw(st.integers(0, 6))
    height, width = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    lo_r, hi_r = (-1, height) if off_grid else (0, height - 1)
    lo_c, hi_c = (-1, width) if off_grid else (0, width - 1)
    rows = draw(hnp.arrays(np.int64, (batch, n), elements=st.integers(lo_r, hi_r)))
    cols = draw(hnp.arrays(np.int64, (batch, n), elements=st.integers(lo_c, hi_c)))
    pos = np.stack([rows, cols], axis=2)
    big = draw(st.booleans())
    if big:
        delta = draw(hnp.arrays(np.int64, (batch, n, 2), elements=st.integers(-2, 2)))
    else:
        pick = draw(hnp.arrays(np.int64, (batch, n), elements=st.integers(0, 4)))
        delta = np.asarray(UNIT_MOVES, dtype=np.int64)[pick]
    can_move = draw(hnp.arrays(bool, (batch, n), elements=st.booleans()))
    passable = draw(hnp.arrays(bool, (batch, height, width), elements=st.booleans()))
    return pos, delta, can_move, passable


def assert_moves_match(pos, delta, can_move, passable, collision) -> None:
    args = (pos.copy(), delta.copy(), can_move.copy(), passable.copy())
    new_pos, moved, conflict = resolve_moves_batch(*args, collision)
    for arg, original in zip(args, (pos, delta, can_move, passable), strict=True):
        np.testing.assert_array_equal(arg, original)  # inputs are not modified
    batch, n = pos.shape[:2]
    assert new_pos.shape == (batch, n, 2) and new_pos.dtype == np.int64
    assert moved.shape == (batch, n) and moved.dtype == bool
    assert conflict.shape == (batch, n) and conflict.dtype == bool
    for b in range(batch):
        want = resolve_moves(pos[b], delta[b], can_move[b], passable[b], collision)
        np.testing.assert_array_equal(new_pos[b], want[0], err_msg=f"new_pos of copy {b}")
        np.testing.assert_array_equal(moved[b], want[1], err_msg=f"moved of copy {b}")
        np.testing.assert_array_equal(conflict[b], want[2], err_msg=f"conflict of copy {b}")


# --------------------------------------------------------------------------- resolve_moves


@settings(max_examples=400, deadline=None)
@given(move_batches(), st.sampled_from(["none", "block", "vertex", "occupied"]))
def test_resolve_moves_matches_scalar(batch, collision: str) -> None:
    assert_moves_match(*batch, collision)


@settings(max_examples=200, deadline=None)
@given(move_batches(off_grid=True), st.sampled_from(["none", "block", "vertex", "occupied"]))
def test_resolve_moves_matches_scalar_with_off_grid_positions(batch, collision: str) -> None:
    assert_moves_match(*batch, collision)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.integers(1, 4))
def test_resolve_moves_matches_scalar_on_crowded_grids(seed: int, n: int, side: int) -> None:
    """Many agents on tiny open grids: long chains of cancellations."""
    rng = np.random.default_rng(seed)
    batch = 16
    pos = rng.integers(0, side, size=(batch, n, 2))
    delta = np.asarray(UNIT_MOVES, dtype=np.int64)[rng.integers(0, 5, size=(batch, n))]
    can_move = rng.random((batch, n)) < 0.9
    passable = rng.random((batch, side, side)) < 0.9
    assert_moves_match(pos, delta, can_move, passable, "block")


@settings(max_examples=200, deadline=None)
@given(move_batches(off_grid=True), st.sampled_from(["none", "block", "vertex", "occupied"]), st.data())
def test_resolve_moves_over_tile_kinds_with_kept_padded_tiles(batch, collision: str, data) -> None:
    """Tile kinds with a passable table give the moves a bool grid gives, read from the env's
    padded tiles (PaddedTiles) or from the tiles alike: targets within the padding's border
    and, with deltas of 2 from cells off the grid, beyond it."""
    pos, delta, can_move, _ = batch
    kinds = data.draw(hnp.arrays(np.int64, (len(pos), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6))),
                                 elements=st.integers(0, 3)))
    table = np.array(data.draw(st.lists(st.booleans(), min_size=4, max_size=4)))
    want = resolve_moves_batch(pos, delta, can_move, table[kinds], collision)
    pads = PaddedTiles()
    for _ in range(2):  # the padding made, then kept
        got = resolve_moves_batch(pos, delta, can_move, kinds, collision, table, pads)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
    assert pads.tiles is kinds or not len(pos[0])


SCENARIOS = {
    # name: (pos, delta, expected new_pos, expected conflict) on an open 3x4 grid, "block"
    "vertex": ([[0, 0], [0, 2]], [[0, 1], [0, -1]], [[0, 0], [0, 2]], [True, True]),
    "into_staying": ([[0, 0], [0, 1]], [[0, 1], [0, 0]], [[0, 0], [0, 1]], [True, False]),
    "swap": ([[0, 0], [0, 1]], [[0, 1], [0, -1]], [[0, 0], [0, 1]], [True, True]),
    "rotation": (
        [[0, 0], [0, 1], [1, 1], [1, 0]],
        [[0, 1], [1, 0], [0, -1], [-1, 0]],
        [[0, 1], [1, 1], [1, 0], [0, 0]],
        [False, False, False, False],
    ),
    "three_cycle": (
        # 0 -> 1's cell, 1 -> 2's cell, 2 -> 0's cell (a two-cell jump): a cycle of three moves
        [[0, 0], [0, 1], [0, 2]],
        [[0, 1], [0, 1], [0, -2]],
        [[0, 1], [0, 2], [0, 0]],
        [False, False, False],
    ),
    "chain_through_staying": (
        [[0, 0], [0, 1], [0, 2]],
        [[0, 1], [0, 1], [0, 0]],
        [[0, 0], [0, 1], [0, 2]],
        [True, True, False],
    ),
    "following": (
        [[0, 0], [0, 1], [0, 2]],
        [[0, 1], [0, 1], [0, 1]],
        [[0, 1], [0, 2], [0, 3]],
        [False, False, False],
    ),
    "off_grid_then_chain": (
        [[0, 2], [0, 3]],
        [[0, 1], [0, 1]],
        [[0, 2], [0, 3]],
        [True, False],
    ),
    "wall": ([[1, 0], [0, 0]], [[0, 1], [1, 0]], [[1, 0], [0, 0]], [False, True]),
    "shared_start_one_leaves": (
        [[2, 2], [2, 2]],
        [[0, 1], [0, 0]],
        [[2, 3], [2, 2]],
        [False, False],
    ),
    "shared_start_both_leave_same_way": (
        [[2, 2], [2, 2]],
        [[0, 1], [0, 1]],
        [[2, 2], [2, 2]],
        [True, True],
    ),
    "into_shared_cell": (
        [[2, 0], [2, 1], [2, 1]],
        [[0, 1], [0, 0], [0, 0]],
        [[2, 0], [2, 1], [2, 1]],
        [True, False, False],
    ),
}
SCENARIO_WALLS = [(1, 1)]


def scenario_passable() -> np.ndarray:
    passable = np.ones((3, 4), dtype=bool)
    for r, c in SCENARIO_WALLS:
        passable[r, c] = False
    return passable


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_resolve_moves_scenarios(name: str) -> None:
    pos, delta, want_pos, want_conflict = (np.asarray(x) for x in SCENARIOS[name])
    passable = scenario_passable()
    if name == "rotation":
        passable[:] = True
    copies = 3
    pos_b = np.repeat(pos[None], copies, axis=0)
    delta_b = np.repeat(delta[None], copies, axis=0)
    delta_b[1] = 0  # a copy where everyone waits must not be disturbed by the others
    can_move = np.ones(pos_b.shape[:2], dtype=bool)
    passable_b = np.repeat(passable[None], copies, axis=0)
    new_pos, moved, conflict = resolve_moves_batch(pos_b, delta_b, can_move, passable_b, "block")
    for b in (0, 2):
        assert new_pos[b].tolist() == want_pos.tolist()
        assert conflict[b].tolist() == want_conflict.tolist()
        assert moved[b].tolist() == np.any(want_pos != pos, axis=1).tolist()
    assert new_pos[1].tolist() == pos.tolist()
    assert not moved[1].any() and not conflict[1].any()
    assert_moves_match(pos_b, delta_b, can_move, passable_b, "block")
    assert_moves_match(pos_b, delta_b, can_move, passable_b, "none")


def test_resolve_moves_none_lets_agents_share() -> None:
    pos = np.array([[[0, 0], [0, 2]], [[0, 0], [0, 1]]])
    delta = np.array([[[0, 1], [0, -1]], [[0, 1], [0, -1]]])
    passable = np.ones((2, 1, 3), dtype=bool)
    new_pos, moved, conflict = resolve_moves_batch(pos, delta, True, passable, "none")
    assert new_pos.tolist() == [[[0, 1], [0, 1]], [[0, 1], [0, 0]]]
    assert moved.all() and not conflict.any()


def test_resolve_moves_can_move_false_stays_and_blocks() -> None:
    pos = np.array([[[0, 0], [0, 1]]])
    delta = np.array([[[0, 1], [0, 1]]])
    can_move = np.array([[True, False]])
    new_pos, moved, conflict = resolve_moves_batch(
        pos, delta, can_move, np.ones((1, 1, 3), bool), "block"
    )
    assert new_pos.tolist() == pos.tolist()
    assert moved.tolist() == [[False, False]] and conflict.tolist() == [[True, False]]


def test_resolve_moves_rejects_unknown_rule_and_bad_shapes() -> None:
    pos = np.zeros((2, 1, 2), dtype=np.int64)
    passable = np.ones((2, 2, 2), dtype=bool)
    with pytest.raises(ValueError, match="collision"):
        resolve_moves_batch(pos, pos, True, passable, "bounce")
    with pytest.raises(ValueError, match="delta"):
        resolve_moves_batch(pos, np.zeros((2, 3, 2), np.int64), True, passable, "block")
    with pytest.raises(ValueError, match="passable"):
        resolve_moves_batch(pos, pos, True, passable[0], "block")


# --------------------------------------------------------------------------- slip


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_apply_slip_matches_scalar(data) -> None:
    batch = data.draw(st.integers(1, 16))
    n = data.draw(st.integers(0, 6))
    delta = data.draw(hnp.arrays(np.int64, (batch, n, 2), elements=st.integers(-2, 2)))
    specials = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])
    prob = st.one_of(specials, st.floats(0.0, 1.0))
    slip = data.draw(hnp.arrays(np.float64, (batch,), elements=prob))
    unit = st.one_of(specials.filter(lambda x: x < 1.0), st.floats(0.0, 1.0, exclude_max=True))
    u = data.draw(hnp.arrays(np.float64, (batch, 2 * n), elements=unit))
    got = apply_slip_batch(delta, slip, u)
    assert got.shape == (batch, n, 2) and got.dtype == np.int64
    for b in range(batch):
        want = apply_slip(delta[b], float(slip[b]), lambda s, k, b=b: u[b], 0)
        np.testing.assert_array_equal(got[b], want, err_msg=f"copy {b}")


def test_apply_slip_turns_and_keeps() -> None:
    delta = np.array([[[0, 1], [-1, 0], [0, 0], [1, 0]]])
    u = np.array([[0.1, 0.2, 0.1, 0.7, 0.0, 0.0, 0.9, 0.0]])
    got = apply_slip_batch(delta, np.array([0.5]), u)
    # left of (dr, dc) is (-dc, dr); u odd >= 0.5 takes the opposite side
    assert got.tolist() == [[[-1, 0], [0, 1], [0, 0], [1, 0]]]
    assert apply_slip_batch(delta, 0.0, u).tolist() == delta.tolist()


def test_apply_slip_with_counter_uniforms_matches_generated_code_path() -> None:
    """How callers draw u: uniforms(seed, episode, step, GRID_SITE, 0, 2N) per copy."""
    batch, n = 8, 5
    rng = np.random.default_rng(7)
    delta = np.asarray(UNIT_MOVES, dtype=np.int64)[rng.integers(0, 5, size=(batch, n))]
    seeds, episodes, steps = rng.integers(0, 2**40, batch), rng.integers(0, 5, batch), [3] * batch
    slip = np.full(batch, 0.5)
    u = np.stack(
        [
            core.uniforms(int(s), int(e), t, GRID_SITE, 0, 2 * n)
            for s, e, t in zip(seeds, episodes, steps, strict=True)
        ]
    )
    got = apply_slip_batch(delta, slip, u)
    for b in range(batch):
        draws = core.Draws()
        draws.reset(int(seeds[b]))
        draws.episode, draws.step = int(episodes[b]), 3
        want = apply_slip(
            delta[b], 0.5, lambda stream, k, d=draws: d.u(GRID_SITE + stream, 0, k), 0
        )
        np.testing.assert_array_equal(got[b], want)
    assert np.any(got != delta), "with slip 0.5 some of 40 moves should slip"


def test_apply_slip_rejects_wrong_u_shape() -> None:
    delta = np.zeros((2, 3, 2), dtype=np.int64)
    with pytest.raises(ValueError, match="u must have shape"):
        apply_slip_batch(delta, np.ones(2), np.zeros((2, 3)))


# --------------------------------------------------------------------------- views


@st.composite
def view_cases(draw):
    batch = draw(st.integers(1, 16))
    height, width = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    radius = draw(st.integers(0, 3))
    k = draw(st.integers(0, 4))
    tiles = draw(hnp.arrays(np.int64, (batch, height, width), elements=st.integers(0, 4)))
    rows = hnp.arrays(np.int64, (batch, k), elements=st.integers(-radius - 2, height + radius + 1))
    cols = hnp.arrays(np.int64, (batch, k), elements=st.integers(-radius - 2, width + radius + 1))
    center = np.stack([draw(rows), draw(cols)], axis=2)
    return tiles, center, radius


@settings(max_examples=300, deadline=None)
@given(view_cases(), st.sampled_from([-1, 0, 7]))
def test_view_matches_scalar(case, fill: int) -> None:
    tiles, center, radius = case
    got = view_batch(tiles, center, radius, fill)
    side = 2 * radius + 1
    assert got.shape == center.shape[:2] + (side, side) and got.dtype == np.int64
    for b in range(len(tiles)):
        for k in range(center.shape[1]):
            np.testing.assert_array_equal(got[b, k], view(tiles[b], center[b, k], radius, fill))


@settings(max_examples=100, deadline=None)
@given(view_cases(), st.data())
def test_view_with_kept_padded_tiles_matches_a_fresh_pad(case, data) -> None:
    """The padded tiles an env keeps (PaddedTiles) give the views a fresh pad gives: when kept,
    after restarted rows are put, after the tiles array is replaced, and for a larger radius."""
    tiles, center, radius = case
    pads = PaddedTiles()
    for _ in range(2):  # made, then kept
        np.testing.assert_array_equal(view_batch(tiles, center, radius, -1, pads), view_batch(tiles, center, radius, -1))
    assert pads.tiles is tiles
    idx = np.flatnonzero(data.draw(hnp.arrays(bool, len(tiles))))
    rows = data.draw(hnp.arrays(np.int64, (len(idx),) + tiles.shape[1:], elements=st.integers(0, 4)))
    tiles[idx] = rows
    pads.put_rows(tiles, idx, rows)
    np.testing.assert_array_equal(view_batch(tiles, center, radius, -1, pads), view_batch(tiles, center, radius, -1))
    other = tiles.copy()
    other[:, 0, 0] = 3
    np.testing.assert_array_equal(view_batch(other, center, radius + 1, -1, pads), view_batch(other, center, radius + 1, -1))
    assert pads.tiles is other


def test_kept_padded_tiles_serve_only_their_own_array() -> None:
    """A restart's few copies (tiles of another shape) are padded for that call and leave the env's
    copy in place; a restarted row beyond the copy's dtype makes it again; rows put into
    another array change nothing."""
    rng = np.random.default_rng(0)
    tiles = rng.integers(0, 3, (6, 4, 5))
    center = rng.integers(-1, 5, (6, 3, 2))
    pads = PaddedTiles()
    view_batch(tiles, center, 1, -1, pads)
    kept = pads.padded
    few = tiles[:2].copy()
    np.testing.assert_array_equal(view_batch(few, center[:2], 1, -1, pads), view_batch(few, center[:2], 1, -1))
    assert pads.tiles is tiles and pads.padded is kept
    pads.put_rows(few, np.array([0]), few[:1] + 1)  # not the kept array: ignored
    assert pads.padded is kept
    tiles[1] = 300  # beyond the int8 copy
    pads.put_rows(tiles, np.array([1]), tiles[1:2])
    np.testing.assert_array_equal(view_batch(tiles, center, 1, -1, pads), view_batch(tiles, center, 1, -1))
    assert pads.padded is not kept and pads.padded.dtype == np.int16


def test_the_whole_batch_displaces_a_restarts_few_copies_kept_first() -> None:
    """Were a restart's few copies the first tiles asked for, the env's whole batch (more copies)
    replaces them as the kept copy, for views and tile look-ups alike."""
    rng = np.random.default_rng(3)
    tiles = rng.integers(0, 3, (6, 4, 5))
    center = rng.integers(0, 4, (6, 3, 2))
    few = tiles[:2].copy()
    pads = PaddedTiles()
    np.testing.assert_array_equal(view_batch(few, center[:2], 1, -1, pads), view_batch(few, center[:2], 1, -1))
    assert pads.tiles is few
    np.testing.assert_array_equal(tile_batch(tiles, center, pads), tile_batch(tiles, center))
    assert pads.tiles is tiles
    kept = pads.padded
    np.testing.assert_array_equal(view_batch(few, center[:2], 1, -1, pads), view_batch(few, center[:2], 1, -1))
    assert pads.tiles is tiles and pads.padded is kept  # fewer copies again: padded for that call alone


@pytest.mark.parametrize("radius", [1, 2, 3])
def test_view_at_corners(radius: int) -> None:
    tiles = np.arange(2 * 5 * 4).reshape(2, 5, 4)
    corners = np.array([[0, 0], [0, 3], [4, 0], [4, 3], [2, 1]])
    center = np.stack([corners, corners[::-1]])
    got = view_batch(tiles, center, radius, -1)
    for b in range(2):
        for k in range(len(corners)):
            np.testing.assert_array_equal(got[b, k], view(tiles[b], center[b, k], radius, -1))
    assert got[0, 0, radius, radius] == 0 and got[1, 0, radius, radius] == tiles[1, 2, 1]
    assert np.all(got[0, 0, :radius, :] == -1) and np.all(got[0, 0, :, :radius] == -1)


@settings(max_examples=300, deadline=None)
@given(view_cases(), st.integers(0, 6), st.data())
def test_agents_view_matches_scalar(case, n: int, data) -> None:
    tiles, center, radius = case
    batch, height, width = tiles.shape
    rows = hnp.arrays(np.int64, (batch, n), elements=st.integers(-1, height))
    cols = hnp.arrays(np.int64, (batch, n), elements=st.integers(-1, width))
    pos = np.stack([data.draw(rows), data.draw(cols)], axis=2)
    got = agents_view_batch(pos, center, radius)
    side = 2 * radius + 1
    assert got.shape == center.shape[:2] + (side, side) and got.dtype == np.int64
    for b in range(batch):
        for k in range(center.shape[1]):
            np.testing.assert_array_equal(got[b, k], agents_view(pos[b], center[b, k], radius))


@pytest.mark.parametrize("shift", [2**29 - 8, 2**29, 2**40, -(2**40)])
def test_agents_view_far_from_the_origin_is_computed_in_int64(shift: int) -> None:
    """Windows are the same wherever the agents stand: positions beyond int32's safe range
    (2**29) are planned in int64, the same sums as near the origin."""
    rng = np.random.default_rng(1)
    pos = rng.integers(0, 5, (7, 4, 2))
    center = rng.integers(-1, 6, (7, 3, 2))
    x = rng.integers(-3, 4, (7, 4))
    near = agents_view_of_batch(pos, center, 2, x)
    np.testing.assert_array_equal(agents_view_of_batch(pos + shift, center + shift, 2, x), near)
    np.testing.assert_array_equal(agents_view_batch(pos + shift, center + shift, 2), agents_view_batch(pos, center, 2))
    # agents 2**32 cells away from every centre are in no window (an int32 difference would wrap to 0)
    assert not agents_view_batch(pos + 2**32, center, 2).any()


WINDOW_VALUES = {  # x -> whether window_sums_obs adds it into the buffer (exact in float32)
    "count": (lambda rng, b, n, k: None, True),
    "bool": (lambda rng, b, n, k: rng.random((b, n)) < 0.5, True),
    "ints": (lambda rng, b, n, k: rng.integers(-3, 4, (b, n)), True),
    "per agent": (lambda rng, b, n, k: rng.integers(-3, 4, n), True),
    "per centre": (lambda rng, b, n, k: rng.integers(-3, 4, (b, k, n)), True),
    "large ints": (lambda rng, b, n, k: np.full((b, n), 2**24 // n), False),
    "most negative int64": (lambda rng, b, n, k: np.full((b, n), -(2**63)), False),
    "floats": (lambda rng, b, n, k: rng.random((b, n)), False),
}


@pytest.mark.parametrize("values", list(WINDOW_VALUES))
@pytest.mark.parametrize("radius", [0, 1, 2])
def test_window_sums_written_into_the_observation_equal_a_plain_write(values: str, radius: int) -> None:
    """window_sums_obs writes what a plain write of window_sums_batch writes, into the rows of a
    role (agents 1..3 of 5) whose cells held something before: added into the buffer where float32
    sums are exact, else written plainly; also into a buffer add_at cannot use (not contiguous)
    and for one centre per copy (not one per agent of the role)."""
    rng = np.random.default_rng(radius)
    batch, n, k, side = 40, 4, 3, 2 * radius + 1
    pos = rng.integers(-1, 5, (batch, n, 2))
    make, added = WINDOW_VALUES[values]
    for centre, wide in ((pos[:, 1:4], False), (pos[:, 1:4], True), (pos[:, :1], False)):
        x = make(rng, batch, n, centre.shape[1])
        plan = window_plan_batch(pos, centre, radius)
        want = rng.random((batch, 5, 2 * side * side + 3)).astype(np.float32)
        got = np.repeat(want, 2, axis=2)[:, :, ::2] if wide else want.copy()
        sums = window_sums_batch(plan, x).reshape(batch, centre.shape[1], side * side)
        want[:, 1:4, 2:2 + side * side] = sums
        writer = BatchObsWriter(got, 1, 3)
        window_sums_obs(writer, 2, 2 + side * side, plan, x)
        assert bool(writer.later) == (added and not wide and centre.shape[1] == k)
        writer.flush()
        assert got.tobytes() == want.tobytes() and got.flags.c_contiguous != wide


@pytest.mark.parametrize("radius", [1, 2, 3])
def test_agents_view_counts_shared_cells_at_corners(radius: int) -> None:
    pos = np.array([[[0, 0], [0, 0], [1, 0], [4, 3]], [[4, 3], [4, 3], [4, 3], [0, 0]]])
    center = np.array([[[0, 0], [4, 3]], [[4, 3], [0, 0]]])
    got = agents_view_batch(pos, center, radius)
    assert got[0, 0, radius, radius] == 2 and got[0, 0, radius + 1, radius] == 1
    assert got[1, 0, radius, radius] == 3 and got[1, 1, radius, radius] == 1
    for b in range(2):
        for k in range(2):
            np.testing.assert_array_equal(got[b, k], agents_view(pos[b], center[b, k], radius))


# --------------------------------------------------------------------------- lookups


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_tile_and_in_bounds_match_scalar(data) -> None:
    batch = data.draw(st.integers(1, 16))
    height, width = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6))
    inner = data.draw(st.sampled_from([(), (3,), (2, 4), (0,)]))
    tiles = data.draw(hnp.arrays(np.int64, (batch, height, width), elements=st.integers(0, 4)))
    coord = st.integers(-2, max(height, width) + 1)
    p = data.draw(hnp.arrays(np.int64, (batch, *inner, 2), elements=coord))
    got_tile = tile_batch(tiles, p)
    got_in = in_bounds_batch((height, width), p)
    assert got_tile.shape == (batch, *inner) and got_tile.dtype == np.int64
    assert got_in.shape == (batch, *inner) and got_in.dtype == bool
    for b in range(batch):
        np.testing.assert_array_equal(got_tile[b], rt_tile(tiles[b], p[b]))
        np.testing.assert_array_equal(got_in[b], rt_in_bounds(tiles[b], p[b]))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_tile_with_kept_padded_tiles_matches_scalar(data) -> None:
    """tile_batch reads the env's padded tiles when every position lies within their border
    (2 cells), and the tiles themselves otherwise (positions further off), when the padding is
    kept for another shape (a restart's few copies), or after a tile kind beyond int8."""
    batch = data.draw(st.integers(1, 12))
    height, width = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6))
    tiles = data.draw(hnp.arrays(np.int64, (batch, height, width), elements=st.integers(0, 4)))
    far = data.draw(st.integers(0, 4))
    p = data.draw(hnp.arrays(np.int64, (batch, data.draw(st.integers(0, 5)), 2),
                             elements=st.integers(-far, max(height, width) + far - 1)))
    pads = PaddedTiles()
    for _ in range(2):
        got = tile_batch(tiles, p, pads)
        assert got.dtype == np.int64 and got.shape == p.shape[:2]
        for b in range(batch):
            np.testing.assert_array_equal(got[b], rt_tile(tiles[b], p[b]))
    few = tiles[:1] + 1  # another shape (unless one copy): looked up without the kept padding
    np.testing.assert_array_equal(tile_batch(few, p[:1], pads), tile_batch(few, p[:1]))
    tiles[0, 0, 0] = 300  # beyond the int8 padding: made again in int16
    pads.put_rows(tiles, np.array([0]), tiles[:1])
    np.testing.assert_array_equal(tile_batch(tiles, p, pads), tile_batch(tiles, p))


def test_tile_outside_is_minus_one() -> None:
    tiles = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])
    p = np.array([[[0, 1], [2, 0], [-1, 1]], [[1, 1], [1, -1], [0, 0]]])
    assert tile_batch(tiles, p).tolist() == [[2, -1, -1], [8, -1, 5]]
    assert in_bounds_batch((2, 2), p).tolist() == [[True, False, False], [True, False, True]]


def test_agents_view_of_sums_each_agents_value_into_its_cell() -> None:
    from types import SimpleNamespace

    from gymwright.mechanics.grid.runtime import rt_agents_view_of, rt_agents_view_of_rows

    rng = np.random.default_rng(3)
    pos = rng.integers(-1, 6, size=(5, 4, 2))  # some off the 5x5 grid
    x = rng.integers(-2, 3, size=(5, 4))
    got = agents_view_of_batch(pos, pos, 2, x)
    for b in range(5):
        v = SimpleNamespace(pos=pos[b], tiles=np.zeros((5, 5), dtype=np.int64))
        for k in range(4):
            want = np.zeros((5, 5), dtype=np.int64)
            for j in range(4):
                dr, dc = pos[b, j] - pos[b, k] + 2
                if 0 <= dr < 5 and 0 <= dc < 5:
                    want[dr, dc] += x[b, j]
            assert np.array_equal(got[b, k], want)
            assert np.array_equal(rt_agents_view_of(v, pos[b, k], 2, x[b]), want)
        assert np.array_equal(rt_agents_view_of_rows(v, pos[b], 2, x[b]), got[b])
    ones = agents_view_of_batch(pos, pos, 1, np.ones((5, 4), dtype=np.int64))
    assert np.array_equal(ones, agents_view_batch(pos, pos, 1))  # with x = 1 it counts agents
    per_centre = agents_view_of_batch(pos, pos[:, :1], 1, np.broadcast_to(x[:, None, :], (5, 3, 4)))
    assert per_centre.shape == (5, 3, 3, 3)  # one centre per copy, values per centre: a window each
    assert agents_view_of_batch(pos, pos, 1, x / 2).dtype == np.float64
