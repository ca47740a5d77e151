"""MAPF-FrozenLake as a compiled env with `grid.solve`: layouts from the CBS pools, optimal plans
replayed through both backends score valid and optimal, detours do not, and the checker names
every misuse of `solve`."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch
from gymwright.errors import SpecError
from gymwright.mapf import PoolConfig, solve
from gymwright.mapf.lazy import LazyPool, solved_pool
from gymwright.spec.loader import LIBRARY_DIR

BASE = yaml.safe_load((LIBRARY_DIR / "mapf_frozenlake.yaml").read_text())
ACTION = {(0, -1): 0, (1, 0): 1, (0, 1): 2, (-1, 0): 3, (0, 0): 4}  # the walker's actions, in order
PARAMS = {"size": 4, "n_agents": 2, "wait_ratio": 0.5, "layout_pool": 40}


def replay(env, moves: list[dict[str, int]]) -> dict[str, float]:
    infos: dict = {}
    for step in moves:
        acting = {a: x for a, x in step.items() if a in env.agents}
        _, _, term, trunc, infos = env.step(acting)
        if all(term.values()) or all(trunc.values()):
            break
    return next(iter(infos.values()))["metrics"]


def plan_moves(env, delay: int = 0) -> tuple[list[dict[str, int]], int]:
    """The optimal plan of the env's current layout as joint actions (after `delay` waits)."""
    plan = solve(env.v.tiles == 1, env.v.pos, env.v.goal)
    pos = plan.positions()
    moves = [{f"walker_{i}": ACTION[(0, 0)] for i in range(len(pos[0]))} for _ in range(delay)]
    for t in range(1, len(pos)):
        d = pos[t] - pos[t - 1]
        moves.append({f"walker_{i}": ACTION[tuple(int(x) for x in d[i])] for i in range(len(d))})
    return moves, plan.soc


@pytest.mark.parametrize("seed", range(6))
def test_the_optimal_plan_scores_valid_and_optimal_and_a_late_start_only_valid(seed: int) -> None:
    env = compile_spec("mapf_frozenlake", PARAMS).parallel_env(**PARAMS)
    env.reset(seed=seed)
    moves, soc = plan_moves(env)
    assert soc == int(env.v.optimal_cost), "the env's optimum is the solver's"
    metrics = replay(env, moves)
    assert metrics["valid"] == 1.0 and metrics["optimal"] == 1.0 and metrics["conflicts"] == 0.0
    env.reset(seed=seed)
    late, _ = plan_moves(env, delay=1)
    metrics = replay(env, late)
    assert metrics["valid"] == 1.0 and metrics["optimal"] == 0.0


def test_a_blocked_move_makes_the_episode_invalid() -> None:
    env = compile_spec("mapf_frozenlake", PARAMS).parallel_env(**PARAMS)
    for seed in range(50):  # find a layout whose walkers start side by side, and walk one into the other
        env.reset(seed=seed)
        d = env.v.pos[1] - env.v.pos[0]
        if abs(d).sum() == 1:
            break
    else:
        pytest.skip("no adjacent starts in 50 layouts")
    moves, _ = plan_moves(env)
    bump = {"walker_0": ACTION[tuple(int(x) for x in d)], "walker_1": ACTION[(0, 0)]}
    env.reset(seed=seed)
    metrics = replay(env, [bump, *plan_moves(env)[0]])
    assert metrics["conflicts"] >= 1 and metrics["valid"] == 0.0 and metrics["optimal"] == 0.0


def test_both_backends_draw_the_same_solved_layouts() -> None:
    env = compile_spec("mapf_frozenlake", PARAMS).parallel_env(**PARAMS)
    benv = compile_batch("mapf_frozenlake", PARAMS, batch_size=8)
    benv.reset(seed=100)
    for b in range(8):
        env.reset(seed=100 + b)
        assert np.array_equal(env.v.tiles, benv.v.tiles[b]) and np.array_equal(env.v.pos, benv.v.pos[b])
        assert np.array_equal(env.v.goal, benv.v.goal[b]) and env.v.optimal_cost == benv.v.optimal_cost[b]


