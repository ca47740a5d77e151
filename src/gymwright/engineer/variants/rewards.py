"""Variants of what the agents are paid: a private value (type) per agent, a discount over time."""

from __future__ import annotations

from typing import Any

from gymwright.engineer.variants.base import Draft, Variant, declared, task_term
from gymwright.spec.checked import CheckedSpec

VALUE = "private_value"
DISCOUNTS = ("discount", "time_discount")


# ---------------------------------------------------------------------------- private values

def _valued_roles(data: dict[str, Any]) -> list[str]:
    """Roles with at least two reward terms: a private weight on the task term changes the trade-off."""
    return [r for r, terms in data.get("rewards", {}).items() if len(terms) >= 2]


def refuse_private(data: dict[str, Any], cs: CheckedSpec) -> str | None:
    private = [v.name for v in cs.agent_state if v.private and not v.builtin]
    if private:
        return f"it already has private information (agent_state `{private[0]}` is private)"
    if cs.n_agents < 2:
        return "it has one agent: a private value needs someone it is hidden from"
    if not _valued_roles(data):
        return ("every role's reward has a single term: a private weight on it would only rescale the reward "
                "(the same game); add a second term first (e.g. the outside option)")
    taken = {VALUE, "value_spread"} & declared(data, cs)
    if taken:
        return f"it already declares `{sorted(taken)[0]}`"
    return None


def build_private(draft: Draft, cs: CheckedSpec, params: dict[str, Any]) -> None:
    draft.add("params", "value_spread", {
        "default": 0.5, "min": 0.0, "max": 1.0,
        "doc": "each agent's private value of its task reward is drawn in [1 - value_spread, 1 + value_spread] "
               "per episode (0: everyone values it alike)"})
    draft.add("agent_state", VALUE, {
        "type": "float", "init": "uniform(1 - value_spread, 1 + value_spread)", "min": 0.0, "max": 2.0,
        "private": True, "doc": "my private value of the task reward (a type only I know)"})
    draft.pin_probes({"value_spread": 0.0})
    for r in _valued_roles(draft.data):
        i = task_term(draft.data["rewards"][r])
        draft.set(f"rewards.{r}[{i}].expr", f"{VALUE}[me] * ({draft.data['rewards'][r][i]['expr']})")
        draft.append("observe", r, {"name": VALUE, "expr": f"{VALUE}[me]", "low": 0.0, "high": 2.0,
                                    "doc": "my own private value (the others do not see it)"})
    first = next(a for ro in cs.roles if ro.name in _valued_roles(draft.data) for a in ro.agent_ids)
    draft.append("probes", None, {
        "name": "private values are drawn within the spread, differ between agents, and each agent sees its own",
        "expect": [f"all({VALUE} >= 1 - value_spread - 1e-9) and all({VALUE} <= 1 + value_spread + 1e-9)",
                   f"max({VALUE}) > min({VALUE})",
                   f"abs(obs.{first}.{VALUE} - {VALUE}[{cs.agent_ids.index(first)}]) < 1e-6"]})
    draft.append("probes", None, {
        "name": "with no spread every agent values the task alike",
        "params": {"value_spread": 0.0}, "expect": [f"all({VALUE} == 1)"]})


PRIVATE_VALUES = Variant(
    "private_values",
    "each agent draws a private value of its task reward that only it observes: it must trade off its terms "
    "by a type the others can only infer from play",
    "at least two agents, a role with two or more reward terms, and no private agent_state yet",
    refuse_private, build_private)


# ---------------------------------------------------------------------------- discount

def refuse_discount(data: dict[str, Any], cs: CheckedSpec) -> str | None:
    have = [n for n in DISCOUNTS if n in data.get("params", {})]
    if have:
        return f"it is discounted already (param `{have[0]}`)"
    if not any(data.get("rewards", {}).values()):
        return "no role has a reward term to discount"
    return None


def build_discount(draft: Draft, cs: CheckedSpec, params: dict[str, Any]) -> None:
    draft.add("params", "time_discount", {
        "default": 0.95, "min": 0.5, "max": 1.0,
        "doc": "a reward earned at step t (the first step is 1) is worth time_discount ** t of it (1: no discount)"})
    draft.pin_probes({"time_discount": 1.0})
    for r, terms in draft.data["rewards"].items():
        for i, term in enumerate(terms):
            draft.set(f"rewards.{r}[{i}].expr", f"time_discount ** t * ({term['expr']})")


DISCOUNT = Variant(
    "discount",
    "every reward shrinks by a factor per step: the same outcome reached later pays less, so the agents "
    "must be quick as well as right",
    "a reward term and no discount param (`discount`, `time_discount`) yet",
    refuse_discount, build_discount)
