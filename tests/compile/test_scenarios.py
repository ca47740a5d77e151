"""Scenario testing from Python (issue 16, item 2): `reset(seed, options={"state": {...}})` sets
start values on both backends, checked like the spec's own declarations, so an environment can
be tested against hand-worked cases."""

from __future__ import annotations

import re

import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch

OFFER = {"offer": 0.7, "phase": 1, "proposer": 0}  # bargainer_0 has offered to keep 0.7


def test_a_hand_worked_cake_case_on_the_python_backend() -> None:
    env = compile_spec("cake_negotiation").parallel_env()
    obs, infos = env.reset(seed=0, options={"state": OFFER})
    assert obs["bargainer_1"][2] == pytest.approx(0.7)  # the responder sees the offer
    assert infos["bargainer_1"]["action_mask"][11:].tolist() == [1, 1]  # accept, reject
    _, rewards, terms, _, _ = env.step({"bargainer_1": 11})  # accept
    assert rewards == pytest.approx({"bargainer_0": 0.7, "bargainer_1": 0.3}) and all(terms.values())


def test_the_batch_backend_sets_each_copy_and_agrees_with_the_python_backend() -> None:
    benv = compile_batch("cake_negotiation", {}, batch_size=3)
    obs, masks = benv.reset(seed=0, options={"state": {"offer": [0.7, 0.2, 0.5], "phase": 1, "proposer": 0}})
    for b, offer in enumerate([0.7, 0.2, 0.5]):
        env = compile_spec("cake_negotiation").parallel_env()
        o, infos = env.reset(seed=b, options={"state": {**OFFER, "offer": offer}})
        np.testing.assert_array_equal(obs[b, 1, :4], o["bargainer_1"])
        np.testing.assert_array_equal(masks[b, 1], infos["bargainer_1"]["action_mask"])
    actions = np.array([[-1, 11]] * 3)
    _, rewards, term, _, _ = benv.step(actions)
    np.testing.assert_allclose(rewards[:, 0], [0.7, 0.2, 0.5])
    assert term.all()


def test_a_grid_scenario_places_the_walkers() -> None:
    env = compile_spec("mapf_frozenlake").parallel_env()
    env.reset(seed=0, options={"state": {"pos": [[0, 0], [1, 1]]}})
    assert env.v.pos.tolist() == [[0, 0], [1, 1]]


@pytest.mark.parametrize("state, message", [
    ({"offer": 1.5}, "state `offer` = 1.5 is outside its bounds [0, 1]"),
    ({"phase": 0.5}, "state `phase` takes an int per entry, got 0.5"),
    ({"deal": 1}, "state `deal` takes a bool per entry, got 1"),
    ({"offer": float("nan")}, "state `offer` = nan is not finite"),
    ({"nope": 1}, "options['state'] names no variable nope; this env's variables: round, proposer, phase"),
])
def test_bad_start_values_are_refused_naming_the_variable(state: dict, message: str) -> None:
    env = compile_spec("cake_negotiation").parallel_env()
    with pytest.raises(ValueError, match=r"^" + re.escape(message)):
        env.reset(seed=0, options={"state": state})
    benv = compile_batch("cake_negotiation", {}, batch_size=2)
    with pytest.raises(ValueError, match=re.escape(message.split(" = ")[0].split(" takes")[0])):
        benv.reset(seed=0, options={"state": state})


def test_shapes_and_option_keys_are_checked() -> None:
    env = compile_spec("mapf_frozenlake").parallel_env()
    with pytest.raises(ValueError, match=r"state `pos` has shape \(2, 2\), got \(1, 2\)"):
        env.reset(seed=0, options={"state": {"pos": [[0, 0]]}})
    with pytest.raises(ValueError, match="reset options are a mapping such as"):
        env.reset(seed=0, options=["state"])
    env.reset(seed=0, options={"other": 1})  # other keys are left alone, as Gymnasium's envs do
    benv = compile_batch("cake_negotiation", {}, batch_size=3)
    with pytest.raises(ValueError, match=r"state `offer` has shape \(\) or \(3,\) \(one per copy\), got \(2,\)"):
        benv.reset(seed=0, options={"state": {"offer": [0.1, 0.2]}})


def test_later_episodes_start_as_the_spec_says() -> None:
    """A scenario sets the first episode after reset(); auto-reset copies start from `init`."""
    benv = compile_batch("cake_negotiation", {}, batch_size=2)
    benv.reset(seed=0, options={"state": OFFER})
    benv.step(np.array([[-1, 11]] * 2))  # accepted: the episode ends, the copies restart
    assert (benv.v.phase == 0).all() and (benv.v.offer == 0).all()
