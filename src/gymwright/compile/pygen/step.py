"""`step`: actions in, grid and channel, step rules, rewards, metrics, ends, outputs."""

from __future__ import annotations

import functools
from contextlib import nullcontext
from typing import Any

from gymwright.compile.common import rule_groups
from gymwright.compile.pyexpr import PyEmitter, hoist
from gymwright.compile.pygen.base import (
    IMPLICIT,
    PyGenBase,
    as_bool,
    draws_after_reset,
    is_true,
    unconditional,
    uses_me_or_random,
)
from gymwright.compile.sharing import repeated_calls
from gymwright.spec.checked import CRule


class StepGen(PyGenBase):
    """`step`, `episode_metrics`, the step rules and `ends_now`."""

    def step(self) -> None:
        cs, w = self.cs, self.w
        with w.block("def step(self, actions):"):
            with w.block("if not self.agents:"):
                w("raise RuntimeError('the episode is over (no live agents); call reset() first')")
            w("p, v = self.p, self.v")
            if draws_after_reset(cs):
                w("v._rng.step = v.t + 1")
            self.decode()
            self._lists, self._lists_depth = set(), w.depth  # from here on, each list is read once until replaced
            try:
                if cs.grid:
                    self.grid_step()
                    self.hook("grid")
                if cs.vocab is not None:
                    self.channel_step()
                    self.replaced()
                for group in rule_groups(cs.rules):
                    self.rules(group)
                w("v.t += 1")
                if self.unrolled:
                    self.rewards_inline()
                else:
                    w("rewards, terms = self._rewards()")
            finally:
                self._lists = None
            for m in cs.metrics:
                if not self.lazy_metric(m):
                    self.metric_fold(m)
            terminated, truncated = self.end_codes()
            w(f"terminated = {terminated}", comment=f"terminate: {cs.terminate.source}")
            w(f"truncated = {truncated}", comment=f"truncate: {cs.truncate.source}")
            with w.block("if self.max_cycles is not None and v.t >= self.max_cycles:"):
                w("truncated = True", comment="max_cycles: the caller's cap on the episode length")
            w("done = terminated or truncated")
            with w.block("if not done:"):
                w("self._compute_masks()")
            with w.block("else:"):
                w("self._masks = self._all_legal", comment="every action is legal after the end (read-only masks)")
            w("self._last_reward = rewards")
            w("# every agent is live until the episode ends (self.agents is AGENTS or empty)")
            if self.unrolled:
                self.outputs_unrolled()
            else:
                w("self._returns = [x + r for x, r in zip(self._returns, rewards)]")
                w("observers = self._observers")
                w("obs = {a: observers[i](i) for i, a in enumerate(AGENTS)}")
                w("rew = dict(zip(AGENTS, rewards))")
                w("term = dict.fromkeys(AGENTS, terminated)")
                w("trunc = dict.fromkeys(AGENTS, truncated)")
                w("infos = {a: {'action_mask': m, 'reward_terms': x} for a, m, x in zip(AGENTS, self._masks, terms)}")
            with w.block("for a in illegal:"):
                w("infos[a]['illegal_action'] = True")
            with w.block("if done:"):
                w("metrics = self.episode_metrics()")
                with w.block("for a, ret in zip(AGENTS, self._returns):"):
                    w("infos[a]['metrics'] = metrics")
                    w("infos[a]['episode'] = {'r': ret, 'l': v.t}  # Gymnasium's and SB3's names")
                w("self.agents = []")
            with w.block("if self.action_mask_in_obs:"):
                w("obs = rt_mask_obs(AGENTS, obs, self._masks)")
            w("return obs, rew, term, trunc, infos")
        w("")
        with w.block("def episode_metrics(self):"):
            w('"""Metric values of the episode so far, reduced as the spec says."""')
            w("p, v = self.p, self.v")
            items = []
            for m in cs.metrics:
                if self.lazy_metric(m):  # the value after the last step is the value now
                    items.append(f"{m.name!r}: {self.metric_code(m)} if v.t else 0.0")
                else:
                    acc = f"self._metric_acc[{self.accumulated.index(m)}]"
                    items.append(f"{m.name!r}: {acc} / max(v.t, 1)" if m.reduce == "mean" else f"{m.name!r}: {acc}")
            w("return {" + ", ".join(items) + "}")
        w("")

    def metric_fold(self, m: Any) -> None:
        """Fold this step's value of metric `m` into its accumulator. `max` and `min` compare once
        (what the builtins do for two values, without their call): `max(acc, x)` is `x` only if
        `x > acc`, so NaNs and ties keep the same value."""
        w = self.w
        k = self.accumulated.index(m)
        code, acc = self.metric_code(m), f"self._metric_acc[{k}]"
        comment = f"{m.path}: {m.expr.source} ({m.reduce})"
        if m.reduce in ("max", "min"):
            w(f"metric{k} = {code}", comment=comment)
            with w.block(f"if metric{k} {'>' if m.reduce == 'max' else '<'} {acc}:"):
                w(f"{acc} = metric{k}")
            return
        w({"sum": f"{acc} += {code}", "mean": f"{acc} += {code}", "last": f"{acc} = {code}"}[m.reduce], comment=comment)

    def metric_code(self, m: Any) -> str:
        code = self.em()(m.expr)
        return code if code.startswith("float(") else f"float({code})"

    @functools.cached_property
    def accumulated(self) -> list[Any]:
        """The metrics folded step by step (`self._metric_acc`): all but the lazy ones."""
        return [m for m in self.cs.metrics if not self.lazy_metric(m)]

    @staticmethod
    def lazy_metric(m: Any) -> bool:
        """A `last` metric without random draws is evaluated when asked for, not at every step
        (the state does not change between the last step and the end of the episode)."""
        return m.reduce == "last" and not uses_me_or_random(m.expr)

    def rules(self, group: list[CRule]) -> None:
        """One rule, or an exclusive group (`first:`, `else`) as an if/elif chain: only the first
        rule whose `when` holds fires (per agent in a group over agent_state)."""
        w = self.w
        em = self.em(per_agent=group[0].per_agent)
        for rule in group:
            w("", comment=f"{rule.path}: when {rule.when.source}" + (f" ({rule.doc})" if rule.doc else ""))
        if not group[0].per_agent:
            for k, rule in enumerate(group):
                cond = None if is_true(rule.when) else em(rule.when)
                header = "else:" if cond is None and k else f"{'elif' if k else 'if'} {cond}:"
                with (w.block(header) if cond is not None or k else nullcontext()):
                    self.global_sets(rule, em)
                    if len(group) > 1:
                        self.hook(rule.path)
                if cond is None:
                    break
            self.replaced()
            if len(group) == 1:
                self.hook(group[0].path)
            return
        targets = list(dict.fromkeys(t for rule in group for t, _ in rule.sets))
        trees = [x.tree.body for rule in group for x in [rule.when] + [c for _, c in rule.sets]]
        for name, code in hoist(em, trees, f"h{group[0].index}_"):
            w(f"{name} = {code}", comment="the same for every agent")
        for j, target in enumerate(targets):
            w(f"new{j} = v.{target}.copy()")
        self.read_lists(self.flags_from_lists(em, trees))
        with w.block(f"for me in range({self.n}):"):
            for k, rule in enumerate(group):
                cond = None if is_true(rule.when) else em(rule.when)
                header = "else:" if cond is None and k else f"{'elif' if k else 'if'} {cond}:"
                with (w.block(header) if cond is not None or k else nullcontext()):
                    self.agent_sets(rule, em, targets)
                if cond is None:
                    break
        for j, target in enumerate(targets):
            w(f"v.{target} = new{j}")
        self.replaced(targets)
        self.hook(group[0].path if len(group) == 1 else group[0].path.split(".")[0])

    def global_sets(self, rule: CRule, em: PyEmitter) -> None:
        """A global rule's assignments: each value reads the state before the rule."""
        w = self.w
        vars_ = {v.name: v for v in self.cs.state + self.cs.agent_state}
        later: list[tuple[int, str]] = []  # sets read the old values: a target read later waits
        for j, (target, c) in enumerate(rule.sets):
            read_later = any(target in c2.names or target in IMPLICIT for _, c2 in rule.sets[j + 1:])
            name = f"new{j}" if read_later else f"v.{target}"
            w(f"{name} = {self.cast(vars_[target], em(c))}", comment=f"{rule.path}.set.{target}: {c.source}")
            if read_later:
                later.append((j, target))
        for j, target in later:
            w(f"v.{target} = new{j}")

    def agent_sets(self, rule: CRule, em: PyEmitter, targets: list[str]) -> None:
        """A per-agent rule's assignments for agent `me`, into the copies `new<j>` of `targets`."""
        w = self.w
        trees = [c.tree.body for _, c in rule.sets]
        for k, (code, nodes) in enumerate(repeated_calls(trees, em.emit, unconditional)):
            w(f"c{k} = {code}", comment="used by several sets")
            for n in nodes:
                em.hoisted[id(n)] = f"c{k}"
        for target, c in rule.sets:
            w(f"new{targets.index(target)}[me] = {em(c)}", comment=f"{rule.path}.set.{target}: {c.source}")

    def end_codes(self) -> tuple[str, str]:
        """Code of `terminate` and of `truncate` (step and ends_now evaluate the same)."""
        return as_bool(self.em()(self.cs.terminate)), as_bool(self.em()(self.cs.truncate))

    def ends_now(self) -> None:
        """`ends_now()`: whether `terminate` and `truncate` hold in the current state."""
        w = self.w
        with w.block("def ends_now(self):"):
            w('"""(terminated, truncated) in the current state: what `step` would report if it changed nothing."""')
            w("p, v = self.p, self.v")
            w(f"return {', '.join(self.end_codes())}")
        w("")
