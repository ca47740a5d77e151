"""`step`: actions in, the mechanics modules, step rules, rewards, metrics, ends, outputs."""

from __future__ import annotations

from contextlib import nullcontext

from gymwright.compile.common import rule_groups
from gymwright.compile.pyexpr import PyEmitter, hoist
from gymwright.compile.pygen import actions, metrics, rewards
from gymwright.compile.pygen.base import (
    IMPLICIT,
    as_bool,
    draws_after_reset,
    is_true,
    unconditional,
)
from gymwright.compile.pygen.context import GenContext
from gymwright.compile.pygen.observe import Observations
from gymwright.compile.sharing import repeated_calls
from gymwright.spec.checked import CRule


def step(g: GenContext, observations: Observations) -> None:
    """`step(actions)` and `episode_metrics()`; an unrolled step writes out the observations
    (`observations`)."""
    cs, w = g.cs, g.w
    with w.block("def step(self, actions):"):
        with w.block("if not self.agents:"):
            w("raise RuntimeError('the episode is over (no live agents); call reset() first')")
        w("p, v = self.p, self.v")
        if draws_after_reset(cs):
            w("v._rng.step = v.t + 1")
        actions.decode(g)
        with g.lists_read_once():
            for part in g.parts:  # the mechanics modules (a grid's moves, a channel's messages)
                part.step(g)
            for group in rule_groups(cs.rules):
                rules(g, group)
            w("v.t += 1")
            if g.unrolled:
                rewards.rewards_inline(g)
            else:
                w("rewards, terms = self._rewards()")
        for m in metrics.accumulated(cs):
            metrics.fold(g, m)
        terminated, truncated = end_codes(g)
        w(f"terminated = {terminated}", comment=f"terminate: {cs.terminate.source}")
        w(f"truncated = {truncated}", comment=f"truncate: {cs.truncate.source}")
        with w.block("if self.max_cycles is not None and v.t >= self.max_cycles:"):
            w("truncated = True", comment="max_cycles: the caller's cap on the episode length")
        if cs.agent_end is not None:
            agent_ends(g)
        w("done = terminated or truncated")
        with w.block("if not done:"):
            w("self._compute_masks()")
            if cs.agent_end is not None:
                w("self._masks = [x if o else m for o, x, m in zip(gone, self._no_actions, self._masks)]",
                  comment="an agent whose own episode ended has no legal action")
        with w.block("else:"):
            w("self._masks = self._all_legal", comment="every action is legal after the end (read-only masks)")
        w("self._last_reward = rewards")
        if cs.agent_end is not None:
            outputs_with_agent_ends(g)
        elif g.unrolled:
            w("# every agent is live until the episode ends (self.agents is AGENTS or empty)")
            rewards.outputs_unrolled(g, observations)
        else:
            w("# every agent is live until the episode ends (self.agents is AGENTS or empty)")
            w("self._returns = [x + r for x, r in zip(self._returns, rewards)]")
            w("observers = self._observers")
            w("obs = {a: observers[i](i) for i, a in enumerate(AGENTS)}")
            w("rew = dict(zip(AGENTS, rewards))")
            w("term = dict.fromkeys(AGENTS, terminated)")
            w("trunc = dict.fromkeys(AGENTS, truncated)")
            w("infos = {a: {'action_mask': m, 'reward_terms': x} for a, m, x in zip(AGENTS, self._masks, terms)}")
        return_outputs(g)
    w("")
    metrics.episode_metrics(g)


def return_outputs(g: GenContext) -> None:
    """The end of `step`: illegal actions flagged, episode results at the end, the dicts returned."""
    w = g.w
    with w.block("for a in illegal:"):
        w("infos[a]['illegal_action'] = True")
    with w.block("if done:"):
        w("metrics = self.episode_metrics()")
        with w.block("for a, ret in zip(AGENTS, self._returns):"):
            with w.block("if a in infos:") if g.cs.agent_end is not None else nullcontext():
                w("infos[a]['metrics'] = metrics")
                w("infos[a]['episode'] = {'r': ret, 'l': v.t}  # Gymnasium's and SB3's names")
        w("self.agents = []")
    with w.block("if self.action_mask_in_obs:"):
        w("obs = rt_mask_obs(AGENTS, obs, self._masks)", comment="(the agents in `obs`)")
    w("return obs, rew, term, trunc, infos")


def agent_ends(g: GenContext) -> None:
    """`terminate_agent`: which agents' own episodes have ended (`gone`, kept in `self._gone`:
    once out, always out); `out` were out before this step. When every agent is out, the episode
    terminates."""
    cs, w = g.cs, g.w
    assert cs.agent_end is not None
    em = g.em(per_agent=True)
    w("out = self._gone")
    w(f"gone = [out[me] or bool({em(cs.agent_end)}) for me in range(N_AGENTS)]",
      comment=f"terminate_agent: {cs.agent_end.source}")
    w("self._gone = gone")
    with w.block("if all(gone):"):
        w("terminated = True", comment="every agent's own episode has ended")
    w("rewards = [0.0 if o else x for o, x in zip(out, rewards)]", comment="nothing more for an agent that was out")


