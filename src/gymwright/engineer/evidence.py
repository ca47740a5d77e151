"""What an engineer reads before proposing the next training environment.

The task metric of the trained policy per config, the failures grouped by kind, the sensitivity
of the task metric to each knob (measured with the same policy at the knob moved up and down a
step), and the history of earlier stages (config, success, failure kinds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gymwright.engineer.mixture import Bucket
from gymwright.evaluate.failures import FailureEvidence
from gymwright.evaluate.play import Actor
from gymwright.spec.checks.params import broken_constraints
from gymwright.spec.loader import load_spec
from gymwright.spec.model import EnvSpec
from gymwright.train.episodes import Z95, play_episodes

STEP_SHARE = 0.1  # a knob's step: this share of its range


@dataclass
class Knob:
    name: str
    value: float
    low: float
    high: float
    integer: bool
    effect: float = 0.0  # d(task metric) per step up, measured
    ci95: float = 0.0

    @property
    def step(self) -> float:
        s = (self.high - self.low) * STEP_SHARE
        return max(1.0, round(s)) if self.integer else s

    @property
    def measurable(self) -> bool:
        """Its measured effect is beyond its 95% half-width."""
        return abs(self.effect) > self.ci95

    def moved(self, want: float) -> int | float:
        """Its value one step in the direction that moves the task metric by `want` (+1 up, -1
        down), by the sign of its measured effect, kept in its range."""
        direction = want * (1.0 if self.effect > 0 else -1.0)
        new = min(self.high, max(self.low, self.value + direction * self.step))
        return int(round(new)) if self.integer else round(new, 6)


@dataclass
class Evidence:
    spec: str
    params: dict[str, Any]
    task_metric: str
    success: float
    band: tuple[float, float]
    failures: FailureEvidence | None = None
    knobs: list[Knob] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)  # earlier stages: params, success, kinds
    train_stats: dict[str, float] = field(default_factory=dict)  # from the stage's training log (success, score)

    def to_prompt(self) -> str:
        lines = [f"Environment {self.spec} with params {self.params}.",
                 f"Task metric {self.task_metric} of the trained policy: {self.success:.3f} "
                 f"(target band {self.band[0]:g}-{self.band[1]:g})."]
        if self.failures:
            lines.append(self.failures.to_prompt())
        if self.knobs:
            lines.append("Measured effect of moving each knob one step up on the task metric:")
            lines += [f"- {k.name} = {k.value:g} in [{k.low:g}, {k.high:g}], step {k.step:g}: "
                      f"{k.effect:+.3f} +/- {k.ci95:.3f}" for k in self.knobs]
        if self.history:
            lines.append("Earlier stages:")
            lines += [f"- params {h['params']}: {self.task_metric} {h['success']:.3f}; failures {h.get('kinds', {})}"
                      for h in self.history]
        return "\n".join(lines)


def knobs_of(spec: Any, params: dict[str, Any], structural: set[str]) -> list[Knob]:
    """The bounded numeric params a stage may change without changing the policy's shapes."""
    loaded = load_spec(spec)
    out = []
    for name, p in loaded.params.items():
        if name in structural or p.type == "bool" or p.min is None or p.max is None or p.max <= p.min:
            continue
        out.append(Knob(name, float(params.get(name, p.default)), float(p.min), float(p.max), p.type == "int"))
    return out


def measure_sensitivity(spec: Any, params: dict[str, Any], policy: Actor, knobs: list[Knob],
                        task_metric: str, episodes: int = 100, seed: int = 20_000) -> list[Knob]:
    """Each knob's effect on the task metric: (metric at +step - metric at -step) / 2, clipped to
    the knob's range, with a 95% half-width from the two evaluations."""
    loaded = spec if isinstance(spec, EnvSpec) else load_spec(spec)
    for k in knobs:
        up, down = min(k.high, k.value + k.step), max(k.low, k.value - k.step)
        if loaded.constraints:  # never play an assignment that breaks a constraint
            up = up if not broken_constraints(loaded, {**params, k.name: _cast(up, k)}) else k.value
            down = down if not broken_constraints(loaded, {**params, k.name: _cast(down, k)}) else k.value
        if up == down:
            continue
        a = play_episodes(spec, {**params, k.name: _cast(up, k)}, policy, episodes, seed).episode_metrics[task_metric]
        b = play_episodes(spec, {**params, k.name: _cast(down, k)}, policy, episodes, seed).episode_metrics[task_metric]
        scale = k.step / (up - down)
        k.effect = float(a.mean() - b.mean()) * scale
        k.ci95 = Z95 * float(np.hypot(a.std(ddof=1) / np.sqrt(a.size), b.std(ddof=1) / np.sqrt(b.size))) * scale
    return knobs


