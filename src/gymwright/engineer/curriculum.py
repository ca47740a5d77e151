"""The curriculum runner: stages of training in which the policy carries over and the
environment changes by the engineer's proposal.

A stage's environment is a mixture (`gymwright.engineer.mixture`: buckets of params, each with
its share of the env copies; one config is a mixture of one bucket). Each stage trains
(warm-started from the previous stage's policy), evaluates the trained policy in every bucket
(task metric, failures by kind), measures how each knob moves the task metric there, and asks
the engineer for the next mixture. Every stage's spec (its params written in as
defaults) goes to the store, linked to the previous stage's by lineage whose reason is the
engineer's rationale; the stage records are written to `OUT/curriculum.jsonl` as they finish.

Stages train with the built-in trainer, or with RLlib (`CurriculumOptions.backend = "rllib"`): then
each stage is an RLlib run (`gymwright.train.rllib`) on one Ray started once for the curriculum,
its modules warm-started from the previous stage's policy, which the run exports in the built-in
format, so evaluation, evidence and the next stage read it as they read a built-in stage's; a
mixture's buckets are spread over each env runner's envs (`num_envs`), as over the batch's copies.
"""

from __future__ import annotations

import difflib
import json
import math
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from gymwright.atomic import write_atomic, write_error
from gymwright.compile import compile_spec
from gymwright.design.session import with_defaults
from gymwright.engineer.demonstrations import (
    DEMO_SEED,
    Demonstrator,
    Relabeller,
    demonstrate,
    relabel,
)
from gymwright.engineer.edits import realize_edit
from gymwright.engineer.engineers import Engineer, StageProposal, current_mixture
from gymwright.engineer.evidence import (
    Evidence,
    StageEvidence,
    Validation,
    knobs_of,
    measure_sensitivity,
    measure_validation,
)
from gymwright.engineer.guard import KEEP, REVERT, ROLLBACK, judge, judge_aim
from gymwright.engineer.mixture import Mixture
from gymwright.engineer.space import ConfigSpace
from gymwright.errors import GymwrightError
from gymwright.evaluate.difficulty import check_band
from gymwright.evaluate.failures import failure_metrics, gather
from gymwright.evaluate.scorecard import default_task_metric
from gymwright.evaluate.trajectories import record
from gymwright.spec.loader import read_data
from gymwright.store import Store
from gymwright.train import TrainConfig, TrainResult, load_policy, play_episodes, train
from gymwright.train.carryover import carry_over
from gymwright.train.imitation import Demos, clone


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
    trained_mixture: list[dict[str, Any]] = field(default_factory=list)  # what the stage trained on
    validation: dict[str, Any] | None = None  # the transfer signal: mean, ci95, cells
    guard: str = ""  # keep, revert or rollback (guarded runs), with `guard_reason`
    guard_reason: str = ""
    policy: str = ""  # the checkpoint the next stage starts from (the final policy after the last stage)
    unchanged: bool = False  # the proposal is the current mixture (a copied-back reply, for a model)
    engineer_error: str = ""  # the engineer failed; the stage was kept
    edit: dict[str, Any] | None = None  # the spec edit this stage trained on (None: the previous stage's spec)
    env_steps: int = 0  # env steps of the stage's training (PPO)
    demo_env_steps: int = 0  # env steps of the demonstrations it imitated (out of the same budget)


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
    validation: dict[str, dict[str, Any]] | None = None
    """validation cells (label -> params), drawn like the configs the final policy is judged on"""
    validation_episodes: int = 200
    validation_seed: int = 700_000
    secondary: tuple[str, ...] = ()
    """metrics reported next to the task metric on validation (e.g. `optimal`)"""
    target: str = ""
    """what the final policy is judged on, in words (shown to the engineer)"""
    space: ConfigSpace | None = None
    """the levers the engineer may use (structural buckets and knob values); None: knobs only"""
    guard: bool = False
    """guardrails (`gymwright.engineer.guard`): revert a change that did not help (validation did not
    improve, or the training metric did not move toward the band it was aimed at), roll back a stage
    whose validation fell beyond noise; without `validation` only the band rule applies"""
    train: dict[str, Any] = field(default_factory=dict)
    """more `TrainConfig` fields for every stage (e.g. hidden, ent_coef): the frozen base learner"""
    backend: str = "builtin"
    """`builtin` (PPO on the batch backend) or `rllib` (each stage an RLlib run; `train` then holds only
    the fields RLlib takes, `gymwright.train.rllib_settings.CONFIG_FIELDS`, and `num_envs` is the
    envs of each env runner, over which a mixture's buckets are spread)"""
    ray_address: str | None = None
    """the Ray cluster of an `rllib` curriculum (None: a local Ray, started once for all stages)"""
    demonstrator: Demonstrator | None = None
    """makes demonstrations of one config (`gymwright.engineer.demonstrations`; e.g. a planner's plans
    replayed through the env): with it the first stage starts from a clone of `demo_episodes`
    demonstrations of its mixture (a BC init), and with `imitation_coef` every stage keeps an
    imitation loss on demonstrations of its own mixture; their env steps come out of the stage's budget"""
    demo_episodes: int = 0
    """demonstrated episodes per stage that uses them (spread over the mixture's buckets by share)"""
    imitation_coef: float = 0.0
    """weight of the imitation loss during each stage's PPO (`TrainConfig.imitation_coef`); 0: a BC init only"""
    relabeller: Relabeller | None = None
    """DAgger (`gymwright.engineer.demonstrations`): from the second stage on, the imitation loss is on the
    previous stage's policy's own play of the stage's mixture, labelled by the expert, added to the
    demonstrations its lineage was trained on; needs `demonstrator` (the first stage) and `imitation_coef`"""
    relabel_episodes: int = 0
    """episodes the policy plays a stage for the relabeller (0: `demo_episodes`); their env steps are charged"""


