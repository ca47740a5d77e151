"""The task-fit review: after a spec passes verification, the model checks it against the task.

A verified spec runs; it may still be the wrong game (a path-finding grid for a coverage task,
simultaneous moves for a turn-based one, a metric that measures nothing the task cares about).
The review sends the task text, the spec (YAML) and a short record of play (random legal
actions, then each scripted baseline of the spec: per step the actions, rewards and ends, then
returns and metrics) and asks point by point: agents and roles, actions, rewards, observations,
ends, metrics (`TaskFitReview`). Its failed checks go back to the repair loop like the
verifier's findings; the design reports `fits_task`: yes, no, or unknown (no usable review).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gymwright.design.plans import TaskFitReview
from gymwright.design.prompts import readable
from gymwright.llm.base import LLMError, Message

PLAY_SEED = 0
SHOWN_STEPS = 6  # steps written out per episode; the rest are summed up
MAX_STEPS = 200  # an episode is cut here (the verifier has checked that episodes end)
MAX_BASELINES = 2

Chooser = Callable[[Any, str, np.ndarray], int]  # (env, agent, legal action ids) -> action


def review_spec(session: Any, spec: dict[str, Any]) -> TaskFitReview | None:
    """Ask the session's model whether `spec` fits the session's task; None when no usable
    review came back (the design goes on with `fits_task` unknown)."""
    from gymwright.design.session import DesignStopped

    user = session.prompts.render("review", task=session.task, spec=readable(spec),
                                  play=play_record(spec))
    try:
        review, _ = session.ask_json("review", [session.system(), Message("user", user)],
                                     TaskFitReview.model_json_schema(), TaskFitReview.model_validate)
    except (DesignStopped, LLMError) as e:  # a spent budget, a lost server: keep the verified spec
        session.note("review", f"no usable task-fit review ({e.message}); fits the task: unknown")
        return None
    return review


def play_record(spec: dict[str, Any], seed: int = PLAY_SEED) -> str:
    """Random legal play and each scripted baseline, one episode each, in a few lines."""
    from gymwright.compile import compile_spec

    try:
        compiled = compile_spec(spec)
        env, module = compiled.parallel_env(), compiled.module
    except Exception as e:  # noqa: BLE001 - the review goes on without play
        return f"(no play: the spec did not compile here: {type(e).__name__}: {e})"
    rng = np.random.default_rng(seed)
    players: list[tuple[str, Chooser]] = [("random legal actions", random_choice(rng))]
    for name in list(getattr(module, "BASELINES", []))[:MAX_BASELINES]:
        players.append((f"scripted baseline `{name}`", scripted_choice(name, rng)))
    parts = []
    for title, choose in players:
        try:
            parts.append(f"## {title}\n" + episode_record(env, choose, seed, _decoder(module)))
        except Exception as e:  # noqa: BLE001 - a baseline that cannot play is reported
            parts.append(f"## {title}\n(could not play: {type(e).__name__}: {e})")
    return "\n\n".join(parts)


def random_choice(rng: np.random.Generator) -> Chooser:
    return lambda env, agent, legal: int(rng.choice(legal))


def scripted_choice(name: str, rng: np.random.Generator) -> Chooser:
    """The baseline's action where a rule applies and it is legal, else a random legal one."""
    def choose(env: Any, agent: str, legal: np.ndarray) -> int:
        action = int(env.unwrapped.scripted_action(name, agent))
        return action if action in legal else int(rng.choice(legal))
    return choose


def episode_record(env: Any, choose: Chooser, seed: int,
                   decode: Callable[[str, int], str]) -> str:
    """One episode: the first steps written out, then the length, how it ended, returns, metrics."""
    _, infos = env.reset(seed=seed)
    returns = {a: 0.0 for a in env.agents}
    lines, t, metrics, ended = [], 0, {}, "cut at the step limit of this record"
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