def outputs_with_agent_ends(g: GenContext) -> None:
    """The step's dicts where agents leave (PettingZoo's convention): they hold the agents live at
    the start of the step; an agent whose own episode ended now is terminated and leaves `agents`."""
    w = g.w
    w("self._returns = [x + r for x, r in zip(self._returns, rewards)]")
    w("observers = self._observers")
    w("live = [(i, a) for i, a in enumerate(AGENTS) if not out[i]]")
    w("obs = {a: observers[i](i) for i, a in live}")
    w("rew = {a: rewards[i] for i, a in live}")
    w("term = {a: terminated or gone[i] for i, a in live}")
    w("trunc = {a: truncated for i, a in live}")
    w("infos = {a: {'action_mask': self._masks[i], 'reward_terms': terms[i]} for i, a in live}")
    w("self.agents = [a for i, a in live if not gone[i]]")


def rules(g: GenContext, group: list[CRule]) -> None:
    """One rule, or an exclusive group (`first:`, `else`) as an if/elif chain: only the first
    rule whose `when` holds fires (per agent in a group over agent_state)."""
    w = g.w
    em = g.em(per_agent=group[0].per_agent)
    for rule in group:
        w("", comment=f"{rule.path}: when {rule.when.source}" + (f" ({rule.doc})" if rule.doc else ""))
    if not group[0].per_agent:
        for k, rule in enumerate(group):
            cond = None if is_true(rule.when) else em(rule.when)
            header = "else:" if cond is None and k else f"{'elif' if k else 'if'} {cond}:"
            with (w.block(header) if cond is not None or k else nullcontext()):
                global_sets(g, rule, em)
                if len(group) > 1:
                    g.hook(rule.path)
            if cond is None:
                break
        g.replaced()
        if len(group) == 1:
            g.hook(group[0].path)
        return
    targets = list(dict.fromkeys(t for rule in group for t, _ in rule.sets))
    trees = [x.tree.body for rule in group for x in [rule.when] + [c for _, c in rule.sets]]
    for name, code in hoist(em, trees, f"h{group[0].index}_"):
        w(f"{name} = {code}", comment="the same for every agent")
    for j, target in enumerate(targets):
        w(f"new{j} = v.{target}.copy()")
    g.read_lists(g.flags_from_lists(em, trees))
    with w.block(f"for me in range({g.n}):"):
        for k, rule in enumerate(group):
            cond = None if is_true(rule.when) else em(rule.when)
            header = "else:" if cond is None and k else f"{'elif' if k else 'if'} {cond}:"
            with (w.block(header) if cond is not None or k else nullcontext()):
                agent_sets(g, rule, em, targets)
            if cond is None:
                break
    for j, target in enumerate(targets):
        w(f"v.{target} = new{j}")
    g.replaced(targets)
    g.hook(group[0].path if len(group) == 1 else group[0].path.split(".")[0])


def global_sets(g: GenContext, rule: CRule, em: PyEmitter) -> None:
    """A global rule's assignments: each value reads the state before the rule."""
    w = g.w
    vars_ = {v.name: v for v in g.cs.state + g.cs.agent_state}
    later: list[tuple[int, str]] = []  # sets read the old values: a target read later waits
    for j, (target, c) in enumerate(rule.sets):
        read_later = any(target in c2.names or target in IMPLICIT for _, c2 in rule.sets[j + 1:])
        name = f"new{j}" if read_later else f"v.{target}"
        w(f"{name} = {g.cast(vars_[target], em(c))}", comment=f"{rule.path}.set.{target}: {c.source}")
        if read_later:
            later.append((j, target))
    for j, target in later:
        w(f"v.{target} = new{j}")


def agent_sets(g: GenContext, rule: CRule, em: PyEmitter, targets: list[str]) -> None:
    """A per-agent rule's assignments for agent `me`, into the copies `new<j>` of `targets`."""
    w = g.w
    trees = [c.tree.body for _, c in rule.sets]
    for k, (code, nodes) in enumerate(repeated_calls(trees, em.emit, unconditional)):
        w(f"c{k} = {code}", comment="used by several sets")
        for n in nodes:
            em.hoisted[id(n)] = f"c{k}"
    for target, c in rule.sets:
        w(f"new{targets.index(target)}[me] = {em(c)}", comment=f"{rule.path}.set.{target}: {c.source}")


def end_codes(g: GenContext) -> tuple[str, str]:
    """Code of `terminate` and of `truncate` (step and ends_now evaluate the same)."""
    return as_bool(g.em()(g.cs.terminate)), as_bool(g.em()(g.cs.truncate))


def ends_now(g: GenContext) -> None:
    """`ends_now()`: whether `terminate` and `truncate` hold in the current state."""
    w = g.w
    with w.block("def ends_now(self):"):
        w('"""(terminated, truncated) in the current state: what `step` would report if it changed nothing."""')
        w("p, v = self.p, self.v")
        w(f"return {', '.join(end_codes(g))}")
    w("")
