"""The throughput harness: its samplers draw only legal actions, uniformly; its runners count right.

Run with `pytest benchmarks/test_throughput.py` (not part of the main suite).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import throughput
from throughput import BatchRunner, Budget, ParallelRunner, random_legal, random_legal_batch


def _random_masks(rng: np.random.Generator, shape: tuple[int, int, int]) -> np.ndarray:
    masks = (rng.random(shape) < 0.4).astype(np.int8)
    masks[0, 0] = 0  # an agent with no legal action
    return masks


@pytest.mark.parametrize("n_actions", [1, 7, throughput.TABLE_MAX_ACTIONS + 4])  # table; cumsum
def test_batch_sampler_draws_legal_actions_uniformly(n_actions: int) -> None:
    rng = np.random.default_rng(0)
    masks = _random_masks(rng, (64, 3, n_actions))
    counts = np.zeros(masks.shape, dtype=np.int64)
    draws = 4000
    b, n = np.indices(masks.shape[:2])
    for _ in range(draws):
        actions = random_legal_batch(masks, rng)
        assert actions.dtype == np.int64 and actions.shape == (64, 3)
        counts[b, n, actions] += 1
    n_legal = masks.sum(axis=-1)
    assert np.all(counts[n_legal == 0][:, 0] == draws)  # none legal: 0, which the env ignores
    some = n_legal > 0
    assert np.all(counts[some][masks[some] == 0] == 0)
    share = counts[some] * n_legal[some][:, None] / draws  # 1 for each legal action if uniform
    legal_share = share[masks[some] == 1]
    assert legal_share.min() > 0.8 and legal_share.max() < 1.2


def test_per_agent_sampler_draws_legal_actions_uniformly() -> None:
    rng = np.random.default_rng(1)
    infos = {"a": {"action_mask": np.array([0, 1, 0, 1, 1], dtype=np.int8)},
             "b": {"action_mask": np.zeros(5, dtype=np.int8)}}
    seen = np.zeros(5, dtype=np.int64)
    for _ in range(3000):
        actions = random_legal(infos, ["a", "b"], rng)
        assert actions["b"] == 0
        seen[actions["a"]] += 1
    assert seen[[0, 2]].sum() == 0
    assert np.all(np.abs(seen[[1, 3, 4]] - 1000) < 120)


class StubBatchEnv:
    """The batch interface with random masks; it checks that every action is legal now."""

    def __init__(self, batch_size: int, n_agents: int = 3, n_actions: int = 6) -> None:
        self.rng = np.random.default_rng(5)
        self.shape = (batch_size, n_agents, n_actions)
        self.calls = 0

    def _new_masks(self) -> None:
        self.masks = (self.rng.random(self.shape) < 0.5).astype(np.int8)
        self.masks[..., -1] = 1

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        self._new_masks()
        return np.zeros(self.shape[:2] + (4,), dtype=np.float32), self.masks

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        assert actions.shape == self.shape[:2] and actions.dtype == np.int64
        legal = np.take_along_axis(self.masks, actions[..., None], axis=-1)
        assert legal.all(), "the runner used stale or wrong masks"
        self.calls += 1
        self._new_masks()
        zeros = np.zeros(self.shape[:2])
        return None, zeros, zeros.astype(bool), zeros.astype(bool), {}


def test_batch_runner_counts_agent_steps_and_uses_current_masks() -> None:
    stub = StubBatchEnv(batch_size=16)
    runner = BatchRunner(stub)
    assert runner.run(25) == 25 * 16 * 3
    assert stub.calls == 25


def test_parallel_runner_resets_finished_episodes_and_counts_agent_steps() -> None:
    game = next(g for g in throughput.GAMES if g.key == "cake")
    env = game.hand()
    runner = ParallelRunner(env)
    assert runner.run(500) == 500 * 2  # episodes last at most 20 steps: many resets


def test_budget_batch_calls() -> None:
    b = Budget(repeats=1, steps=100, batch_env_steps=10_000, min_batch_calls=5)
    assert [b.batch_calls(s) for s in (1, 64, 1024, 8192)] == [100, 100, 10, 5]


def test_json_output_has_the_figures(capsys: pytest.CaptureFixture[str]) -> None:
    throughput.main(["--json", "--games", "cake", "--batch-sizes", "1", "4",
                     "--repeats", "1", "--steps", "30"])
    out = json.loads(capsys.readouterr().out)
    cake = out["cake"]
    assert cake["hand"] > 0 and cake["python"] > 0
    assert cake["python_vs_hand"] == pytest.approx(cake["python"] / cake["hand"])
    if "_notes" in out or "batch_error" in cake:  # batch backend missing or failing: said so
        assert cake["batch"] == {}
    else:
        assert set(cake["batch"]) == set(cake["batch_vs_hand"]) == {"1", "4"}
        assert cake["batch_peak_memory"]["batch_size"] == 4


def test_cpu_clock_is_recorded_and_used_for_every_backend(capsys: pytest.CaptureFixture[str]) -> None:
    throughput.main(["--json", "--games", "cake", "--batch-sizes", "2", "--repeats", "1",
                     "--steps", "20", "--clock", "cpu"])
    out = json.loads(capsys.readouterr().out)
    assert out["_setup"]["clock"] == "cpu"
    assert out["cake"]["hand"] > 0 and out["cake"]["python"] > 0
    assert throughput.make_budget(throughput.parse_args(["--clock", "cpu", "--repeats", "3"])).clock == "cpu"


def _recording_runs(names: list[str]) -> tuple[dict[str, Callable[[int], int]], list[tuple[str, int]]]:
    """Runs that record (name, amount) of each call, in order, and report the amount done."""
    order: list[tuple[str, int]] = []

    def run_of(name: str) -> Callable[[int], int]:
        def run(amount: int) -> int:
            order.append((name, amount))
            return amount
        return run

    return {name: run_of(name) for name in names}, order


def test_hand_and_python_take_turns_within_each_repeat() -> None:
    runs, order = _recording_runs(["hand", "python"])
    budget = throughput.Budget(repeats=3, steps=50, batch_env_steps=0, min_batch_calls=1)
    rates = throughput.timed_rates(runs, 50, budget)
    assert order[:2] == [("hand", 10), ("python", 10)]  # the warm-ups (20 % of a repeat), then the repeats
    assert order[2:] == [("hand", 50), ("python", 50)] * 3
    assert set(rates) == {"hand", "python"} and all(r > 0 for r in rates.values())


def test_runs_with_their_own_amounts_take_turns_within_each_repeat() -> None:
    runs, order = _recording_runs(["hand", "batch B=8"])
    budget = throughput.Budget(repeats=2, steps=50, batch_env_steps=0, min_batch_calls=1)
    throughput.timed_rates(runs, {"hand": 50, "batch B=8": 10}, budget)
    assert order == [("hand", 10), ("batch B=8", 2)] + [("hand", 50), ("batch B=8", 10)] * 2


def test_a_game_times_hand_python_and_every_batch_size_in_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_game interleaves every backend of the game, the batch sizes with hand and python."""
    seen: list[list[str]] = []
    real = throughput.timed_rates

    def spy(runs: dict, amount: Any, budget: Any) -> dict[str, float]:
        seen.append(list(runs))
        return real(runs, amount, budget)

    monkeypatch.setattr(throughput, "timed_rates", spy)
    compile_batch, _ = throughput.load_compile_batch()
    budget = throughput.Budget(repeats=1, steps=20, batch_env_steps=40, min_batch_calls=2)
    cake = next(g for g in throughput.GAMES if g.key == "cake")
    result = throughput.run_game(cake, budget, (1, 4), compile_batch, lambda _: None)
    assert seen == [["hand", "python", "batch B=1", "batch B=4"]]
    assert set(result.batch) == {1, 4} and all(r > 0 for r in result.batch.values()) and result.hand > 0


