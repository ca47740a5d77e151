"""Language models as policies (issue 43, item 2): `llm:MODEL` plays through gymwright's client and
the real `openai` package against an OpenAI-compatible server on loopback (the stand-in for a
remote model computes each reply from the prompt it receives)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.llm.client import LLM, MemoryCache
from gymwright.llm.openai_provider import OpenAIProvider
from gymwright.textgame.policy import LLMPolicy
from gymwright.train.baselines import random_legal_policy
from gymwright.train.episodes import play_episodes
from tests.support.fake_openai_server import LLM_ENV_VARS
from tests.support.text_player_server import (
    PlayerServer,
    first_legal,
    last_legal_with_reasoning,
    legal_of,
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LLM_ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def policy(server: PlayerServer, spec: str, **options: object) -> LLMPolicy:
    llm = LLM(OpenAIProvider("fake-model", base_url=server.base_url, api_key="test"), cache=MemoryCache())
    return LLMPolicy(llm, spec, {}, **options)  # type: ignore[arg-type]


def test_a_model_that_always_accepts_plays_the_bargaining_game_to_its_known_outcome() -> None:
    """The last legal action is `reject` while responding and the largest share while proposing:
    every offer is rejected, no deal is ever made, each episode runs to max_rounds."""
    with PlayerServer(last_legal_with_reasoning) as server:
        pol = policy(server, "cake_negotiation")
        result = play_episodes("cake_negotiation", {"max_rounds": 3}, pol, episodes=4, seed=0)
    assert result.metrics["agreed"] == 0.0 and result.metrics["rounds"] == 3.0
    assert result.returns["bargainer"] == 0.0
    assert pol.tally.decisions == 4 * 6 and pol.tally.invalid == 0  # 3 rounds of propose + answer
    first = server.requests[0]["messages"]
    assert first[0]["role"] == "system" and "You are bargainer_0" in first[0]["content"]
    assert "[10] propose(share=1)" in first[1]["content"]
    assert all(d.reply.startswith("Thinking it over") for d in pol.tally.kept)


def test_invalid_replies_are_counted_and_replaced_by_random_legal_actions() -> None:
    def sometimes_wrong(request: dict) -> str:
        legal = legal_of(request)
        return "no idea" if len(legal) % 2 else legal[0][1]

    with PlayerServer(sometimes_wrong) as server:
        pol = policy(server, "cake_negotiation")
        play_episodes("cake_negotiation", {"max_rounds": 2}, pol, episodes=3, seed=1)
    assert pol.tally.invalid > 0
    wrong = [d for d in pol.tally.kept if not d.valid]
    assert len(wrong) == pol.tally.invalid and all("names no legal action" in d.error for d in wrong)
    assert all(d.action_name.startswith("propose(") for d in wrong)  # 11 legal offers: an odd count


def test_requests_are_cached_by_content_and_sampling_is_seeded() -> None:
    with PlayerServer(first_legal) as server:
        pol = policy(server, "stag_hunt")
        play_episodes("stag_hunt", {}, pol, episodes=2, seed=0, deterministic=True)
        calls = len(server.requests)
        assert pol.tally.cached > 0 and calls < pol.tally.decisions  # identical prompts asked once
        sampled = policy(server, "stag_hunt", temperature=0.7, seed=5)
        sampled.act(np.zeros((1, 2, 8), np.float32), np.ones((1, 2, 2), np.int8))
    asked = server.requests[calls:]
    assert {r["temperature"] for r in asked} == {0.7} and len({r["seed"] for r in asked}) == 2


def test_an_llm_plays_a_role_against_a_scripted_baseline_and_beside_a_trained_role() -> None:
    """A fixed partner (`--npc ROLE=llm:MODEL`) plays only its agents; the others come from the policy."""
    from gymwright.train.npc import Team, players_for
    from gymwright.train.policy import roles_of
    from gymwright.train.rollout import make_env

    with PlayerServer(first_legal) as server:
        benv = make_env("stag_hunt", [{}], 4)
        import os
        os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = server.base_url, "test"
        players = players_for({"hunter[1]": "llm:openai:fake-model"}, benv, roles_of(benv), "stag_hunt")
        team = Team(random_legal_policy(0), players)
        result = play_episodes("stag_hunt", {}, team, episodes=4, seed=0)
    assert result.npc == {"hunter_1": "llm:openai:fake-model"}
    asked = {json.dumps(r["messages"][0]["content"]).count("You are hunter_1") for r in server.requests}
    assert asked == {1}  # only hunter_1 was ever asked


def test_evaluate_with_an_llm_policy_keeps_its_replies_in_the_trajectories_and_the_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with PlayerServer(last_legal_with_reasoning) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        done = CliRunner().invoke(app, ["evaluate", "cake_negotiation", "--policy", "llm:openai:fake-model",
                                        "-n", "4", "-p", "max_rounds=2", "--out", str(tmp_path / "eval"), "--json"])
    assert done.exit_code == 0, done.output
    card = json.loads(done.stdout)
    assert card["llm"]["decisions"] > 0 and card["llm"]["valid_rate"] == 1.0
    steps = [json.loads(x) for x in (tmp_path / "eval" / "trajectories.jsonl").read_text().splitlines()]
    noted = [s for s in steps if s.get("notes")]
    assert noted and all("Thinking it over" in n for s in noted for n in s["notes"].values())
    from gymwright.report.folder import trajectories
    from gymwright.report.sections import episode_text

    text = episode_text(trajectories(steps)[0])
    assert "bargainer_0 replied: Thinking it over, the last option looks best. propose(share=1)" in text


def test_play_shows_each_reply_escaped_beside_its_action(monkeypatch: pytest.MonkeyPatch) -> None:
    with PlayerServer(lambda r: "\x1b[2J \n" + first_legal(r)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        done = CliRunner().invoke(app, ["play", "cake_negotiation", "--policy", "llm:openai:fake-model", "-n", "1",
                                        "-p", "max_rounds=1", "--render"])
    assert done.exit_code == 0, done.output
    assert "bargainer_0 -> propose(share=0): \\x1b[2J propose(share=0)" in done.stdout
    assert "\x1b[2J" not in done.stdout
    assert "valid-action rate 1.000" in done.stdout


def test_a_model_name_that_names_no_model_is_refused_where_it_is_written() -> None:
    done = CliRunner().invoke(app, ["play", "cake_negotiation", "--policy", "llm:nowhere:x", "-n", "1"])
    assert done.exit_code != 0 and "unknown provider 'nowhere'" in done.output


def test_a_language_model_is_a_fixed_opponent_during_training_and_comes_back_with_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gymwright.train import TrainConfig, load_policy, train

    with PlayerServer(first_legal) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        train(TrainConfig(spec="stag_hunt", params={"rounds": 3}, total_steps=128, num_envs=8, rollout_len=16,
                          npc={"hunter[1]": "llm:openai:fake-model"}, out=str(tmp_path / "run")))
        trained_calls = len(server.requests)
        team = load_policy(tmp_path / "run", spec="stag_hunt")
        result = play_episodes("stag_hunt", {"rounds": 3}, team, episodes=2, seed=0)
    assert trained_calls > 0 and all("You are hunter_1" in r["messages"][0]["content"] for r in server.requests)
    assert result.npc == {"hunter_1": "llm:openai:fake-model"}
    assert min(result.episode_metrics["stag_share"]) >= 0.5  # the model's hunter always hunts stag (listed first)


def test_evaluate_puts_a_language_model_against_a_scripted_baseline_in_one_role(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with PlayerServer(first_legal) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        done = CliRunner().invoke(app, ["evaluate", "cake_negotiation", "--policy", "llm:openai:fake-model",
                                        "--npc", "bargainer[1]=scripted:greedy_agreeable", "-n", "3",
                                        "-p", "max_rounds=2", "--out", str(tmp_path / "eval"), "--json"])
    assert done.exit_code == 0, done.output
    card = json.loads(done.stdout)
    assert card["trained"]["npc"] == {"bargainer_1": "scripted:greedy_agreeable"}
    assert all("You are bargainer_0" in r["messages"][0]["content"] for r in server.requests)
    # bargainer_0 offers share 0 (its first legal action) and the agreeable baseline accepts at once
    assert card["trained"]["metrics"]["agreed"] == 1.0 and card["trained"]["metrics"]["first_share"] == 0.0


def test_an_invalid_reply_is_recorded_in_the_trajectory_with_what_the_rule_played(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gymwright.evaluate.trajectories import record

    with PlayerServer(lambda r: "hmm, hard to say") as server:
        pol = policy(server, "cake_negotiation")
        trajs = record("cake_negotiation", {"max_rounds": 1}, pol, episodes=1, seed=0)
    notes = [n for s in trajs[0].steps for n in s.notes.values()]
    assert notes and all(n.startswith("hmm, hard to say\n[invalid reply: ") for n in notes)
    assert all("names no legal action" in n and "the rule played " in n for n in notes)
