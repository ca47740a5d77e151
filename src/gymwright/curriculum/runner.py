"""The curriculum runner: stages of training in which the policy carries over and the
environment changes by the engineer's proposal.

A stage's environment is a mixture (`gymwright.engineer.mixture`: buckets of params, each with
its share of the env copies; one config is a mixture of one bucket). Each stage trains
(warm-started from the previous stage's policy), evaluates the trained policy in every bucket
(task metric, failures by kind), measures how each knob moves the task metric there, and asks
the engineer for the next mixture. Every stage's spec (its params written in as
defaults) goes to the store, linked to the previous stage's by lineage whose reason is the
engineer's rationale; the stage records are written to `OUT/curriculum.jsonl` as they finish.

The loop runs over a `Stage` (what passes from one stage to the next) and a `Guard` (the
guardrails and what they keep). Stages train with the options' trainer
(`gymwright.train.trainers`: the built-in PPO, or RLlib, each stage then an RLlib run on one Ray
started once for the curriculum, its modules warm-started from the previous stage's policy, which
the run exports in the built-in format, so evaluation, evidence and the next stage read it as they
read a built-in stage's; a mixture's buckets are spread over each env runner's envs (`num_envs`),
as over the batch's copies).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gymwright.curriculum.edit import apply_edit
from gymwright.curriculum.guard import REVERT, ROLLBACK, Guard, Kept
from gymwright.curriculum.measure import Measuring, stage_evidence, validate
from gymwright.curriculum.options import CurriculumOptions
from gymwright.curriculum.record import Judged, Proposed, StageRecord, Trained
from gymwright.curriculum.start import start_of
from gymwright.curriculum.training import check_imitation, train_stage
from gymwright.curriculum.trials import candidates, check_trials, run_trials, trial_steps
from gymwright.design.session import with_defaults
from gymwright.engineer.engineers import Engineer, StageProposal, current_mixture
from gymwright.engineer.evidence import StageEvidence
from gymwright.engineer.levers import Lever
from gymwright.engineer.mixture import Mixture
from gymwright.store import Store
from gymwright.train.npc import load_policy
from gymwright.train.trainers import Trainer, trainer_named


@dataclass(frozen=True)
class Stage:
    """What one stage trains on, as the stage before it left it."""

    index: int
    spec: str | dict[str, Any]  # the spec (an edited child's data after an edit)
    raw: dict[str, Any]  # the spec's data, into which each bucket's params are written for the store
    mixture: Mixture
    init_from: str | None = None  # the policy it starts from (None: a fresh one)
    edit: dict[str, Any] | None = None  # the edit it trains on (None: the previous stage's spec)
    shas: dict[str, str] = field(default_factory=dict)  # the previous stage's specs in the store, by bucket label
    reason: str = ""  # the engineer's rationale for it (the store's lineage reason)
    spent: int = 0  # env steps of its budget spent on trials before it (`gymwright.curriculum.trials`)
    trials: tuple[dict[str, Any], ...] = ()  # those trials


@dataclass(frozen=True)
class Curriculum:
    """What every stage of one curriculum shares."""

    opts: CurriculumOptions
    engineer: Engineer
    trainer: Trainer
    measuring: Measuring
    out: Path
    store: Store | None
    say: Callable[[str], None]
    levers: dict[str, Lever] = field(default_factory=dict)  # the designer levers the engineer may use


def evolve(spec: str, params: dict[str, Any] | Mixture, engineer: Engineer, out: Path,
           options: CurriculumOptions | None = None, *, store: Store | None = None,
           progress: Callable[[str], None] | None = None) -> list[StageRecord]:
    """Run the stages; see the module docstring. `params` is the first stage's config, or its
    mixture (`Mixture`: buckets of params with their shares of the data)."""
    opts = options or CurriculumOptions()
    trainer = trainer_named(opts.backend)
    check_imitation(opts, trainer)
    check_trials(opts)
    with trainer.session(opts.ray_address):
        spec_data, raw, mixture, metric, menu = start_of(spec, params, opts)
        first = Stage(0, spec_data, raw, mixture)
        out.mkdir(parents=True, exist_ok=True)
        per_copy = opts.num_envs if trainer.logs_per_copy else None
        c = Curriculum(opts, engineer, trainer, Measuring(opts, metric, engineer, per_copy), out, store,
                       progress or (lambda _: None), menu)
        return _run(c, first)


def _run(c: Curriculum, stage: Stage) -> list[StageRecord]:
    """Every stage in turn: train, judge, measure, propose, record; then the next stage."""
    guard = Guard(c.opts.guard, c.say)
    records: list[StageRecord] = []
    for _ in range(c.opts.stages):
        rec, proposal, shas = _run_stage(c, stage, guard, records)
        records.append(rec)
        rec.append_to(c.out / "curriculum.jsonl")
        guard.changed = not rec.unchanged
        stage = _next_stage(c, stage, proposal, shas, guard)
        if c.opts.trials > 1 and stage.index < c.opts.stages and stage.edit is None:
            stage = _tried(c, stage, guard)
    return records


def _tried(c: Curriculum, stage: Stage, guard: Guard) -> Stage:
    """The stage as the best of K short trials left it: its candidate's mixture and levers, from that
    trial's policy, with the trials' env steps spent (`gymwright.curriculum.trials`)."""
    k, opts = stage.index, replace(c.opts, task_metric=c.measuring.metric)
    picked = candidates(stage.mixture, guard.last.mixture, c.levers, opts.trials)
    c.say(f"stage {k + 1}/{opts.stages}: trying {len(picked)} candidates, {trial_steps(opts):,} env steps each")
    tasks = [(stage.spec, stage.raw, m, opts, k, c.out / f"stage{k}-trial{i}", guard.last.checkpoint, c.levers, why, i)
             for i, (m, why) in enumerate(picked)]
    trials = run_trials(tasks, opts, c.say)
    best = max(trials, key=lambda t: t.validation)  # a tie goes to the earlier candidate: the proposal first
    for t in trials:
        c.say(f"  trial {t.index + 1} ({t.why}): validation {t.validation:.3f}{' (kept)' if t is best else ''}")
    return replace(stage, mixture=best.mixture, init_from=best.checkpoint, spent=sum(t.env_steps for t in trials),
                   trials=tuple(t.as_dict() for t in trials), reason=f"{stage.reason}; kept trial {best.index + 1} "
                   f"of {len(trials)} ({best.why}, validation {best.validation:.3f})")


def _run_stage(c: Curriculum, stage: Stage, guard: Guard,
               records: list[StageRecord]) -> tuple[StageRecord, StageProposal, dict[str, str]]:
    """Stage `stage.index`: its record, the engineer's proposal for the stage after it, and the
    store's hashes of the stage's specs (by bucket label)."""
    opts, k = c.opts, stage.index
    c.say(f"stage {k + 1}/{opts.stages}: training on {_describe(stage.mixture, c.levers)}")
    left = replace(opts, steps_per_stage=opts.steps_per_stage - stage.spent)
    result, demo_steps = train_stage(c.trainer, stage.spec, stage.raw, stage.mixture, left, k, c.out / f"stage{k}",
                                     stage.init_from, c.levers, c.say)
    policy = load_policy(result.checkpoint)
    trained = Trained(k, stage.mixture, stage.edit, result, demo_steps, validate(stage.spec, policy, c.measuring),
                      stage.trials, stage.spent)
    judged = _judged(c, stage, trained, guard, policy, records)
    evidence = replace(judged.evidence, stage=k, stages=opts.stages, steps_left=(opts.stages - k - 1) * opts.steps_per_stage,
                       validation=guard.last.validation, target=opts.target, space=opts.space,
                       guard=list(guard.reasons), rejected=list(guard.rejected),
                       targets=list((opts.validation or {}).values()), levers=dict(judged.base.levers),
                       lever_menu=dict(c.levers))
    proposal, error = _propose(c.engineer, evidence, last=k == opts.stages - 1)
    shas = {b.label: _store_stage(c.store, stage.raw, b.params, stage.shas.get(b.label), stage.reason)
            for b in judged.base.buckets}
    rec = StageRecord.of(trained, replace(judged, evidence=evidence, shas=shas), Proposed(proposal, c.engineer.name, error))
    val = trained.validation
    shown = f"; validation {val.mean:.3f}" if val else ""
    c.say(f"stage {k + 1}: {c.measuring.metric} = {rec.success:.3f}{shown}; {c.engineer.name} engineer: {proposal.rationale}")
    return rec, proposal, shas


def _judged(c: Curriculum, stage: Stage, trained: Trained, guard: Guard, policy: Any,
            records: list[StageRecord]) -> Judged:
    """What the guardrails keep of the stage just trained, with the evidence of the mixture it
    stands for (the trained one, or the one a revert or rollback went back to); the kept policy
    becomes `guard.kept`. The guardrails compare a stage with the last one kept, not across an
    edit (another game)."""
    mixture, val, k = stage.mixture, trained.validation, stage.index
    decision = guard.judge(k, mixture, val, across_edit=bool(stage.edit and stage.edit["status"] != "failed"))
    kept = guard.kept
    if decision is not None and decision.action == ROLLBACK and kept is not None:
        base, evidence, returns = kept.mixture, kept.evidence, kept.returns
    else:
        base = kept.mixture if decision is not None and decision.action == REVERT and kept else mixture
        evidence, returns = _evidence(c, stage, base, policy, records, trained.result.history if base is mixture else None)
        aim = guard.judge_aim(k, mixture, evidence, val, c.opts.band) if base is mixture else None
        if aim is not None and kept is not None:
            decision, base = aim, kept.mixture
            evidence, returns = _evidence(c, stage, base, policy, records, None)
        guard.keep(Kept(trained.result.checkpoint, val, base, evidence, returns))
    return Judged(decision, base, evidence, returns, guard.last.checkpoint)


def _evidence(c: Curriculum, stage: Stage, mixture: Mixture, policy: Any, records: list[StageRecord],
              log: list[dict[str, Any]] | None) -> tuple[StageEvidence, dict[str, float]]:
    return stage_evidence(stage.spec, stage.raw, stage.index, mixture, policy, records, c.measuring, log)


def _next_stage(c: Curriculum, stage: Stage, proposal: StageProposal, shas: dict[str, str], guard: Guard) -> Stage:
    """The stage after `stage`: the proposed mixture from the kept policy, on the edited spec
    when the engineer's edit verified and the policy carried over onto it."""
    k = stage.index + 1
    nxt = Stage(k, stage.spec, stage.raw, proposal.mixture, guard.last.checkpoint, None, shas, proposal.rationale)
    if proposal.edit is None:
        return nxt
    edit, child = apply_edit(proposal, stage.raw, guard.last.checkpoint, c.store, c.engineer, c.out / f"stage{k}")
    c.say(f"  edit ({edit['status']}): {edit['summary']}")
    if edit["status"] == "failed":
        return replace(nxt, edit=edit)
    return replace(nxt, spec=child["spec"], raw=child["spec"], init_from=child["init_from"], edit=edit)


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


def _describe(mixture: Mixture, menu: dict[str, Lever]) -> str:
    on = {k: v for k, v in mixture.levers.items() if k in menu and v != menu[k].off}
    levers = f" with levers {on}" if on else ""
    return _describe_levels(mixture) + levers


def _describe_levels(mixture: Mixture) -> str:
    if mixture.is_single:
        return str(mixture.buckets[0].params)
    if len(mixture.buckets) > 6:
        top = sorted(mixture.buckets, key=lambda b: -b.share)[:3]
        return (f"{len(mixture.buckets)} buckets, most data to " + "; ".join(f"{b.label} ({b.share:.0%})" for b in top))
    return "; ".join(f"{b.label} ({b.share:.0%}) {b.params}" for b in mixture.buckets)


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