BACKENDS = ("builtin", "rllib")
DIFF_CHARS = 20_000  # an edit's diff as recorded in curriculum.jsonl (the whole child is in stageK/spec.yaml)


def evolve(spec: str, params: dict[str, Any] | Mixture, engineer: Engineer, out: Path,
           options: CurriculumOptions | None = None, *, store: Store | None = None,
           progress: Callable[[str], None] | None = None) -> list[StageRecord]:
    """Run the stages; see the module docstring. `params` is the first stage's config, or its
    mixture (`Mixture`: buckets of params with their shares of the data)."""
    opts = options or CurriculumOptions()
    _check_relabeller(opts)
    with _backend_session(opts):
        return _evolve(spec, params, engineer, out, opts, store=store, progress=progress)


@contextmanager
def _backend_session(opts: CurriculumOptions) -> Iterator[None]:
    """What the stages' trainer needs running for the whole curriculum: Ray for `rllib`."""
    if opts.backend not in BACKENDS:
        raise GymwrightError(f"unknown backend {opts.backend!r}", path="backend", hint=f"choose one of {', '.join(BACKENDS)}")
    if opts.backend == "builtin":
        yield
        return
    from gymwright.train.rllib import ray_session

    with ray_session(opts.ray_address):
        yield


def _train_stage(spec: str | dict[str, Any], mixture: Mixture, opts: CurriculumOptions, k: int, folder: Path,
                 init_from: str | None) -> tuple[TrainResult, int]:
    """Train stage `k` on `mixture`, warm-started from `init_from`, with the options' backend:
    (its result, the env steps its demonstrations took, charged to the stage's budget)."""
    if opts.backend == "builtin":
        imitation, init_from, demo_steps = _imitation(spec, mixture, opts, k, folder, init_from)
        result = train(TrainConfig(**{**opts.train, "spec": spec, "params": [dict(b.params) for b in mixture.buckets],
                                      "copies": [int(c) for c in mixture.counts(opts.num_envs)],
                                      "total_steps": opts.steps_per_stage - demo_steps, "num_envs": opts.num_envs,
                                      "seed": opts.seed + k, "out": folder, "init_from": init_from, **imitation}))
        return result, demo_steps
    if opts.demonstrator is not None:
        raise GymwrightError("demonstrations need the built-in trainer", path="backend",
                             hint="train with backend builtin, or drop the demonstrator")
    from gymwright.train.rllib import train_rllib

    params = mixture.buckets[0].params if mixture.is_single else mixture.per_copy(opts.num_envs)
    r = train_rllib(spec, params, steps=opts.steps_per_stage, out=folder, seed=opts.seed + k,
                    ray_address=opts.ray_address, config={**opts.train, "num_envs": opts.num_envs}, init_from=init_from)
    clock = {"env_s": sum(x.get("time/env_s", 0.0) for x in r["history"]),
             "network_s": sum(x.get("time/network_s", 0.0) for x in r["history"]), "total_s": r["seconds"]}
    return TrainResult(r["agent_steps_per_second"], r["env_steps_per_second"], r["final_return"], r["metrics"],
                       r["checkpoint"], r["iterations"], r["env_steps"], r["history"],
                       {**clock, "other_s": clock["total_s"] - clock["env_s"] - clock["network_s"]}), 0


