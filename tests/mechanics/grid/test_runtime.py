"""Tests for the standalone grid runtime of one env (gymwright.mechanics.grid.runtime)."""

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gymwright.mechanics.grid import runtime as grid
from gymwright.mechanics.grid.runtime import (
    apply_slip,
    bfs_distance,
    generate_layout,
    render_ansi,
    render_rgb,
    resolve_moves,
    rt_agents_view,
)
from gymwright.mechanics.grid.runtime_batch import view_batch

FLOOR_WALL_ICE = ([0.0, 0.3, 0.1], [False, True, False])


def make_uniforms(seed: int):
    """Counter-based style uniforms: deterministic per (seed, stream, n)."""

    def uniforms(stream: int, n: int) -> np.ndarray:
        return np.random.default_rng([seed, stream, n]).random(n)

    return uniforms


def passable_of(tiles: np.ndarray, blocked: list[bool]) -> np.ndarray:
    return ~np.asarray(blocked, dtype=bool)[tiles]


def assert_valid_layout(tiles, starts, goals, blocked, n_agents, shape) -> None:
    assert tiles.shape == shape and tiles.dtype == np.int64
    assert starts.shape == (n_agents, 2) and starts.dtype == np.int64
    assert goals.shape == (n_agents, 2) and goals.dtype == np.int64
    assert tiles.min() >= 0 and tiles.max() < len(blocked)
    passable = passable_of(tiles, blocked)
    assert len({tuple(s) for s in starts.tolist()}) == n_agents, "starts not distinct"
    assert len({tuple(g) for g in goals.tolist()}) == n_agents, "goals not distinct"
    for i in range(n_agents):
        assert passable[tuple(starts[i])], f"start {i} on a blocked cell"
        assert passable[tuple(goals[i])], f"goal {i} on a blocked cell"
        assert bfs_distance(passable, starts[i], goals[i]) >= 0, f"agent {i} cannot reach goal"


# --------------------------------------------------------------------------- standalone


def test_module_source_runs_standalone() -> None:
    namespace: dict = {}
    exec(compile(inspect.getsource(grid), "inlined_grid", "exec"), namespace)
    tiles, starts, goals = namespace["generate_layout"](5, 5, 2, *FLOOR_WALL_ICE, make_uniforms(0))
    expected = generate_layout(5, 5, 2, *FLOOR_WALL_ICE, make_uniforms(0))
    np.testing.assert_array_equal(tiles, expected[0])
    np.testing.assert_array_equal(starts, expected[1])
    np.testing.assert_array_equal(goals, expected[2])


# --------------------------------------------------------------------------- layout


def test_generate_layout_is_deterministic() -> None:
    a = generate_layout(9, 7, 4, *FLOOR_WALL_ICE, make_uniforms(3))
    b = generate_layout(9, 7, 4, *FLOOR_WALL_ICE, make_uniforms(3))
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    others = [generate_layout(9, 7, 4, *FLOOR_WALL_ICE, make_uniforms(s))[0] for s in range(4, 8)]
    assert any(not np.array_equal(a[0], o) for o in others)


@pytest.mark.parametrize("density", [0.0, 0.2, 0.45, 0.7, 0.95, 1.0])
@pytest.mark.parametrize("n_agents", [1, 2, 4])
def test_generate_layout_reachability_over_seeds(density: float, n_agents: int) -> None:
    blocked = [False, True]
    for seed in range(25):
        tiles, starts, goals = generate_layout(
            8, 6, n_agents, [0.0, density], blocked, make_uniforms(seed)
        )
        assert_valid_layout(tiles, starts, goals, blocked, n_agents, (8, 6))
        assert np.all(np.any(starts != goals, axis=1)), "own start equals own goal"


def test_generate_layout_density_matches_when_nothing_is_blocked() -> None:
    tiles, _, _ = generate_layout(60, 60, 2, [0.0, 0.3, 0.1], [False] * 3, make_uniforms(1))
    frac = np.bincount(tiles.ravel(), minlength=3) / tiles.size
    assert abs(frac[1] - 0.3) < 0.03
    assert abs(frac[2] - 0.1) < 0.02
    assert abs(frac[0] - 0.6) < 0.03


