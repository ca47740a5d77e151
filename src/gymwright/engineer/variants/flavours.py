"""Two flavours: the cake has two flavours that the agents value differently (the seed's "cakes of
two flavours that the agents value differently"). A proposal splits each flavour by its own share,
and an agent values a split at `likes_a[me]` times its share of flavour A plus the rest times its
share of flavour B: with different tastes a split can give each more of what it likes (gains from
trade), so the best offer is no longer one number.

The transform: the split choice gains an argument `share_b` (the proposer's share of flavour B,
over the same values as the first), the step rule that puts the offer on the table puts `offer_b`
there too, and every reward term and metric that reads the offer reads the value of both flavours
instead (the offer replaced by `likes_a[me] * offer + (1 - likes_a[me]) * offer_b`: exact for a
reward that is linear in the offer, as a split's value is). At `taste_gap` 0 both agents like the
flavours alike, and a split of (x, x) pays exactly what the offer x paid before: the spec's own
probes and baselines play (x, x) there.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from gymwright.engineer.variants.base import Draft, Variant, already_declared, role, split_choice
from gymwright.spec.checked import CheckedSpec
from gymwright.spec.expr.parse import parse_names

ARG, OFFER_B, LIKES, GAP = "share_b", "offer_b", "likes_a", "taste_gap"
NAMES = (ARG, OFFER_B, LIKES, GAP)


def _table_rule(cs: CheckedSpec, arg: str) -> tuple[str, str, str] | None:
    """(rule path, state variable, its expression): the step rule that puts the split on the table
    (sets a global state variable from the split's argument)."""
    for rule in cs.rules:
        for var, expr in rule.sets:
            if not rule.per_agent and arg in expr.names:
                return rule.path, var, expr.source
    return None


def _readers(cs: CheckedSpec, role_name: str, offer: str) -> tuple[list[str], list[str]]:
    """The names of the role's reward terms and of the metrics that read the offer, in spec order."""
    terms = [t.name for t in role(cs, role_name).terms if offer in t.expr.names]
    return terms, [m.name for m in cs.metrics if offer in m.expr.names]


def _substitute(expr: str, name: str, by: str) -> str:
    """`expr` with every use of the name `name` replaced by the expression `by` (on the syntax tree)."""
    replacement = parse_names(by).body  # a choice may be called `pass`: read as a name

    class _Swap(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return replacement if node.id == name else node

    return ast.unparse(_Swap().visit(parse_names(expr)))


def refuse(data: dict[str, Any], cs: CheckedSpec) -> str | None:
    split = split_choice(data)
    if split is None:
        return ("not a bargaining game: no role has both a choice with arguments (the split) and an `accept` "
                "choice")
    r, ci, args = split
    if len(args) != 1:
        return (f"its split `{data['actions'][r][ci]['name']}` has {len(args)} arguments ({', '.join(args)}): "
                "it divides several items already")
    arg = args[0]
    if role(cs, r).count != 2:
        return f"its bargaining role `{r}` has {role(cs, r).count} agents: the tastes are written for two"
    table = _table_rule(cs, arg)
    if table is None:
        return f"no step rule puts the share `{arg}` on the table (sets a state variable from it)"
    if not _readers(cs, r, table[1])[0]:
        return f"no reward term of `{r}` reads the offer on the table (`{table[1]}`)"
    return already_declared(data, cs, NAMES, "the flavours were added")


def build(draft: Draft, cs: CheckedSpec, params: dict[str, Any]) -> None:
    split = split_choice(draft.data)
    assert split is not None
    r, ci, (arg,) = split
    table = _table_rule(cs, arg)
    assert table is not None
    path, offer, expr = table
    terms, metrics = _readers(cs, r, offer)
    value = f"({LIKES}[me] * {offer} + (1 - {LIKES}[me]) * {OFFER_B})"
    draft.add("params", GAP, {
        "default": 0.5, "min": 0.0, "max": 1.0,
        "doc": "how differently the two agents like the flavours: the first values flavour A at (1 + taste_gap) / 2 "
               "of the cake, the second at (1 - taste_gap) / 2 (0: both like them alike, the one-flavour game)"})
    draft.add("agent_state", LIKES, {
        "type": "float", "init": f"0.5 + {GAP} * (0.5 - me % 2)", "min": 0.0, "max": 1.0,
        "doc": "how much I value flavour A, as a share of the cake's worth (flavour B: the rest)"})
    draft.add("state", OFFER_B, {"type": "float", "init": 0.0, "min": 0, "max": 1,
                                 "doc": f"the proposer's share of flavour B on the table (`{offer}`: of flavour A)"})
    draft.set(f"actions.{r}[{ci}].args.{ARG}", draft.data["actions"][r][ci]["args"][arg])
    draft.set(f"{path}.set.{OFFER_B}", _substitute(expr, arg, ARG))
    for i, term in enumerate(draft.data["rewards"][r]):
        if term["name"] in terms:
            draft.set(f"rewards.{r}[{i}].expr", _substitute(str(term["expr"]), offer, value))
    for name in metrics:
        metric = draft.data["metrics"][name]
        if f"{name}_b" not in draft.data["metrics"]:  # a metric the spec already has for flavour B stays
            draft.add("metrics", f"{name}_b", {**metric, "expr": _substitute(str(metric["expr"]), offer, OFFER_B),
                                               "doc": f"{metric.get('doc') or name}, of flavour B"})
    draft.append("observe", r, {"expr": OFFER_B})
    draft.append("observe", r, {"name": LIKES, "expr": f"{LIKES}[me]", "low": 0.0, "high": 1.0,
                                "doc": "how much I value flavour A (flavour B: 1 minus it)"})
    _both_flavours(draft, draft.data["actions"][r][ci]["name"], arg)
    draft.pin_probes({GAP: 0.0})
    draft.append("probes", None, _probe(role(cs, r).agent_ids, draft.data["actions"][r][ci]["name"], arg))


def _both_flavours(draft: Draft, choice: str, arg: str) -> None:
    """Every scripted play of the split (baselines, probes) splits flavour B as it splits flavour A."""
    pattern = re.compile(rf"^\s*{re.escape(choice)}\(\s*{re.escape(arg)}\s*=(.*)\)\s*$", re.S)

    def rewrite(action: Any) -> str | None:
        m = pattern.match(action) if isinstance(action, str) else None
        return f"{choice}({arg}={m.group(1).strip()}, {ARG}={m.group(1).strip()})" if m else None

    for name, policy in draft.data.get("baselines", {}).items():
        for rname, rules in policy.items():
            for i, rule in enumerate(rules):
                if (new := rewrite(rule.get("action"))) is not None:
                    draft.set(f"baselines.{name}.{rname}[{i}].action", new)
    for p, probe in enumerate(draft.data.get("probes", [])):
        for s, step in enumerate(probe.get("actions", [])):
            for agent, action in step.items():
                if (new := rewrite(action)) is not None:
                    draft.set(f"probes[{p}].actions[{s}].{agent}", new)


def _probe(agents: list[str], choice: str, arg: str) -> dict[str, Any]:
    """Each agent offers the split that keeps all of the flavour it prefers; whoever proposes, the
    deal pays each agent (1 + taste_gap) / 2: more than half each, more than the one-flavour cake."""
    first, second = agents
    both = " + ".join(f"reward.{a}" for a in agents)
    return {"name": "a split that gives each agent the flavour it likes pays both more than half (gains from trade)",
            "illegal": True,
            "actions": [{first: f"{choice}({arg}=1, {ARG}=0)", second: f"{choice}({arg}=0, {ARG}=1)"},
                        dict.fromkeys(agents, "accept")],
            "expect": ["terminated"] + [f"abs(reward.{a} - (1 + {GAP}) / 2) < 1e-9" for a in agents]
                      + [f"{both} > 1 + {GAP} - 1e-9"]}


TWO_FLAVOURS = Variant(
    "two_flavours",
    "the cake has two flavours that the agents value differently and each is split by its own share: a deal "
    "can give each more of what it likes, so the agents must find the trade, not only the share",
    "a bargaining game over one split: a role of two agents with a choice of one argument (the share) that a step "
    "rule puts on the table, an `accept` choice, and a reward linear in the offer",
    refuse, build)
