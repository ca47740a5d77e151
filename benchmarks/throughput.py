"""Throughput of the environment backends: hand-written vs gymwright Python vs gymwright batch.

For each game (cake_negotiation, mapf_frozenlake 8x8 with 4 agents, public_goods with 8 agents)
one run measures side by side:

  hand    the hand-written PettingZoo ParallelEnv in benchmarks/handwritten/
  python  gymwright's Python backend, compile_spec(name, params).parallel_env()
  batch   gymwright's batch backend, compile_batch(name, params, batch_size=B), B = 1 ... 8192
          (skipped with a note while gymwright.compile.batch is not importable)

Policy: uniformly random legal actions, sampled inside the timed loop. hand/python: per agent
from infos[agent]["action_mask"] with one numpy Generator draw per step; batch: vectorized, the
k-th legal action of each mask row looked up by the row's bit code (random_legal_batch).
Finished episodes are reset inside the timed loop (hand/python: reset(); batch: its own
auto-reset).

Figure: agent-steps per second = env steps x agents per env / wall seconds, where an env step is
one step() of one environment copy (a batch step counts B) and agents per env is the fixed
number of agents (cake 2, of which only the active bargainer has legal actions; mapf 4; public
goods 8). Each figure is the median of R timed repeats of a fixed step budget, after a warm-up;
every backend of a game takes its turn within each repeat (interleaved: hand, python, then each
batch size), so a change of the machine's load reaches them alike and each ratio to the
hand-written env is measured in the same minutes.

    python benchmarks/throughput.py            # full run (5 repeats)
    python benchmarks/throughput.py --quick    # 2 repeats, small budgets (under a minute)
    python benchmarks/throughput.py --json     # the same figures as JSON
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy is imported: one thread, like one env worker

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import functools  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from handwritten import cake, mapf, public_goods  # noqa: E402

from gymwright.compile import compile_spec  # noqa: E402

BATCH_SIZES: tuple[int, ...] = (1, 64, 1024, 8192)


@dataclass(frozen=True)
class Game:
    """One benchmark game: the library spec, its params and the hand-written twin."""

    key: str
    spec: str
    params: dict[str, Any]
    hand: Callable[[], Any]


GAMES: tuple[Game, ...] = (
    Game("cake", "cake_negotiation", {}, cake.parallel_env),
    Game("mapf", "mapf_frozenlake", {"size": 8, "n_agents": 4},
         lambda: mapf.parallel_env(size=8, n_agents=4)),
    Game("public_goods", "public_goods", {}, public_goods.parallel_env),
)


@dataclass(frozen=True)
class Budget:
    """How much each measurement runs."""

    repeats: int
    steps: int  # env steps per timed repeat for hand / python
    batch_env_steps: int  # env-copy steps per timed repeat for batch (calls = this / B) ...
    min_batch_calls: int  # ... but at least this many step() calls and at most `steps`
    warmup: float = 0.2  # warm-up budget as a share of one repeat
    clock: str = "wall"  # "wall": elapsed seconds; "cpu": this process's CPU seconds (see CLOCKS)

    @classmethod
    def full(cls) -> Budget:
        return cls(repeats=5, steps=20_000, batch_env_steps=400_000, min_batch_calls=20)

    @classmethod
    def quick(cls) -> Budget:
        return cls(repeats=2, steps=2_000, batch_env_steps=20_000, min_batch_calls=4)

    def batch_calls(self, batch_size: int) -> int:
        calls = min(self.steps, math.ceil(self.batch_env_steps / batch_size))
        return max(self.min_batch_calls, calls)


# --------------------------------------------------------------------------- policies


def random_legal(infos: dict[str, dict], agents: list[str], rng: np.random.Generator) -> dict:
    """One uniformly random legal action per agent (0 for an agent with none: it is ignored)."""
    u = rng.random(len(agents))
    actions = {}
    for k, agent in enumerate(agents):
        legal = infos[agent]["action_mask"].nonzero()[0]
        actions[agent] = int(legal[int(u[k] * len(legal))]) if len(legal) else 0
    return actions


TABLE_MAX_ACTIONS = 16  # up to this many actions the batch sampler looks its pick up in a table


@functools.cache
def legal_tables(n_actions: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every mask row as a bit code (bit a = action a legal): the count of legal actions and
    the k-th legal action, flat at code * n_actions + k (0 for a row with none); and the bit
    weights (float32, exact up to 2**24) that turn a mask row into its code."""
    codes = np.arange(2**n_actions)
    legal = (codes[:, None] >> np.arange(n_actions)) & 1
    kth = np.zeros((2**n_actions, n_actions), dtype=np.int64)
    rows, cols = np.nonzero(legal)  # row-major: each code's legal actions in increasing order
    kth[rows, np.cumsum(legal, axis=1)[rows, cols] - 1] = cols
    weights = (2.0 ** np.arange(n_actions)).astype(np.float32)
    return legal.sum(axis=1).astype(np.float64), kth.reshape(-1), weights