def _imitation(spec: str | dict[str, Any], mixture: Mixture, opts: CurriculumOptions, k: int, folder: Path,
               init_from: str | None) -> tuple[dict[str, Any], str | None, int]:
    """What a stage imitates: (TrainConfig changes, the checkpoint it starts from, demo env steps)."""
    if opts.demonstrator is None or (init_from is not None and opts.imitation_coef == 0):
        return {}, init_from, 0
    seed = DEMO_SEED + 10_000 * (opts.seed + k)
    if init_from is not None and opts.relabeller is not None:
        demos, steps = relabel(spec, mixture, opts.relabeller, opts.relabel_episodes or opts.demo_episodes, seed,
                           init_from, _lineage_demos(init_from), folder / "demos.npz")
    else:
        demos = demonstrate(spec, mixture, opts.demonstrator, opts.demo_episodes, seed, folder / "demos.npz")
        steps = demos.env_steps
    if steps >= opts.steps_per_stage:
        raise GymwrightError(f"stage {k + 1}: the demonstrations took {steps} env steps of the stage's "
                             f"{opts.steps_per_stage}", path="demo_episodes", hint="demonstrate fewer episodes a stage")
    if init_from is None:
        first = mixture.buckets[0].params
        init_from = clone(spec, first, demos, folder / "bc.pt",
                          hidden=tuple(opts.train.get("hidden", (64, 64))), seed=opts.seed + k).checkpoint
    changes = {"demos": folder / "demos.npz", "imitation_coef": opts.imitation_coef} if opts.imitation_coef else {}
    return changes, init_from, steps


def _check_relabeller(opts: CurriculumOptions) -> None:
    """A relabeller needs the first stage's demonstrations and an imitation loss to feed."""
    if opts.relabeller is not None and (opts.demonstrator is None or opts.imitation_coef == 0):
        raise GymwrightError("a relabeller (DAgger) needs a demonstrator and an imitation_coef above 0",
                             path="relabeller", hint="set demonstrator, demo_episodes and imitation_coef, or drop it")


def _check_levers(spec: Any, metric: str, opts: CurriculumOptions) -> None:
    """The task metric, its band and the knobs name what the spec has: a metric, a band of two
    finite numbers (the lower first), params."""
    if metric not in spec.metrics:
        raise GymwrightError(f"task metric {metric!r} is not a metric of {spec.name}", path="task_metric",
                             hint=f"the spec's metrics: {', '.join(spec.metrics)}")
    check_band(opts.band, "band", metric)
    unknown = [k for k in opts.knobs or () if k not in spec.params]
    if unknown:
        raise GymwrightError(f"knob {unknown[0]!r} is not a param of {spec.name}", path="knobs",
                             hint=f"the spec's params: {', '.join(spec.params) or 'none'}")


def _lineage_demos(checkpoint: str) -> Demos | None:
    """The demonstrations the stage that wrote `checkpoint` trained on (saved beside it), if any."""
    path = Path(checkpoint).parent / "demos.npz"
    return Demos.load(path) if path.exists() else None


