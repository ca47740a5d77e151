"""Every library spec: valid, compiles, passes PettingZoo's own API and seed tests, and its probes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

from gymwright.compile import compile_spec
from gymwright.diagnostic import Severity
from gymwright.spec import library_names, load_spec
from gymwright.verify.validate import validate
from tests.support.library_sample import every_spec
from tests.support.playing import random_legal_actions

NAMES = library_names()


def test_library_has_the_ten_required_specs() -> None:
    required = {"cake_negotiation", "iterated_prisoners_dilemma", "stag_hunt", "public_goods",
                "mapf_frozenlake", "predator_prey", "speaker_listener", "sealed_bid_auction",
                "commons_harvest", "multi_issue_negotiation"}
    assert required <= set(NAMES), sorted(required - set(NAMES))


@pytest.mark.parametrize("name", every_spec(NAMES))
def test_spec_is_valid_and_probes_pass(name: str) -> None:
    diags = validate(name)
    errors = [d.format() for d in diags if d.severity is Severity.error]
    assert errors == []


@pytest.mark.parametrize("name", NAMES)
def test_spec_is_documented(name: str) -> None:
    spec = load_spec(name)
    assert spec.doc.strip() and spec.description.strip() and spec.tags
    assert spec.metrics, "every library spec reports task metrics"
    assert len(spec.probes) >= 2, "every library spec carries probes"
    for pname, p in spec.params.items():
        assert p.doc, f"param {pname} needs a doc"
        if p.type != "bool":
            assert p.min is not None and p.max is not None, f"param {pname} needs a range"


@pytest.mark.parametrize("name", every_spec(NAMES))
def test_parallel_api(name: str) -> None:
    env = compile_spec(name).parallel_env()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PettingZoo reports contract smells as warnings
        parallel_api_test(env, num_cycles=300)


@pytest.mark.parametrize("name", every_spec(NAMES))
def test_aec_api(name: str) -> None:
    c = compile_spec(name)
    api_test(c.aec_env(), num_cycles=300)


@pytest.mark.parametrize("name", every_spec(NAMES))
def test_seed_tests(name: str) -> None:
    c = compile_spec(name)
    seed_test(lambda: c.aec_env(), num_cycles=100)
    parallel_seed_test(lambda: c.parallel_env(), num_cycles=100)


@pytest.mark.parametrize("name", every_spec(NAMES))
def test_random_legal_play_stays_in_spaces(name: str) -> None:
    c = compile_spec(name)
    env = c.parallel_env(render_mode="ansi")
    rng = np.random.default_rng(0)
    for episode in range(3):
        obs, infos = env.reset(seed=episode)
        steps = 0
        while env.agents:
            for a, o in obs.items():
                assert env.observation_space(a).contains(o), (a, o, env.observation_space(a))
            actions = random_legal_actions(env, infos, rng)
            assert actions, "no agent has a legal action while the episode runs"
            obs, rew, term, trunc, infos = env.step(actions)
            assert all(np.isfinite(r) for r in rew.values())
            assert isinstance(env.render(), str)
            assert env.state_space.shape == env.state().shape
            steps += 1
            assert steps < 10_000, "episode does not end"


@pytest.mark.parametrize("name", every_spec(NAMES))
def test_verifier_passes_every_library_spec(name: str) -> None:
    from gymwright.verify.verifier import verify

    report = verify(name)
    assert report.passed, report.to_prompt()
    assert [s.name for s in report.stages] == ["schema", "static", "compile", "dynamic", "probes", "degeneracy"]
