"""The curriculum runner: stages of training in which the policy carries over and the
environment changes by the engineer's proposal.

Each stage trains (warm-started from the previous stage's policy), evaluates the trained policy
in its own config (task metric, failures by kind), measures how each knob moves the task metric,
and asks the engineer for the next config. Every stage's spec (its params written in as
defaults) goes to the store, linked to the previous stage's by lineage whose reason is the
engineer's rationale; the stage records are written to `OUT/curriculum.jsonl` as they finish.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gymwright.compile import compile_spec
from gymwright.design.session import with_defaults
from gymwright.engineer.engineers import Engineer
from gymwright.engineer.evidence import Evidence, knobs_of, measure_sensitivity
from gymwright.evaluate.failures import gather
from gymwright.evaluate.scorecard import default_task_metric
from gymwright.evaluate.trajectories import record
from gymwright.spec.loader import read_data
from gymwright.store import Store
from gymwright.train import TrainConfig, evaluate, load_policy, train


@dataclass
class StageRecord:
    index: int
    params: dict[str, Any]
    success: float
    returns: dict[str, float]
    failures: dict[str, int]
    checkpoint: str
    spec_sha: str
    engineer: str
    proposal: dict[str, Any] = field(default_factory=dict)
    rationale: str = ""
    agent_steps_per_second: float = 0.0


@dataclass
class CurriculumOptions:
    stages: int = 3
    steps_per_stage: int = 200_000
    band: tuple[float, float] = (0.4, 0.8)
    task_metric: str | None = None
    eval_episodes: int = 200
    num_envs: int = 256
    seed: int = 0


def evolve(spec: str, params: dict[str, Any], engineer: Engineer, out: Path,
           options: CurriculumOptions | None = None, *, store: Store | None = None,
           progress: Callable[[str], None] | None = None) -> list[StageRecord]:
    """Run the stages; see the module docstring."""
    opts = options or CurriculumOptions()
    say = progress or (lambda _: None)
    compiled = compile_spec(spec, params)
    metric = opts.task_metric or default_task_metric(compiled)
    if metric is None:
        raise ValueError(f"{spec} has no metrics: a curriculum needs a task metric")
    structural = set(compiled.checked.structural)
    raw, _ = read_data(spec)
    out.mkdir(parents=True, exist_ok=True)
    records: list[StageRecord] = []
    current, previous_ckpt, previous_sha = dict(params), None, None
    for k in range(opts.stages):
        say(f"stage {k + 1}/{opts.stages}: training on {current}")
        result = train(TrainConfig(spec=spec, params=current, total_steps=opts.steps_per_stage,
                                   num_envs=opts.num_envs, seed=opts.seed + k, out=out / f"stage{k}",
                                   init_from=previous_ckpt))
        policy = load_policy(result.checkpoint)
        ev = evaluate(spec, current, policy, opts.eval_episodes, seed=50_000 + 1000 * k)
        success = float(ev.metrics.get(metric, 0.0))
        trajs = record(spec, current, policy, episodes=40, seed=60_000 + 1000 * k)
        failures = gather({_label(current, structural): trajs}, metric, _max_steps(current, raw))
        knobs = measure_sensitivity(spec, current, policy, knobs_of(spec, current, structural), metric,
                                    episodes=min(opts.eval_episodes, 150))
        evidence = Evidence(spec, current, metric, success, opts.band, failures, knobs,
                            [{"params": r.params, "success": r.success, "kinds": r.failures} for r in records])
        proposal = engineer.propose(evidence)
        sha = _store_stage(store, raw, current, previous_sha, records[-1].rationale if records else "")
        rec = StageRecord(k, dict(current), success, ev.returns,
                          dict(sum((b["kinds"] for b in failures.buckets.values()), start=Counter())),
                          str(result.checkpoint), sha, engineer.name, proposal.params, proposal.rationale,
                          result.agent_steps_per_second)
        records.append(rec)
        _append(out / "curriculum.jsonl", rec)
        say(f"stage {k + 1}: {metric} = {success:.3f}; {engineer.name} engineer: {proposal.rationale}")
        current, previous_ckpt, previous_sha = proposal.params, result.checkpoint, sha
    return records


def _label(params: dict[str, Any], structural: set[str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items() if k in structural) or "config"


def _max_steps(params: dict[str, Any], raw: dict[str, Any]) -> int | None:
    value = params.get("max_steps", (raw.get("params", {}).get("max_steps") or {}).get("default"))
    return int(value) if value is not None else None


def _store_stage(store: Store | None, raw: dict[str, Any], params: dict[str, Any], parent: str | None,
                 reason: str) -> str:
    spec = with_defaults(raw, params)
    if store is None:
        from gymwright.store import spec_hash

        return spec_hash(spec)
    sha = store.put_spec(spec, name=str(raw.get("name", "")))
    if parent is not None and parent != sha:
        store.add_lineage(parent, sha, f"curriculum: {reason}"[:500])
    return sha


def _append(path: Path, rec: StageRecord) -> None:
    with path.open("a") as f:
        f.write(json.dumps(asdict(rec), default=float) + "\n")
