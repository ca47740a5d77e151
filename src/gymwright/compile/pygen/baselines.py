"""Scripted baselines: `scripted_action` and one `_script_<name>` per baseline."""

from __future__ import annotations

from contextlib import nullcontext

from gymwright.compile.common import baseline_action_text, check_baseline_name
from gymwright.compile.pygen.base import as_bool
from gymwright.compile.pygen.context import GenContext
from gymwright.spec.checked import CBaselineRule


def baselines(g: GenContext) -> None:
    """`scripted_action(name, agent)`: the spec's scripted baselines, rule by rule."""
    cs, w = g.cs, g.w
    with w.block("def scripted_action(self, name, agent, with_rule=False, rng=None):"):
        w('"""The action scripted baseline `name` (spec `baselines:`) has `agent` play now.')
        w("")
        w("The action of the first rule of the agent's role whose `when` holds and whose action is")
        w("legal. Where no rule applies (every rule missed, or the baseline leaves the role out) the")
        w("baseline plays a uniformly random legal action: drawn from `rng` (a numpy Generator; the")
        w("k-th legal action, k = floor(u * number legal), as gymwright.train.baselines.fill_random_legal")
        w("draws it), or, without `rng`, None and the caller draws (the env draws only from its")
        w("seeded stream). None too when the agent has no legal action.")
        w("`with_rule=True` returns (action, index of the rule in the role's list, -1 for none).")
        w('"""')
        check_baseline_name(w)
        with w.block("if agent not in AGENT_INDEX:"):
            w("raise ValueError(f'unknown agent {agent!r}; agents: {AGENTS}')")
        scripts = ", ".join(f"{b.name!r}: self._script_{b.name}" for b in cs.baselines)
        w(f"a, k = {{{scripts}}}[name](AGENT_INDEX[agent])")
        with w.block("if a < 0 and rng is not None:", comment="no rule applies: a random legal action"):
            w("legal = np.flatnonzero(self._masks[AGENT_INDEX[agent]])")
            with w.block("if legal.size:"):
                w("a = int(legal[min(int(rng.random() * legal.size), legal.size - 1)])")
        w("a = None if a < 0 else a")
        w("return (a, k) if with_rule else a")
    w("")
    for b in cs.baselines:
        with w.block(f"def _script_{b.name}(self, me):"):
            w(f'"""baselines.{b.name}: (action, rule) of agent `me`; (-1, -1) when none applies."""')
            w("p, v = self.p, self.v")
            w("m = self._masks[me]")
            for r in cs.roles:
                rules = b.rules.get(r.name)
                if not rules:
                    continue
                with w.block(f"if {r.start} <= me < {r.start + r.count}:", comment=f"baselines.{b.name}.{r.name}"):
                    for k, rule in enumerate(rules):
                        baseline_rule(g, rule, k)
            w("return -1, -1")
        w("")


def baseline_rule(g: GenContext, rule: CBaselineRule, k: int) -> None:
    """Rule `k` of a baseline: its action, where its `when` holds and the action is legal."""
    w, c = g.w, rule.choice
    ctx = w.block(f"if {as_bool(g.em(per_agent=True)(rule.when))}:", comment=f"{rule.path}.when: {rule.when.source}") \
        if rule.when is not None else nullcontext()
    with ctx:
        flat, stride = [str(c.offset)] if c.offset or not rule.args else [], c.n
        for a, value in rule.args:
            stride //= len(a.values)
            nearest = f"int(np.abs(SCRIPT_VALUES_{c.role}__{c.name}__{a.name} - float({g.em(per_agent=True)(value)})).argmin())"
            flat.append(nearest if stride == 1 else f"{nearest} * {stride}")
        w(f"a = {' + '.join(flat)}", comment=f"{rule.path}.action: {baseline_action_text(rule)}")
        with w.block("if m[a]:"):
            w(f"return a, {k}")
