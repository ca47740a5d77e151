"""The batch backend replays the Python backend exactly: copy b seeded s+b is the Python env seeded s+b."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch
from gymwright.compile.vector import random_legal
from gymwright.spec import library_names, load_spec
from tests.support.library_sample import every_spec

NAMES = library_names()


def free_params(name: str, rng: np.random.Generator) -> dict:
    """A random assignment of the spec's non-structural params (within their ranges)."""
    spec = load_spec(name)
    structural = compile_spec(name).checked.structural
    out = {}
    for k, p in spec.params.items():
        if k in structural or rng.random() < 0.5:
            continue
        if p.type == "bool":
            out[k] = bool(rng.random() < 0.5)
        elif p.type == "int":
            out[k] = int(rng.integers(int(p.min), int(p.max) + 1))
        else:
            out[k] = float(rng.uniform(p.min, p.max))
    return out


def compare(name: str, params: dict, size: int, seed: int, steps: int, policy_seed: int) -> None:
    benv = compile_batch(name, params, batch_size=size)
    compiled = compile_spec(name)
    envs = [compiled.parallel_env(**params) for _ in range(size)]
    agents = compiled.module.AGENTS
    dims = {a: envs[0].observation_space(a).shape[0] for a in agents}
    nact = {a: envs[0].action_space(a).n for a in agents}
    obs_b, masks_b = benv.reset(seed=seed)
    obs_p = []
    for b, env in enumerate(envs):
        o, infos = env.reset(seed=seed + b)
        obs_p.append(o)
        check_obs(o, obs_b[b], agents, dims, f"reset copy {b}")
        check_masks(infos, masks_b[b], agents, nact, f"reset copy {b}")
    rng = np.random.default_rng(policy_seed)
    for t in range(steps):
        actions = random_legal(None, benv.masks, rng)
        obs_b, rew_b, term_b, trunc_b, info_b = benv.step(actions)
        final = dict(zip(info_b.get("done_idx", []), info_b.get("final_obs", []), strict=False))
        final_state = dict(zip(info_b.get("done_idx", []), info_b.get("final_state", []), strict=False))
        state_b = benv.state()
        for b, env in enumerate(envs):
            where = f"step {t} copy {b}"
            act = {a: int(actions[b, i]) for i, a in enumerate(agents) if actions[b, i] >= 0 and a in env.agents}
            o, rew, term, trunc, infos = env.step(act)
            for i, a in enumerate(agents):
                if a not in rew:  # its own episode ended earlier (terminate_agent): out of the dicts
                    assert rew_b[b, i] == 0.0 and term_b[b, i], (where, a, "an agent out gets 0 and stays terminated")
                    continue
                assert rew[a] == pytest.approx(rew_b[b, i], abs=1e-6), (where, a, "reward")
                assert term[a] == term_b[b, i] and trunc[a] == trunc_b[b, i], (where, a, "end flags")
            if env.agents:
                check_obs(o, obs_b[b], agents, dims, where)
                check_masks(infos, benv.masks[b], agents, nact, where)
                np.testing.assert_allclose(env.state(), state_b[b], atol=1e-6, err_msg=f"{where} state")
            else:
                assert b in final, (where, "batch copy did not end with the Python env")
                check_obs(o, final[b], agents, dims, where + " (final obs)")
                np.testing.assert_allclose(env.state(), final_state[b], atol=1e-6, err_msg=f"{where} final state")
                o, infos = env.reset()
                check_obs(o, obs_b[b], agents, dims, where + " (auto-reset)")
                check_masks(infos, benv.masks[b], agents, nact, where + " (auto-reset)")


def check_obs(obs: dict, row: np.ndarray, agents: list, dims: dict, where: str) -> None:
    for i, a in enumerate(agents):
        if a not in obs:  # out since an earlier step (terminate_agent): the batch zeroes its row
            assert not row[i].any(), (where, a, "the observation of an agent out is zeros")
            continue
        np.testing.assert_allclose(obs[a], row[i, :dims[a]], atol=1e-6, err_msg=f"{where} {a} obs")


def check_masks(infos: dict, row: np.ndarray, agents: list, nact: dict, where: str) -> None:
    for i, a in enumerate(agents):
        if a not in infos:  # out (terminate_agent): no legal action, the trainers play -1
            assert not row[i].any(), (where, a, "the mask of an agent out is all false")
            continue
        np.testing.assert_array_equal(infos[a]["action_mask"], row[i, :nact[a]], err_msg=f"{where} {a} mask")


CROSSING = """
gymwright: 1
name: crossing
params: {length: {default: 3, min: 1, max: 8, type: int}, max_steps: {default: 9, min: 2, max: 50, type: int}}
agents: {car: {count: 3}, light: {count: 1}}
agent_state:
  dist: {type: int, init: "randint(0, 3)", min: 0, max: 20}
  passed: {type: bool, init: false}
state: {red: {type: bool, init: false}}
actions:
  car: [{name: wait}, {name: go, legal: "not red"}]
  light: [{name: toggle}, {name: keep}]
step:
  - {set: {red: "red != any(toggle)"}}
  - {set: {dist: "min(dist[me] + go[me], 20)"}}
  - {set: {passed: "is_car[me] and dist[me] >= length"}}
rewards:
  car: [{name: progress, expr: "go[me] * 0.5 - 0.1"}, {name: arrive, expr: "10 * passed[me]"}]
  light: [{name: flow, expr: "count(go)"}]
metrics: {passed_count: {expr: "count(passed)"}}
terminate_agent: "passed[me] or is_light[me] and t >= 7"
truncate: "t >= max_steps"
observe:
  car: ["dist[me]", "red", {expr: "others(dist, me)", name: rest}]
  light: ["red", "count(passed)"]
"""


@pytest.mark.parametrize("seed", [0, 5, 21])
def test_backends_agree_where_agents_leave_one_by_one(seed: int) -> None:
    """`terminate_agent`: a car that passed leaves (PettingZoo: terminated, then out of `agents`);
    the batch gives it 0 reward, an all-false mask and zero observations to the episode's end."""
    import yaml

    from gymwright.spec import load_spec

    compare(load_spec(yaml.safe_load(CROSSING)), {}, size=5, seed=seed, steps=40, policy_seed=seed)


@pytest.mark.parametrize("name", every_spec(NAMES))
def test_backends_agree_on_library_specs(name: str) -> None:
    compare(name, {}, size=6, seed=11, steps=60, policy_seed=0)


@pytest.mark.parametrize("name", every_spec(NAMES))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**40), policy_seed=st.integers(0, 1000), draw=st.integers(0, 10**6))
def test_backends_agree_under_random_params(name: str, seed: int, policy_seed: int, draw: int) -> None:
    params = free_params(name, np.random.default_rng(draw))
    compare(name, params, size=4, seed=seed, steps=40, policy_seed=policy_seed)


def test_mixed_batch_runs_each_copy_with_its_params() -> None:
    params = [{"discount": 0.5}, {"discount": 0.9}]
    benv = compile_batch("cake_negotiation", params, batch_size=2)
    benv.reset(seed=0)
    benv.step(np.array([[5, -1], [5, -1]]))
    _, rew, _, _, _ = benv.step(np.array([[-1, 12], [-1, 12]]))  # reject: round 1
    benv.step(np.array([[-1, 5], [-1, 5]]))
    _, rew, term, _, info = benv.step(np.array([[11, -1], [11, -1]]))
    assert term[:, 0].all()
    np.testing.assert_allclose(rew[:, 0], [0.5 * 0.5, 0.5 * 0.9])
