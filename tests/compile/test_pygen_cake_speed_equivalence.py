"""The Python backend's cheaper step (issue 21, cake): what it caches gives what it would build.

Trajectories of the library specs against the batch backend: tests/compile/test_batch_differential.py.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

import gymwright.spec
from gymwright.compile import compile_spec
from gymwright.spec import library_names
from tests.support.library_sample import every_spec


def masks_afresh(env) -> list[np.ndarray]:
    """Every agent's mask as `_compute_masks` builds it with nothing cached (the env is left as it was)."""
    kept, cache = env._masks, env._mask_cache
    env._mask_cache = {}
    try:
        env._compute_masks()
        return env._masks
    finally:
        env._masks, env._mask_cache = kept, cache


@pytest.mark.parametrize("name", every_spec(library_names(), keep=("cake_negotiation", "public_goods")))
def test_cached_masks_are_the_masks_built_afresh(name: str) -> None:
    env = compile_spec(name).parallel_env()
    rng = np.random.default_rng(3)
    _, infos = env.reset(seed=3)
    for t in range(200):
        fresh = masks_afresh(env)
        for i, a in enumerate(env.possible_agents):
            np.testing.assert_array_equal(infos[a]["action_mask"], fresh[i], err_msg=f"{name} step {t} {a}")
        actions = {}
        for a in env.agents:  # a legal action mostly, an illegal one now and then
            legal = np.flatnonzero(infos[a]["action_mask"])
            n = env.action_space(a).n
            actions[a] = int(rng.integers(n)) if rng.random() < 0.2 or not len(legal) else int(rng.choice(legal))
        _, _, _, _, infos = env.step(actions)
        if not env.agents:
            _, infos = env.reset()


def test_cake_caches_one_mask_list_per_turn_and_phase() -> None:
    compiled = compile_spec("cake_negotiation")
    assert "given = (active, legal_bargainer_0, legal_bargainer_1)" in compiled.source
    assert "# turns.active: proposer if phase == 0 else 1 - proposer" in compiled.source  # the spec line stays
    env = compiled.parallel_env()
    env.reset(seed=0)
    first = env._masks
    env.step({"bargainer_0": 5})  # bargainer_1 responds now
    assert not env._masks[0].any() and env._masks[1][11:].all() and not env._masks[1][:11].any()
    env.step({"bargainer_1": 12})  # reject: bargainer_1 proposes
    env.step({"bargainer_1": 5})
    env.step({"bargainer_0": 12})  # reject: bargainer_0 proposes again, as at the start
    assert env._masks is first  # the same cached list
    assert not any(m.flags.writeable for m in first)  # of read-only masks
    lists = [k for k in env._mask_cache if not isinstance(k[0], str)]
    assert len(lists) == 4  # (active, phase) pairs seen


def test_max_and_min_metrics_fold_as_the_builtins_do() -> None:
    spec = yaml.safe_load((Path(gymwright.spec.__file__).parent / "library" / "cake_negotiation.yaml").read_text())
    spec["metrics"]["lowest_offer"] = {"expr": "offer", "reduce": "min"}
    compiled = compile_spec(spec)
    assert "if metric0 > self._metric_acc[0]:" in compiled.source  # first_share (max)
    assert "if metric1 < self._metric_acc[1]:" in compiled.source  # lowest_offer (min)
    env = compiled.parallel_env()
    rng = np.random.default_rng(0)
    _, infos = env.reset(seed=0)
    high, low, ended = -math.inf, math.inf, 0
    for _ in range(300):
        actions = {a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"]))) for a in env.agents
                   if infos[a]["action_mask"].any()}
        _, _, _, _, infos = env.step(actions)
        high = max(high, env.v.offer if env.v.round == 0 else 0.0)
        low = min(low, env.v.offer)
        if not env.agents:
            metrics = infos["bargainer_0"]["metrics"]
            assert (metrics["first_share"], metrics["lowest_offer"]) == (high, low)
            high, low, ended = -math.inf, math.inf, ended + 1
            _, infos = env.reset()
    assert ended > 10
