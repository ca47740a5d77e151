"""Degeneracy under trained play: the verifier's checks (constant rewards, instant ends, frozen
features and metrics, never-legal and dead choices) on the trained policy's own episodes, plus
collapsed action distributions."""

from __future__ import annotations

import copy
from collections import Counter

import numpy as np

from gymwright.compile import CompiledEnv
from gymwright.evaluate.checks import Check
from gymwright.evaluate.play import Actor, act_parallel
from gymwright.train.boundary import check_agent_step
from gymwright.verify.degeneracy import degeneracy
from gymwright.verify.dynamic import Rollouts

COLLAPSED = 0.95  # one action in this share of a role's turns


def trained_rollouts(compiled: CompiledEnv, policy: Actor, episodes: int, seed: int,
                     keep_states: int = 30, max_steps: int = 1000) -> tuple[Rollouts, dict[str, Counter[int]]]:
    """What the verifier's random play records, but under the trained policy."""
    env = compiled.parallel_env()
    module, r = compiled.module, Rollouts()
    chosen: dict[str, Counter[int]] = {}
    rng = np.random.default_rng(seed)
    for k in range(episodes):
        obs, infos = env.reset(seed=seed + k)
        check_agent_step(compiled.checked.spec.name, 0, obs)
        r.record(module, obs, None, infos, ended=False)
        steps = 0
        while env.agents and steps < max_steps:
            actions = act_parallel(env, policy, obs, infos)
            for agent, a in actions.items():
                chosen.setdefault(module.ROLE_OF[module.AGENTS.index(agent)], Counter())[a] += 1
            if len(r.states) < keep_states and rng.random() < 0.3:
                r.states.append((copy.deepcopy(env), dict(actions)))
            obs, rew, _, _, infos = env.step(actions)
            steps += 1
            check_agent_step(compiled.checked.spec.name, steps, obs, rew)
            r.record(module, obs, rew, infos, ended=not env.agents)
        r.metrics.append(next(iter(infos.values()), {}).get("metrics", {}))
        r.lengths.append(steps)
    return r, chosen


def trained_degeneracy(compiled: CompiledEnv, policy: Actor, episodes: int = 30, seed: int = 0) -> list[Check]:
    rollouts, chosen = trained_rollouts(compiled, policy, episodes, seed)
    checks = [Check(f"degeneracy.{d.path or 'spec'}", "warning",
                    d.message.replace("random episodes", "episodes of trained play"), {"hint": d.hint})
              for d in degeneracy(compiled, rollouts)]
    checks += collapsed(compiled, chosen)
    return checks or [Check("degeneracy", "ok", "no degeneracy under trained play")]


def collapsed(compiled: CompiledEnv, chosen: dict[str, Counter[int]]) -> list[Check]:
    out = []
    for role, counts in chosen.items():
        total = sum(counts.values())
        a, n = counts.most_common(1)[0]
        if total >= 20 and n / total >= COLLAPSED:
            choice, args = compiled.module.DECODE[role][a]
            out.append(Check(f"degeneracy.collapsed.{role}", "warning",
                             f"the trained {role} plays `{choice}{args or ''}` in {n / total:.0%} of its "
                             f"{total} turns: fine if that is the equilibrium, else the observation or "
                             "reward may not let it tell situations apart", {"share": n / total}))
    return out
