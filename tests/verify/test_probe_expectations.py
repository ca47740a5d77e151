"""Probes that can test what a task says (issue 16, item 1): a start state, observations and
masks in expectations, and actions a mask forbids when the probe says so."""

from __future__ import annotations

import copy

import pytest

from gymwright.diagnostic import Severity
from gymwright.spec.loader import read_data
from gymwright.verify.validate import validate

OFFERED = {"offer": 0.7, "phase": 1, "proposer": 0}


def cake(*probes: dict) -> dict:
    data, _ = read_data("cake_negotiation")
    data = copy.deepcopy(data)
    data["observe"]["bargainer"][2] = {"expr": "offer", "name": "offer"}
    data["probes"] = list(probes)
    return data


def errors(data: dict) -> list[str]:
    return [d.format() for d in validate(data) if d.severity == Severity.error]


def test_a_probe_starts_where_the_case_starts_and_reads_what_agents_see() -> None:
    assert errors(cake(
        {"name": "sees the offer", "start": OFFERED,
         "expect": ["abs(obs.bargainer_1[2] - 0.7) < 1e-6", "abs(obs.bargainer_1.offer - 0.7) < 1e-6",
                    "mask.bargainer_1.accept", "not mask.bargainer_1.propose", "not mask.bargainer_0[0]"]},
        {"name": "accepting 0.7 pays 0.7", "start": OFFERED, "actions": [{"bargainer_1": "accept"}],
         "expect": ["reward.bargainer_0 == 0.7", "terminated"]},
    )) == []


def test_a_false_observation_fails_with_the_value_seen() -> None:
    found = errors(cake({"name": "wrong", "start": OFFERED, "expect": ["obs.bargainer_1.offer < 0.5"]}))
    assert len(found) == 1 and "probes[0].expect[0]" in found[0]
    assert "obs.bargainer_1[2] = 0.699999988079071" in found[0]


def test_illegal_actions_are_played_only_when_the_probe_says_so() -> None:
    probe = {"name": "illegal proposal", "start": OFFERED, "illegal": True,
             "actions": [{"bargainer_1": "propose(share=0.5)"}], "expect": ["not terminated", "offer == 0.7"]}
    assert errors(cake(probe)) == []
    found = errors(cake({**probe, "illegal": False}))
    assert len(found) == 1 and "`propose` is not legal for bargainer_1 at step 0" in found[0]


@pytest.mark.parametrize("start, message", [
    ({"offer": 1.5}, "probes[0].start.offer: 1.5 is outside the bounds of `offer`, [0, 1]"),
    ({"phse": 1}, "probes[0].start.phse: `phse` is not a state or agent_state variable"),
    ({"phase": 0.5}, "probes[0].start.phase: `phase` is int; got 0.5"),
    ({"offer": [0.1, 0.2]}, "probes[0].start.offer: `offer` has shape [], got [2]"),
])
def test_start_values_are_checked_like_their_declarations(start: dict, message: str) -> None:
    found = errors(cake({"name": "bad start", "start": start, "expect": ["terminated or not terminated"]}))
    assert any(message in f for f in found), found


def test_an_unknown_feature_or_choice_is_named() -> None:
    found = errors(cake({"name": "typo", "expect": ["obs.bargainer_1.ofer > 0"]}))
    assert any("bargainer_1 has no observation feature or choice named `ofer`" in f for f in found), found
