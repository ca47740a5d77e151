"""Score an episode of MAPF-FrozenLake: valid, optimal, and the kind of failure.

``positions`` is the (T + 1, N, 2) trajectory including the starts. Because the env *cancels*
conflicting moves (the walker stays, ``conflict`` is reported), conflicts show in positions
only for an env without blocking; pass the attempted ``moves`` (T, N, 2 deltas; see
``ACTION_DELTAS``) to find cancelled ones, classified as swap (the two walkers tried to trade
cells) or vertex (anything else). The first failure decides the kind; at one step a hole comes
before a vertex conflict before a swap.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from gymwright.mapf.errors import MapfError
from gymwright.mapf.instances import Instance

SUCCESS, HOLE, VERTEX, SWAP, TIMEOUT, NOT_OPTIMAL = (
    "success", "hole", "vertex_conflict", "swap_conflict", "timeout", "not_optimal",
)
KINDS: tuple[str, ...] = (SUCCESS, HOLE, VERTEX, SWAP, TIMEOUT, NOT_OPTIMAL)
ACTION_DELTAS: dict[str, tuple[int, int]] = {
    "left": (0, -1), "down": (1, 0), "right": (0, 1), "up": (-1, 0), "wait": (0, 0),
}
"""The deltas of the spec's walker actions (``mapf_frozenlake.yaml``, in its order)."""


class EpisodeScore(NamedTuple):
    valid: bool
    optimal: bool
    kind: str


def score_episode(
    instance: Instance, positions: np.ndarray, moves: np.ndarray | None = None
) -> EpisodeScore:
    """Valid = every agent on its goal, none in a hole, no conflict; optimal = valid and SoC equal
    to the optimum. ``kind`` is one of ``KINDS``."""
    pos = _checked(instance, positions, moves)
    done = np.zeros(instance.n_agents, dtype=bool)
    arrival = np.zeros(instance.n_agents, dtype=np.int64)
    for t in range(1, len(pos)):
        kind = _step_failure(instance, pos[t - 1], pos[t], done, None if moves is None else moves[t - 1])
        if kind:
            return EpisodeScore(False, False, kind)
        arrived = ~done & np.all(pos[t] == instance.goals, axis=1)
        arrival[arrived], done = t, done | arrived
    if not done.all():
        return EpisodeScore(False, False, TIMEOUT)
    soc = int(arrival.sum())
    if soc < instance.optimal_soc:
        raise MapfError(f"a valid episode with SoC {soc} beats the stored optimum {instance.optimal_soc}",
                        hint="the trajectory does not belong to this instance, or the pool is stale")
    return EpisodeScore(True, soc == instance.optimal_soc, SUCCESS if soc == instance.optimal_soc else NOT_OPTIMAL)


def _checked(instance: Instance, positions: np.ndarray, moves: np.ndarray | None) -> np.ndarray:
    pos = np.asarray(positions, dtype=np.int64)
    n = instance.n_agents
    if pos.ndim != 3 or pos.shape[1:] != (n, 2) or len(pos) < 1:
        raise MapfError(f"positions must have shape (T + 1, {n}, 2), got {pos.shape}", path="positions")
    if not np.array_equal(pos[0], instance.starts):
        raise MapfError("positions[0] are not the instance's starts", path="positions")
    if moves is not None and np.asarray(moves).shape != (len(pos) - 1, n, 2):
        raise MapfError(f"moves must have shape ({len(pos) - 1}, {n}, 2), got {np.shape(moves)}", path="moves")
    if np.any(np.abs(np.diff(pos, axis=0)).sum(axis=2) > 1):
        raise MapfError("a walker moved more than one cell in a step", path="positions")
    return pos


def _step_failure(
    instance: Instance, before: np.ndarray, after: np.ndarray, done: np.ndarray,
    moves: np.ndarray | None,
) -> str | None:
    """The failure kind of one step, or None."""
    if np.any(~done & instance.holes[after[:, 0], after[:, 1]]):
        return HOLE
    if np.any(done & np.any(after != before, axis=1)):
        raise MapfError("a walker left its goal after arriving; the env parks it there", path="positions")
    n = len(after)
    same = np.all(after[:, None] == after[None, :], axis=2) & ~np.eye(n, dtype=bool)
    if same.any():
        return VERTEX
    into = np.all(after[:, None] == before[None, :], axis=2) & ~np.eye(n, dtype=bool)
    moved = np.any(after != before, axis=1)
    if np.any(into & into.T & moved[:, None]):
        return SWAP
    return None if moves is None else _cancelled(instance, before, after, done, np.asarray(moves))


def _cancelled(
    instance: Instance, before: np.ndarray, after: np.ndarray, done: np.ndarray, moves: np.ndarray
) -> str | None:
    """The kind of a move the env cancelled because of another walker, or None."""
    size = instance.size
    target = before + moves
    inside = np.all((target >= 0) & (target < size), axis=1)
    trying = ~done & np.any(moves != 0, axis=1) & inside
    stopped = trying & np.all(after == before, axis=1)
    if not stopped.any():
        return None
    n = len(before)
    into = np.all(target[:, None] == before[None, :], axis=2) & ~np.eye(n, dtype=bool)
    swap = into & into.T & trying[:, None] & trying[None, :]
    return SWAP if np.any(swap[stopped]) else VERTEX