def test_another_layout_seed_draws_from_another_pool_in_both_backends() -> None:
    """`layout_seed` (grid.solve.seed) picks an independent family of pools: held-out instances
    kept apart from the training ones. Both backends draw its layouts alike."""
    def layouts(seed: int) -> set[bytes]:
        params = {**PARAMS, "layout_pool": 12, "layout_seed": seed}
        env = compile_spec("mapf_frozenlake", params).parallel_env(**params)
        benv = compile_batch("mapf_frozenlake", params, batch_size=6)
        benv.reset(seed=100)
        drawn = set()
        for b in range(6):
            env.reset(seed=100 + b)
            assert np.array_equal(env.v.tiles, benv.v.tiles[b]) and np.array_equal(env.v.goal, benv.v.goal[b])
            assert env.unwrapped.solved_config()[-1] == seed
            drawn.add(env.v.tiles.tobytes() + env.v.pos.tobytes() + env.v.goal.tobytes())
        return drawn

    base, other = layouts(0), layouts(9)
    assert base == layouts(0)  # the same family: the same instances
    assert not base & other  # another family: none of them (4x4 lakes, 2 walkers: a chance match is rare)
    pool = solved_pool(PoolConfig(4, 2, 0.2, 0.5), 12, seed=9)
    assert pool.ready[:].any()  # what the env drew came from the seed-9 pool


def test_the_pool_has_the_wait_share_asked_for_whatever_the_order_of_draws(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GYMWRIGHT_CACHE", str(tmp_path))  # every slot solved here, none read from a cache
    config = PoolConfig(4, 2, 0.2, 0.25)
    a = LazyPool(config, 20, seed=7)
    a.take(np.arange(20))
    assert a.needs_wait.sum() == 5
    fresh = LazyPool(config, 20, seed=8)  # another seed, drawn backwards, is still exact
    fresh.take(np.arange(19, -1, -1))
    assert fresh.needs_wait.sum() == 5
    for written in tmp_path.rglob("lazy-*.npz"):
        written.unlink()  # so `again` solves its slots itself
    again = LazyPool(config, 20, seed=7)  # the slots do not depend on the order of the draws
    assert not again.ready.any()
    again.take(np.array([13, 2]))
    assert np.array_equal(again.holes[13], a.holes[13]) and np.array_equal(again.goals[2], a.goals[2])


def with_grid(**changes) -> dict:
    spec = copy.deepcopy(BASE)
    spec["probes"] = []
    for key, value in changes.items():
        if value is None:
            spec["grid"].pop(key, None)
        else:
            spec["grid"][key] = value
    return spec


@pytest.mark.parametrize("changes, path, words", [
    ({"height": 5}, "grid.solve", "square grid"),
    ({"collision": "none"}, "grid.solve", "collision: block"),
    ({"goals": [[0, 0], [1, 1]]}, "grid.solve", "grid.goals"),
    ({"solve": {"wait_ratio": 1.5}}, "grid.solve.wait_ratio", "0..1"),
    ({"solve": {"wait_ratio": "t"}}, "grid.solve.wait_ratio", "constant"),
    ({"pool": 0}, "grid.pool", "at least 1"),
    ({"solve": {"wait_ratio": 0.5, "seed": 0.5}}, "grid.solve.seed", "constant int"),
    ({"solve": {"wait_ratio": 0.5, "seed": -1}}, "grid.solve.seed", "0..2147483647"),
    ({"solve": {"wait_ratio": 0.5, "seed": "t"}}, "grid.solve.seed", "constant int"),
])
def test_the_checker_names_each_misuse_of_solve(changes: dict, path: str, words: str) -> None:
    with pytest.raises(SpecError) as err:
        compile_spec(with_grid(**changes))
    assert path in str(err.value) and words in str(err.value)


def test_a_second_generated_tile_kind_is_refused() -> None:
    spec = with_grid()
    spec["grid"]["tiles"]["crack"] = {"char": "c", "density": 0.1}
    with pytest.raises(SpecError, match="grid.tiles.crack.density.*only the floor and the holes"):
        compile_spec(spec)


def test_a_config_without_solvable_layouts_is_a_clear_error_at_reset() -> None:
    from gymwright.mapf import MapfError

    params = {"size": 3, "n_agents": 5, "hole_density": 0.6}
    env = compile_spec("mapf_frozenlake", params).parallel_env(**params)
    with pytest.raises(MapfError) as err:
        env.reset(seed=0)
    assert err.value.path == "grid.solve" and "4 free cells, too few for 5 agents" in str(err.value)
