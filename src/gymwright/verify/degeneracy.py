"""Degeneracy: cheap early warnings of an environment that cannot teach anything.

Statistics over the random episodes of the dynamic stage (constant rewards, observation
features and metrics that never vary, episodes that end at once, choices never legal), and a
counterfactual probe: from sampled states, does taking a choice change anything compared with
taking no action at all?
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from gymwright.compile.build import CompiledEnv
from gymwright.diagnostic import Diagnostic, info, warning
from gymwright.verify.dynamic import Rollouts, same

STAGE = "degeneracy"


def degeneracy(compiled: CompiledEnv, r: Rollouts) -> list[Diagnostic]:
    n = len(r.lengths)
    if n == 0:
        return []
    return (constant_rewards(compiled, r, n) + instant_ends(compiled, r, n) + frozen_features(compiled, r, n)
            + frozen_metrics(compiled, r, n) + never_legal(compiled, r, n) + dead_choices(compiled, r))


def constant_rewards(c: CompiledEnv, r: Rollouts, n: int) -> list[Diagnostic]:
    out = []
    for role in c.checked.roles:
        values = r.rewards.get(role.name, [])
        if values and np.ptp(values) == 0 and role.terms:
            out.append(warning(STAGE, f"rewards.{role.name}", f"the reward of every {role.name} agent was {values[0] + 0.0:g} "
                               f"at every step of {n} random episodes", "a constant reward cannot teach: make it depend "
                               "on what the agents do (check the terms' conditions)"))
            continue
        for i, term in enumerate(role.terms):
            tv = r.terms.get((role.name, term.name), [])
            if tv and np.ptp(tv) == 0:
                out.append(info(STAGE, f"rewards.{role.name}[{i}]", f"reward term `{term.name}` was {tv[0] + 0.0:g} at every "
                                f"step of {n} random episodes", "fine if only a trained policy can trigger it"))
    return out


def instant_ends(compiled: CompiledEnv, r: Rollouts, n: int) -> list[Diagnostic]:
    """Every random episode ended after one step: a warning when `terminate` (or `truncate`)
    already holds at reset, a note for a one-shot game (the end comes from the first step)."""
    if not r.lengths or not all(x <= 1 for x in r.lengths):
        return []
    env = compiled.parallel_env()
    env.reset(seed=0)
    held = [name for name, now in zip(("terminate", "truncate"), env.ends_now(), strict=True) if now]
    if held:
        return [warning(STAGE, held[0], f"all {n} random episodes ended after one step: `{held[0]}` holds at reset",
                        f"check `{held[0]}`: it is true before any step (e.g. a comparison that holds at reset)")]
    return [info(STAGE, "terminate", "every random episode ended after its first step: a one-shot game",
                 "fine if the task is one round; else check `terminate`")]


def frozen_features(c: CompiledEnv, r: Rollouts, n: int) -> list[Diagnostic]:
    out = []
    for role in c.checked.roles:
        seen = r.obs.get(role.name)
        if not seen:
            continue
        obs = np.stack(seen)
        at = 0
        for f in role.features:
            part = obs[:, at:at + f.size]
            at += f.size
            if np.all(part == part[0]):
                out.append(warning(STAGE, f.path, f"observation feature `{f.name}` of {role.name} never varied in {n} "
                                   "random episodes", "a feature that never changes tells the policy nothing: "
                                   "remove it or make it depend on the state"))
    return out


def frozen_metrics(c: CompiledEnv, r: Rollouts, n: int) -> list[Diagnostic]:
    out = []
    if n < 2:
        return out
    hint = "a metric that never varies cannot tell good play from bad; check its expression"
    frozen: dict[str, list[tuple[str, float, int]]] = {}  # spec metric -> (name, value, episodes) per frozen one
    paths: dict[str, str] = {}
    parts: dict[str, int] = {}  # how many metrics a spec metric became (one per agent where `per_agent`)
    for m in c.checked.metrics:
        key = m.spec_name or m.name
        paths.setdefault(key, m.path)
        parts[key] = parts.get(key, 0) + 1
        values = [ep.get(m.name) for ep in r.metrics if m.name in ep]
        if len(values) >= 2 and np.ptp(values) == 0:
            frozen.setdefault(key, []).append((m.name, float(values[0]), len(values)))
    for key, found in frozen.items():  # one warning per metric of the spec, not one per agent
        if parts[key] == 1 and found[0][0] == key:
            name, value, k = found[0]
            out.append(warning(STAGE, paths[key], f"metric `{name}` was {value:g} in every one of {k} random episodes", hint))
            continue
        each = ", ".join(f"{name.removeprefix(key + '.')} = {value:g}" for name, value, _ in found)
        who = "every agent" if len(found) == parts[key] else f"{len(found)} of {parts[key]} agents"
        out.append(warning(STAGE, paths[key], f"per-agent metric `{key}` never varied for {who} in {found[0][2]} "
                           f"random episodes ({each})", hint))
    return out


def never_legal(c: CompiledEnv, r: Rollouts, n: int) -> list[Diagnostic]:
    out = []
    for role in c.checked.roles:
        counts = r.masks.get(role.name)
        if counts is None or np.ndim(counts) == 0:
            continue
        for ch in role.choices:
            if not np.any(counts[ch.offset:ch.offset + ch.n]):
                out.append(warning(STAGE, f"{ch.path}.legal", f"choice `{ch.name}` was never legal in {n} random episodes",
                                   "check its `legal` condition", value=ch.legal.source if ch.legal else True))
    return out


def dead_choices(c: CompiledEnv, r: Rollouts) -> list[Diagnostic]:
    """Choices that never change state, reward or observation compared with doing nothing.

    One such choice per role is its no-op (`wait`, `pass`): fine. A second one is dead weight.
    """
    seen: dict[tuple[str, str], list[int]] = {}  # (role, choice) -> [times legal, times it mattered]
    for env, actions in r.states:
        _probe_state(c, env, actions, seen)
    out = []
    for role in c.checked.roles:
        noops = [ch for ch in role.choices if seen.get((role.name, ch.name), [0, 1])[0] > 0 and seen[(role.name, ch.name)][1] == 0]
        for ch in noops[1:]:
            tried = seen[(role.name, ch.name)][0]
            out.append(warning(STAGE, ch.path, f"choice `{ch.name}` never changed state, reward or observation in "
                               f"{tried} sampled states, like `{noops[0].name}`: two choices that do nothing",
                               "give it an effect in the step rules or remove it"))
    return out


def _probe_state(c: CompiledEnv, env: Any, actions: dict[str, int], seen: dict[tuple[str, str], list[int]]) -> None:
    module = c.module
    for agent, _ in actions.items():
        i = module.AGENTS.index(agent)
        role = c.checked.role_of(i)
        mask = env._masks[i]
        others = {a: x for a, x in actions.items() if a != agent}
        base = _outcome(env, others)
        for ch in role.choices:
            legal = np.flatnonzero(mask[ch.offset:ch.offset + ch.n])
            if not len(legal):
                continue
            stat = seen.setdefault((role.name, ch.name), [0, 0])
            stat[0] += 1
            tries = legal[np.linspace(0, len(legal) - 1, min(len(legal), 8)).astype(int)]
            if any(not same(_outcome(env, {**others, agent: ch.offset + int(k)}), base) for k in tries):
                stat[1] += 1


def _outcome(env: Any, actions: dict[str, int]) -> tuple[Any, ...]:
    e = copy.deepcopy(env)
    obs, rew, term, trunc, _ = e.step(actions)
    return e.state(), obs, rew, term, trunc
