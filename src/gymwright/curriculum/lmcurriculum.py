"""A curriculum whose learner is a language model: `evolve_lm`.

The loop of `gymwright.curriculum.runner.evolve` with an LLM trainee in the place of the PPO
policy: each stage trains the model with GRPO on the stage's mixture, played as text
(`gymwright.curriculum.lmstage`), from the checkpoint the stage before saved; the trained model
is measured in every bucket and on the validation cells (`evaluate_lm`, the task metric); the
engineer reads that evidence (`StageEvidence`, as in the PPO loop) and proposes the next mixture,
from the same engineers and configuration space (`goal.space`). The engineer may be the trainee
itself (`gymwright.engineer.trainee`): `TraineeModels` moves to each stage's checkpoint before the
engineer is asked. After the last stage the final checkpoint is judged on the held-out cells.

What it leaves out of the PPO loop: guardrails, trials, spec edits and designer levers (they act
on a policy's training run); knob sensitivities (each would cost two more evaluations per knob).

Stages are kept in a `StageCache` by everything that decides them (the seed and the mixtures of
every stage so far): two arms of a comparison that train the same mixtures from the same start
(every engineer's first stage; a second stage whose engineer kept the first's mixture) share the
stage's run instead of repeating it, and the records say so (`shared`).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gymwright.curriculum.goal import Goal
from gymwright.curriculum.lmstage import LMTraineeOptions, Loader, measure_cells, train_stage_lm
from gymwright.curriculum.runner import _propose
from gymwright.engineer.engineers import Engineer
from gymwright.engineer.evidence import Evidence, StageEvidence, Validation
from gymwright.engineer.mixture import Bucket, Mixture
from gymwright.engineer.trainee import TraineeModels
from gymwright.lmtrain.run import dumps

VALIDATION_SEED = 700_000
BUCKET_SEED = 50_000
HELD_OUT_SEED = 900_000  # as gymwright.curriculum.compare: the same held-out episodes for every arm


@dataclass
class LMStage:
    """What one stage left (shared by the arms that reached it the same way)."""

    key: str
    index: int
    mixture: list[dict[str, Any]]
    checkpoint: str
    runs: list[dict[str, Any]]
    seconds: float
    success: dict[str, float] = field(default_factory=dict)  # per bucket (measured when an engineer reads it)
    buckets: dict[str, Any] = field(default_factory=dict)  # per bucket evaluate_lm's figures
    validation: Validation | None = None
    lm: Any = field(default=None, repr=False)  # the trained model while this arm still holds it


@dataclass
class StageCache:
    stages: dict[str, LMStage] = field(default_factory=dict)
    held_out: dict[str, dict[str, Any]] = field(default_factory=dict)  # by checkpoint


@dataclass
class LMCurriculum:
    """What every stage of an LLM-trainee curriculum shares (and the arms of a comparison too)."""

    spec: str
    goal: Goal
    opts: LMTraineeOptions
    stages: int
    out: Path
    seed: int = 0
    band: tuple[float, float] = (0.3, 0.6)
    metric: str = "valid"  # the task metric (MAPF's: every walker home, no hole, no conflict)
    loader: Loader = field(default_factory=Loader)
    cache: StageCache = field(default_factory=StageCache)
    say: Callable[[str], None] = lambda _: None


def start_for(engineer: Engineer, goal: Goal) -> Mixture:
    """The first stage's mixture: a sampler's own (domain randomization starts on its distribution),
    else the goal's start configuration as one bucket, named as the space names it."""
    initial = getattr(engineer, "initial", None)
    if callable(initial):
        mixture: Mixture = initial()
        return mixture
    label = goal.space.label(goal.start) if goal.space is not None else "config"
    return Mixture([Bucket(dict(goal.start), 1.0, label)])


