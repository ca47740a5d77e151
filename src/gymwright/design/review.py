"""The task-fit review: after a spec passes verification, the model checks it against the task.

A verified spec runs; it may still be the wrong game (a path-finding grid for a coverage task,
simultaneous moves for a turn-based one, a metric that measures nothing the task cares about).
The review sends the task text, the spec (YAML), the verifier's warnings, and a record of play:
one sample episode of random legal actions (per step the actions, rewards and ends, then returns
and metrics), and then random legal play and each scripted baseline over `EPISODES` seeded
episodes each, summed up as means with 95% intervals (per role return, length, each metric, and
for a baseline how often one of its rules applied: where none applies, or the baseline leaves a
role out, its agents play random legal actions). It asks point by point: agents and roles,
actions, params, rewards, observations, ends, metrics (`TaskFitReview`).

The verdict is derived from the checks: the spec fits when every check fits. A reply whose
`fits_task` says it fits while a check fails is decided by the checks (the repair prompt quotes
the failing checks and says that the overall verdict disagreed); one whose `fits_task` says it
does not fit while every check fits names nothing to repair and is asked again. Failed checks
go back to the repair loop like the verifier's findings. A review call that fails (no usable
reply, a spent budget, a lost server) is a failure of the design with its reason (status
`review_failed`), the verified spec kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gymwright.design.plans import TaskFitReview
from gymwright.design.prompts import readable
from gymwright.llm.base import LLMError, Message

PLAY_SEED = 0
SHOWN_STEPS = 6  # steps written out in the sample episode; the rest are summed up
MAX_STEPS = 200  # an episode is cut here (the verifier has checked that episodes end)
MAX_BASELINES = 4  # scripted baselines summed up (the rest are named)
EPISODES = 30  # seeded episodes per player in the summary
STEP_BUDGET = 6000  # at most this many steps per player: a long game plays fewer episodes
MAX_WARNINGS = 12  # verifier warnings shown
PER_AGENT = 4  # up to this many agents, returns per agent; more: per role

Chooser = Callable[[Any, str, np.ndarray], int]  # (env, agent, legal action ids) -> action


def review_spec(session: Any, spec: dict[str, Any]) -> TaskFitReview | None:
    """Ask the session's model whether `spec` fits the session's task; None when the review
    failed (no usable reply, a spent budget, a lost server): `session.review_error` says why."""
    report = session.last_report
    user = session.prompts.render("review", task=session.task, spec=readable(spec),
                                  play=play_record(spec), warnings=warnings_text(report))
    return ask_review(session, "review", [session.system(), Message("user", user)])


def ask_review(session: Any, stage: str, messages: list[Message]) -> TaskFitReview | None:
    """One review call (spec or code mode); None when it failed, with `session.review_error`
    saying why: the checked design is kept and fails with that reason."""
    from gymwright.design.session import DesignStopped

    try:
        review, _ = session.ask_json(stage, messages, TaskFitReview.model_json_schema(), parse_review)
    except (DesignStopped, LLMError) as e:
        session.review_error = e.message
        session.note(stage, f"the task-fit review failed: {e.message}")
        return None
    return review


def parse_review(data: Any) -> TaskFitReview:
    """A review whose checks back its verdict: `fits_task` false with every check fitting names
    nothing to repair, and is refused (asked again)."""
    from gymwright.design.session import ReplyUnusable

    review = TaskFitReview.model_validate(data)
    if not review.fits_task and not review.failures():
        raise ReplyUnusable(
            "`fits_task` is false but every check fits: the verdict follows the checks, so mark each "
            "check the spec fails (`fits`: false) with its `problem` and `fix`, or set `fits_task` to true")
    return review


def warnings_text(report: Any) -> str:
    """The verifier's warnings of the reviewed spec, one a line with its path and fix."""
    found = [d for d in (report.diagnostics if report is not None else []) if d.severity.value == "warning"]
    if not found:
        return "(none)"
    lines = [f"- {d.path or '<spec>'}: {d.message}" + (f" (fix: {d.hint})" if d.hint else "")
             for d in found[:MAX_WARNINGS]]
    if len(found) > MAX_WARNINGS:
        lines.append(f"- ... and {len(found) - MAX_WARNINGS} more")
    return "\n".join(lines)


