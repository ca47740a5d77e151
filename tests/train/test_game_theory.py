"""Training on library specs finds what game theory says it should (slow: `pytest -m slow`).

Each test trains the built-in PPO (the same trainer code; the step budget, gamma 1 for the cake,
whose reward is already discounted, and for MAPF a wider network and less entropy differ per
game, as each test says; the thresholds are the issue's) and evaluates the trained policy on
fresh seeds.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch

from gymwright.train import TrainConfig, load_policy, play_episodes, train

pytestmark = pytest.mark.slow
torch.set_num_threads(1)
EVAL_SEED = 10**6


# --------------------------------------------------------------------------- cake negotiation
def cake_spe(discount: float, max_rounds: int, offer_levels: int, accept_ties: bool = True) -> tuple[Fraction, Fraction]:
    """The subgame-perfect first offer of the spec's own finite, discrete game (exact fractions).

    The spec: in round k = 0, 1, ... bargainer k % 2 proposes a share s of `linspace(0, 1,
    offer_levels)` for itself; the other accepts (the deal pays discount^k * s and discount^k *
    (1 - s), and ends the episode) or rejects (the roles swap, k + 1); after a rejection in round
    max_rounds - 1 the episode ends with nothing for either. Backward induction, in units of the
    cake left at round k: P_k and R_k are the proposer's and the responder's values of round k,
    P_T = R_T = 0. Rejecting in round k is worth discount * P_{k+1} to the responder (it
    proposes next) and discount * R_{k+1} to the proposer. The responder accepts when 1 - s >=
    discount * P_{k+1} (>, with `accept_ties=False`); the proposer picks the s that is best for
    it, the smallest such s on ties. Returns (first proposer's share, its value).
    """
    d = Fraction(discount).limit_denominator(10**6)
    grid = [Fraction(i, offer_levels - 1) for i in range(offer_levels)]
    P, R = Fraction(0), Fraction(0)
    first = Fraction(0)
    for _k in reversed(range(max_rounds)):
        reject_value = d * P
        best: tuple[Fraction, Fraction, Fraction] | None = None
        for s in grid:
            accepted = (1 - s >= reject_value) if accept_ties else (1 - s > reject_value)
            mine, theirs = (s, 1 - s) if accepted else (d * R, d * P)
            if best is None or mine > best[0]:
                best = (mine, theirs, s if accepted else Fraction(-1))
        assert best is not None
        P, R, first = best
    return first, P


def test_backward_induction_matches_theory() -> None:
    # a fine grid approaches the finite-horizon closed form (1 - (-d)^T) / (1 + d)
    for d, T in ((0.9, 10), (0.5, 10), (0.5, 3)):
        share, _ = cake_spe(d, T, 1001)
        assert abs(float(share) - (1 - (-d) ** T) / (1 + d)) < 2e-3
    share, value = cake_spe(0.5, 1, 21)
    assert share == 1 and value == 1  # ultimatum: the responder accepts nothing as well as rejecting


def test_cake_first_proposer_gets_the_subgame_perfect_share(tmp_path: Path) -> None:
    params = {"discount": 0.5, "max_rounds": 10, "offer_levels": 21}
    spe, _ = cake_spe(0.5, 10, 21)
    assert spe == cake_spe(0.5, 10, 21, accept_ties=False)[0]  # ties do not move it here
    assert abs(float(spe) - 2 / 3) < 0.05  # near Rubinstein's 1 / (1 + d), far from 1/2
    cfg = TrainConfig(spec="cake_negotiation", params=params, total_steps=400_000, gamma=1.0, seed=0,
                      out=tmp_path / "cake", checkpoint_every=1000)
    result = train(cfg)
    ev = play_episodes("cake_negotiation", params, load_policy(result.checkpoint), episodes=2000,
                  seed=EVAL_SEED, deterministic=True)
    deal = ev.episode_metrics["agreed"] > 0
    assert deal.mean() > 0.9
    returns = ev.episode_returns[deal]  # both shares are discounted alike: the split is the ratio
    share = float(np.mean(returns[:, 0] / returns.sum(axis=1)))
    assert abs(share - float(spe)) <= 0.05, (share, float(spe))


# --------------------------------------------------------------------------- prisoner's dilemma
def test_one_shot_prisoners_dilemma_defects(tmp_path: Path) -> None:
    params = {"rounds": 1}
    cfg = TrainConfig(spec="iterated_prisoners_dilemma", params=params, total_steps=100_000, seed=0,
                      out=tmp_path / "pd", checkpoint_every=1000)
    result = train(cfg)
    ev = play_episodes("iterated_prisoners_dilemma", params, load_policy(result.checkpoint), episodes=1000, seed=EVAL_SEED)
    assert 1 - ev.metrics["cooperation_rate"] > 0.9


# --------------------------------------------------------------------------- MAPF
@pytest.mark.long(400)  # seconds alone on the slow host, estimated: 134 s on a quiet one (pytest --durations)
def test_mapf_frozenlake_two_agents_succeed(tmp_path: Path) -> None:
    """Success is *valid*: both walkers on their goals with no hole and no conflict, on the spec's
    CBS-solved layouts at its default wait ratio (a quarter need a walker to wait for the other).

    view_radius 3 shows the whole 4x4 lake (with the default radius 1 a memoryless policy
    plateaus lower, some layouts needing detours it cannot see). The defaults (64x64, entropy
    0.01, 128 copies, lr 3e-4, 2M steps) reach valid 0.77 (all reached 0.885): their sampled
    actions still bump into the other walker now and then. 128x128 hidden layers and entropy
    0.001 reach 0.908 at 4M steps (seed 0). With 512 copies and lr 1e-3 as well, 2M steps reach
    0.933, 0.929 and 0.921 (seeds 0, 1, 2; holes 0.000-0.004) in about 130 CPU seconds on a
    quiet host; the 4M-step run at 128 copies took 1,158 s alone on a loaded one.
    """
    params = {"size": 4, "n_agents": 2, "slip": 0.0, "view_radius": 3}
    cfg = TrainConfig(spec="mapf_frozenlake", params=params, total_steps=2_000_000, ent_coef=0.001,
                      hidden=(128, 128), num_envs=512, lr=1e-3, seed=0, out=tmp_path / "mapf",
                      checkpoint_every=1000)
    result = train(cfg)
    ev = play_episodes("mapf_frozenlake", params, load_policy(result.checkpoint), episodes=1000, seed=EVAL_SEED)
    assert ev.metrics["valid"] > 0.9
    assert ev.metrics["holes"] < 0.01