def _cast(x: float, k: Knob) -> int | float:
    return int(round(x)) if k.integer else float(x)


@dataclass
class Validation:
    """The policy on the validation set (configs drawn like the ones the final policy is judged
    on, other episodes): the transfer signal, measured after every stage."""

    cells: dict[str, float]  # cell label -> task metric
    mean: float  # the mean over cells
    ci95: float  # its 95% half-width (episodes pooled per cell)
    secondary: dict[str, float] = field(default_factory=dict)  # e.g. the optimal rate, mean over cells
    episodes: int = 0  # per cell

    def to_prompt(self, metric: str) -> str:
        cells = "; ".join(f"{k}: {v:.3f}" for k, v in self.cells.items())
        extra = "".join(f", {k} {v:.3f}" for k, v in self.secondary.items())
        return f"validation {metric} {self.mean:.3f} +/- {self.ci95:.3f}{extra} ({self.episodes} episodes per cell: {cells})"


def measure_validation(spec: Any, cells: dict[str, dict[str, Any]], policy: Actor, task_metric: str,
                       episodes: int, seed: int, secondary: tuple[str, ...] = ()) -> Validation:
    """The task metric (and `secondary` metrics) of `policy` in every validation cell."""
    rates, var, extra = {}, 0.0, dict.fromkeys(secondary, 0.0)
    for label, params in cells.items():
        m = play_episodes(spec, params, policy, episodes, seed).episode_metrics
        p = float(m[task_metric].mean())
        rates[label] = p
        var += p * (1 - p) / episodes
        for name in secondary:
            extra[name] += float(m[name].mean()) / len(cells)
    mean = float(np.mean(list(rates.values())))
    return Validation(rates, mean, Z95 * float(np.sqrt(var)) / len(cells), extra, episodes)


