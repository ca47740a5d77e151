"""`assess`: is this a good training environment? Every check on one trained policy.

Learnability (trained vs random-legal play, the learning curve), difficulty (the task metric
against a target band), reward hacking (three signs), degeneracy under trained play, and the
recorded trajectories with the best, the worst and typical failures. The spec's scripted
baselines (`baselines:`) are evaluated alongside, by the same `play_episodes`, for comparison.

A code-mode design (a module ending in `.py`) has no spec: `assess` plays it through the sandbox
(`play_episodes` on its `SandboxedBatchEnv`; its code is never imported here) and runs the checks
that need only episodes and the training log; those that need the spec are reported n/a.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymwright.atomic import write_atomic
from gymwright.codemode.source import check_code_params, is_code_source
from gymwright.compile import compile_spec
from gymwright.evaluate.checks import Check
from gymwright.evaluate.degeneracy import trained_degeneracy
from gymwright.evaluate.difficulty import DEFAULT_BAND, check_band, difficulty
from gymwright.evaluate.hacking import dominant_shaping, return_without_task, reward_in_failures
from gymwright.evaluate.learnability import learnability, learning_curve
from gymwright.evaluate.play import Actor
from gymwright.evaluate.trajectories import (
    LegendEntry,
    Trajectory,
    legend,
    record,
    save_frames,
    select,
    write_jsonl,
)
from gymwright.train.baselines import random_legal_policy, scripted_policy
from gymwright.train.episodes import EvalResult, play_episodes

VERDICT_ORDER = {"fail": 0, "warning": 1, "ok": 2, "n/a": 3}


@dataclass
class Scorecard:
    spec: str
    params: dict[str, Any]
    task_metric: str | None
    checks: list[Check]
    trained: EvalResult
    random: EvalResult
    trajectories: list[Trajectory] = field(default_factory=list, repr=False)
    selected: dict[str, Any] = field(default_factory=dict, repr=False)
    files: dict[str, str] = field(default_factory=dict)
    scripted: dict[str, EvalResult] = field(default_factory=dict)  # the spec's scripted baselines
    legend: list[LegendEntry] = field(default_factory=list)  # what each colour of a grid frame is

    @property
    def verdict(self) -> str:
        """fail if any check failed, warning if any warned, else ok."""
        return min((c.verdict for c in self.checks), key=VERDICT_ORDER.__getitem__, default="ok")

    def to_dict(self) -> dict[str, Any]:
        return {"spec": self.spec, "params": self.params, "task_metric": self.task_metric,
                "verdict": self.verdict, "checks": [c.to_dict() for c in self.checks],
                "trained": self.trained.to_dict(), "random": self.random.to_dict(), "files": self.files,
                "scripted": {name: r.to_dict() for name, r in self.scripted.items()},
                "legend": [e.to_dict() for e in self.legend]}


def task_terms(spec: Any) -> dict[str, set[str]]:
    """Per role, its task reward terms: those of `kind: task`, or its first term when no term of
    the role says its kind."""
    out = {}
    for role, terms in spec.rewards.items():
        if terms:
            marked = {t.name for t in terms if t.kind == "task"}
            out[role] = marked if any(t.kind for t in terms) else {terms[0].name}
    return out


def default_task_metric(compiled: Any) -> str | None:
    """The spec's task metric: the one with `kind: task`, else its first metric."""
    return task_metric_of(compiled.checked.spec)


def task_metric_of(spec: Any) -> str | None:
    """The task metric of an `EnvSpec`: the one with `kind: task`, else its first metric reported
    as one number (a `per_agent` metric is one per agent: `chips.player_0`, ...)."""
    metrics = spec.metrics
    return next((name for name, m in metrics.items() if m.kind == "task"),
                next((name for name, m in metrics.items() if not getattr(m, "per_agent", False)), None))


