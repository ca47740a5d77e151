"""The text view of every library spec (issue 43, item 1; two representatives by default, every
spec under `-m slow`): generated from the checked spec, every legal action named and parsed back, invalid replies handled by the declared rule and counted,
the same text in gymwright's process and in an exported module, and a code-mode env's hook."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.errors import GymwrightError
from gymwright.textgame import TextGame, TextView
from tests.support import paths
from tests.support.library_sample import every_spec
from tests.support.no_gymwright import BLOCK_GYMWRIGHT


@pytest.mark.parametrize("name", every_spec())
def test_every_action_of_every_library_spec_is_named_and_parsed_back(name: str) -> None:
    view = TextView.of(name)
    for agent in view.agents:
        names = view.layout["roles"][view.role(agent)]["actions"]
        every = np.ones(len(names), dtype=np.int8)
        assert len(set(names)) == len(names), names
        for i, written in enumerate(names):
            assert view.parse(agent, written, every).action == i, written
            assert view.parse(agent, f"[{i}]", every).action == i
            assert view.parse(agent, json.dumps({"action": written}), every).action == i
            assert view.parse(agent, f"  `{written.upper()}`.  ", every).action == i


@pytest.mark.parametrize("name", every_spec())
def test_random_play_as_text_lists_exactly_the_legal_actions_and_counts_invalid_replies(name: str) -> None:
    game = TextGame(name, seed=3)
    rng = np.random.default_rng(0)
    prompts = game.reset(seed=3)
    asked = invalid = 0
    while not game.done and game.turns < 60:
        replies = {}
        for agent, prompt in prompts.items():
            legal = game.view.legal(agent, game.masks[agent])
            assert [i for i, _ in legal] == list(np.flatnonzero(game.masks[agent])), (agent, legal)
            assert all(f"[{i}] {n}" in prompt for i, n in legal)
            bad = rng.random() < 0.3
            replies[agent] = "I cannot decide" if bad else legal[int(rng.integers(len(legal)))][1]
            asked, invalid = asked + 1, invalid + bad
        prompts, _, _, _, infos = game.step(replies)
        for agent, reply in replies.items():
            info = infos[agent]["text"]
            assert info["valid"] == (reply != "I cannot decide")
    assert game.stats["decisions"] == asked and game.stats["invalid"] == invalid


def test_an_invalid_reply_follows_the_declared_rule() -> None:
    first = TextGame("cake_negotiation", invalid="first")
    first.reset(seed=0)
    _, _, _, _, infos = first.step({"bargainer_0": "a rambling answer with no action"})
    assert infos["bargainer_0"]["text"] == {"action": 0, "valid": False, "how": "",
                                            "error": infos["bargainer_0"]["text"]["error"]}
    assert "names no legal action" in infos["bargainer_0"]["text"]["error"]
    drawn = set()
    for seed in range(12):
        game = TextGame("cake_negotiation", invalid="random", seed=seed)
        game.reset(seed=seed)
        _, _, _, _, infos = game.step({"bargainer_0": "?"})
        drawn.add(infos["bargainer_0"]["text"]["action"])
    assert len(drawn) > 3 and drawn <= set(range(11))  # random among the 11 legal offers
    assert "a random legal action is played instead" in TextView.of("cake_negotiation").rules("bargainer_0")
    with pytest.raises(GymwrightError, match="invalid-reply rule"):
        TextView.of("cake_negotiation", invalid="forfeit")


def test_an_action_that_is_not_legal_now_is_invalid_and_says_why() -> None:
    view = TextView.of("cake_negotiation")
    propose_phase = np.array([1] * 11 + [0, 0], dtype=np.int8)
    parsed = view.parse("bargainer_0", "accept", propose_phase)
    assert parsed.action is None and "accept is not legal now" in parsed.error
    assert "[12]" in view.parse("bargainer_0", "[12]", propose_phase).error
    assert view.parse("bargainer_0", "propose(share=0.50)", propose_phase).action == 5
    assert view.parse("bargainer_0", "I would propose(share=0.7) here", propose_phase).action == 7
    assert view.parse("bargainer_0", "propose(share=0.7) or propose(share=0.8)?", propose_phase).action is None


def test_the_rules_card_and_the_observation_come_from_the_spec() -> None:
    view = TextView.of("cake_negotiation", {"max_rounds": 7})
    rules = view.rules("bargainer_1")
    assert "Two agents split a cake by alternating offers" in rules  # the description
    assert "You are bargainer_1" in rules and "bargainer_0" in rules
    assert "max_rounds = 7: rounds before the cake is lost" in rules  # params with their docs
    assert "cake = 1 * (deal * discount ** round" in rules  # the reward terms
    assert "propose(share=X)" in rules and "share in {0, 0.1," in rules
    obs = np.array([1.0, 0.0, 0.7, 2 / 7], dtype=np.float32)
    text = view.observation("bargainer_1", obs)
    assert "- phase (0 = propose, 1 = respond): 1" in text  # a variable's doc
    assert "- me == proposer: false" in text and "offer (proposer's share on the table): 0.7" in text


def test_a_grid_window_is_drawn_as_one_character_map_with_a_legend() -> None:
    game = TextGame("mapf_frozenlake")
    prompt = game.reset(seed=0)["walker_0"]
    assert "- map, 3x3 (H = holes_near; E = edge_near; . = none of these):" in prompt
    rows = prompt.split("none of these):\n")[1].splitlines()[:3]
    assert all(len(r.split()) == 3 and set(r.split()) <= {"H", "E", "."} for r in rows)


def test_an_exported_module_carries_the_same_text_game(tmp_path: Path) -> None:
    """The generated module's own methods give the text gymwright gives, with no gymwright installed."""
    compiled = compile_spec("cake_negotiation")
    env = compiled.parallel_env()
    obs, infos = env.reset(seed=0)
    view = TextView.of("cake_negotiation")
    mask = infos["bargainer_0"]["action_mask"]
    assert env.text_prompt("bargainer_0", obs["bargainer_0"], mask) == view.prompt("bargainer_0", obs["bargainer_0"], mask)
    assert env.text_rules("bargainer_1") == view.rules("bargainer_1")
    (tmp_path / "env.py").write_text(compiled.source)
    script = BLOCK_GYMWRIGHT + textwrap.dedent("""
        import numpy as np
        from env import parallel_env
        env = parallel_env(); obs, infos = env.reset(seed=0)
        m = infos['bargainer_0']['action_mask']
        print(env.parse_reply('bargainer_0', 'propose(share=0.3)', m))
        print(env.text_fallback('bargainer_0', m, np.random.default_rng(0)) in range(11))
        print(env.text_prompt('bargainer_0', obs['bargainer_0'], m).splitlines()[0])
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["(3, 'name', '')", "True", "You observe:"]


HOOKED = '''
    TEXT = {"description": "Two walkers on a line must meet.",
            "features": [["my_position", 1, "0 = left end, 1 = right end"], ["other_position", 1, ""],
                         ["time", 1, "share of the episode gone"]],
            "actions": ["step_left", "stay", "step_right"],
            "action_docs": {"stay": "wait where you are"}}
'''


def test_a_code_mode_env_has_a_text_game_through_its_hook_and_a_generic_one_without(tmp_path: Path) -> None:
    from gymwright.codemode.source import parallel_env

    source = (paths.ROOT / "tests" / "data" / "codemode" / "meet_on_a_line.py").read_text()
    plain = tmp_path / "plain.py"
    plain.write_text(source)
    hooked = tmp_path / "hooked.py"
    hooked.write_text(source.replace("    metadata = ", HOOKED + "    metadata = ", 1))
    for path, words in ((hooked, ["my_position (0 = left end, 1 = right end):", "[2] step_right"]),
                        (plain, ["x (the observation vector): [", "[2] action_2"])):
        env = parallel_env(str(path), {})
        try:
            game = TextGame(env=env)
            prompts = game.reset(seed=1)
            assert all(w in prompts["walker_0"] for w in words), prompts["walker_0"]
            while not game.done:
                prompts, *_ = game.step({a: "stay" if path == hooked else "[1]" for a in prompts})
            assert game.stats["invalid"] == 0 and game.stats["decisions"] > 0
        finally:
            env.close()
    assert "wait where you are" in TextView.of_env(parallel_env(str(hooked), {})).rules("walker_0")


def test_a_hook_that_does_not_fit_the_env_is_refused_with_the_sizes_it_read() -> None:
    class Env:
        possible_agents = ["a"]
        TEXT = {"features": [["x", 2, ""]]}

        def observation_space(self, agent: str) -> object:
            import gymnasium
            return gymnasium.spaces.Box(0, 1, (3,))

        def action_space(self, agent: str) -> object:
            import gymnasium
            return gymnasium.spaces.Discrete(2)

    with pytest.raises(GymwrightError, match="sizes add up to 2, but a's observation has 3 values"):
        TextView.of_env(Env())
