"""Step rules: targets, `when`, `set` / `else`, and exclusive groups (`first:`)."""

from __future__ import annotations

from typing import Any

from gymwright.diagnostic import warning
from gymwright.mechanics.registry import MECHANICS
from gymwright.spec.checked import CRule
from gymwright.spec.checks.context import STAGE, CheckContext
from gymwright.spec.model import First


def check_rules(ctx: CheckContext) -> list[CRule]:
    """`step`: each rule (or `first:` group) in order, flattened into CRules."""
    rules: list[CRule] = []
    for i, entry in enumerate(ctx.spec.step):
        if isinstance(entry, First):
            group = [(r, f"step[{i}].first[{j}]") for j, r in enumerate(entry.first)]
        else:
            group = [(entry, f"step[{i}]")]
        checked = [_check_rule(ctx, r, path, len(rules) + 2 * k) for k, (r, path) in enumerate(group)]
        pairs = [c for c in checked if c is not None]
        if len(pairs) != len(checked):
            continue
        flat = [c for pair in pairs for c in pair]
        exclusive = isinstance(entry, First) or len(flat) > 1
        if exclusive and len({c.per_agent for c in flat}) > 1:
            ctx.error(f"step[{i}]", "the rules of an exclusive group must all set global state or all set agent_state",
                      "split the group: one for global state, one for per-agent state")
            continue
        if isinstance(entry, First) and entry.doc:  # the group's doc goes with its first rule
            flat[0].doc = f"{entry.doc}; {flat[0].doc}" if flat[0].doc else entry.doc
        for k, c in enumerate(flat):
            c.group = i if exclusive else -1
            if exclusive and k < len(flat) - 1 and c.when.source == "True":
                ctx.diags.append(warning(STAGE, c.path, "this rule always fires, so the rules after it in its "
                                         "group never do", "give it a `when`, or move it last"))
        rules += flat
    return rules


def _check_rule(ctx: CheckContext, rule: Any, path: str, index: int) -> list[CRule] | None:
    """A rule as one CRule, or two (its `set` when `when` holds, then its `else`); None if refused."""
    branches = [("set", rule.set)] + ([("else", rule.else_)] if rule.else_ else [])
    maintained = {name for m in MECHANICS.values() for name in m.maintained}
    kinds, bad = {}, False  # a bad target is reported and skipped: the rest is still checked
    for key, sets in branches:
        for target in sets:
            sym = ctx.symbols.get(target)
            if sym is None or sym.kind not in ("state", "agent_state"):
                what = f"a {sym.kind.replace('_', ' ')}" if sym else "not declared"
                close = [n for n, s in ctx.symbols.items() if s.kind in ("state", "agent_state")]
                ctx.error(f"{path}.{key}.{target}", f"cannot set `{target}`: it is {what}",
                          f"rules set state or agent_state variables: {', '.join(close) or 'none declared'}")
                bad = True
            elif target in maintained:
                ctx.error(f"{path}.{key}.{target}", f"`{target}` is maintained by a mechanics module and cannot be set")
                bad = True
            else:
                kinds[target] = sym.kind
    if len(set(kinds.values())) > 1:
        ctx.error(f"{path}.set", "a rule cannot set both state and agent_state variables",
                  "split it into two rules: one for global state, one for per-agent state")
        return None
    per_agent = "agent_state" in kinds.values()
    scope = ctx.scope(f"step rule {path.removeprefix('step[').replace(']', '', 1)}", per_agent=per_agent, random=True, actions=True)
    when = ctx.expr(rule.when, scope, f"{path}.when")
    if when is not None and (when.info.dtype != "bool" or when.info.shape):
        ctx.error(f"{path}.when", f"`when` must be a scalar bool{' per agent' if per_agent else ''}, got {when.info.describe()}",
                  "compare, e.g. `phase == 0`" + (" or `x[me] > 0`" if per_agent else "; per-agent conditions belong in rules over agent_state"))
        when = None
    out: list[CRule] = []
    for key, sets in branches:
        checked = []
        for target, src in sets.items():
            if target not in kinds:
                continue
            c = ctx.expr(src, scope, f"{path}.{key}.{target}")
            if c is None:
                continue
            var_shape = ctx.symbols[target].info.shape[1:] if per_agent else ctx.symbols[target].info.shape
            if ctx.assignable(c, ctx.symbols[target].info.dtype, var_shape, f"{path}.{key}.{target}", target):
                checked.append((target, c))
        always = when if key == "set" else ctx.expr(True, scope, path)
        bad = bad or when is None or always is None or len(checked) != len(sets)
        if not bad and always is not None:
            out.append(CRule(index + len(out), always, checked, per_agent, path if key == "set" else f"{path}.else", rule.doc))
    return None if bad else out