def random_legal_batch(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Uniformly random legal actions int64 [B, N] from masks [B, N, A] (0 where none is legal).

    Up to TABLE_MAX_ACTIONS actions: each mask row becomes a bit code (one float32
    matrix-vector product over all B * N rows at once: numpy's matmul of a 3-d stack against a
    vector makes one BLAS call per copy, several times slower), then the k = floor(u * legal
    count)-th legal action of that code is looked up in `legal_tables` (numpy reduces a short
    last axis row by row, so a cumulative sum over it costs several times more). Beyond that,
    the first index whose cumulative mask count exceeds u * legal count.
    """
    n_actions = masks.shape[-1]
    if n_actions > TABLE_MAX_ACTIONS:
        counts = np.cumsum(masks, axis=-1, dtype=np.int32)
        r = rng.random(counts.shape[:-1] + (1,)) * counts[..., -1:]
        return (counts > r).argmax(axis=-1).astype(np.int64, copy=False)
    count, kth, weights = legal_tables(n_actions)
    rows = masks.reshape(-1, n_actions).astype(np.float32)
    code = (rows @ weights).astype(np.intp).reshape(masks.shape[:-1])
    k = (rng.random(code.shape) * count[code]).astype(np.intp)
    code *= n_actions
    code += k
    return kth[code]


# --------------------------------------------------------------------------- runners


class ParallelRunner:
    """Steps one PettingZoo ParallelEnv with random legal actions, resetting finished episodes."""

    def __init__(self, env: Any, seed: int = 0) -> None:
        self.env = env
        self.rng = np.random.default_rng(seed)
        self.n_agents = len(env.possible_agents)
        _, self.infos = env.reset(seed=seed)

    def run(self, steps: int) -> int:
        """Take `steps` env steps; return the agent-steps taken."""
        env, rng, infos = self.env, self.rng, self.infos
        for _ in range(steps):
            if not env.agents:
                _, infos = env.reset()
            _, _, _, _, infos = env.step(random_legal(infos, env.agents, rng))
        self.infos = infos
        return steps * self.n_agents


class BatchRunner:
    """Steps a batch env [B, N] with vectorized random legal actions (it resets finished copies)."""

    def __init__(self, benv: Any, seed: int = 0) -> None:
        self.benv = benv
        self.rng = np.random.default_rng(seed)
        _, masks = benv.reset(seed=seed)
        self.masks = np.asarray(masks)
        self.batch_size, self.n_agents = self.masks.shape[:2]

    def run(self, calls: int) -> int:
        """Make `calls` batch step() calls; return the agent-steps taken."""
        benv, rng, masks = self.benv, self.rng, self.masks
        for _ in range(calls):
            benv.step(random_legal_batch(masks, rng))
            masks = benv.masks
        self.masks = masks
        return calls * self.batch_size * self.n_agents


CLOCKS: dict[str, Callable[[], float]] = {
    "wall": time.perf_counter,  # what a user waits; moves with other work on a shared machine
    "cpu": time.process_time,  # CPU seconds of this (single-threaded) process: steadier there
}


def timed_rates(runs: dict[str, Callable[[int], int]], amount: int | dict[str, int],
                budget: Budget) -> dict[str, float]:
    """Median agent-steps/s of `budget.repeats` timed runs of each `run(amount)`, after a warm-up,
    interleaved: each repeat times every run once, in turn, so a change of the machine's load
    between repeats reaches every run alike (their ratio is steadier than two blocks timed one
    after the other). `amount`: one for every run, or one per run."""
    amounts = amount if isinstance(amount, dict) else dict.fromkeys(runs, amount)
    clock = CLOCKS[budget.clock]
    for name, run in runs.items():
        run(max(1, int(amounts[name] * budget.warmup)))
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(budget.repeats):
        for name, run in runs.items():
            gc.collect()
            start = clock()
            done = run(amounts[name])
            rates[name].append(done / (clock() - start))
    return {name: statistics.median(r) for name, r in rates.items()}


# --------------------------------------------------------------------------- backends


def load_compile_batch() -> tuple[Callable[..., Any] | None, str]:
    """gymwright's compile_batch, or None and the reason it is skipped."""
    try:
        from gymwright.compile.batch import compile_batch
    except ImportError as exc:
        return None, f"batch backend skipped: gymwright.compile.batch is not importable ({exc})"
    return compile_batch, ""


def solve_layouts(env: Any) -> None:
    """Every layout a `grid.solve` env draws from, solved before any timing: on a machine whose disk
    cache lacks the pool, resets would otherwise run CBS inside the timed loops (python and batch
    alike; the process keeps the pool, and caches it on disk once whole)."""
    if hasattr(env.unwrapped, "solved_config"):
        from gymwright.mapf.bake import pool_of

        pool_of(env.unwrapped).whole()


def hand_and_python_runs(game: Game, budget: Budget) -> tuple[dict[str, Callable[[int], int]], dict[str, int]]:
    """The runs of the hand-written env and the Python backend, and the env steps of a repeat."""
    env = compile_spec(game.spec, game.params).parallel_env()
    solve_layouts(env)
    runs = {"hand": ParallelRunner(game.hand()).run, "python": ParallelRunner(env).run}
    return runs, dict.fromkeys(runs, budget.steps)


def batch_peak_memory(compile_batch: Callable[..., Any], game: Game, batch_size: int,
                      calls: int) -> dict[str, float]:
    """Peak traced Python/numpy memory (MiB) of building, resetting and stepping one batch env.

    An untimed pass under tracemalloc; also the growth of the process's max RSS during it (0
    when an earlier, larger peak of this process already covered it).
    """
    gc.collect()
    rss_before = _max_rss_mib()
    tracemalloc.start()
    try:
        BatchRunner(compile_batch(game.spec, game.params, batch_size=batch_size)).run(calls)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    gc.collect()
    return {"tracemalloc_peak_mib": peak / 2**20, "maxrss_delta_mib": _max_rss_mib() - rss_before}


def _max_rss_mib() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return rss / 2**20 if sys.platform == "darwin" else rss / 2**10


# --------------------------------------------------------------------------- the run


@dataclass
class GameResult:
    hand: float
    python: float
    batch: dict[int, float] = field(default_factory=dict)
    batch_memory: dict[str, Any] = field(default_factory=dict)
    batch_error: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "hand": self.hand,
            "python": self.python,
            "batch": {str(b): r for b, r in self.batch.items()},
            "python_vs_hand": self.python / self.hand,
            "batch_vs_hand": {str(b): r / self.hand for b, r in self.batch.items()},
            "batch_peak_memory": self.batch_memory,
            **({"batch_error": self.batch_error} if self.batch_error else {}),
        }


