"""Per-agent episode ends (issue 42, point 8): `terminate_agent` takes a finished agent out
(PettingZoo: terminated on its last step, then out of `agents`, no further actions); the
episode ends when every agent is out or `terminate` holds. The batch backend's view of it is in
tests/compile/test_batch_differential.py (`test_backends_agree_where_agents_leave_one_by_one`)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from pettingzoo.test import api_test, parallel_api_test

from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch
from gymwright.compile.vector import RoleVectorEnv
from gymwright.errors import GymwrightError
from gymwright.spec import load_spec
from gymwright.train.sb3 import sb3_vec_env
from gymwright.verify.verifier import verify

SPEC = """
gymwright: 1
name: crossing
params: {length: {default: 3, min: 1, max: 8, type: int}, max_steps: {default: 12, min: 2, max: 50, type: int}}
agents: {car: {count: 3}}
agent_state:
  dist: {type: int, init: "me", min: 0, max: 20}
  passed: {type: bool, init: false}
actions: {car: [{name: wait}, {name: go}]}
step:
  - {set: {dist: "min(dist[me] + go[me], 20)"}}
  - {set: {passed: "dist[me] >= length"}}
rewards: {car: [{name: progress, expr: "go[me] * 0.5 - 0.1"}, {name: arrive, expr: "10 * passed[me]"}]}
metrics: {passed_count: {expr: "count(passed)"}}
terminate_agent: "passed[me]"
truncate: "t >= max_steps"
observe: {car: ["dist[me]", "count(passed)"]}
probes:
  - name: the lead car passes and leaves, the others drive on
    actions: [{car_2: go, car_1: go}, {car_1: go}]
    expect: ["passed[2]", "passed[1]", "not passed[0]", "not terminated", "mask.car_0.go", "not mask.car_2.go"]