def chain_key(seed: int, mixtures: list[Mixture]) -> str:
    text = json.dumps([seed, [[m.to_list(), m.levers] for m in mixtures]], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def evolve_lm(c: LMCurriculum, engineer: Engineer, start: Mixture, models: TraineeModels,
              name: str = "") -> dict[str, Any]:
    """Run the stages with `engineer` from `start`; the arm's record (its stages, the final checkpoint
    and its held-out judgment). `models` is the trainee the engineer may ask, moved to each stage's
    checkpoint before the engineer is."""
    c.opts.check()
    models.lend(models.base, c.loader.base(models.base))
    mixtures: list[Mixture] = [start]
    records: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    for k in range(c.stages):
        stage, shared = _stage(c, mixtures, models.base if k == 0 else records[-1]["checkpoint"])
        models.move_to(stage.checkpoint)
        if stage.lm is not None:
            models.lend(stage.checkpoint, stage.lm)
        record = _propose_after(c, engineer, stage, mixtures[-1], history, models)
        records.append({**record, "shared": shared})
        history.append({"index": k, "validation": stage.validation.mean if stage.validation else None,
                        "mixture": [{**b, "success": stage.success.get(b["label"], math.nan), "failures": {}}
                                    for b in stage.mixture]})
        mixtures.append(record["next"])
    final = records[-1]["checkpoint"]
    arm = {"name": name or engineer.name, "engineer": engineer.name, "checkpoint": final,
           "stages": [{k: v for k, v in r.items() if k != "next"} | {"next": r["next"].to_list()} for r in records],
           "held_out": judge(c, final), "engineer_answers": list(models.answered)}
    (c.out / f"arm-{arm['name']}.json").parent.mkdir(parents=True, exist_ok=True)
    (c.out / f"arm-{arm['name']}.json").write_text(dumps(arm), encoding="utf-8")
    return arm


def _stage(c: LMCurriculum, mixtures: list[Mixture], init_from: str) -> tuple[LMStage, bool]:
    """Stage len(mixtures) - 1 trained on the last mixture: from the cache, else trained now."""
    k, key = len(mixtures) - 1, chain_key(c.seed, mixtures)
    if key in c.cache.stages:
        c.say(f"stage {k + 1}/{c.stages}: the same mixtures as an arm before: its stage is reused ({key})")
        return c.cache.stages[key], True
    c.say(f"stage {k + 1}/{c.stages}: GRPO on {_describe(mixtures[-1])}")
    start = time.perf_counter()
    checkpoint, lm, runs = train_stage_lm(c.spec, mixtures[-1], init_from, c.opts, c.loader,
                                          c.out / "stages" / f"{k}-{key}", c.seed * 100 + k)
    stage = LMStage(key, k, mixtures[-1].to_list(), checkpoint, runs, time.perf_counter() - start, lm=lm)
    for other in c.cache.stages.values():
        other.lm = None  # one trained model in memory at a time
    c.cache.stages[key] = stage
    return stage, False


def _propose_after(c: LMCurriculum, engineer: Engineer, stage: LMStage, mixture: Mixture,
                   history: list[dict[str, Any]], models: TraineeModels) -> dict[str, Any]:
    """The stage's record with the engineer's proposal for the next stage (none after the last)."""
    k, asked = stage.index, len(models.answered)
    last = k == c.stages - 1
    evidence = _evidence(c, engineer, stage, mixture, history, measure=not last)
    proposal, error = _propose(engineer, evidence, last=last)
    c.say(f"stage {k + 1}: {engineer.name} engineer: {proposal.rationale[:300]}")
    val = stage.validation
    return {"index": k, "key": stage.key, "trained": stage.mixture, "checkpoint": stage.checkpoint, "runs": stage.runs,
            "train_s": stage.seconds, "success": dict(stage.success), "buckets": stage.buckets,
            "validation": asdict(val) if val is not None else None, "engineer": engineer.name,
            "rationale": proposal.rationale, "engineer_error": error, "next": proposal.mixture,
            "unchanged": proposal.mixture.same_as(mixture), "answered_by": models.answered[asked:]}


def _evidence(c: LMCurriculum, engineer: Engineer, stage: LMStage, mixture: Mixture,
              history: list[dict[str, Any]], measure: bool) -> StageEvidence:
    """The stage's evidence: per bucket the task metric and on the validation cells, measured once
    per stage (an engineer that reads only training logs, domain randomization, gets neither)."""
    if measure and getattr(engineer, "evaluates_buckets", True):
        _measure(c, stage, mixture)
    buckets = [(b, Evidence(c.spec, b.params, c.metric, stage.success.get(b.label, 0.0), c.band))
               for b in mixture.buckets]
    per_update = _decisions_per_update(stage.runs)
    left = (c.stages - stage.index - 1) * c.opts.steps_per_stage
    return StageEvidence(c.spec, c.metric, c.band, buckets, history, stage.index, c.stages,
                         int(per_update * left), stage.validation, c.goal.target, c.goal.space,
                         targets=list((c.goal.validation or {}).values()))


def _measure(c: LMCurriculum, stage: LMStage, mixture: Mixture) -> None:
    if stage.validation is not None:
        return
    lm = stage.lm if stage.lm is not None else c.loader.fresh(stage.checkpoint)
    cells = {b.label: b.params for b in mixture.buckets}
    per_bucket, stage.buckets = measure_cells(c.spec, lm, cells, c.metric, c.opts.eval_episodes,
                                              BUCKET_SEED + 1000 * stage.index, c.opts)
    stage.success = dict(per_bucket.cells)
    stage.validation, _ = measure_cells(c.spec, lm, c.goal.validation or c.goal.held_out, c.metric,
                                        c.opts.eval_episodes, VALIDATION_SEED, c.opts, c.goal.secondary)
    c.say(f"  stage {stage.index + 1}: {c.metric} {per_bucket.mean:.3f} on its buckets, validation "
          f"{stage.validation.mean:.3f}")


def _decisions_per_update(runs: list[dict[str, Any]]) -> float:
    rows = [r["last"] for r in runs if r.get("last")]
    return sum(float(r.get("decisions", 0)) for r in rows) / len(rows) if rows else 0.0


def judge(c: LMCurriculum, checkpoint: str) -> dict[str, Any]:
    """The checkpoint on the held-out cells (once per checkpoint: arms that end on one share it)."""
    if checkpoint not in c.cache.held_out:
        c.say(f"judging {checkpoint} on {len(c.goal.held_out)} held-out cells")
        lm = next((s.lm for s in c.cache.stages.values() if s.checkpoint == checkpoint and s.lm is not None), None)
        val, figures = measure_cells(c.spec, lm or c.loader.fresh(checkpoint), c.goal.held_out, c.metric,
                                     c.opts.held_out_episodes, HELD_OUT_SEED, c.opts, c.goal.secondary)
        c.cache.held_out[checkpoint] = {"mean": val.mean, "ci95": val.ci95, "cells": val.cells,
                                        "secondary": val.secondary, "episodes": val.episodes, "figures": figures}
    return dict(c.cache.held_out[checkpoint])


def _describe(mixture: Mixture) -> str:
    if mixture.is_single:
        return str(mixture.buckets[0].params)
    return f"{len(mixture.buckets)} buckets: " + ", ".join(f"{b.label} {b.share:.0%}" for b in mixture.buckets[:4]) + (
        " ..." if len(mixture.buckets) > 4 else "")
