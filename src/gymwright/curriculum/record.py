"""`StageRecord`: one line of `OUT/curriculum.jsonl`, made from what the stage trained on and got
(`Trained`), what the guardrails kept of it (`Judged`) and what the engineer proposed next
(`Proposed`)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gymwright.atomic import write_error
from gymwright.curriculum.guard import GuardDecision
from gymwright.engineer.engineers import StageProposal
from gymwright.engineer.evidence import StageEvidence, Validation
from gymwright.engineer.mixture import Mixture
from gymwright.train.result import TrainResult


@dataclass(frozen=True)
class Trained:
    """What a stage trained on and what its training got."""

    index: int
    mixture: Mixture
    edit: dict[str, Any] | None  # the spec edit it trained on (None: the previous stage's spec)
    result: TrainResult
    demo_steps: int  # env steps of the demonstrations it imitated
    validation: Validation | None
    trials: tuple[dict[str, Any], ...] = ()  # the candidates tried before it (`gymwright.curriculum.trials`)
    trial_steps: int = 0  # their env steps, charged to this stage


@dataclass(frozen=True)
class Judged:
    """What the guardrails made of a stage: the mixture it stands for (`base`: the trained one, or
    the one a revert or rollback went back to) with its evidence, and the policy kept."""

    decision: GuardDecision | None
    base: Mixture
    evidence: StageEvidence
    returns: dict[str, float]
    policy: str  # the checkpoint the next stage starts from
    shas: dict[str, str] = field(default_factory=dict)  # the base's buckets' specs in the store, by label


@dataclass(frozen=True)
class Proposed:
    """The engineer's proposal for the next stage, or why it has none."""

    proposal: StageProposal
    engineer: str
    error: str = ""  # the engineer failed; the stage was kept


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
    levers: dict[str, float] = field(default_factory=dict)  # the designer levers' strengths it trained with
    proposed_levers: dict[str, float] = field(default_factory=dict)  # those the engineer proposed next
    trials: list[dict[str, Any]] = field(default_factory=list)  # candidates tried before the stage, best kept
    trial_env_steps: int = 0  # their env steps (out of the stage's budget)

    @classmethod
    def of(cls, trained: Trained, judged: Judged, proposed: Proposed) -> StageRecord:
        rows, kinds = _buckets(judged.evidence)
        base, proposal, decision = judged.base, proposed.proposal, judged.decision
        single = base.is_single
        return cls(
            index=trained.index, params=dict(base.buckets[0].params) if single else {},
            success=judged.evidence.success, returns=judged.returns, failures=dict(kinds),
            checkpoint=str(trained.result.checkpoint), spec_sha=judged.shas[base.buckets[0].label],
            engineer=proposed.engineer, proposal=dict(proposal.mixture.buckets[0].params) if single else {},
            rationale=proposal.rationale, agent_steps_per_second=trained.result.agent_steps_per_second,
            mixture=rows, proposed_mixture=proposal.mixture.to_list(), trained_mixture=trained.mixture.to_list(),
            validation=_val_dict(trained.validation),
            guard=decision.action if decision else "", guard_reason=decision.reason if decision else "",
            policy=judged.policy, unchanged=proposal.mixture.same_as(base) and proposal.edit is None,
            engineer_error=proposed.error, edit=trained.edit, env_steps=trained.result.env_steps,
            demo_env_steps=trained.demo_steps, levers=dict(trained.mixture.levers),
            proposed_levers=dict(proposal.mixture.levers), trials=list(trained.trials),
            trial_env_steps=trained.trial_steps)

    def append_to(self, path: Path) -> None:
        """One stage line more in curriculum.jsonl (an append: a failure is a WriteError naming the file)."""
        try:
            with path.open("a") as f:
                f.write(json.dumps(asdict(self), default=float) + "\n")
        except OSError as e:
            raise write_error(path, e) from e


def _buckets(evidence: StageEvidence) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Per bucket: label, params, share, success and failures by kind; and the failures of all of them."""
    rows = []
    kinds: Counter[str] = Counter()
    for b, e in evidence.buckets:
        bucket_kinds = dict(sum((x["kinds"] for x in e.failures.buckets.values()), start=Counter())) if e.failures else {}
        kinds.update(bucket_kinds)
        rows.append({"label": b.label, "params": dict(b.params), "share": round(b.share, 6),
                     "success": e.success, "failures": bucket_kinds})
    return rows, kinds


def _val_dict(val: Validation | None) -> dict[str, Any] | None:
    return None if val is None else {"mean": val.mean, "ci95": val.ci95, "cells": val.cells, **val.secondary}