def _evolve(spec: str | dict[str, Any], params: dict[str, Any] | Mixture, engineer: Engineer, out: Path, opts: CurriculumOptions, *,
            store: Store | None, progress: Callable[[str], None] | None) -> list[StageRecord]:
    say = progress or (lambda _: None)
    mixture = params if isinstance(params, Mixture) else Mixture.single(params)
    compiled = compile_spec(spec, mixture.buckets[0].params)
    metric = opts.task_metric or default_task_metric(compiled)
    if metric is None:
        raise GymwrightError(f"{spec} has no metrics: a curriculum needs a task metric", path="metrics",
                             hint="give the spec a metric that measures the task (`metrics:`)")
    _check_levers(compiled.checked.spec, metric, opts)
    raw, _ = read_data(spec)
    out.mkdir(parents=True, exist_ok=True)
    records: list[StageRecord] = []
    kept: _Kept | None = None
    previous_shas: dict[str, str] = {}
    changed, guard_log, rejected = False, [], []
    edit: dict[str, Any] | None = None  # the edit the coming stage trains on
    init_from: str | None = None
    for k in range(opts.stages):
        say(f"stage {k + 1}/{opts.stages}: training on {_describe(mixture)}")
        result, demo_steps = _train_stage(spec, mixture, opts, k, out / f"stage{k}", init_from)
        policy = load_policy(result.checkpoint)
        val = _validate(spec, policy, metric, opts, k)
        # the guardrails compare a stage with the last one kept: not across an edit (another game)
        guarded = opts.guard and kept is not None and not (edit and edit["status"] != "failed")
        decision = judge(k, kept.validation, val, changed) if guarded and kept and val else None
        if decision is not None and decision.action != KEEP:
            guard_log.append(decision.reason)
            rejected.append(mixture)
            say(f"  guardrail: {decision.reason}")
        if decision is not None and decision.action == ROLLBACK:
            assert kept is not None
            base, evidence, returns = kept.mixture, kept.evidence, kept.returns
        else:
            base = kept.mixture if decision is not None and decision.action == REVERT and kept else mixture
            evidence, returns = _stage_evidence(spec, base, policy, metric, opts, k, raw, records, engineer,
                                                result.history if base is mixture else None)
            aim = judge_aim(k, kept.evidence, evidence, opts.band) \
                if guarded and kept and changed and base is mixture and not _improved(kept.validation, val) else None
            if aim is not None:
                assert kept is not None
                decision, base = aim, kept.mixture
                guard_log.append(aim.reason)
                rejected.append(mixture)
                say(f"  guardrail: {aim.reason}")
                evidence, returns = _stage_evidence(spec, base, policy, metric, opts, k, raw, records, engineer, None)
            kept = _Kept(result.checkpoint, val, base, evidence, returns)
        evidence = replace(evidence, stage=k, stages=opts.stages, steps_left=(opts.stages - k - 1) * opts.steps_per_stage,
                           validation=kept.validation, target=opts.target, space=opts.space,
                           guard=list(guard_log), rejected=list(rejected),
                           targets=list((opts.validation or {}).values()))
        proposal, error = _propose(engineer, evidence, last=k == opts.stages - 1)
        shas = {b.label: _store_stage(store, raw, b.params, previous_shas.get(b.label),
                                      records[-1].rationale if records else "") for b in base.buckets}
        rec = _record(k, base, evidence, returns, result, shas, engineer, proposal)
        rec.trained_mixture, rec.validation = mixture.to_list(), _val_dict(val)
        rec.env_steps, rec.demo_env_steps = result.env_steps, demo_steps
        rec.guard, rec.guard_reason = (decision.action, decision.reason) if decision else ("", "")
        rec.policy, rec.engineer_error, rec.edit = kept.checkpoint, error, edit
        rec.unchanged = proposal.mixture.same_as(base) and proposal.edit is None
        records.append(rec)
        _append(out / "curriculum.jsonl", rec)
        shown = f"; validation {val.mean:.3f}" if val else ""
        say(f"stage {k + 1}: {metric} = {rec.success:.3f}{shown}; {engineer.name} engineer: {proposal.rationale}")
        changed = not rec.unchanged
        mixture, previous_shas, init_from, edit = proposal.mixture, shas, kept.checkpoint, None
        if proposal.edit is not None:
            edit, child = _apply_edit(proposal, raw, kept.checkpoint, store, engineer, out / f"stage{k + 1}")
            say(f"  edit ({edit['status']}): {edit['summary']}")
            if edit["status"] != "failed":
                spec, raw, init_from = child["spec"], child["spec"], child["init_from"]
    return records


