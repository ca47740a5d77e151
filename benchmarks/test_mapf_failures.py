"""`mapf_failures.py`: each failed episode gets the outcome its docstring names, on hand-built states.

Run with `pytest benchmarks/test_mapf_failures.py` (not part of the main suite).
"""

from __future__ import annotations

from types import SimpleNamespace

import mapf_failures as mf
import numpy as np

# a 3x3 lake, holes at (0, 1) and (2, 1): the middle row is the only way from column 0 to column 2
HOLES = np.array([[0, 1, 0], [0, 0, 0], [0, 1, 0]], dtype=bool)


def state(pos: list, goal: list, reached: list, fell: list | None = None, clashed: list | None = None) -> SimpleNamespace:
    n = len(pos)
    return SimpleNamespace(pos=np.array(pos), goal=np.array(goal), reached=np.array(reached),
                           fell=np.array(fell or [False] * n), clashed=np.array(clashed or [False] * n))


def test_a_route_exists_around_holes_and_not_through_a_parked_walker() -> None:
    assert mf.has_path(HOLES, (0, 0), (0, 2), set())
    assert not mf.has_path(HOLES, (0, 0), (0, 2), {(1, 1)})  # parked in the only gap
    assert mf.has_path(HOLES, (0, 0), (1, 0), {(1, 1)})


def test_a_walker_parked_in_the_only_gap_is_a_timeout_with_no_path_left() -> None:
    v = state(pos=[[0, 0], [1, 1]], goal=[[0, 2], [1, 1]], reached=[False, True])
    tail = np.array([[[0, 0], [1, 1]], [[1, 0], [1, 1]], [[0, 0], [1, 1]]])
    assert mf.outcome(v, HOLES, tail) == "timeout, no path left"


def test_with_a_path_left_moving_is_wandering_and_standing_still_is_stuck() -> None:
    v = state(pos=[[0, 0], [2, 2]], goal=[[0, 2], [2, 2]], reached=[False, True])
    moving = np.array([[[0, 0], [2, 2]], [[1, 0], [2, 2]], [[0, 0], [2, 2]]])
    still = np.array([[[0, 0], [2, 2]]] * 3)
    assert mf.outcome(v, HOLES, moving) == "timeout, wandering"
    assert mf.outcome(v, HOLES, still) == "timeout, stuck"


def test_valid_hole_and_conflict_come_first() -> None:
    tail = np.zeros((2, 2, 2), dtype=int)
    assert mf.outcome(state([[0, 2], [2, 2]], [[0, 2], [2, 2]], [True, True]), HOLES, tail) == "valid"
    assert mf.outcome(state([[0, 1], [2, 2]], [[0, 2], [2, 2]], [False, True], fell=[True, False]),
                      HOLES, tail) == "hole"
    assert mf.outcome(state([[0, 2], [2, 2]], [[0, 2], [2, 2]], [True, True], clashed=[True, False]),
                      HOLES, tail) == "conflict"


def test_play_cell_sorts_every_episode_of_a_real_cell_into_one_outcome() -> None:
    from gymwright.train import random_legal_policy

    cell = next(iter(mf.engineer.EXPERIMENTS["in_distribution"].held_out.values()))
    shares = mf.play_cell(random_legal_policy(0), cell, episodes=6)
    assert set(shares) == set(mf.OUTCOMES) and abs(sum(shares.values()) - 1.0) < 1e-9
    assert shares["valid"] < 1.0  # random walkers on a 5x5 lake with holes fail