def test_generate_layout_keeps_random_walls_when_solvable() -> None:
    tiles, starts, goals = generate_layout(20, 20, 3, [0.0, 0.2], [False, True], make_uniforms(5))
    assert 0.1 < np.mean(tiles == 1) < 0.3
    assert_valid_layout(tiles, starts, goals, [False, True], 3, (20, 20))


def test_generate_layout_single_cell_grid() -> None:
    tiles, starts, goals = generate_layout(1, 1, 1, [0.0, 1.0], [False, True], make_uniforms(0))
    assert tiles.tolist() == [[0]]
    assert starts.tolist() == [[0, 0]] and goals.tolist() == [[0, 0]]


def test_generate_layout_full_grid_of_agents() -> None:
    tiles, starts, goals = generate_layout(2, 3, 6, [0.0, 0.9], [False, True], make_uniforms(2))
    assert_valid_layout(tiles, starts, goals, [False, True], 6, (2, 3))
    assert np.all(np.any(starts != goals, axis=1))


def test_generate_layout_fallback_carves_a_path() -> None:
    calls: list[int] = []
    base = make_uniforms(9)

    def uniforms(stream: int, n: int) -> np.ndarray:
        calls.append(stream)
        return base(stream, n)

    tiles, starts, goals = generate_layout(
        7, 7, 2, [0.0, 1.0], [False, True], uniforms, max_tries=3
    )
    assert_valid_layout(tiles, starts, goals, [False, True], 2, (7, 7))
    # every cell that is floor lies on one of the carved L paths (or under a start/goal)
    assert np.sum(tiles == 0) <= 2 * (7 + 7)
    assert len(set(calls)) == len(calls), "a stream was reused"


def test_generate_layout_fixed_starts_and_goals_with_random_tiles() -> None:
    starts = np.array([[0, 0], [4, 4]])
    goals = np.array([[4, 4], [0, 0]])
    for seed in range(10):
        tiles, s, g = generate_layout(
            5, 5, 2, [0.0, 0.6], [False, True], make_uniforms(seed), None, starts, goals
        )
        np.testing.assert_array_equal(s, starts)
        np.testing.assert_array_equal(g, goals)
        assert_valid_layout(tiles, s, g, [False, True], 2, (5, 5))


def test_generate_layout_fixed_starts_random_goals() -> None:
    starts = np.array([[1, 1], [2, 2], [3, 3]])
    for seed in range(10):
        tiles, s, g = generate_layout(
            6, 6, 3, [0.0, 0.5], [False, True], make_uniforms(seed), fixed_starts=starts
        )
        np.testing.assert_array_equal(s, starts)
        assert_valid_layout(tiles, s, g, [False, True], 3, (6, 6))
        assert np.all(np.any(s != g, axis=1))


def test_generate_layout_fixed_goals_random_starts() -> None:
    goals = np.array([[0, 5], [5, 0]])
    for seed in range(10):
        tiles, s, g = generate_layout(
            6, 6, 2, [0.0, 0.5], [False, True], make_uniforms(seed), fixed_goals=goals
        )
        np.testing.assert_array_equal(g, goals)
        assert_valid_layout(tiles, s, g, [False, True], 2, (6, 6))
        assert np.all(np.any(s != g, axis=1))


def wall_split_map() -> np.ndarray:
    tiles = np.zeros((4, 5), dtype=np.int64)
    tiles[:, 2] = 1
    return tiles


def test_fixed_tiles_are_never_modified_and_goals_stay_in_component() -> None:
    tiles = wall_split_map()
    for seed in range(20):
        out, s, g = generate_layout(
            4, 5, 3, [0.0, 0.5], [False, True], make_uniforms(seed), fixed_tiles=tiles
        )
        np.testing.assert_array_equal(out, tiles)
        assert_valid_layout(out, s, g, [False, True], 3, (4, 5))
        assert np.all(np.any(s != g, axis=1))


def test_fixed_map_unreachable_raises_naming_agent_and_cells() -> None:
    tiles = wall_split_map()
    starts = np.array([[0, 0], [1, 0]])
    goals = np.array([[3, 1], [1, 4]])
    with pytest.raises(ValueError, match=r"agent 1.*\[1, 4\].*\[1, 0\]"):
        generate_layout(4, 5, 2, [0.0, 0.0], [False, True], make_uniforms(0), tiles, starts, goals)


