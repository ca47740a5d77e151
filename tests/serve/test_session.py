"""A served episode (`gymwright.serve.session.Session`) is the text game itself: the same seed and
replies give what `TextGame` gives played directly; with a role, the opponent plays the rest."""

from __future__ import annotations

import pytest

from gymwright.errors import GymwrightError
from gymwright.serve.session import Session
from tests.support.playing import text_game_played

REPLIES = ["stag", "nonsense", "hare", "[0]", "stag"]  # valid by name, invalid, valid, by index, valid


def test_every_agent_played_by_the_client_is_the_text_game_itself():
    params = {"rounds": 6}
    session = Session("stag_hunt", params)
    turn, n = session.reset(seed=4), 0
    assert set(turn.prompts) == {"hunter_0", "hunter_1"} and turn.rewards == {}
    while not turn.done:
        turn = session.act({a: REPLIES[(n + i) % 5] for i, a in enumerate(sorted(turn.prompts))})
        n += 1
    game = text_game_played("stag_hunt", params, 4, lambda a, t: REPLIES[(t + sorted(["hunter_0", "hunter_1"]).index(a)) % 5])
    assert session.returns == game.returns and n == 6
    assert session.decisions["invalid"] == game.stats["invalid"] > 0
    assert session.valid_rate == pytest.approx(game.stats["valid_rate"])


def test_replies_may_come_one_agent_at_a_time():
    session = Session("stag_hunt", {"rounds": 2})
    turn = session.reset(seed=0)
    turn = session.act({"hunter_0": "stag"})
    assert list(turn.prompts) == ["hunter_1"] and turn.rewards == {}  # the game waits for hunter_1
    turn = session.act({"hunter_1": "stag"})
    assert set(turn.prompts) == {"hunter_0", "hunter_1"} and set(turn.rewards) == {"hunter_0", "hunter_1"}
    assert turn.infos["hunter_1"]["valid"] and turn.infos["hunter_1"]["action"] == 0


def test_a_role_against_a_scripted_opponent_is_the_game_with_that_opponents_moves():
    params = {"rounds": 8}
    session = Session("stag_hunt", params, role="hunter_0", opponent="scripted:always_stag")
    turn, n = session.reset(seed=2), 0
    while not turn.done:
        assert list(turn.prompts) == ["hunter_0"]
        turn = session.act({"hunter_0": REPLIES[n % 5]})
        n += 1
    game = text_game_played("stag_hunt", params, 2, lambda a, t: REPLIES[t % 5] if a == "hunter_0" else "stag")
    assert session.returns == game.returns and n == 8
    assert session.decisions == {"valid": 6, "invalid": 2}  # the opponent's replies are not counted


def test_in_a_turn_based_game_the_opponent_moves_until_the_role_must_decide():
    session = Session("cake_negotiation", role="bargainer_1", opponent="random")
    turn = session.reset(seed=1)
    assert list(turn.prompts) == ["bargainer_1"]  # bargainer_0 proposed already
    assert "offer" in turn.prompts["bargainer_1"] and session.game.turns == 1
    while not turn.done:
        turn = session.act({"bargainer_1": "0"})
    assert session.game.stats["invalid"] == session.decisions["invalid"]  # the opponent never replied invalidly
    assert set(session.returns) == {"bargainer_0", "bargainer_1"}


@pytest.mark.parametrize(("kwargs", "where", "fix"), [
    ({"role": "hunter_9"}, "role", "did you mean hunter_1"),
    ({"role": "hunter_0", "opponent": "scripted:nope"}, "opponent", "always_stag"),
    ({"role": "hunter_0", "opponent": "greedy"}, "opponent", "scripted:NAME"),
    ({"opponent": "scripted:always_stag"}, "opponent", "role"),
    ({"invalid": "skip"}, "invalid", "random, first"),
])
def test_a_bad_role_opponent_or_rule_says_what_to_give(kwargs, where, fix):
    with pytest.raises(GymwrightError) as e:
        Session("stag_hunt", **kwargs)
    assert e.value.path == where and fix in e.value.hint


def test_replies_out_of_turn_are_refused():
    session = Session("cake_negotiation", role="bargainer_0")
    with pytest.raises(GymwrightError, match="no episode yet"):
        session.act({"bargainer_0": "0"})
    session.reset(seed=0)
    with pytest.raises(GymwrightError, match="does not play") as e:
        session.act({"bargainer_1": "0"})
    assert "bargainer_0" in e.value.hint