def run_game(game: Game, budget: Budget, batch_sizes: tuple[int, ...],
             compile_batch: Callable[..., Any] | None, log: Callable[[str], None]) -> GameResult:
    """Every backend of one game timed in interleaved repeats (hand, python, then each batch size
    in turn within each repeat: a ratio to the hand-written env is then measured in the same
    minutes, whatever the shared machine's load does between them); the batch envs' peak memory
    in an untimed pass before. A batch backend that fails is reported; hand and python still run."""
    runs, amounts = hand_and_python_runs(game, budget)
    result = GameResult(0.0, 0.0)
    if compile_batch is not None and batch_sizes:
        try:
            largest = max(batch_sizes)
            log(f"{game.key}: batch B={largest} peak memory")
            result.batch_memory = {"batch_size": largest, **batch_peak_memory(
                compile_batch, game, largest, budget.batch_calls(largest))}
            for b in batch_sizes:
                runs[f"batch B={b}"] = BatchRunner(compile_batch(game.spec, game.params, batch_size=b)).run
                amounts[f"batch B={b}"] = budget.batch_calls(b)
        except Exception as exc:  # noqa: BLE001 - report a broken batch backend, keep hand/python
            result.batch_error = f"{type(exc).__name__}: {exc}"
            log(f"{game.key}: batch backend failed: {result.batch_error}")
            runs = {k: r for k, r in runs.items() if not k.startswith("batch")}
    log(f"{game.key}: {', '.join(runs)} (interleaved)")
    try:
        rates = timed_rates(runs, amounts, budget)
    except Exception as exc:  # noqa: BLE001 - a batch env that fails while stepping: as above
        if len(runs) == 2:
            raise
        result.batch_error = f"{type(exc).__name__}: {exc}"
        log(f"{game.key}: batch backend failed: {result.batch_error}")
        rates = timed_rates({k: runs[k] for k in ("hand", "python")}, budget.steps, budget)
    result.hand, result.python = rates["hand"], rates["python"]
    result.batch = {b: rates[f"batch B={b}"] for b in batch_sizes if f"batch B={b}" in rates}
    return result


