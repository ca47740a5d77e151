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


def test_cake_masks_follow_the_turn_and_a_caller_cannot_change_them() -> None:
    """The masks a step returns (cached per turn and phase: benchmarks/test_fast_paths_used.py) are
    the turn's, the same whenever the turn and phase come back, and read-only, so that a caller
    writing into one cannot change a later step's."""
    env = compile_spec("cake_negotiation").parallel_env()
    _, infos = env.reset(seed=0)
    first = {a: infos[a]["action_mask"].copy() for a in env.agents}
    _, _, _, _, infos = env.step({"bargainer_0": 5})  # bargainer_1 responds now
    responder = infos["bargainer_1"]["action_mask"]
    assert not infos["bargainer_0"]["action_mask"].any() and responder[11:].all() and not responder[:11].any()
    assert np.array_equal(env.action_mask("bargainer_1"), responder)
    with pytest.raises(ValueError, match="read-only"):
        responder[0] = 1
    env.step({"bargainer_1": 12})  # reject: bargainer_1 proposes
    env.step({"bargainer_1": 5})
    _, _, _, _, infos = env.step({"bargainer_0": 12})  # reject: bargainer_0 proposes again, as at the start
    for a, mask in first.items():
        np.testing.assert_array_equal(infos[a]["action_mask"], mask)


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