def test_fixed_map_reachable_is_returned_unchanged() -> None:
    tiles = wall_split_map()
    starts = np.array([[0, 0], [1, 4]])
    goals = np.array([[3, 1], [3, 3]])
    out = generate_layout(
        4, 5, 2, [0.0, 0.0], [False, True], make_uniforms(0), tiles, starts, goals
    )
    np.testing.assert_array_equal(out[0], tiles)
    np.testing.assert_array_equal(out[1], starts)
    np.testing.assert_array_equal(out[2], goals)


def test_fixed_tiles_with_too_few_free_cells_raise() -> None:
    tiles = np.ones((3, 3), dtype=np.int64)
    tiles[1, 1] = 0
    with pytest.raises(ValueError, match="fixed layout"):
        generate_layout(3, 3, 2, [0.0, 0.0], [False, True], make_uniforms(0), fixed_tiles=tiles)


def test_fixed_start_on_wall_raises() -> None:
    tiles = wall_split_map()
    with pytest.raises(ValueError, match="agent 0"):
        generate_layout(
            4, 5, 1, [0.0, 0.0], [False, True], make_uniforms(0), tiles, np.array([[0, 2]])
        )


def test_fixed_tiles_isolated_start_gets_its_own_cell_as_goal() -> None:
    tiles = np.ones((3, 3), dtype=np.int64)
    tiles[1, 1] = 0
    _, s, g = generate_layout(
        3, 3, 1, [0.0, 0.0], [False, True], make_uniforms(0), tiles, np.array([[1, 1]])
    )
    assert s.tolist() == [[1, 1]] and g.tolist() == [[1, 1]]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"densities": [0.0, 0.5], "blocked": [True, False]}, "blocked\\[0\\]"),
        ({"densities": [0.0, 0.5], "blocked": [False]}, "same length"),
        ({"densities": [0.0, 0.7, 0.6], "blocked": [False, True, False]}, "sum"),
        ({"densities": [0.0, -0.1], "blocked": [False, True]}, ">= 0"),
        ({"n_agents": 50}, "does not fit"),
        ({"fixed_starts": np.array([[0, 0]])}, "shape"),
        ({"fixed_goals": np.array([[0, 0], [9, 0]])}, "outside"),
        ({"fixed_tiles": np.zeros((3, 3), dtype=np.int64)}, "shape"),
        ({"fixed_tiles": np.full((5, 5), 7, dtype=np.int64)}, "kinds"),
    ],
)
def test_generate_layout_validation(kwargs: dict, match: str) -> None:
    args = {
        "height": 5,
        "width": 5,
        "n_agents": 2,
        "densities": [0.0, 0.2],
        "blocked": [False, True],
        "uniforms": make_uniforms(0),
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        generate_layout(**args)


def test_bad_uniforms_shape_is_reported() -> None:
    with pytest.raises(ValueError, match="uniforms"):
        generate_layout(4, 4, 1, [0.0, 0.2], [False, True], lambda s, n: np.zeros(n + 1))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    height=st.integers(1, 9),
    width=st.integers(1, 9),
    n_agents=st.integers(1, 5),
    density=st.floats(0.0, 1.0),
)
def test_property_reachability_always_holds(
    seed: int, height: int, width: int, n_agents: int, density: float
) -> None:
    n_agents = min(n_agents, height * width)
    blocked = [False, True, False]
    tiles, starts, goals = generate_layout(
        height, width, n_agents, [0.0, density, (1 - density) / 2], blocked, make_uniforms(seed)
    )
    assert_valid_layout(tiles, starts, goals, blocked, n_agents, (height, width))
    if height * width >= 2:
        assert np.all(np.any(starts != goals, axis=1))


# --------------------------------------------------------------------------- slip


def test_slip_zero_is_identity_and_one_always_turns() -> None:
    delta = np.array([[0, 1], [1, 0], [0, -1], [-1, 0], [0, 0]])
    np.testing.assert_array_equal(apply_slip(delta, 0.0, make_uniforms(0), 5), delta)
    turned = apply_slip(delta, 1.0, make_uniforms(0), 5)
    assert turned.dtype == np.int64
    np.testing.assert_array_equal(turned[4], [0, 0])
    dots = np.sum(turned[:4] * delta[:4], axis=1)
    np.testing.assert_array_equal(dots, 0)
    np.testing.assert_array_equal(np.abs(turned[:4]).sum(axis=1), 1)


