"""score_episode: one case per failure kind, and the trajectories it refuses."""

from __future__ import annotations

import numpy as np
import pytest

from gymwright.mapf import KINDS, MapfError, score_episode, solve_instance

# . . .     walker 0: (0,0) -> (0,2), walker 1: (0,2) -> (0,0); optimum 7 (one ducks below)
# H . H
# H H H
HOLES = np.array([[0, 0, 0], [1, 0, 1], [1, 1, 1]], dtype=bool)
INST = solve_instance(HOLES, np.array([[0, 0], [0, 2]]), np.array([[0, 2], [0, 0]]))


def traj(*steps: list[list[int]]) -> np.ndarray:
    return np.array(steps, dtype=np.int64)


def test_every_kind_is_known() -> None:
    assert set(KINDS) == {"success", "hole", "vertex_conflict", "swap_conflict", "timeout", "not_optimal"}


def test_the_optimal_plan_succeeds() -> None:
    assert score_episode(INST, INST.plan) == (True, True, "success")


def test_a_slower_valid_plan_is_not_optimal() -> None:
    late = np.concatenate([INST.plan[:1], INST.plan])  # everyone waits one step first
    assert score_episode(INST, late) == (True, False, "not_optimal")


def test_cut_short_is_a_timeout() -> None:
    assert score_episode(INST, INST.plan[:3]) == (False, False, "timeout")


def test_walking_into_a_hole() -> None:
    assert score_episode(INST, traj([[0, 0], [0, 2]], [[0, 0], [0, 1]], [[0, 0], [1, 1]],
                                    [[1, 0], [1, 1]])).kind == "hole"


def test_conflicts_seen_in_positions() -> None:
    meet = traj([[0, 0], [0, 2]], [[0, 1], [0, 1]])
    assert score_episode(INST, meet) == (False, False, "vertex_conflict")
    trade = traj([[0, 0], [0, 2]], [[0, 1], [0, 2]], [[0, 1], [0, 1]])
    assert score_episode(INST, trade).kind == "vertex_conflict"
    swap = traj([[0, 0], [0, 2]], [[0, 0], [0, 1]], [[0, 1], [0, 0]])
    assert score_episode(INST, swap).kind == "swap_conflict"


def test_conflicts_the_env_cancelled_are_found_from_the_moves() -> None:
    stay = traj([[0, 0], [0, 2]], [[0, 0], [0, 2]])
    both_right_left = np.array([[[0, 1], [0, -1]]])  # both try the middle: vertex
    assert score_episode(INST, stay, both_right_left).kind == "vertex_conflict"
    near = traj([[0, 0], [0, 2]], [[0, 1], [0, 2]], [[0, 1], [0, 2]])
    moves = np.array([[[0, 1], [0, 0]], [[0, 1], [0, -1]]])  # then they try to trade
    assert score_episode(INST, near, moves).kind == "swap_conflict"
    off_the_lake = np.array([[[-1, 0], [0, 0]]])  # not a conflict, just a wasted step
    assert score_episode(INST, stay, off_the_lake).kind == "timeout"


def test_trajectories_the_env_cannot_make_are_refused() -> None:
    with pytest.raises(MapfError, match="positions must have shape"):
        score_episode(INST, np.zeros((3, 3, 2), dtype=np.int64))
    with pytest.raises(MapfError, match="not the instance's starts"):
        score_episode(INST, traj([[0, 1], [0, 2]]))
    with pytest.raises(MapfError, match="more than one cell"):
        score_episode(INST, traj([[0, 0], [0, 2]], [[0, 2], [0, 2]]))
    with pytest.raises(MapfError, match="moves must have shape"):
        score_episode(INST, INST.plan, np.zeros((1, 2, 2)))
