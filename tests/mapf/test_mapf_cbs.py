"""CBS against a brute-force joint search, hand-built cases, and the env's movement rules."""

from __future__ import annotations

import heapq
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gymwright.mapf import MapfError, SearchLimitError, UnsolvableError, find_conflicts, solve
from gymwright.mechanics.grid.runtime import resolve_moves

STEPS = ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))
Cell = tuple[int, int]


# --------------------------------------------------------------------------- brute force


def valid_joint_step(before: tuple[Cell, ...], after: tuple[Cell, ...]) -> bool:
    """No two walkers end in one cell and no two trade cells."""
    if len(set(after)) != len(after):
        return False
    n = len(before)
    return not any(
        before[a] == after[b] and before[b] == after[a] and before[a] != after[a]
        for a in range(n) for b in range(a + 1, n)
    )


def _options(holes: np.ndarray, here: Cell, goal: Cell) -> list[Cell]:
    if here == goal:
        return [here]
    h, w = holes.shape
    cells = [(here[0] + dr, here[1] + dc) for dr, dc in STEPS]
    return [(r, c) for r, c in cells if 0 <= r < h and 0 <= c < w and not holes[r, c]]


def brute_force_soc(holes: np.ndarray, starts, goals) -> int | None:
    """Optimal SoC by Dijkstra over joint positions (parked on goal = frozen); None if no plan.

    Written from the env's rules, independently of gymwright.mapf.
    """
    holes = np.asarray(holes, dtype=bool)
    start = tuple(tuple(int(v) for v in s) for s in starts)
    goal = tuple(tuple(int(v) for v in g) for g in goals)
    best, heap = {start: 0}, [(0, start)]
    while heap:
        cost, state = heapq.heappop(heap)
        if cost > best[state]:
            continue
        if state == goal:
            return cost
        step = sum(s != g for s, g in zip(state, goal, strict=True))
        choices = [_options(holes, s, g) for s, g in zip(state, goal, strict=True)]
        for after in itertools.product(*choices):
            if valid_joint_step(state, after) and cost + step < best.get(after, 1 << 30):
                best[after] = cost + step
                heapq.heappush(heap, (cost + step, after))
    return None


def random_instance(rng: np.random.Generator, size: int, n: int, hole_p: float):
    holes = rng.random((size, size)) < hole_p
    free = np.argwhere(~holes)
    if len(free) < n + 1:
        return None
    starts = free[rng.permutation(len(free))[:n]]
    goals = free[rng.permutation(len(free))[:n]]
    if np.any(np.all(starts == goals, axis=1)):
        return None
    return holes, starts, goals


def check_against_brute_force(holes, starts, goals, method: str) -> str:
    """Assert solve agrees with brute force; return what happened."""
    expected = brute_force_soc(holes, starts, goals)
    if expected is None and method == "cbs":
        return "unsolvable"  # plain CBS cannot prove it; it only stops at its limit (tested below)
    try:
        plan = solve(holes, starts, goals, method=method, node_limit=4000)
    except UnsolvableError:
        assert expected is None, f"solver says unsolvable, brute force finds {expected}"
        return "unsolvable"
    except SearchLimitError:
        assert method == "cbs", "auto and joint are complete on these tiny maps"
        return "limit"
    assert plan.soc == expected, (holes.astype(int).tolist(), starts.tolist(), goals.tolist())
    assert not find_conflicts(plan.paths)
    assert plan.soc >= plan.lower_bound
    return "solved"


# --------------------------------------------------------------------------- the step rule


