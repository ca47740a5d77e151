"""The OpenEnv server of a library spec, for real: openenv-core's app under uvicorn on 127.0.0.1
(a free port), played to the end with openenv's own WebSocket client; what it reports is what the
same game played directly through `TextGame` with the same seed gives."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("openenv")

from gymwright.serve.openenv_client import GymwrightEnvClient  # noqa: E402
from gymwright.serve.openenv_env import GameAction  # noqa: E402
from gymwright.serve.openenv_server import ServerThread, make_app  # noqa: E402
from tests.support.playing import text_game_played  # noqa: E402

REPLIES = ["stag", "nonsense", "hare", "[0]", "stag"]  # valid by name, invalid, valid, by index, valid
ROUNDS = {"rounds": 6}


@pytest.fixture(scope="module")
def role_server() -> Iterator[ServerThread]:
    """stag_hunt: the client plays hunter_0, the scripted baseline `always_stag` hunter_1."""
    with ServerThread(make_app("stag_hunt", ROUNDS, role="hunter_0", opponent="scripted:always_stag")) as server:
        yield server


@pytest.fixture(scope="module")
def all_server() -> Iterator[ServerThread]:
    """stag_hunt: the client plays both hunters."""
    with ServerThread(make_app("stag_hunt", ROUNDS)) as server:
        yield server


def test_the_server_listens_on_loopback_only_by_default(role_server):
    assert role_server.base_url.startswith("http://127.0.0.1:") and role_server.port > 0


def test_a_role_played_over_the_wire_is_the_game_played_directly(role_server):
    with GymwrightEnvClient(base_url=role_server.base_url).sync() as env:
        result = env.reset(seed=7)
        obs = result.observation
        assert obs.agent == "hunter_0" and list(obs.prompts) == ["hunter_0"] and not result.done
        assert "stag_hunt" in obs.rules["hunter_0"] and "Your legal actions now" in obs.prompt
        rewards, turns = 0.0, 0
        while not result.done:
            result = env.step(GameAction(reply=REPLIES[turns % 5]))
            assert result.observation.infos["hunter_0"]["valid"] == (REPLIES[turns % 5] != "nonsense")
            rewards += result.reward
            turns += 1
        state = env.state()
    game = text_game_played("stag_hunt", ROUNDS, 7, lambda a, t: REPLIES[t % 5] if a == "hunter_0" else "stag")
    obs = result.observation
    assert turns == 6 and obs.returns == game.returns and rewards == pytest.approx(game.returns["hunter_0"])
    assert obs.invalid == game.stats["invalid"] == 1 and obs.valid_rate == pytest.approx(5 / 6)
    assert obs.metrics == pytest.approx(game.metrics) and obs.prompt == "" and obs.seed == 7
    assert state.done and state.step_count == 6 and state.role == "hunter_0" and state.seed == 7


def test_the_client_plays_every_agent_one_reply_or_all_at_once(all_server):
    reply_of = lambda a, t: REPLIES[(t + (a == "hunter_1")) % 5]  # noqa: E731
    with GymwrightEnvClient(base_url=all_server.base_url).sync() as env:
        result, turns = env.reset(seed=3), 0
        assert set(result.observation.prompts) == {"hunter_0", "hunter_1"} and set(result.observation.rules) == {"hunter_0", "hunter_1"}
        while not result.done:
            if turns % 2:  # one action per agent: the game moves on the second
                waiting = env.step(GameAction(reply=reply_of("hunter_0", turns), agent="hunter_0"))
                assert list(waiting.observation.prompts) == ["hunter_1"] and waiting.observation.rewards == {}
                result = env.step(GameAction(reply=reply_of("hunter_1", turns)))  # the one agent asked
            else:
                result = env.step(GameAction(replies={a: reply_of(a, turns) for a in result.observation.prompts}))
            turns += 1
    game = text_game_played("stag_hunt", ROUNDS, 3, reply_of)
    assert result.observation.returns == game.returns and result.observation.invalid == game.stats["invalid"] == 3


def test_a_turn_based_game_and_a_random_opponent_over_the_wire():
    app = make_app("cake_negotiation", role="bargainer_1", opponent="random")
    with ServerThread(app) as server, GymwrightEnvClient(base_url=server.base_url).sync() as env:
        first = [env.reset(seed=s).observation.prompt for s in (5, 5, 6)]
        result = env.reset(seed=5)
        while not result.done:
            result = env.step(GameAction(reply="reject"))
    assert first[0] == first[1] and "offer" in first[0]  # the same seed, the same opponent proposal
    assert set(result.observation.returns) == {"bargainer_0", "bargainer_1"}


def test_errors_reach_the_client_with_the_fix(role_server, all_server):
    with GymwrightEnvClient(base_url=all_server.base_url).sync() as env:
        env.reset(seed=0)
        with pytest.raises(RuntimeError, match="which one does the reply answer") as e:
            env.step(GameAction(reply="stag"))
        assert "agent=AGENT" in str(e.value)
    with GymwrightEnvClient(base_url=role_server.base_url).sync() as env:
        with pytest.raises(RuntimeError, match="no episode yet"):
            env.step(GameAction(reply="stag"))
        env.reset(seed=0)
        with pytest.raises(RuntimeError, match="does not play"):
            env.step(GameAction(reply="stag", agent="hunter_1"))


def test_two_clients_play_two_games_at_once(role_server):
    a = GymwrightEnvClient(base_url=role_server.base_url).sync()
    b = GymwrightEnvClient(base_url=role_server.base_url).sync()
    with a, b:
        a.reset(seed=1)
        b.reset(seed=1)
        a.step(GameAction(reply="hare"))
        result_b = b.step(GameAction(reply="stag"))
        assert a.state().step_count == 1 and b.state().step_count == 1
    assert result_b.observation.infos["hunter_0"]["action"] == 0  # b's own game, not a's