"""


def spec(text: str = SPEC):
    return load_spec(yaml.safe_load(text))


def test_a_finished_agent_is_terminated_then_leaves_agents() -> None:
    env = compile_spec(spec()).parallel_env()
    env.reset(seed=0)
    _, rew, term, trunc, infos = env.step({"car_0": 1, "car_1": 1, "car_2": 1})
    assert term == {"car_0": False, "car_1": False, "car_2": True} and not any(trunc.values())
    assert rew["car_2"] == pytest.approx(10.4) and env.agents == ["car_0", "car_1"]
    assert not infos["car_2"]["action_mask"].any()
    _, rew, term, _, _ = env.step({"car_0": 0, "car_1": 1, "car_2": 1})  # car_2's action is no action
    assert set(rew) == {"car_0", "car_1"} and term == {"car_0": False, "car_1": True}
    assert env.agents == ["car_0"] and env.v.dist.tolist() == [1, 3, 3]
    _, rew, term, _, infos = env.step({"car_0": 1})
    assert term == {"car_0": False} and env.agents == ["car_0"]
    _, rew, term, _, infos = env.step({"car_0": 1})
    assert term == {"car_0": True} and env.agents == [] and infos["car_0"]["metrics"] == {"passed_count": 3.0}
    assert env._returns[2] == pytest.approx(10.4)  # nothing after it left


def test_pettingzoo_api_tests_pass_where_agents_leave() -> None:
    c = compile_spec(spec())
    parallel_api_test(c.parallel_env(), num_cycles=100)
    api_test(c.module.env(), num_cycles=100)


def test_the_verifier_plays_it_and_runs_its_probe() -> None:
    report = verify(spec(), episodes=10)
    assert report.passed, report.to_prompt()


def test_the_batch_gives_an_agent_out_no_action_no_reward_and_zeros() -> None:
    benv = compile_batch(spec(), {}, batch_size=2)
    benv.reset(seed=0)
    obs, rew, term, trunc, _ = benv.step(np.array([[1, 1, 1], [0, 0, 1]]))
    assert term.tolist() == [[False, False, True], [False, False, True]]
    assert obs[:, 2].any() and not benv.masks[:, 2].any()  # its last observation, then no legal action
    obs, rew, term, _, _ = benv.step(np.array([[0, 1, -1], [0, 0, -1]]))
    assert rew[:, 2].tolist() == [0.0, 0.0] and term[:, 2].all() and not obs[:, 2].any()
    assert term[0].tolist() == [False, True, True]


def test_what_cannot_show_agents_leaving_says_so() -> None:
    with pytest.raises(ValueError, match="ends agents one by one"):
        RoleVectorEnv(compile_batch(spec(), {}, batch_size=2), "car")
    with pytest.raises(GymwrightError, match="SuperSuit's vector env needs every agent at every step"):
        sb3_vec_env(compile_spec(spec()).parallel_env())
    assert compile_spec(spec()).parallel_env().AGENT_ENDS is True
    assert compile_spec("stag_hunt").parallel_env().AGENT_ENDS is False
    turns = SPEC.replace("terminate_agent:", "turns: {active: \"t % 3\"}\nterminate_agent:")
    with pytest.raises(GymwrightError, match="`terminate_agent` needs simultaneous play"):
        compile_spec(spec(turns))
    with pytest.raises(GymwrightError, match="must be one bool per agent"):
        compile_spec(spec(SPEC.replace('terminate_agent: "passed[me]"', 'terminate_agent: "dist"')))


def test_the_card_says_when_an_agent_leaves() -> None:
    assert "an agent's own episode ends (terminated; it leaves `agents`) when `passed[me]`" in compile_spec(spec()).source


@pytest.mark.parametrize("seed", [0, 3])
def test_backends_agree_when_every_episode_starts_alike(seed: int) -> None:
    """A start with no random draw: the batch restarts copies from a saved start (and `gone` with them)."""
    from tests.compile.test_batch_differential import compare

    compare(spec(), {}, size=4, seed=seed, steps=40, policy_seed=seed)


def test_a_probe_truncated_on_the_step_an_agent_leaves_is_not_terminated() -> None:
    """Review of issue 42: `terminated` in a probe is the episode's end (`terminate`, or every
    agent out), not one agent's own end on a step that was only truncated."""
    text = SPEC.replace("""probes:
  - name: the lead car passes and leaves, the others drive on""", """probes:
  - name: truncated as the lead car passes
    params: {max_steps: 2}
    actions: [{car_2: wait}, {car_2: go}]
    expect: ["passed[2]", "truncated", "not terminated"]
  - name: every car out on the last step is terminated and truncated
    params: {max_steps: 2, length: 1}
    actions: [{car_0: wait}, {car_0: go}]
    expect: ["terminated", "truncated"]
  - name: the lead car passes and leaves, the others drive on""")
    report = verify(spec(text), episodes=2)
    assert report.passed, report.to_prompt()


def test_backends_agree_that_an_action_for_an_agent_out_is_no_action_not_illegal() -> None:
    """Review of issue 42: the Python env skips an action sent for an agent whose own episode
    ended (docs/spec-language.md); the batch did the same to the state but flagged it in
    infos['illegal']. Both now treat it as no action, and flag the same agents."""
    env = compile_spec(spec()).parallel_env()
    env.reset(seed=0)
    benv = compile_batch(spec(), {}, batch_size=1)
    benv.reset(seed=0)
    rng = np.random.default_rng(0)
    agents = list(env.possible_agents)
    for _ in range(12):
        if not env.agents:
            break
        row = rng.integers(0, 2, size=len(agents))
        row[-1] = 1  # car_2 leaves on the first step and is sent `go` ever after
        _, rew, _, _, infos = env.step({a: int(x) for a, x in zip(agents, row, strict=True)})
        _, brew, _, _, binfos = benv.step(row[None, :])
        flagged = [bool(infos.get(a, {}).get("illegal_action", False)) for a in agents]
        assert binfos["illegal"][0].tolist() == flagged == [False] * len(agents)
        assert brew[0].tolist() == pytest.approx([rew.get(a, 0.0) for a in agents])