def test_slip_uses_two_uniforms_per_agent_and_the_given_stream() -> None:
    seen: list[tuple[int, int]] = []

    def uniforms(stream: int, n: int) -> np.ndarray:
        seen.append((stream, n))
        return np.full(n, 0.99)

    apply_slip(np.array([[0, 1], [0, 0], [1, 0]]), 0.5, uniforms, 42)
    assert seen == [(42, 6)]


def test_slip_statistics() -> None:
    uniforms = make_uniforms(11)
    delta = np.array([[0, 1], [0, 0], [1, 0]] * 100)
    slipped = np.zeros(len(delta))
    left = np.zeros(len(delta))
    draws = 40
    for stream in range(draws):
        out = apply_slip(delta, 0.3, uniforms, stream)
        changed = np.any(out != delta, axis=1)
        slipped += changed
        left += changed & np.all(out == np.stack([-delta[:, 1], delta[:, 0]], axis=1), axis=1)
        np.testing.assert_array_equal(out[1::3], 0)
    moving = np.any(delta != 0, axis=1)
    rate = slipped[moving].sum() / (moving.sum() * draws)
    assert abs(rate - 0.3) < 0.03
    assert slipped[~moving].sum() == 0
    assert abs(left[moving].sum() / slipped[moving].sum() - 0.5) < 0.05


def test_slip_is_deterministic() -> None:
    delta = np.array([[0, 1], [1, 0], [-1, 0]])
    a = apply_slip(delta, 0.5, make_uniforms(2), 7)
    b = apply_slip(delta, 0.5, make_uniforms(2), 7)
    np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------- moves

OPEN = np.ones((4, 4), dtype=bool)


def resolve(pos, delta, collision="block", can_move=None, passable=OPEN):
    pos = np.array(pos, dtype=np.int64)
    delta = np.array(delta, dtype=np.int64)
    if can_move is None:
        can_move = np.ones(len(pos), dtype=bool)
    return resolve_moves(pos, delta, np.asarray(can_move), passable, collision)


def test_free_moves() -> None:
    new, moved, conflict = resolve([[0, 0], [2, 2]], [[0, 1], [1, 0]])
    assert new.tolist() == [[0, 1], [3, 2]]
    assert moved.tolist() == [True, True] and conflict.tolist() == [False, False]
    assert new.dtype == np.int64


def test_vertex_conflict_cancels_both() -> None:
    new, moved, conflict = resolve([[0, 0], [0, 2]], [[0, 1], [0, -1]])
    assert new.tolist() == [[0, 0], [0, 2]]
    assert moved.tolist() == [False, False] and conflict.tolist() == [True, True]


def test_vertex_conflict_with_staying_agent() -> None:
    new, moved, conflict = resolve([[0, 0], [0, 1]], [[0, 1], [0, 0]])
    assert new.tolist() == [[0, 0], [0, 1]]
    assert moved.tolist() == [False, False]
    assert conflict.tolist() == [True, False]


def test_swap_conflict_cancels_both() -> None:
    new, moved, conflict = resolve([[1, 1], [1, 2]], [[0, 1], [0, -1]])
    assert new.tolist() == [[1, 1], [1, 2]]
    assert conflict.tolist() == [True, True] and moved.tolist() == [False, False]


def test_following_is_allowed() -> None:
    new, moved, conflict = resolve([[0, 0], [0, 1], [0, 2]], [[0, 1], [0, 1], [0, 1]])
    assert new.tolist() == [[0, 1], [0, 2], [0, 3]]
    assert moved.all() and not conflict.any()


def test_rotation_cycle_is_allowed() -> None:
    pos = [[0, 0], [0, 1], [1, 1], [1, 0]]
    delta = [[0, 1], [1, 0], [0, -1], [-1, 0]]
    new, moved, conflict = resolve(pos, delta)
    assert new.tolist() == [[0, 1], [1, 1], [1, 0], [0, 0]]
    assert moved.all() and not conflict.any()


def test_chain_through_staying_agent_cancels_everyone_behind() -> None:
    # 0 -> 1's cell, 1 -> 2's cell, 2 waits: the whole chain is blocked by cascade.
    new, moved, conflict = resolve([[0, 0], [0, 1], [0, 2]], [[0, 1], [0, 1], [0, 0]])
    assert new.tolist() == [[0, 0], [0, 1], [0, 2]]
    assert moved.tolist() == [False, False, False]
    assert conflict.tolist() == [True, True, False]


