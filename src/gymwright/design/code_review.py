"""Code mode's task-fit review: after a module passes the sandboxed checks, the model checks it
against the task, as spec mode's review (`review.py`) checks a spec.

The review prompt (`prompts/code_review.md`) holds the task, the module (numbered lines), the
model's own scenarios, the checks' warnings, and a record of play: `EPISODES` seeded episodes of
random legal play (fewer for a long game: at most `STEP_BUDGET` steps), played in a sandbox
worker of their own (nothing of the module is imported here), the first episode's opening steps
written out, then per agent the mean return with its 95% interval and range, the mean length,
how episodes ended and each final metric's mean with its interval. The reply is a
`TaskFitReview`, parsed as spec mode's (`review.parse_review`: the verdict follows the checks);
its failed checks go back to the code repair loop (`prompts/code_review_repair.md`), and the
design reports `fits_task`. A review call that fails sets `session.review_error` (the design
ends `review_failed` with the checked module kept), as in spec mode.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from gymwright.codemode.proxy import SandboxedParallelEnv, load_module
from gymwright.codemode.sandbox import SandboxError
from gymwright.codemode.vet import vet_source
from gymwright.design.plans import TaskFitReview
from gymwright.design.review import ask_review, interval, warnings_text
from gymwright.llm.base import Message

EPISODES = 20  # seeded episodes of random legal play summed up in the record
STEP_BUDGET = 4000  # at most this many steps in all: a long game plays fewer episodes
SHOWN_STEPS = 6  # steps written out (the first episode's)
MAX_STEPS = 300  # an episode is cut here in the record (the checks have seen every episode end)


def review_code(session: Any, candidate: dict[str, Any]) -> TaskFitReview | None:
    """Ask the session's model whether the module fits the session's task; None when no usable
    review came back: `session.review_error` says why, and the design ends `review_failed`."""
    user = session.prompts.render("code_review", task=session.task, code=numbered(candidate["code"]),
                                  scenarios=scenario_block(candidate.get("scenarios")),
                                  warnings=warnings_text(session.last_report), play=play_record(candidate))
    system = Message("system", session.prompts.render("code_system"))
    return ask_review(session, "code_review", [system, Message("user", user)])


def numbered(code: str) -> str:
    return "\n".join(f"{i:4d}  {line}" for i, line in enumerate(code.splitlines(), 1))


def scenario_block(scenarios: Any) -> str:
    if not scenarios:
        return "(none)"
    return "\n".join(f"- {json.dumps(s, separators=(',', ':'))}" for s in scenarios)


def play_record(candidate: dict[str, Any], episodes: int = EPISODES) -> str:
    """Random legal play of the module over seeds 0, 1, ... (at most `episodes`, and at most
    STEP_BUDGET steps in all) in a sandbox worker, in a few lines."""
    vetted = vet_source(candidate["code"], candidate.get("class"))
    if not vetted.passed:
        return "(no play: the module did not pass vetting)"
    try:
        with load_module(candidate["code"], vetted.env_class) as sandbox:
            env = SandboxedParallelEnv(sandbox)
            try:
                played: list[dict[str, Any]] = []
                while len(played) < episodes and sum(e["length"] for e in played) < STEP_BUDGET:
                    played.append(episode(env, len(played), lines=not played))
                return summarize(played)
            finally:
                env.close()
    except SandboxError as e:
        return f"(could not play: {e.message})"
    except Exception as e:  # noqa: BLE001 - what the module returned could not be summed up: the review goes on
        return f"(could not play: {type(e).__name__}: {e})"


def episode(env: SandboxedParallelEnv, seed: int, lines: bool) -> dict[str, Any]:
    """One episode of random legal play: returns, length, how it ended, final metrics, and
    (with `lines`) its first steps written out."""
    rng = np.random.default_rng(seed)
    _, infos = env.reset(seed=seed)
    returns = {a: 0.0 for a in env.possible_agents}
    shown: list[str] = []
    t, ended = 0, "cut at the record's step limit"
    metrics: dict[str, Any] = {}
    while env.agents and t < MAX_STEPS:
        actions = {}
        for a in env.agents:
            mask = infos.get(a, {}).get("action_mask") if isinstance(infos.get(a), dict) else None
            legal = np.flatnonzero(np.asarray(mask)) if mask is not None else np.arange(getattr(env.action_space(a), "n", 1))
            actions[a] = int(rng.choice(legal)) if legal.size else 0
        _, rewards, terms, truncs, infos = env.step(actions)
        t += 1
        for a, r in rewards.items():
            returns[a] = returns.get(a, 0.0) + float(r)
        found = next((i["metrics"] for i in infos.values() if isinstance(i, dict) and isinstance(i.get("metrics"), dict)), None)
        metrics = numbers(found) if found is not None else metrics
        if lines and t <= SHOWN_STEPS:
            acted = ", ".join(f"{a} {x}" for a, x in actions.items())
            paid = ", ".join(f"{a} {float(r):+.3g}" for a, r in rewards.items() if float(r)) or "no reward"
            shown.append(f"step {t}: actions {acted} -> {paid}")
        if any(terms.values()):
            ended = "terminated"
        elif any(truncs.values()):
            ended = "truncated"
    return {"returns": returns, "length": t, "ended": ended, "metrics": metrics, "lines": shown}


def numbers(metrics: dict[str, Any]) -> dict[str, float]:
    """The metrics that are finite numbers (the checks warn of the rest; the record leaves them out)."""
    out = {}
    for name, value in metrics.items():
        if isinstance(value, (bool, int, float, np.number)) and np.isfinite(value):
            out[str(name)] = float(value)
    return out


def mean_interval(values: list[float]) -> str:
    """`mean M ± H (min A, max B)`, M ± H the mean and the half-width of its 95% interval
    (`review.interval`, as spec mode's record writes it)."""
    return f"mean {interval(values)} (min {min(values):.3g}, max {max(values):.3g})"


def summarize(episodes: list[dict[str, Any]]) -> str:
    first = episodes[0]
    out = ["## the first episode (seed 0), action indices", *first["lines"]]
    if first["length"] > SHOWN_STEPS:
        out.append(f"... {first['length'] - SHOWN_STEPS} more steps")
    out.append(f"\n## {len(episodes)} episodes (seeds 0-{len(episodes) - 1})")
    lengths = [e["length"] for e in episodes]
    out.append(f"length: mean {np.mean(lengths):.3g} (min {min(lengths)}, max {max(lengths)}); ended: "
               + ", ".join(f"{k} {sum(e['ended'] == k for e in episodes)}" for k in dict.fromkeys(e["ended"] for e in episodes)))
    for agent in first["returns"]:
        values = [e["returns"].get(agent, 0.0) for e in episodes]
        out.append(f"return of {agent}: {mean_interval(values)}")
    names = list(dict.fromkeys(k for e in episodes for k in e["metrics"]))
    for name in names[:12]:
        values = [float(e["metrics"][name]) for e in episodes if name in e["metrics"]]
        out.append(f"metric {name}: {mean_interval(values)} over {len(values)} episodes")
    if not names:
        out.append("no episode's final infos carry metrics")
    return "\n".join(out)


__all__ = ["play_record", "review_code"]
