"""gymwright.make / make_aec: a library name or a spec file, params and env options in one call,
and clear errors for a bad name, keyword, param or option (issue 19, item 4)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.test import api_test, parallel_api_test

import gymwright
from gymwright.errors import GymwrightError, SpecError
from gymwright.spec.loader import LIBRARY_DIR


def test_make_returns_the_parallel_env_at_the_given_params():
    env = gymwright.make("cake_negotiation", discount=0.8, max_rounds=3, max_cycles=5, render_mode="ansi")
    assert isinstance(env, ParallelEnv)
    assert env.p.discount == 0.8 and env.p.max_rounds == 3
    assert env.max_cycles == 5 and env.render_mode == "ansi"
    parallel_api_test(env, num_cycles=20)


def test_make_aec_returns_the_wrapped_aec_env():
    env = gymwright.make_aec("stag_hunt", rounds=4, action_mask_in_obs=True)
    assert isinstance(env, AECEnv)
    api_test(env, num_cycles=10)
    env.reset(seed=0)
    assert set(env.observe("hunter_0")) == {"observation", "action_mask"}


def test_make_reads_a_spec_file(tmp_path: Path):
    path = tmp_path / "my_hunt.yaml"
    shutil.copy(LIBRARY_DIR / "stag_hunt.yaml", path)
    env = gymwright.make(str(path), rounds=2)
    env.reset(seed=0)
    for _ in range(2):
        env.step({a: 0 for a in env.agents})
    assert env.agents == []
    assert isinstance(gymwright.make(path), ParallelEnv)  # a Path as well


def test_an_unknown_name_suggests_the_nearest():
    with pytest.raises(SpecError) as e:
        gymwright.make("stag_hnt")
    assert str(e.value) == ("error [schema] stag_hnt: no spec file or library spec named `stag_hnt`\n"
                            "  hint: did you mean stag_hunt?")


def test_an_unknown_keyword_suggests_a_param_or_an_option():
    with pytest.raises(GymwrightError) as e:
        gymwright.make_aec("cake_negotiation", max_cycle=3)
    assert str(e.value) == (
        "make('cake_negotiation'): cake_negotiation has no param or option `max_cycle`\n"
        "  hint: did you mean `max_cycles`? its params: discount, max_rounds, offer_levels; "
        "env options: render_mode, max_cycles, action_mask_in_obs")
    with pytest.raises(GymwrightError, match=r"did you mean `discount`\?"):
        gymwright.make("cake_negotiation", discont=0.5)


def test_a_param_out_of_range_names_the_param_and_the_range():
    with pytest.raises(SpecError) as e:
        gymwright.make("cake_negotiation", discount=9)
    assert str(e.value) == ("error [static] params.discount (given 9): param `discount` = 9.0 is out of "
                            "its range [0.5, 1]\n  hint: choose a value in [0.5, 1]")


def test_a_bad_option_is_a_gymwright_error_saying_what_to_give():
    with pytest.raises(GymwrightError) as e:
        gymwright.make("cake_negotiation", render_mode="rgb_array")
    assert str(e.value) == "make('cake_negotiation'): render_mode 'rgb_array' is not one of ['ansi', 'human']"
    with pytest.raises(GymwrightError, match=r"max_cycles must be an int >= 1 .* got -1; pass None for no cap"):
        gymwright.make_aec("stag_hunt", max_cycles=-1)