@dataclass
class StageEvidence:
    """A stage's evidence: one `Evidence` per bucket of its mixture (with the bucket's share),
    and the history of earlier stages (their mixtures, success per bucket and failure kinds).

    With a curriculum's goal it also has: the validation result (`validation`, the transfer
    signal) and what the final policy is judged on (`target`), the stage index out of `stages`,
    the env steps left, the configuration space the engineer may use (`space`, with each
    lever's meaning) and the guardrail's decisions so far (`guard`)."""

    spec: str
    task_metric: str
    band: tuple[float, float]
    buckets: list[tuple[Bucket, Evidence]]
    history: list[dict[str, Any]] = field(default_factory=list)
    stage: int = 0
    stages: int = 0  # the curriculum's number of stages (0: unknown)
    steps_left: int = 0  # env steps of training left after this stage
    validation: Validation | None = None
    target: str = ""
    space: Any = None  # a `ConfigSpace`, or None: knobs only, inside fixed buckets
    guard: list[str] = field(default_factory=list)
    rejected: list[Any] = field(default_factory=list)  # mixtures the guardrail reverted or rolled back
    targets: list[dict[str, Any]] = field(default_factory=list)  # the validation cells' params
    levers: dict[str, float] = field(default_factory=dict)
    """the designer levers' strengths this stage trained with (`Mixture.levers`)"""
    lever_menu: dict[str, Any] = field(default_factory=dict)
    """the designer levers the engineer may use (`gymwright.engineer.levers.Lever` by name; empty: none)"""

    def failure_shares(self) -> dict[str, float]:
        """Per failure kind, its share of the recorded episodes (share-weighted over the buckets)."""
        out: dict[str, float] = {}
        for b, e in self.buckets:
            for x in (e.failures.buckets.values() if e.failures else ()):
                for kind, n in x["kinds"].items():
                    out[kind] = out.get(kind, 0.0) + b.share * n / max(1, x["episodes"])
        return out

    @property
    def success(self) -> float:
        """The share-weighted task metric over the buckets."""
        return float(sum(b.share * e.success for b, e in self.buckets))

    def to_prompt(self, *, with_history: bool = True) -> str:
        of = f" of {self.stages}" if self.stages else ""
        lines = [f"Environment {self.spec}, training stage {self.stage + 1}{of}. The stage trained on a mixture "
                 f"of {len(self.buckets)} configs (buckets). Task metric {self.task_metric} of the trained "
                 f"policy (target band {self.band[0]:g}-{self.band[1]:g}), overall {self.success:.3f}."]
        if self.stages:
            lines.append(f"{self.steps_left:,} env steps of training are left ({self.stages - self.stage - 1} stages).")
        if self.target:
            lines.append(f"\n## Goal\n{self.target}")
        if self.validation is not None:
            lines.append("The final policy is judged there, not on the training buckets: the band is a heuristic for "
                         "keeping training informative; the objective is the validation result. Now: "
                         + self.validation.to_prompt(self.task_metric))
        if self.space is not None:
            lines.append("\n## Levers\n" + self.space.to_prompt())
        if self.lever_menu:
            lines.append("\n## Designer levers (training scaffolding)\n" + self._lever_lines())
        if self.guard:
            lines.append("\n## Guardrail decisions so far (a change that did not help was undone)")
            lines += [f"- {g}" for g in self.guard]
        lines.append("\nThe per-bucket rate is measured on many episodes after the stage; the example episodes "
                     "are a few recorded separately, so their share of failures differs from the rate by sampling "
                     "noise; the training rate is the same policy sampled during the stage, while it still learned.")
        for b, e in self.buckets:
            lines += self._bucket_lines(b, e)
        if with_history and self.history:
            lines += self._history_lines()
        return "\n".join(lines)

    def _lever_lines(self) -> str:
        shares = self.failure_shares()
        seen = ", ".join(f"{k} {v:.2f}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1])) or "none recorded"
        lines = ["These change the game the policy trains on, never the one it is judged on: validation and the "
                 "final judgment play the game as designed. Set each one's strength (its first allowed value is off); "
                 "turn one on where the failures call for it, and off when it no longer helps.",
                 f"Failures of the recorded episodes (share of episodes, by kind): {seen}."]
        lines += [f"- {lv.describe(self.levers.get(name, lv.off))}" for name, lv in self.lever_menu.items()]
        return "\n".join(lines)

    def _bucket_lines(self, b: Bucket, e: Evidence) -> list[str]:
        train = "".join(f"; training {k} {v:.3f}" for k, v in e.train_stats.items())
        lines = [f"\n## Bucket {b.label} (share of the data {b.share:.2f})",
                 f"params {b.params}; {self.task_metric} {e.success:.3f}{train}"]
        if e.failures:
            lines.append(e.failures.to_prompt(max_examples=1))
        lines += [f"- knob {k.name} = {k.value:g} in [{k.low:g}, {k.high:g}], step {k.step:g}: "
                  f"{k.effect:+.3f} +/- {k.ci95:.3f} on {self.task_metric} per step up" for k in e.knobs or []]
        return lines

    def _history_lines(self) -> list[str]:
        lines = ["\n## Earlier stages"]
        for h in self.history:
            per = "; ".join(f"{x['label']} share {x['share']:.2f} params {x['params']}: {x.get('success', 0):.3f} "
                            f"failures {x.get('failures', {})}" for x in h["mixture"])
            val = f"; validation {h['validation']:.3f}" if h.get("validation") is not None else ""
            lines.append(f"- stage {h['index'] + 1}: {per}{val}")
        return lines
