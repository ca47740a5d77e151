"""Training copies of a code-mode env in sandbox workers (issue 20, item 6): the batch
backend's interface, copy b seeded seed + b, auto-reset with episode results."""

from __future__ import annotations

import numpy as np
import pytest

from gymwright.codemode.proxy import SandboxedParallelEnv, load_module
from gymwright.codemode.vector import SandboxedBatchEnv
from gymwright.errors import GymwrightError
from tests.support.paths import MEET_ON_A_LINE

GOOD = MEET_ON_A_LINE.read_text()


def test_copies_replay_the_single_env_and_auto_reset_with_episode_results() -> None:
    B = 3
    with SandboxedBatchEnv(GOOD, batch_size=B, workers=2) as benv:
        assert len(benv.sandboxes) == 2 and benv.N_AGENTS == 2
        assert benv.ROLES == (("agent", 0, 2, 3, 3),) and benv.state_dims() == [0]
        with pytest.raises(GymwrightError, match="no global state"):
            benv.state()
        obs, masks = benv.reset(seed=10)
        start = obs.copy()
        assert np.array_equal(benv.obs_buf, obs) and np.array_equal(benv.masks, masks)
        assert obs.shape == (B, 2, 3) and masks.shape == (B, 2, 3) and obs.dtype == np.float32
        actions = np.ones((B, 2), np.int64)  # both stay: nobody meets, every episode truncates at 20
        finished = []
        for _ in range(20):
            obs, rewards, term, trunc, infos = benv.step(actions)
            assert np.array_equal(infos["reward_terms"]["agent"]["reward"], rewards)
            if "done_idx" in infos:
                finished.append(infos)
        assert len(finished) == 1 and sorted(finished[0]["done_idx"].tolist()) == [0, 1, 2]
        assert finished[0]["episode_length"].tolist() == [20, 20, 20]
        assert np.allclose(finished[0]["episode_return"], -0.05 * 20)
        assert {k: v.tolist() for k, v in finished[0]["metrics"].items()} == {"met": [0.0] * 3, "steps": [20.0] * 3}
        assert trunc.all() and not term.any()
    with load_module(GOOD) as sandbox:
        for b in range(B):
            single = SandboxedParallelEnv(sandbox)
            first, _ = single.reset(seed=10 + b)
            assert np.array_equal(np.stack([first[a] for a in single.agents]), start[b])


def test_a_module_that_fails_vetting_gets_no_worker() -> None:
    with pytest.raises(GymwrightError, match="import of `os` is not allowed"):
        SandboxedBatchEnv("import os\n" + GOOD, batch_size=2)
