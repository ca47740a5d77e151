"""The outside option: instead of negotiating, an agent may take a fixed low payoff (the seed's
"sell to a third party at a fixed low price"). It ends the game; the other agents get nothing."""

from __future__ import annotations

from typing import Any

from gymwright.engineer.variants.base import Draft, Variant, already_declared, role, split_choice
from gymwright.spec.checked import CheckedSpec

NAMES = ("outside_value", "take_outside", "opted_out", "outside_taken")


def refuse(data: dict[str, Any], cs: CheckedSpec) -> str | None:
    if split_choice(data) is None:
        return ("not a bargaining game with a split action: no role has both a choice with arguments "
                "(the split) and an `accept` choice")
    return already_declared(data, cs, NAMES, "an outside option was added")


def build(draft: Draft, cs: CheckedSpec, params: dict[str, Any]) -> None:
    split = split_choice(draft.data)
    assert split is not None
    r = split[0]
    agents = role(cs, r).agent_ids
    draft.add("params", "outside_value", {
        "default": 0.25, "min": 0.0, "max": 1.0,
        "doc": "what an agent gets for taking the outside option instead of a deal (a fixed low price)"})
    draft.add("state", "opted_out", {"type": "bool", "init": False,
                                     "doc": "an agent took the outside option (the negotiation is over)"})
    draft.append("actions", r, {"name": "take_outside", "legal": "not opted_out",
                                "doc": "leave the negotiation for the fixed outside payoff (ends the game)"})
    draft.append("step", None, {"when": "any(take_outside)", "set": {"opted_out": True},
                                "doc": "the outside option ends the negotiation"})
    draft.set("terminate", f"({draft.data.get('terminate', False)}) or opted_out")
    terms = draft.data["rewards"].setdefault(r, [])
    term: dict[str, Any] = {"name": "outside", "expr": "outside_value * take_outside[me]",
                            "doc": "the fixed payoff of the outside option, to the agent who took it"}
    if any("kind" in t for t in terms):
        term["kind"] = "task"
    draft.append("rewards", r, term)
    draft.add("metrics", "outside_taken", {"expr": "opted_out", "reduce": "last",
                                           "doc": "an agent took the outside option"})
    draft.append("probes", None, _probe(agents, cs.turn_based))


def _probe(agents: list[str], turn_based: bool) -> dict[str, Any]:
    """Turn-based: every agent asks for the option and only the one whose turn it is takes it (the
    others' actions are masked); simultaneous: the first agent takes it."""
    takers = agents if turn_based else agents[:1]
    rewards = " + ".join(f"reward.{a}" for a in agents)
    zeros = " + ".join(f"(reward.{a} == 0)" for a in agents)
    return {"name": "taking the outside option ends the game and pays outside_value to the agent who took it",
            "actions": [dict.fromkeys(takers, "take_outside")], "illegal": turn_based,
            "expect": ["terminated", "opted_out", "metric.outside_taken == 1",
                       f"abs({rewards} - outside_value) < 1e-9", f"{zeros} == {len(agents) - 1}"]}


OUTSIDE_OPTION = Variant(
    "outside_option",
    "an agent may leave for a fixed low payoff instead of negotiating: a deal must now beat the outside option, "
    "so agreement is no longer the only way to be paid",
    "a bargaining game: a role with a split action (a choice with arguments) and an `accept` choice",
    refuse, build)