def test_chain_through_wall_bumper_cancels_follower() -> None:
    passable = OPEN.copy()
    passable[0, 2] = False
    new, moved, conflict = resolve([[0, 0], [0, 1]], [[0, 1], [0, 1]], passable=passable)
    assert new.tolist() == [[0, 0], [0, 1]]
    assert moved.tolist() == [False, False]
    assert conflict.tolist() == [True, False]


def test_chain_through_cannot_move_agent() -> None:
    new, moved, conflict = resolve([[0, 0], [0, 1]], [[0, 1], [0, 1]], can_move=[True, False])
    assert new.tolist() == [[0, 0], [0, 1]]
    assert moved.tolist() == [False, False] and conflict.tolist() == [True, False]


def test_off_grid_and_impassable_moves_stay_without_conflict() -> None:
    passable = OPEN.copy()
    passable[2, 2] = False
    new, moved, conflict = resolve(
        [[0, 0], [3, 3], [2, 1]], [[-1, 0], [0, 1], [0, 1]], passable=passable
    )
    assert new.tolist() == [[0, 0], [3, 3], [2, 1]]
    assert not moved.any() and not conflict.any()


def test_can_move_false_stays() -> None:
    new, moved, conflict = resolve([[0, 0]], [[0, 1]], can_move=[False])
    assert new.tolist() == [[0, 0]] and not moved[0] and not conflict[0]


def test_wait_is_not_a_move() -> None:
    new, moved, conflict = resolve([[1, 1]], [[0, 0]])
    assert new.tolist() == [[1, 1]] and not moved[0] and not conflict[0]


def test_collision_none_allows_sharing_and_swaps() -> None:
    new, moved, conflict = resolve([[0, 0], [0, 2]], [[0, 1], [0, -1]], collision="none")
    assert new.tolist() == [[0, 1], [0, 1]] and moved.all() and not conflict.any()
    new, _, _ = resolve([[1, 1], [1, 2]], [[0, 1], [0, -1]], collision="none")
    assert new.tolist() == [[1, 2], [1, 1]]


def test_unknown_collision_rule() -> None:
    with pytest.raises(ValueError, match="none.*block"):
        resolve([[0, 0]], [[0, 1]], collision="bounce")


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    n_agents=st.integers(1, 8),
    size=st.integers(2, 5),
)
def test_property_block_never_stacks_agents(data: st.DataObject, n_agents: int, size: int) -> None:
    n_agents = min(n_agents, size * size)
    cells = data.draw(
        st.lists(
            st.tuples(st.integers(0, size - 1), st.integers(0, size - 1)),
            min_size=n_agents,
            max_size=n_agents,
            unique=True,
        )
    )
    moves = [(0, 0), (0, 1), (0, -1), (1, 0), (-1, 0)]
    delta = data.draw(st.lists(st.sampled_from(moves), min_size=n_agents, max_size=n_agents))
    can_move = data.draw(st.lists(st.booleans(), min_size=n_agents, max_size=n_agents))
    passable = np.array(
        data.draw(st.lists(st.booleans(), min_size=size * size, max_size=size * size))
    ).reshape(size, size)
    pos = np.array(cells, dtype=np.int64)
    new, moved, conflict = resolve_moves(
        pos, np.array(delta, dtype=np.int64), np.array(can_move), passable, "block"
    )
    assert len({tuple(p) for p in new.tolist()}) == n_agents
    np.testing.assert_array_equal(new[~moved], pos[~moved])
    np.testing.assert_array_equal(new[moved], pos[moved] + np.array(delta)[moved])
    assert not np.any(moved & conflict)
    assert np.all(passable[new[moved, 0], new[moved, 1]])
    # no swaps among movers
    for i in np.nonzero(moved)[0]:
        for j in np.nonzero(moved)[0]:
            if i != j:
                assert not (
                    new[i].tolist() == pos[j].tolist() and new[j].tolist() == pos[i].tolist()
                )


# --------------------------------------------------------------------------- search & views