def markdown(results: dict[str, GameResult]) -> str:
    lines = ["| game | backend | agent-steps/s | vs hand |", "| --- | --- | ---: | ---: |"]
    for key, r in results.items():
        rows = [("hand", r.hand), ("python", r.python)]
        rows += [(f"batch B={b}", rate) for b, rate in r.batch.items()]
        for backend, rate in rows:
            lines.append(f"| {key} | {backend} | {rate:,.0f} | {rate / r.hand:.2f}x |")
    return "\n".join(lines)


def memory_lines(results: dict[str, GameResult]) -> list[str]:
    out = []
    for key, r in results.items():
        m = r.batch_memory
        if r.batch_error:
            out.append(f"{key}: batch backend failed: {r.batch_error}")
        elif m:
            out.append(f"{key}: batch B={m['batch_size']} peak memory "
                       f"{m['tracemalloc_peak_mib']:.1f} MiB (tracemalloc), "
                       f"max RSS +{m['maxrss_delta_mib']:.1f} MiB")
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 repeats and small budgets (< 1 min)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--games", nargs="+", choices=[g.key for g in GAMES],
                    default=[g.key for g in GAMES])
    ap.add_argument("--batch-sizes", nargs="*", type=int, default=list(BATCH_SIZES))
    ap.add_argument("--repeats", type=int, help="override the number of timed repeats")
    ap.add_argument("--steps", type=int, help="override env steps per repeat (hand / python)")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="wall: elapsed seconds (default); cpu: the process's CPU seconds, steadier "
                         "when other work shares the machine (the same clock for every backend)")
    return ap.parse_args(argv)


def make_budget(args: argparse.Namespace) -> Budget:
    budget = Budget.quick() if args.quick else Budget.full()
    if args.repeats:
        budget = Budget(args.repeats, budget.steps, budget.batch_env_steps, budget.min_batch_calls)
    if args.steps:
        budget = Budget(budget.repeats, args.steps, budget.batch_env_steps, budget.min_batch_calls)
    return dataclasses.replace(budget, clock=args.clock)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    budget = make_budget(args)
    compile_batch, note = load_compile_batch()

    def log(msg: str) -> None:
        print(f"[throughput] {msg}", file=sys.stderr, flush=True)

    if note:
        log(note)
    games = [g for g in GAMES if g.key in args.games]
    results = {g.key: run_game(g, budget, tuple(args.batch_sizes), compile_batch, log)
               for g in games}
    setup = {"python": platform.python_version(), "numpy": np.__version__,
             "machine": platform.machine(), "repeats": budget.repeats, "steps": budget.steps,
             "batch_env_steps": budget.batch_env_steps, "OMP_NUM_THREADS": "1", "clock": budget.clock,
             "agent_steps": "env steps x agents per env"}
    if args.json:
        out: dict[str, Any] = {key: r.as_json() for key, r in results.items()}
        out["_setup"] = setup
        if note:
            out["_notes"] = [note]
        print(json.dumps(out, indent=2))
        return
    print(f"agent-steps/s = env steps x agents per env / s; median of {budget.repeats} repeats "
          f"of {budget.steps} env steps (hand, python) or of max({budget.min_batch_calls}, "
          f"min({budget.steps}, {budget.batch_env_steps} / B)) batch calls; random legal "
          f"actions; {budget.clock} clock; python {setup['python']}, numpy {setup['numpy']}, OMP_NUM_THREADS=1")
    print()
    print(markdown(results))
    for line in memory_lines(results):
        print(line)
    if note:
        print(f"\nNote: {note}")


if __name__ == "__main__":
    main()