def play_record(spec: dict[str, Any], seed: int = PLAY_SEED, episodes: int = EPISODES) -> str:
    """One sample episode of random legal play, then random legal play and each scripted
    baseline over `episodes` seeds: means with 95% intervals."""
    from gymwright.compile import compile_spec

    try:
        compiled = compile_spec(spec)
        env, module = compiled.parallel_env(), compiled.module
    except Exception as e:  # noqa: BLE001 - the review goes on without play
        return f"(no play: the spec did not compile here: {type(e).__name__}: {e})"
    decode = _decoder(module)
    try:
        sample = episode_record(env, random_choice(np.random.default_rng(seed)), seed, decode)
    except Exception as e:  # noqa: BLE001 - an env that cannot play is reported
        sample = f"(could not play: {type(e).__name__}: {e})"
    names = list(getattr(module, "BASELINES", []))
    players: list[tuple[str, str | None]] = [("random legal actions", None)]
    players += [(f"scripted baseline `{n}`", n) for n in names[:MAX_BASELINES]]
    scripted = {str(n): list(roles or {}) for n, roles in (spec.get("baselines") or {}).items()}
    lines = []
    for title, name in players:
        try:
            lines.append(f"- {title}: " + summary(env, module, name, seed, episodes,
                                                   scripted.get(name or "", [])))
        except Exception as e:  # noqa: BLE001 - a player that cannot play is reported
            lines.append(f"- {title}: (could not play: {type(e).__name__}: {e})")
    if len(names) > MAX_BASELINES:
        lines.append(f"- (not played here: {', '.join(names[MAX_BASELINES:])})")
    return (f"## A sample episode of random legal actions (seed {seed})\n{sample}\n\n"
            f"## Over {episodes} episodes each (seeds {seed}-{seed + episodes - 1}): "
            "mean ± half-width of its 95% interval\n"
            f"Returns per agent (with more than {PER_AGENT} agents: per role, the mean of its agents); "
            "where a baseline's rules do not apply, or it leaves a role out, its agents play random "
            "legal actions.\n" + "\n".join(lines))


@dataclass
class _Play:
    """One player's seeded episodes: who chooses the actions, and what the episodes gave."""

    env: Any
    name: str | None
    rng: np.random.Generator
    scripted: list[str]
    role_of: dict[str, str]
    returns: dict[str, list[float]] = field(default_factory=dict)
    lengths: list[float] = field(default_factory=list)
    metrics: dict[str, list[float]] = field(default_factory=dict)
    applied: int = 0
    acted: int = 0
    steps: int = 0
    played: int = 0

    def actions(self, infos: dict[str, Any]) -> dict[str, int]:
        """This step's action of each alive agent that has a legal one."""
        actions = {}
        for agent in self.env.agents:
            legal = np.flatnonzero(np.asarray(infos.get(agent, {}).get("action_mask", [1])))
            if not legal.size:
                continue
            if self.name is None:
                actions[agent] = int(self.rng.choice(legal))
                continue
            a, rule = self.env.unwrapped.scripted_action(self.name, agent, with_rule=True, rng=self.rng)
            if self.role_of[agent] in self.scripted:
                self.applied, self.acted = self.applied + (rule >= 0), self.acted + 1
            if a is not None:
                actions[agent] = int(a)
        return actions

    def episode(self, seed: int) -> tuple[int, dict[str, float], dict[str, Any]]:
        """One episode from `seed`: its length, each agent's return, and its last metrics."""
        env = self.env
        _, infos = env.reset(seed=seed)
        total = {a: 0.0 for a in env.possible_agents}
        t = 0
        last: dict[str, Any] = {}
        while env.agents and t < MAX_STEPS:
            _, rewards, _, _, infos = env.step(self.actions(infos))
            t += 1
            for a, r in rewards.items():
                total[a] += float(r)
            last = next((dict(i["metrics"]) for i in infos.values() if "metrics" in i), last)
        return t, total, last

    def record(self, roles: dict[str, str], t: int, total: dict[str, float], last: dict[str, Any]) -> None:
        """Add one episode's length, per-role mean return and metrics to the tallies."""
        self.steps, self.played = self.steps + t, self.played + 1
        self.lengths.append(t)
        by_role: dict[str, list[float]] = {}
        for a, r in total.items():
            by_role.setdefault(roles[a], []).append(r)
        for role, rs in by_role.items():
            self.returns.setdefault(role, []).append(float(np.mean(rs)))
        for m, v in last.items():  # a per-agent metric arrives as one `NAME.AGENT` scalar per agent
            self.metrics.setdefault(m, []).append(float(v))

    def written(self, episodes: int) -> str:
        """The tallies as one summary line."""
        parts = [", ".join(f"{role} return {interval(rs)}" for role, rs in self.returns.items()),
                 f"length {interval(self.lengths)}"]
        if self.metrics:
            parts.append("metrics: " + ", ".join(f"{m} {interval(v)}" for m, v in self.metrics.items()))
        if self.name is not None:
            left = [r for r in dict.fromkeys(self.role_of.values()) if r not in self.scripted]
            parts.append(f"a rule applied on {self.applied / max(self.acted, 1):.0%} of the agent-steps of "
                         f"{', '.join(self.scripted)}" + (f"; {', '.join(left)} left out" if left else ""))
        note = f" ({self.played} episodes: the step budget of this record)" if self.played < episodes else ""
        return "; ".join(parts) + note


