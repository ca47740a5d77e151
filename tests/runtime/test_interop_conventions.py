"""The PettingZoo conventions every generated env accepts (runtime/conventions.py): the `human`
render mode (grid frames on a terminal), `max_cycles` and `action_mask_in_obs`, and their
errors. PettingZoo's own render_test, max_cycles_test and API tests run on every library
export in tests/compile/test_export_standalone.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.runtime.conventions import rt_terminal_frame


def test_human_mode_prints_the_text_rendering_and_returns_none(capsys):
    env = compile_spec("cake_negotiation").parallel_env(render_mode="human")
    env.reset(seed=0)
    env.step({"bargainer_0": 9})
    assert env.render() is None
    assert capsys.readouterr().out == env.render_text() + "\n"


def test_a_grid_env_in_human_mode_draws_its_frame_on_a_terminal():
    """Run in a real pseudo-terminal: the text picture, then the RGB frame as coloured cells
    (two text rows and four columns per grid cell), agent 0 in its palette colour."""
    script = textwrap.dedent("""
        from gymwright.compile import compile_spec
        env = compile_spec("mapf_frozenlake").parallel_env(render_mode="human")
        env.reset(seed=0)
        env.render()
    """)
    leader, follower = os.openpty()
    proc = subprocess.run([sys.executable, "-c", script], stdout=follower, stderr=subprocess.PIPE,
                          timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1"})
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    assert proc.returncode == 0, proc.stderr.decode()
    text = out.decode().replace("\r\n", "\n")
    env = compile_spec("mapf_frozenlake").parallel_env(render_mode="ansi")
    env.reset(seed=0)
    assert text.startswith(env.render() + "\n")
    frame = text[len(env.render()) + 1:].rstrip("\n").split("\n")
    size = env.unwrapped.v.tiles.shape
    assert len(frame) == 2 * size[0]
    assert all(len(re.findall("\u2580", row)) == 4 * size[1] for row in frame)
    assert "\x1b[38;2;230;25;75m" in text  # walker_0's disc (AGENT_PALETTE[0])


def test_not_on_a_terminal_a_grid_env_prints_text_only(capsys):
    env = compile_spec("mapf_frozenlake").parallel_env(render_mode="human")
    env.reset(seed=0)
    env.render()
    assert "\x1b[" not in capsys.readouterr().out


def test_terminal_frame_colours_top_and_bottom_pixels():
    rgb = np.array([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]], [[13, 14, 15], [16, 17, 18]]], np.uint8)
    rows = rt_terminal_frame(rgb).split("\n")
    assert rows[0] == "\x1b[38;2;1;2;3m\x1b[48;2;7;8;9m\u2580\x1b[38;2;4;5;6m\x1b[48;2;10;11;12m\u2580\x1b[0m"
    assert rows[1] == "\x1b[38;2;13;14;15m\x1b[48;2;0;0;0m\u2580\x1b[38;2;16;17;18m\x1b[48;2;0;0;0m\u2580\x1b[0m"


def test_masks_in_observations_match_the_infos_and_the_dict_space():
    env = compile_spec("cake_negotiation").parallel_env(action_mask_in_obs=True)
    obs, infos = env.reset(seed=0)
    space = env.observation_space("bargainer_0")
    assert list(space.spaces) == ["action_mask", "observation"]
    assert space["action_mask"].shape == (13,) and space["action_mask"].dtype == np.int8
    assert set(obs["bargainer_0"]) == {"observation", "action_mask"}
    assert space.contains(obs["bargainer_0"])
    obs, *_, infos = env.step({"bargainer_0": 4})
    assert obs["bargainer_1"]["action_mask"].tolist() == infos["bargainer_1"]["action_mask"].tolist() == [0] * 11 + [1, 1]
    np.testing.assert_array_equal(env.observe("bargainer_1")["observation"], obs["bargainer_1"]["observation"])


def test_max_cycles_truncates_every_agent_at_the_cap():
    env = compile_spec("stag_hunt", {"rounds": 20}).parallel_env(max_cycles=3)
    env.reset(seed=0)
    for t in range(1, 4):
        _, _, term, trunc, infos = env.step({a: 0 for a in env.agents})
        assert not any(term.values())
        assert all(trunc.values()) == (t == 3)
    assert env.agents == [] and infos["hunter_0"]["episode"]["l"] == 3


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_cycles": 0}, "max_cycles must be an int >= 1 (every agent is truncated after that many steps), got 0; pass None for no cap"),
    ({"max_cycles": True}, "max_cycles must be an int >= 1 (every agent is truncated after that many steps), got True; pass None for no cap"),
    ({"max_cycles": 2.5}, "max_cycles must be an int >= 1 (every agent is truncated after that many steps), got 2.5; pass None for no cap"),
    ({"action_mask_in_obs": "yes"}, "action_mask_in_obs must be True or False, got 'yes'"),
    ({"render_mode": "rgb_array"}, "render_mode 'rgb_array' is not one of ['ansi', 'human']"),
])
def test_bad_options_say_what_to_give(kwargs, message):
    with pytest.raises(ValueError) as e:
        compile_spec("cake_negotiation").parallel_env(**kwargs)
    assert str(e.value) == message