def test_brute_force_step_rule_is_the_runtime_rule() -> None:
    """A joint step is conflict-free here exactly when grid.resolve_moves carries it out whole."""
    rng = np.random.default_rng(0)
    passable = np.ones((3, 3), dtype=bool)
    for _ in range(1500):
        n = int(rng.integers(2, 5))
        cells = rng.permutation(9)[:n]
        pos = np.stack([cells // 3, cells % 3], axis=1)
        delta = np.array(STEPS)[rng.integers(0, 5, n)]
        target = pos + delta
        if np.any((target < 0) | (target > 2)):
            continue
        new_pos, _, conflict = resolve_moves(pos, delta, np.ones(n, bool), passable, "block")
        ok = valid_joint_step(tuple(map(tuple, pos.tolist())), tuple(map(tuple, target.tolist())))
        assert ok == (not conflict.any() and np.array_equal(new_pos, target))


# --------------------------------------------------------------------------- against brute force


def test_cbs_equals_brute_force_on_2x2_and_3x3() -> None:
    rng = np.random.default_rng(1)
    seen = {"solved": 0, "unsolvable": 0}
    while seen["solved"] < 60:
        inst = random_instance(rng, int(rng.integers(2, 4)), 2, 0.2)
        if inst is not None:
            seen[check_against_brute_force(*inst, method="cbs")] += 1
    assert seen["solved"] == 60


def test_cbs_equals_brute_force_on_4x4_with_2_and_3_agents() -> None:
    rng = np.random.default_rng(2)
    solved = 0
    while solved < 25:
        inst = random_instance(rng, 4, int(rng.integers(2, 4)), 0.15)
        if inst is not None:
            solved += check_against_brute_force(*inst, method="cbs") == "solved"


@pytest.mark.slow
@pytest.mark.parametrize("n_agents", [2, 3, 4])
def test_cbs_equals_brute_force_many(n_agents: int) -> None:
    rng = np.random.default_rng(10 + n_agents)
    seen = {"solved": 0, "unsolvable": 0, "limit": 0}
    while seen["solved"] < 150:
        size = 3 if n_agents == 4 else int(rng.integers(3, 5))  # 4x4 with 4 is too big to brute-force
        inst = random_instance(rng, size, n_agents, 0.2)
        if inst is not None:
            seen[check_against_brute_force(*inst, method="cbs")] += 1
    assert seen["limit"] <= 5, seen  # a few crowded instances take CBS past 4000 nodes


@pytest.mark.parametrize("method", ["auto", "joint"])
def test_auto_and_joint_are_exact_and_prove_unsolvable(method: str) -> None:
    rng = np.random.default_rng(3)
    seen = {"solved": 0, "unsolvable": 0}
    for _ in range(80):
        inst = random_instance(rng, int(rng.integers(2, 5)), 2, 0.25)
        if inst is not None:
            seen[check_against_brute_force(*inst, method=method)] += 1
    assert seen["solved"] > 20 and seen["unsolvable"] > 0


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_cbs_equals_brute_force_property(data: st.DataObject) -> None:
    size = data.draw(st.integers(2, 3))
    holes = np.array(data.draw(st.lists(st.booleans(), min_size=size * size, max_size=size * size)))
    holes = holes.reshape(size, size) & (np.arange(size * size).reshape(size, size) % 3 == 0)
    free = [tuple(c) for c in np.argwhere(~holes).tolist()]
    cells = data.draw(st.permutations(free))
    goals_order = data.draw(st.permutations(free))
    starts, goals = cells[:2], goals_order[:2]
    if any(s == g for s, g in zip(starts, goals, strict=True)):
        return
    check_against_brute_force(holes, np.array(starts), np.array(goals), method="cbs")


# --------------------------------------------------------------------------- hand-built cases


def test_swap_through_a_side_pocket_needs_a_wait() -> None:
    # . . .     two walkers trade ends of a corridor; one ducks into the pocket below the
    # H . H     middle while the other passes: 3 + 4 = 7 steps against 2 + 2 without the other.
    # H H H
    holes = np.array([[0, 0, 0], [1, 0, 1], [1, 1, 1]], dtype=bool)
    plan = solve(holes, [[0, 0], [0, 2]], [[0, 2], [0, 0]], method="cbs")
    assert (plan.soc, plan.lower_bound, plan.needs_wait) == (7, 4, True)
    assert brute_force_soc(holes, [[0, 0], [0, 2]], [[0, 2], [0, 0]]) == 7


def test_parked_goal_makes_the_owner_wait() -> None:
    # walker 1 must pass over walker 0's goal (top middle) before walker 0 parks on it
    holes = np.array([[0, 0, 0], [1, 0, 1], [1, 1, 1]], dtype=bool)
    plan = solve(holes, [[1, 1], [0, 2]], [[0, 1], [0, 0]], method="cbs")
    assert plan.costs == (2, 2) and plan.lower_bound == 3 and plan.needs_wait


def test_following_a_leaving_walker_needs_no_wait() -> None:
    plan = solve(np.zeros((1, 3), bool), [[0, 1], [0, 0]], [[0, 2], [0, 1]], method="cbs")
    assert plan.costs == (1, 1) and not plan.needs_wait


def test_crossing_paths_at_different_times_need_no_wait() -> None:
    plan = solve(np.zeros((3, 3), bool), [[0, 0], [2, 1]], [[0, 2], [1, 1]], method="cbs")
    assert plan.soc == plan.lower_bound == 3 and not plan.needs_wait


def test_plan_positions_run_in_the_runtime_without_conflict() -> None:
    holes = np.array([[0, 0, 0], [1, 0, 1], [1, 1, 1]], dtype=bool)
    plan = solve(holes, [[0, 0], [0, 2]], [[0, 2], [0, 0]], method="cbs")
    pos = plan.positions()
    goals = pos[-1]
    for t in range(1, len(pos)):
        can_move = ~np.all(pos[t - 1] == goals, axis=1)
        new, _, conflict = resolve_moves(pos[t - 1], pos[t] - pos[t - 1], can_move, ~holes, "block")
        assert not conflict.any() and np.array_equal(new, pos[t])
    assert plan.positions(len(pos) + 2).shape == (len(pos) + 2, 2, 2)


def test_corridor_swap_has_no_plan() -> None:
    args = (np.zeros((1, 2), bool), [[0, 0], [0, 1]], [[0, 1], [0, 0]])
    with pytest.raises(UnsolvableError, match="no conflict-free plan exists"):
        solve(*args)
    with pytest.raises(SearchLimitError, match="more than 50 nodes"):
        solve(*args, method="cbs", node_limit=50)


def test_bad_instances_are_refused_with_the_reason() -> None:
    holes = np.array([[0, 1, 0], [0, 1, 0], [0, 1, 0]], dtype=bool)
    with pytest.raises(UnsolvableError, match=r"agent 0: goal \(0, 2\) is cut off"):
        solve(holes, [[0, 0]], [[0, 2]])
    with pytest.raises(UnsolvableError, match=r"starts\[0\] = \[0, 1\] is a hole"):
        solve(holes, [[0, 1]], [[0, 2]])
    with pytest.raises(MapfError, match="agent 0 starts on its goal"):
        solve(holes, [[0, 0]], [[0, 0]])
    with pytest.raises(MapfError, match="starts must be distinct"):
        solve(holes, [[0, 0], [0, 0]], [[1, 0], [2, 0]])
    with pytest.raises(MapfError, match="off the 3x3 lake"):
        solve(holes, [[3, 0]], [[1, 0]])
    with pytest.raises(MapfError, match="unknown method"):
        solve(holes, [[0, 0]], [[1, 0]], method="astar")


def test_search_is_deterministic() -> None:
    rng = np.random.default_rng(5)
    holes, starts, goals = random_instance(rng, 5, 3, 0.1) or (None, None, None)
    assert holes is not None
    first = solve(holes, starts, goals, method="cbs")
    assert solve(holes, starts, goals, method="cbs") == first