def test_bfs_distance() -> None:
    passable = np.ones((3, 4), dtype=bool)
    passable[0:2, 1] = False
    assert bfs_distance(passable, (0, 0), (0, 2)) == 6
    assert bfs_distance(passable, (0, 0), (0, 0)) == 0
    assert bfs_distance(passable, (0, 0), (0, 1)) == -1
    passable[2, 1] = False
    assert bfs_distance(passable, (0, 0), (0, 3)) == -1


def view(tiles: np.ndarray, center: tuple[int, int], radius: int, fill: int) -> np.ndarray:
    """The window of one centre (`view_batch` on one copy: the form that takes any fill)."""
    return view_batch(tiles[None], np.array([[center]]), radius, fill)[0, 0]


def test_view_centre_and_edges() -> None:
    tiles = np.arange(12, dtype=np.int64).reshape(3, 4)
    centre = view(tiles, (1, 1), 1, -1)
    np.testing.assert_array_equal(centre, tiles[0:3, 0:3])
    corner = view(tiles, (0, 0), 1, -1)
    assert corner.dtype == np.int64 and corner.shape == (3, 3)
    assert corner.tolist() == [[-1, -1, -1], [-1, 0, 1], [-1, 4, 5]]
    far = view(tiles, (2, 3), 2, 9)
    assert far.shape == (5, 5)
    assert far[2, 2] == 11 and far[0, 0] == 1 and far[3, 2] == 9 and far[2, 3] == 9
    assert view(tiles, (1, 1), 0, 9).tolist() == [[5]]


def test_agents_view_counts_and_edges() -> None:
    class V:  # one env's variables (the grid's tiles and the agents' positions)
        tiles = np.zeros((4, 4), dtype=np.int64)
        pos = np.array([[0, 0], [0, 0], [1, 1], [3, 3]])

    counts = rt_agents_view(V, (0, 0), 1)
    assert counts.dtype == np.int64 and counts.shape == (3, 3)
    assert counts.tolist() == [[0, 0, 0], [0, 2, 0], [0, 0, 1]]
    assert rt_agents_view(V, (3, 3), 0).tolist() == [[1]]
    assert rt_agents_view(V, (2, 2), 1).sum() == 2
    assert rt_agents_view(V, (-2, 0), 2).tolist() == [[0] * 5, [0] * 5, [0] * 5, [0] * 5, [0, 0, 2, 0, 0]]  # off the grid


# --------------------------------------------------------------------------- rendering


def test_render_ansi() -> None:
    tiles = np.array([[0, 1, 0], [0, 0, 2]])
    text = render_ansi(tiles, ".#~", np.array([[0, 0], [1, 1]]), np.array([[1, 2], [0, 2]]))
    assert text == "0#b\n.1a"


def test_render_ansi_symbols_beyond_ten_agents() -> None:
    tiles = np.zeros((1, 12), dtype=np.int64)
    pos = np.array([[0, i] for i in range(12)])
    assert render_ansi(tiles, ".", pos, pos) == "0123456789AB"


def test_render_rgb() -> None:
    tiles = np.array([[0, 1], [0, 0]])
    colors = [(255, 255, 255), (0, 0, 0)]
    pos = np.array([[0, 0], [1, 1]])
    goals = np.array([[1, 0], [0, 1]])
    img = render_rgb(tiles, colors, pos, goals, cell=8)
    assert img.shape == (16, 16, 3) and img.dtype == np.uint8
    palette = np.array(grid.AGENT_PALETTE, dtype=np.uint8)
    assert len(grid.AGENT_PALETTE) >= 10
    assert len({tuple(c) for c in grid.AGENT_PALETTE}) == len(grid.AGENT_PALETTE)
    np.testing.assert_array_equal(img[4, 4], palette[0])  # agent 0 disc centre
    np.testing.assert_array_equal(img[12, 12], palette[1])  # agent 1 disc centre
    np.testing.assert_array_equal(img[0, 0], [255, 255, 255])  # corner of floor cell
    np.testing.assert_array_equal(img[0, 8], [0, 0, 0])  # corner of wall cell
    np.testing.assert_array_equal(img[12, 4], palette[0])  # goal of agent 0 (centre square)
    np.testing.assert_array_equal(img[4, 12], palette[1])  # goal of agent 1
    np.testing.assert_array_equal(img[9, 1], [255, 255, 255])  # goal cell corner keeps tile colour
    assert render_rgb(tiles, colors, pos, goals).shape == (32, 32, 3)
