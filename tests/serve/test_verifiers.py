"""The verifiers environment of a library spec, for real: verifiers' own `evaluate` drives the
rollouts against an OpenAI-compatible model server on 127.0.0.1 (the stand-in of
tests/support/fake_openai_server.py); each rollout's reward is the role's episode return of the
same game played directly through `TextGame` with the same seed."""

from __future__ import annotations

import pytest

pytest.importorskip("verifiers")

import verifiers as vf  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from gymwright.errors import GymwrightError  # noqa: E402
from gymwright.serve.verifiers_env import GymwrightEnv, load_environment  # noqa: E402
from gymwright.textgame import TextGame  # noqa: E402
from tests.support.fake_openai_server import FakeOpenAIServer  # noqa: E402

REPLIES = ["stag", "nonsense", "hare", "[0]", "stag"]  # valid by name, invalid, valid, by index, valid
ROUNDS = {"rounds": 5}


def direct_return(seed: int) -> TextGame:
    """stag_hunt played directly: hunter_0 replies REPLIES in turn, hunter_1 always hunts the stag."""
    game = TextGame("stag_hunt", ROUNDS)
    prompts, turn = game.reset(seed=seed), 0
    while not game.done:
        prompts = game.step({a: REPLIES[turn] if a == "hunter_0" else "stag" for a in prompts})[0]
        turn += 1
    return game


def test_load_environment_rows_are_seeds_with_the_roles_first_messages():
    env = load_environment(spec="stag_hunt", role="hunter_1", params=ROUNDS, num_examples=3, seed=10)
    assert isinstance(env, GymwrightEnv) and isinstance(env, vf.MultiTurnEnv)
    rows = env.get_dataset().to_list()
    assert [r["info"]["seed"] for r in rows] == [10, 11, 12]
    game = TextGame("stag_hunt", ROUNDS)
    first = game.reset(seed=10)["hunter_1"]
    assert [m["role"] for m in rows[0]["prompt"]] == ["system", "user"]
    assert rows[0]["prompt"][0]["content"] == game.system("hunter_1") and rows[0]["prompt"][1]["content"] == first


def test_evaluate_rewards_the_episode_return_over_a_real_model_client():
    env = load_environment(spec="stag_hunt", role="hunter_0", opponent="scripted:always_stag", params=ROUNDS,
                           num_examples=2, seed=3)
    with FakeOpenAIServer(REPLIES * 2) as server:
        client = vf.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=server.base_url, api_key="fake"))
        results = env.evaluate_sync(client, model="fake-model", num_examples=2, max_concurrent=1)
    outputs = sorted(results["outputs"], key=lambda o: o["info"]["seed"])
    for out, seed in zip(outputs, (3, 4), strict=True):
        game = direct_return(seed)
        assert out["reward"] == game.returns["hunter_0"] and out["error"] is None
        assert out["metrics"]["valid_rate"] == pytest.approx(0.8) and out["metrics"]["invalid"] == 1
        assert out["stop_condition"] == "has_final_env_response" and out["metrics"]["num_turns"] == 5
    # what the model saw: the rules card, then its turns, each reply answered by its next turn
    sent = server.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[2]["content"] == "stag" and "Your legal actions now" in sent[3]["content"]


def test_a_bad_role_fails_at_load_with_the_agents():
    with pytest.raises(GymwrightError, match="no agent") as e:
        load_environment(spec="stag_hunt", role="hunter")
    assert "hunter_0, hunter_1" in e.value.hint