def summary(env: Any, module: Any, name: str | None, seed: int, episodes: int,
            scripted: list[str] | None = None) -> str:
    """Random legal play (`name` None) or scripted baseline `name` (scripting roles `scripted`)
    over seeded episodes: the returns, the length, each metric, and how often a rule applied."""
    rng = np.random.default_rng(seed)
    per_agent = len(env.possible_agents) <= PER_AGENT
    roles = {a: a if per_agent else module.ROLE_OF[module.AGENTS.index(a)] for a in env.possible_agents}
    role_of = {a: module.ROLE_OF[module.AGENTS.index(a)] for a in env.possible_agents}
    play = _Play(env, name, rng, scripted or [], role_of)
    for k in range(episodes):
        if play.steps >= STEP_BUDGET:
            break
        play.record(roles, *play.episode(seed + k))
    return play.written(episodes)


def interval(values: list[float]) -> str:
    """`mean ± 1.96 standard errors`, three significant digits."""
    x = np.asarray(values, dtype=float)
    mean = float(x.mean())
    half = 1.96 * float(x.std(ddof=1)) / math.sqrt(len(x)) if len(x) > 1 else float("nan")
    if half < 1e-9 * max(1.0, abs(mean)):  # rounding noise of a constant
        half = 0.0
    return f"{mean:.3g} ± {half:.2g}"


def random_choice(rng: np.random.Generator) -> Chooser:
    return lambda env, agent, legal: int(rng.choice(legal))


def episode_record(env: Any, choose: Chooser, seed: int,
                   decode: Callable[[str, int], str]) -> str:
    """One episode: the first steps written out, then the length, how it ended, returns, metrics."""
    _, infos = env.reset(seed=seed)
    returns = {a: 0.0 for a in env.agents}
    metrics: dict[str, Any] = {}
    lines, t, ended = [], 0, "cut at the step limit of this record"
    while env.agents and t < MAX_STEPS:
        actions = {}
        for agent in env.agents:
            legal = np.flatnonzero(np.asarray(infos.get(agent, {}).get("action_mask", [1])))
            if legal.size:
                actions[agent] = choose(env, agent, legal)
        _, rewards, terms, truncs, infos = env.step(actions)
        t += 1
        for a, r in rewards.items():
            returns[a] = returns.get(a, 0.0) + float(r)
        metrics = next((dict(i["metrics"]) for i in infos.values() if "metrics" in i), metrics)
        if t <= SHOWN_STEPS:
            acted = ", ".join(f"{a} {decode(a, x)}" for a, x in actions.items()) or "nobody acts"
            paid = ", ".join(f"{a} {float(r):+.3g}" for a, r in rewards.items() if float(r)) or "no reward"
            lines.append(f"step {t}: {acted} -> {paid}")
        if any(terms.values()):
            ended = "terminated"
        elif any(truncs.values()):
            ended = "truncated"
    if t > SHOWN_STEPS:
        lines.append(f"... {t - SHOWN_STEPS} more steps")
    lines.append(f"ended after {t} steps ({ended}); returns: "
                 + ", ".join(f"{a} {r:.3g}" for a, r in returns.items()))
    if metrics:
        lines.append("metrics: " + ", ".join(f"{k} {float(v):.3g}" for k, v in metrics.items()))
    return "\n".join(lines)


def _decoder(module: Any) -> Callable[[str, int], str]:
    """Action id -> `choice(arg=value)`, from the generated module's DECODE table."""
    table, roles, index = (getattr(module, n, None) for n in ("DECODE", "ROLE_OF", "AGENT_INDEX"))

    def decode(agent: str, action: int) -> str:
        try:
            choice, args = table[roles[index[agent]]][action]  # type: ignore[index]  # a table getattr did not find is None: the except's TypeError catches it
        except (TypeError, KeyError, IndexError):
            return f"action {action}"
        given = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in args.items())
        return f"{choice}({given})" if given else choice
    return decode
