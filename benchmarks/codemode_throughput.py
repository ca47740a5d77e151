"""How much slower a code-mode env is in sandbox workers than the batch backend (issue 20, item 6).

Measured side by side, random legal actions, agent-steps per second (env steps x 2 agents /
wall seconds), the median of 3 repeats:

  direct      the code-mode fixture (tests/data/codemode/meet_on_a_line.py, ours, trusted)
              imported and stepped in this process: the env's own cost, no sandbox
  proxy       the same module in one sandbox worker, one copy, one frame per step
  sandboxed   SandboxedBatchEnv: B copies over W workers, one frame per worker per step
  batch       gymwright's batch backend on cake_negotiation (also 2 agents, a tiny game),
              B copies per numpy call: what the trainer uses for spec-mode designs

The games differ (a code-mode env cannot be compiled to the batch backend), so those figures
are the cost of the path, for games of this size.

Training (`--train`, on by default): the built-in trainer (IPPO, B copies, T steps per update)
on the *same game* both ways: the library's `stag_hunt` generated from its spec (batch
backend), and `benchmarks/data/stag_hunt_code.py`, the same game written as a code-mode module
(copies in W sandbox workers, `gymwright train design.py`'s path). Before timing, both play the
same random actions and must give the same observations, masks, rewards, ends and metrics.
agent-steps/s counts updates 2..U (update 1 is the warm-up; setup and worker start-up are not
in it). `--clock cpu` counts CPU seconds of this process *and* of its sandbox workers (read from
/proc/PID/stat), so the code-mode figure pays for the workers' work too; `wall` is elapsed time.

    python benchmarks/codemode_throughput.py [--steps 2000] [--clock cpu] [--no-train] [--json]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from gymwright.codemode.proxy import SandboxedParallelEnv, load_module  # noqa: E402
from gymwright.codemode.vector import SandboxedBatchEnv  # noqa: E402
from gymwright.compile.batch import compile_batch  # noqa: E402
from gymwright.train import TrainConfig, train  # noqa: E402
from gymwright.train.rollout import make_env  # noqa: E402

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "data" / "codemode" / "meet_on_a_line.py"
STAG_HUNT_CODE = Path(__file__).resolve().parent / "data" / "stag_hunt_code.py"
AGENTS = 2
TICK = os.sysconf("SC_CLK_TCK")


def workers_cpu() -> float:
    """CPU seconds (user + system) of this process's live descendants: its sandbox workers, which
    run under bubblewrap (a child that starts them) where the kernel gives namespaces."""
    parent, cpu = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # it ended meanwhile
        pid = int(stat.parent.name)
        parent[pid], cpu[pid] = int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK
    me, total = os.getpid(), 0.0
    for pid in cpu:
        up, seen = parent.get(pid), 0
        while up is not None and up != me and seen < 64:
            up, seen = parent.get(up), seen + 1
        total += cpu[pid] if up == me else 0.0
    return total


CLOCKS: dict[str, Callable[[], float]] = {
    "wall": time.perf_counter,
    "cpu": lambda: time.process_time() + workers_cpu(),
}
clock = CLOCKS["wall"]  # set by main


def masked(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One legal action per (copy, agent), -1 where none is legal (vectorized)."""
    u = rng.random(masks.shape[:-1])[..., None]
    cum = np.cumsum(masks, axis=-1)
    total = cum[..., -1:]
    pick = (cum > u * total).argmax(axis=-1)
    return np.where(total[..., 0] > 0, pick, -1)


