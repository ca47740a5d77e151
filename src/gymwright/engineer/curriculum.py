"""The curriculum runner: stages of training in which the policy carries over and the
environment changes by the engineer's proposal.

A stage's environment is a mixture (`gymwright.engineer.mixture`: buckets of params, each with
its share of the env copies; one config is a mixture of one bucket). Each stage trains
(warm-started from the previous stage's policy), evaluates the trained policy in every bucket
(task metric, failures by kind), measures how each knob moves the task metric there, and asks
the engineer for the next mixture. Every stage's spec (its params written in as
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
from gymwright.engineer.engineers import Engineer, StageProposal
from gymwright.engineer.evidence import Evidence, StageEvidence, knobs_of, measure_sensitivity
from gymwright.engineer.mixture import Mixture
from gymwright.evaluate.failures import failure_metrics, gather
from gymwright.evaluate.scorecard import default_task_metric
from gymwright.evaluate.trajectories import record
from gymwright.spec.loader import read_data
from gymwright.store import Store
from gymwright.train import TrainConfig, evaluate, load_policy, train


@dataclass
class StageRecord:
    index: int
    params: dict[str, Any]  # the stage's config (a one-bucket stage); {} for a mixture (see `mixture`)
    success: float  # the task metric, share-weighted over the buckets
    returns: dict[str, float]
    failures: dict[str, int]
    checkpoint: str
    spec_sha: str
    engineer: str
    proposal: dict[str, Any] = field(default_factory=dict)  # the next config (a one-bucket stage)
    rationale: str = ""
    agent_steps_per_second: float = 0.0
    mixture: list[dict[str, Any]] = field(default_factory=list)  # per bucket: label, params, share, success, failures
    proposed_mixture: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class CurriculumOptions:
    stages: int = 3
    steps_per_stage: int = 200_000
    band: tuple[float, float] = (0.4, 0.8)
    task_metric: str | None = None
    eval_episodes: int = 200
    num_envs: int = 256
    seed: int = 0
    knobs: tuple[str, ...] | None = None
    """the params the engineer may move (default: every bounded numeric non-structural param)"""
    record_episodes: int = 40
    """episodes per bucket recorded for the failure evidence"""


def evolve(spec: str, params: dict[str, Any] | Mixture, engineer: Engineer, out: Path,
           options: CurriculumOptions | None = None, *, store: Store | None = None,
           progress: Callable[[str], None] | None = None) -> list[StageRecord]:
    """Run the stages; see the module docstring. `params` is the first stage's config, or its
    mixture (`Mixture`: buckets of params with their shares of the data)."""
    opts = options or CurriculumOptions()
    say = progress or (lambda _: None)
    mixture = params if isinstance(params, Mixture) else Mixture.single(params)
    compiled = compile_spec(spec, mixture.buckets[0].params)
    metric = opts.task_metric or default_task_metric(compiled)
    if metric is None:
        raise ValueError(f"{spec} has no metrics: a curriculum needs a task metric")
    raw, _ = read_data(spec)
    out.mkdir(parents=True, exist_ok=True)
    records: list[StageRecord] = []
    previous_ckpt, previous_shas = None, {}
    for k in range(opts.stages):
        say(f"stage {k + 1}/{opts.stages}: training on {_describe(mixture)}")
        result = train(TrainConfig(spec=spec, params=mixture.per_copy(opts.num_envs), total_steps=opts.steps_per_stage,
                                   num_envs=opts.num_envs, seed=opts.seed + k, out=out / f"stage{k}",
                                   init_from=previous_ckpt))
        policy = load_policy(result.checkpoint)
        evidence, returns = _stage_evidence(spec, mixture, policy, metric, opts, k, raw, records)
        proposal = engineer.propose_stage(evidence)
        shas = {b.label: _store_stage(store, raw, b.params, previous_shas.get(b.label),
                                      records[-1].rationale if records else "") for b in mixture.buckets}
        rec = _record(k, mixture, evidence, returns, result, shas, engineer, proposal)
        records.append(rec)
        _append(out / "curriculum.jsonl", rec)
        say(f"stage {k + 1}: {metric} = {rec.success:.3f}; {engineer.name} engineer: {proposal.rationale}")
        mixture, previous_ckpt, previous_shas = proposal.mixture, result.checkpoint, shas
    return records


def _describe(mixture: Mixture) -> str:
    if mixture.is_single:
        return str(mixture.buckets[0].params)
    return "; ".join(f"{b.label} ({b.share:.0%}) {b.params}" for b in mixture.buckets)


def _stage_evidence(spec: str, mixture: Mixture, policy: Any, metric: str, opts: CurriculumOptions, k: int,
                    raw: dict[str, Any], records: list[StageRecord]) -> tuple[StageEvidence, dict[str, float]]:
    """Per bucket: the trained policy's task metric, failures by kind, and the knobs' effects."""
    per_bucket, returns = [], Counter()
    history = [{"params": r.params or r.mixture, "success": r.success, "kinds": r.failures} for r in records]
    for b in mixture.buckets:
        compiled = compile_spec(spec, b.params)
        structural = set(compiled.checked.structural)
        ev = evaluate(spec, b.params, policy, opts.eval_episodes, seed=50_000 + 1000 * k)
        returns.update({role: b.share * x for role, x in ev.returns.items()})
        trajs = record(spec, b.params, policy, episodes=opts.record_episodes, seed=60_000 + 1000 * k)
        failures = gather({b.label if not mixture.is_single else _label(b.params, structural): trajs}, metric,
                          _max_steps(b.params, raw), failure_metrics(compiled.checked.spec))
        knobs = [kn for kn in knobs_of(spec, b.params, structural) if opts.knobs is None or kn.name in opts.knobs]
        knobs = measure_sensitivity(spec, b.params, policy, knobs, metric, episodes=min(opts.eval_episodes, 150))
        per_bucket.append((b, Evidence(spec, b.params, metric, float(ev.metrics.get(metric, 0.0)), opts.band,
                                       failures, knobs, history)))
    stages = [{"index": r.index, "mixture": r.mixture} for r in records]
    return StageEvidence(spec, metric, opts.band, per_bucket, stages, k), dict(returns)


def _record(k: int, mixture: Mixture, evidence: StageEvidence, returns: dict[str, float], result: Any,
            shas: dict[str, str], engineer: Engineer, proposal: StageProposal) -> StageRecord:
    rows = []
    kinds: Counter = Counter()
    for b, e in evidence.buckets:
        bucket_kinds = dict(sum((x["kinds"] for x in e.failures.buckets.values()), start=Counter())) if e.failures else {}
        kinds.update(bucket_kinds)
        rows.append({"label": b.label, "params": dict(b.params), "share": round(b.share, 6),
                     "success": e.success, "failures": bucket_kinds})
    single = mixture.is_single
    return StageRecord(k, dict(mixture.buckets[0].params) if single else {}, evidence.success, returns, dict(kinds),
                       str(result.checkpoint), shas[mixture.buckets[0].label], engineer.name,
                       dict(proposal.mixture.buckets[0].params) if single else {}, proposal.rationale,
                       result.agent_steps_per_second, rows, proposal.mixture.to_list())


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
