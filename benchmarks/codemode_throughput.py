"""How much slower a code-mode env is in sandbox workers than the batch backend (issue 20, item 6).

Measured side by side, random legal actions, agent-steps per second (env steps x 2 agents /
wall seconds), the median of 3 repeats:

  direct      the code-mode fixture (tests/data/codemode/meet_on_a_line.py, ours, trusted)
              imported and stepped in this process: the env's own cost, no sandbox
  proxy       the same module in one sandbox worker, one copy, one frame per step
  sandboxed   SandboxedBatchEnv: B copies over W workers, one frame per worker per step
  batch       gymwright's batch backend on cake_negotiation (also 2 agents, a tiny game),
              B copies per numpy call: what the trainer uses for spec-mode designs

The games differ (a code-mode env cannot be compiled to the batch backend), so the figure is
the cost of the path, for games of this size.

    python benchmarks/codemode_throughput.py [--steps 2000] [--json]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from gymwright.codemode.proxy import SandboxedParallelEnv, load_module  # noqa: E402
from gymwright.codemode.vector import SandboxedBatchEnv  # noqa: E402
from gymwright.compile.batch import compile_batch  # noqa: E402

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "data" / "codemode" / "meet_on_a_line.py"
AGENTS = 2


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
    start = time.perf_counter()
    for _ in range(steps):
        if not env.agents:  # type: ignore[attr-defined]
            obs, infos = env.reset()  # type: ignore[attr-defined]
        acts = {a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"]))) for a in env.agents}  # type: ignore[attr-defined]
        obs, _, _, _, infos = env.step(acts)  # type: ignore[attr-defined]
    return steps * AGENTS / (time.perf_counter() - start)


def batched(env: object, steps: int, batch: int) -> float:
    rng = np.random.default_rng(0)
    _, masks = env.reset(seed=0)  # type: ignore[attr-defined]
    start = time.perf_counter()
    for _ in range(steps):
        env.step(masked(masks, rng))  # type: ignore[attr-defined]
        masks = env.masks  # type: ignore[attr-defined]
    return steps * batch * AGENTS / (time.perf_counter() - start)


def median(run: Callable[[], float]) -> float:
    return statistics.median(run() for _ in range(3))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
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
    if args.json:
        print(json.dumps({k: round(v) for k, v in out.items()}, indent=2))
        return
    base = out[f"batch B={args.batch}"]
    for name, rate in out.items():
        print(f"{name:28s} {rate:12,.0f} agent-steps/s   {base / rate:8.1f}x slower than the batch backend")


if __name__ == "__main__":
    main()