def _apply_edit(proposal: StageProposal, parent: dict[str, Any], checkpoint: str, store: Store | None,
                engineer: Engineer, folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Verify (and repair) the proposal's edit, write the child spec into the next stage's folder,
    and carry the policy over to it: (the edit's record, {"spec", "init_from"})."""
    assert proposal.edit is not None
    own = store is None
    store = store or Store.open(folder.parent / "store")
    try:
        outcome = realize_edit(parent, proposal.edit, store=store, llm=getattr(engineer, "llm", None),
                               evidence=proposal.rationale[:300])
    finally:
        if own:
            store.close()
    record: dict[str, Any] = {**outcome.as_dict(), "patch": proposal.edit.patch, "whole_spec": proposal.edit.spec is not None,
                              "variant": proposal.variant.to_dict() if proposal.variant is not None else None}
    if not outcome.changed:
        record["summary"] = "the edit did not verify; the stage keeps its spec (" + "; ".join(outcome.findings)[:300] + ")"
        return record, {}
    folder.mkdir(parents=True, exist_ok=True)
    try:  # a verified child the policy cannot be carried onto (e.g. params the spec refuses) keeps the stage too
        carried = carry_over(checkpoint, parent, outcome.spec, proposal.mixture.buckets[0].params, folder / "carried.pt")
    except GymwrightError as e:
        record.update(status="failed", spec_sha=outcome.parent_sha, findings=[*outcome.findings, str(e)],
                      summary=f"the policy could not be carried onto the edited spec; the stage keeps its spec ({e})"[:400])
        return record, {}
    text = yaml.safe_dump(outcome.spec, sort_keys=False, allow_unicode=True)
    write_atomic(folder / "spec.yaml", text)
    before = yaml.safe_dump(parent, sort_keys=False, allow_unicode=True)
    record["diff"] = "".join(difflib.unified_diff(before.splitlines(True), text.splitlines(True), "parent spec",
                                                  f"{folder.name}/spec.yaml", n=1))[:DIFF_CHARS]
    record["carry_over"], record["summary"] = carried.as_dict(), f"{outcome.reason[:200]}; {carried.summary()}"
    return record, {"spec": outcome.spec, "init_from": carried.checkpoint}


@dataclass
class _Kept:
    """The policy the next stage starts from, and what it was measured on."""

    checkpoint: str
    validation: Validation | None
    mixture: Mixture
    evidence: StageEvidence
    returns: dict[str, float]


def _improved(before: Validation | None, after: Validation | None) -> bool:
    """Validation rose by more than the 95% interval of the difference (the objective moved: a
    change that missed its band is not undone then)."""
    if before is None or after is None:
        return False
    return after.mean - before.mean > math.hypot(before.ci95, after.ci95)


def _propose(engineer: Engineer, evidence: StageEvidence, last: bool) -> tuple[StageProposal, str]:
    """The engineer's next mixture; none after the last stage (it would never be trained); a
    failing engineer (a model call that fails) keeps the stage, and the error is recorded."""
    current = current_mixture(evidence)
    if last:
        return StageProposal(current, "last stage: no proposal (nothing left to train)", engineer.name), ""
    try:
        return engineer.propose_stage(evidence), ""
    except Exception as e:  # noqa: BLE001 - a model's failure must not end the run
        error = f"{type(e).__name__}: {e}"
        return StageProposal(current, f"the engineer failed ({error}); the stage is kept", engineer.name), error


def _validate(spec: str | dict[str, Any], policy: Any, metric: str, opts: CurriculumOptions, k: int) -> Validation | None:
    if not opts.validation:
        return None
    return measure_validation(spec, opts.validation, policy, metric, opts.validation_episodes, opts.validation_seed,
                              opts.secondary)


def _val_dict(val: Validation | None) -> dict[str, Any] | None:
    return None if val is None else {"mean": val.mean, "ci95": val.ci95, "cells": val.cells, **val.secondary}


def _describe(mixture: Mixture) -> str:
    if mixture.is_single:
        return str(mixture.buckets[0].params)
    if len(mixture.buckets) > 6:
        top = sorted(mixture.buckets, key=lambda b: -b.share)[:3]
        return (f"{len(mixture.buckets)} buckets, most data to " + "; ".join(f"{b.label} ({b.share:.0%})" for b in top))
    return "; ".join(f"{b.label} ({b.share:.0%}) {b.params}" for b in mixture.buckets)


def _stage_evidence(spec: str | dict[str, Any], mixture: Mixture, policy: Any, metric: str, opts: CurriculumOptions, k: int,
                    raw: dict[str, Any], records: list[StageRecord], engineer: Engineer,
                    log: list[dict[str, Any]] | None) -> tuple[StageEvidence, dict[str, float]]:
    """Per bucket: the trained policy's task metric, failures by kind, and the knobs' effects
    (evaluated after the stage), and what the stage's training log says of it (`log`: success
    while training, PLR's positive-advantage score). An engineer with `evaluates_buckets = False`
    (the UED baselines) reads the training log only."""
    per_bucket, returns = [], Counter()
    history = [{"params": r.params or r.mixture, "success": r.success, "kinds": r.failures} for r in records]
    stats = _train_stats(mixture, log, metric, None if opts.backend == "builtin" else opts.num_envs)
    if not getattr(engineer, "evaluates_buckets", True):
        for b, st in zip(mixture.buckets, stats, strict=True):
            per_bucket.append((b, Evidence(spec, b.params, metric, st.get(metric, 0.0), opts.band, train_stats=st)))
        stages = [{"index": r.index, "mixture": r.mixture, "validation": (r.validation or {}).get("mean")} for r in records]
        return StageEvidence(spec, metric, opts.band, per_bucket, stages, k), {}
    for b, st in zip(mixture.buckets, stats, strict=True):
        compiled = compile_spec(spec, b.params)
        structural = set(compiled.checked.structural)
        ev = play_episodes(spec, b.params, policy, opts.eval_episodes, seed=50_000 + 1000 * k)
        returns.update({role: b.share * x for role, x in ev.returns.items()})
        trajs = record(spec, b.params, policy, episodes=opts.record_episodes, seed=60_000 + 1000 * k)
        failures = gather({b.label if not mixture.is_single else _label(b.params, structural): trajs}, metric,
                          _max_steps(b.params, raw), failure_metrics(compiled.checked.spec))
        knobs = [kn for kn in knobs_of(spec, b.params, structural) if opts.knobs is None or kn.name in opts.knobs]
        if getattr(engineer, "reads_knob_effects", True):
            knobs = measure_sensitivity(spec, b.params, policy, knobs, metric, episodes=min(opts.eval_episodes, 150))
        per_bucket.append((b, Evidence(spec, b.params, metric, float(ev.metrics.get(metric, 0.0)), opts.band,
                                       failures, knobs, history, st)))
    stages = [{"index": r.index, "mixture": r.mixture, "validation": (r.validation or {}).get("mean")} for r in records]
    return StageEvidence(spec, metric, opts.band, per_bucket, stages, k), dict(returns)


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
    """One stage line more in curriculum.jsonl (an append: a failure is a WriteError naming the file)."""
    try:
        with path.open("a") as f:
            f.write(json.dumps(asdict(rec), default=float) + "\n")
    except OSError as e:
        raise write_error(path, e) from e