def single(env: object, steps: int) -> float:
    rng = np.random.default_rng(0)
    obs, infos = env.reset(seed=0)  # type: ignore[attr-defined]
    start = clock()
    for _ in range(steps):
        if not env.agents:  # type: ignore[attr-defined]
            obs, infos = env.reset()  # type: ignore[attr-defined]
        acts = {a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"]))) for a in env.agents}  # type: ignore[attr-defined]
        obs, _, _, _, infos = env.step(acts)  # type: ignore[attr-defined]
    return steps * AGENTS / (clock() - start)


def batched(env: object, steps: int, batch: int) -> float:
    rng = np.random.default_rng(0)
    _, masks = env.reset(seed=0)  # type: ignore[attr-defined]
    start = clock()
    for _ in range(steps):
        env.step(masked(masks, rng))  # type: ignore[attr-defined]
        masks = env.masks  # type: ignore[attr-defined]
    return steps * batch * AGENTS / (clock() - start)


def median(run: Callable[[], float]) -> float:
    return statistics.median(run() for _ in range(3))


def same_game(steps: int = 60, batch: int = 4) -> None:
    """The code-mode stag hunt and the spec's must agree step by step (random actions); exits if not."""
    rng = np.random.default_rng(0)
    code = make_env(str(STAG_HUNT_CODE), [{}], batch)
    spec = make_env("stag_hunt", [{}], batch)
    try:
        first = [code.reset(seed=0), spec.reset(seed=0)]
        agree = all(np.array_equal(x, y) for x, y in zip(*first, strict=True))
        for _ in range(steps):
            acts = rng.integers(0, 2, (batch, AGENTS))
            a, b = code.step(acts), spec.step(acts)
            agree = agree and all(np.allclose(x, y) for x, y in zip(a[:4], b[:4], strict=True)) \
                and sorted(a[4].get("metrics", {})) == sorted(b[4].get("metrics", {})) \
                and all(np.allclose(v, b[4]["metrics"][k]) for k, v in a[4].get("metrics", {}).items())
    finally:
        code.close()
    if not agree:
        raise SystemExit(f"{STAG_HUNT_CODE} no longer plays like the stag_hunt spec: fix it before timing")


def training_rate(spec: str, batch: int, rollout: int, updates: int, algo_dir: str) -> float:
    """Agent-steps/s of the built-in trainer over updates 2..U on `spec` (see the module docstring)."""
    marks: list[float] = []
    cfg = TrainConfig(spec=spec, num_envs=batch, rollout_len=rollout, total_steps=batch * rollout * updates,
                      minibatches=4, epochs=4, hidden=(64, 64), out=algo_dir)
    result = train(cfg, progress=lambda row: marks.append(clock()))
    return (len(marks) - 1) * batch * rollout * AGENTS / (marks[-1] - marks[0]) if result.updates > 1 else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="wall: elapsed seconds; cpu: CPU seconds of this process and its sandbox workers")
    ap.add_argument("--train", action=argparse.BooleanOptionalAction, default=True,
                    help="also time the built-in trainer on stag_hunt: spec vs code-mode module")
    ap.add_argument("--train-envs", type=int, default=16)
    ap.add_argument("--train-updates", type=int, default=6)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    global clock
    clock = CLOCKS[args.clock]
    code = FIXTURE.read_text()
    spec = importlib.util.spec_from_file_location("meet_fixture", FIXTURE)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    out: dict[str, float] = {"direct": median(lambda: single(module.MeetOnALine(), args.steps))}
    with load_module(code) as sandbox:
        out["proxy"] = median(lambda: single(SandboxedParallelEnv(sandbox), args.steps))
    with SandboxedBatchEnv(code, batch_size=args.batch, workers=args.workers) as benv:
        out[f"sandboxed B={args.batch} W={args.workers}"] = median(
            lambda: batched(benv, max(50, args.steps // args.batch * 4), args.batch))
    benv_spec = compile_batch("cake_negotiation", {}, batch_size=args.batch)
    out[f"batch B={args.batch}"] = median(lambda: batched(benv_spec, args.steps, args.batch))
    trained: dict[str, float] = {}
    if args.train:
        same_game()
        with tempfile.TemporaryDirectory() as runs:
            trained = {f"train spec B={args.train_envs}": training_rate("stag_hunt", args.train_envs, 32, args.train_updates, f"{runs}/spec"),
                       f"train code B={args.train_envs}": training_rate(str(STAG_HUNT_CODE), args.train_envs, 32, args.train_updates, f"{runs}/code")}
    if args.json:
        print(json.dumps({"clock": args.clock, **{k: round(v) for k, v in (out | trained).items()}}, indent=2))
        return
    print(f"agent-steps/s, {args.clock} clock")
    base = out[f"batch B={args.batch}"]
    for name, rate in out.items():
        print(f"{name:28s} {rate:12,.0f} agent-steps/s   {base / rate:8.1f}x slower than the batch backend")
    if trained:
        spec_rate, code_rate = trained.values()
        print(f"\ntraining on stag_hunt (IPPO, B={args.train_envs}, T=32, updates 2..{args.train_updates}), {args.clock} clock")
        for name, rate in trained.items():
            print(f"{name:28s} {rate:12,.0f} agent-steps/s")
        print(f"{'code / spec':28s} {code_rate / spec_rate:12.3f}   (code mode trains {spec_rate / code_rate:.1f}x slower)")


if __name__ == "__main__":
    main()