def assess(spec: Any, params: dict[str, Any] | None, policy: Actor, *, history: list[dict[str, Any]] | None = None,
           task_metric: str | None = None, band: tuple[float, float] = DEFAULT_BAND, episodes: int = 200,
           seed: int = 10_000, record_episodes: int = 20, out: Path | None = None) -> Scorecard:
    """Every check for `policy` on `spec` with `params` (evaluation seeds differ from training's)."""
    check_band(band, "band", task_metric)
    params = dict(params or {})
    if is_code_source(spec):
        card = assess_code(str(spec), params, policy, history=history, task_metric=task_metric, band=band,
                           episodes=episodes, seed=seed)
        if out is not None:
            card.files = save_outputs(card, out)
        return card
    compiled = compile_spec(spec, params)
    metric = task_metric or default_task_metric(compiled)
    roles = [r.name for r in compiled.checked.roles]
    trained = play_episodes(spec, params, policy, episodes, seed)
    rand = play_episodes(spec, params, random_legal_policy(seed), episodes, seed)
    scripted = {b.name: play_episodes(spec, params, scripted_policy(b.name, seed), episodes, seed)
                for b in compiled.checked.baselines}
    trajs = record(spec, params, policy, record_episodes, seed, frames=out is not None)
    task = task_terms(compiled.checked.spec)
    role_of = {a: compiled.module.ROLE_OF[i] for i, a in enumerate(compiled.module.AGENTS)}
    checks = [learnability(trained, rand, metric), learning_curve(history or [], roles),
              difficulty(trained, metric, band), return_without_task(history or [], roles, metric),
              dominant_shaping(trajs, task, role_of), reward_in_failures(trajs, metric),
              *trained_degeneracy(compiled, policy, episodes=min(episodes, 30), seed=seed)]
    card = Scorecard(compiled.checked.spec.name, params, metric, checks, trained, rand, trajs,
                     select(trajs, metric), scripted=scripted, legend=legend(compiled))
    if out is not None:
        card.files = save_outputs(card, out)
    return card


NO_SPEC = "a code-mode design has no spec: "
SPEC_ONLY = {  # the checks that read the spec, and what each would need of it
    "baselines": "no scripted baselines (`baselines:`) to play alongside",
    "hacking.dominant_shaping": "its reward has no named terms (`rewards:` with `kind:`) to weigh against each other",
    "degeneracy": "the degeneracy checks under trained play (constant rewards, frozen features, never-legal "
                  "or dead choices) read the spec's observations, actions and params",
}


def assess_code(path: str, params: dict[str, Any], policy: Actor, *, history: list[dict[str, Any]] | None,
                task_metric: str | None, band: tuple[float, float], episodes: int, seed: int) -> Scorecard:
    """`assess` for a code-mode module: trained and random-legal play in sandbox workers, the
    task metric from the final infos' `metrics` (default: the first one the env reports)."""
    check_code_params(path, [params])  # the module's own keyword params, else none
    trained = play_episodes(path, params, policy, episodes, seed)
    rand = play_episodes(path, params, random_legal_policy(seed), episodes, seed)
    metric = task_metric or next(iter(trained.episode_metrics), None)
    roles = list(trained.returns)
    summaries = episode_summaries(trained, seed)
    checks = [learnability(trained, rand, metric), learning_curve(history or [], roles),
              difficulty(trained, metric, band), return_without_task(history or [], roles, metric),
              reward_in_failures(summaries, metric),
              *(Check(name, "n/a", NO_SPEC + why) for name, why in SPEC_ONLY.items())]
    return Scorecard(Path(path).stem, params, metric, checks, trained, rand)


def episode_summaries(result: EvalResult, seed: int) -> list[Trajectory]:
    """Each played episode's returns (per agent) and metrics, without its steps (episode i is
    the one of seed `seed + i`, as `play_episodes` plays them)."""
    return [Trajectory(seed + i, returns={a: float(r) for a, r in zip(result.agents, row, strict=True)},
                       metrics={k: float(x[i]) for k, x in result.episode_metrics.items()})
            for i, row in enumerate(result.episode_returns)]


def save_outputs(card: Scorecard, out: Path) -> dict[str, str]:
    """scorecard.json, trajectories.jsonl, and PNG frames + GIFs of the selected grid episodes."""
    out.mkdir(parents=True, exist_ok=True)
    files = {"trajectories": str(write_jsonl(card.trajectories, out / "trajectories.jsonl"))} if card.trajectories else {}
    picks = {"best": card.selected.get("best"), "worst": card.selected.get("worst")}
    picks |= {f"failure{i}": tr for i, tr in enumerate(card.selected.get("failures", []))}
    for name, tr in picks.items():
        if tr is not None and (saved := save_frames(tr, out / "frames", name, legend_entries=card.legend)):
            files[f"{name}.gif"] = str(saved["gif"])
    path = out / "scorecard.json"
    write_atomic(path, json.dumps(card.to_dict() | {"files": files}, indent=2, default=float))
    files["scorecard"] = str(path)
    return files