def test_a_failing_batch_backend_is_reported_and_hand_and_python_still_run() -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no batch today")

    budget = throughput.Budget(repeats=1, steps=20, batch_env_steps=40, min_batch_calls=2)
    cake = next(g for g in throughput.GAMES if g.key == "cake")
    result = throughput.run_game(cake, budget, (4,), broken, lambda _: None)
    assert result.batch_error == "RuntimeError: no batch today" and not result.batch
    assert result.hand > 0 and result.python > 0


def test_the_layouts_a_grid_solve_env_draws_are_solved_before_any_timing(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a cold disk cache, resets would run CBS inside the timed loops: a fresh machine's first
    full run measured the Python backend's MAPF at 0.35x the hand-written env, 0.93x once solved."""
    from gymwright.compile import compile_spec
    from gymwright.mapf.bake import pool_of

    monkeypatch.setenv("GYMWRIGHT_CACHE", str(tmp_path))
    env = compile_spec("mapf_frozenlake", {"size": 4, "n_agents": 2, "layout_pool": 37}).parallel_env()
    pool = pool_of(env.unwrapped)
    assert not pool.ready.all()
    throughput.solve_layouts(env)
    assert pool.ready.all()
    assert list((tmp_path / "mapf").glob("lazy-*.npz"))  # whole, so cached for the next run
    throughput.solve_layouts(compile_spec("cake_negotiation", {}).parallel_env())  # no grid: nothing to do
