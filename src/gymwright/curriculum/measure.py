"""What a trained stage is measured by: its validation (the transfer signal), and per bucket
the evidence the engineer reads (the task metric, failures by kind, the knobs' effects, and
what the stage's training log says)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from gymwright.compile import compile_spec
from gymwright.curriculum.options import CurriculumOptions
from gymwright.curriculum.record import StageRecord
from gymwright.engineer.engineers import Engineer
from gymwright.engineer.evidence import (
    Evidence,
    StageEvidence,
    Validation,
    knobs_of,
    measure_sensitivity,
    measure_validation,
)
from gymwright.engineer.mixture import Mixture
from gymwright.evaluate.failures import failure_metrics, gather
from gymwright.evaluate.trajectories import record
from gymwright.train.episodes import play_episodes


@dataclass(frozen=True)
class Measuring:
    """What every stage of a curriculum is measured with."""

    opts: CurriculumOptions
    metric: str
    engineer: Engineer
    per_copy: int | None  # the trainer logs per env copy (RLlib): this many copies; None: per bucket


def validate(spec: str | dict[str, Any], policy: Any, m: Measuring) -> Validation | None:
    """The policy on the validation cells (None without them)."""
    opts = m.opts
    if not opts.validation:
        return None
    return measure_validation(spec, opts.validation, policy, m.metric, opts.validation_episodes, opts.validation_seed,
                              opts.secondary)


def stage_evidence(spec: str | dict[str, Any], raw: dict[str, Any], k: int, mixture: Mixture, policy: Any,
                   history: list[StageRecord], m: Measuring,
                   log: list[dict[str, Any]] | None) -> tuple[StageEvidence, dict[str, float]]:
    """Per bucket: the trained policy's task metric, failures by kind, and the knobs' effects
    (evaluated after the stage), and what the stage's training log says of it (`log`: success
    while training, PLR's positive-advantage score). An engineer with `evaluates_buckets = False`
    (the UED baselines) reads the training log only. `history`: the earlier stages' records."""
    opts, metric = m.opts, m.metric
    stats = _train_stats(mixture, log, metric, m.per_copy)
    stages = [{"index": r.index, "mixture": r.mixture, "validation": (r.validation or {}).get("mean")} for r in history]
    if not getattr(m.engineer, "evaluates_buckets", True):
        per_bucket = [(b, Evidence(spec, b.params, metric, st.get(metric, 0.0), opts.band, train_stats=st))
                      for b, st in zip(mixture.buckets, stats, strict=True)]
        return StageEvidence(spec, metric, opts.band, per_bucket, stages, k), {}
    earlier = [{"params": r.params or r.mixture, "success": r.success, "kinds": r.failures} for r in history]
    per_bucket, returns = [], Counter[str]()
    for b, st in zip(mixture.buckets, stats, strict=True):
        ev, bucket_returns = _bucket_evidence(spec, raw, k, mixture, b, policy, m, earlier, st)
        returns.update(bucket_returns)
        per_bucket.append((b, ev))
    return StageEvidence(spec, metric, opts.band, per_bucket, stages, k), dict(returns)


def _bucket_evidence(spec: str | dict[str, Any], raw: dict[str, Any], k: int, mixture: Mixture, b: Any, policy: Any,
                     m: Measuring, earlier: list[dict[str, Any]], st: dict[str, float]) -> tuple[Evidence, dict[str, float]]:
    """One bucket's evidence (played, recorded and probed after the stage) and its share of the returns."""
    opts, metric = m.opts, m.metric
    compiled = compile_spec(spec, b.params)
    structural = set(compiled.checked.structural)
    ev = play_episodes(spec, b.params, policy, opts.eval_episodes, seed=50_000 + 1000 * k)
    trajs = record(spec, b.params, policy, episodes=opts.record_episodes, seed=60_000 + 1000 * k)
    failures = gather({b.label if not mixture.is_single else _label(b.params, structural): trajs}, metric,
                      _max_steps(b.params, raw), failure_metrics(compiled.checked.spec))
    knobs = [kn for kn in knobs_of(spec, b.params, structural) if opts.knobs is None or kn.name in opts.knobs]
    if getattr(m.engineer, "reads_knob_effects", True):
        knobs = measure_sensitivity(spec, b.params, policy, knobs, metric, episodes=min(opts.eval_episodes, 150))
    evidence = Evidence(spec, b.params, metric, float(ev.metrics.get(metric, 0.0)), opts.band, failures, knobs,
                        earlier, st)
    return evidence, {role: b.share * x for role, x in ev.returns.items()}


def _train_stats(mixture: Mixture, log: list[dict[str, Any]] | None, metric: str,
                 per_copy: int | None = None) -> list[dict[str, float]]:
    """Per bucket, from the last half of the stage's training log: the task metric of the episodes
    that ended (sampled actions, while learning) and the mean positive advantage (PLR's score).
    The built-in trainer logs them per bucket (`config{i}/...`, bucket i: `TrainConfig.copies`);
    RLlib per env copy (`per_copy` copies, by bucket in order: a bucket's figure in a row is the
    mean over its copies); a one-bucket stage has the run's own figures."""
    if not log:
        return [{} for _ in mixture.buckets]
    if mixture.is_single:
        places = [[{metric: f"metrics/{metric}"}]]
    else:
        of = [[i] for i in range(len(mixture.buckets))] if per_copy is None else \
            np.split(np.arange(per_copy), np.cumsum(mixture.counts(per_copy))[:-1])
        places = [[{metric: f"config{c}/metrics/{metric}", "positive_advantage": f"config{c}/positive_advantage"}
                   for c in copies] for copies in of]
    out = []
    for mine in places:
        seen: dict[str, list[float]] = {}
        for row in log[len(log) // 2:]:
            for name in mine[0]:
                xs = [row[keys[name]] for keys in mine if keys[name] in row]
                if xs:
                    seen.setdefault(name, []).append(float(np.mean(xs)))
        out.append({name: float(np.mean(xs)) for name, xs in seen.items()})
    return out


def _label(params: dict[str, Any], structural: set[str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items() if k in structural) or "config"


def _max_steps(params: dict[str, Any], raw: dict[str, Any]) -> int | None:
    value = params.get("max_steps", (raw.get("params", {}).get("max_steps") or {}).get("default"))
    return int(value) if value is not None else None
