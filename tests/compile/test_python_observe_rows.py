"""The Python backend observes a role all at once (`_observe_all__<role>`: over its agent axis,
or in one loop) with exactly the rows that its per-agent code (`_observe_<role>(me)`) gives, on
every library spec that has such a role, along random legal play."""

from __future__ import annotations

import numpy as np

from gymwright.compile import compile_spec
from gymwright.spec import library_names


def check_rows(name: str, params: dict | None = None) -> bool:
    """Play `name` at random, comparing the rows at every step; False if no role is observed all at once."""
    compiled = compile_spec(name, params)
    env = compiled.parallel_env()
    roles = [r for r in compiled.checked.roles if hasattr(env, f"_observe_all__{r.name}")]
    if not roles:
        return False
    rng = np.random.default_rng(0)
    _, infos = env.reset(seed=3)
    for t in range(120):
        for r in roles:
            rows = getattr(env, f"_observe_all__{r.name}")()
            for k in range(r.count):
                np.testing.assert_array_equal(rows[k], getattr(env, f"_observe_{r.name}")(r.start + k),
                                              err_msg=f"{name} step {t} {r.name} {k}")
        if not env.agents:
            _, infos = env.reset()
            continue
        actions = {}
        for a in env.agents:
            legal = np.flatnonzero(infos[a]["action_mask"])
            if len(legal):
                actions[a] = int(rng.choice(legal))
        _, _, _, _, infos = env.step(actions)
    return True


def test_observations_of_a_role_at_once_equal_the_per_agent_ones() -> None:
    checked = [name for name in library_names() if check_rows(name)]
    assert len(checked) >= 2, checked


def test_mapf_walkers_observed_at_once_equal_the_per_agent_ones() -> None:
    for params in ({"size": 8, "n_agents": 4}, {"size": 5, "n_agents": 3, "view_radius": 2}, {"size": 6, "n_agents": 5}):
        assert check_rows("mapf_frozenlake", params), params  # the benchmark's config among them
