"""The cake family's subgame-perfect benchmark (benchmarks/bargaining_theory.py) against hand-worked
cases and the plain game's closed form."""

from __future__ import annotations

import sys
from fractions import Fraction

from tests.support.paths import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

from bargaining_theory import spe  # noqa: E402


def test_one_flavour_matches_rubinstein_finite_horizon() -> None:
    for d, T in ((0.9, 10), (0.5, 10), (0.5, 3)):
        eq = spe(d, T, 1001)
        assert abs(float(eq.offer[0]) - (1 - (-d) ** T) / (1 + d)) < 2e-3 and eq.agreed


def test_ultimatum_with_an_outside_option() -> None:
    # one round: the responder accepts a share worth at least 0.25; the grid's next step up is 0.3
    eq = spe(0.9, 1, 11, outside=0.25)
    assert eq.offer == (Fraction(7, 10),) and eq.first == Fraction(7, 10) and eq.second == Fraction(3, 10)
    assert spe(0.9, 1, 11).offer == (Fraction(1),)  # without it the proposer keeps everything


def test_two_flavours_trade_what_each_likes() -> None:
    # agent 0 values A at 0.8, agent 1 at 0.2; outside 0.25: the responder needs 0.8 * b >= 0.25, so
    # b >= 0.3125 -> 0.4 of B on the grid (worth 0.32); the proposer keeps all of A and 0.6 of B
    eq = spe(0.9, 1, 11, weights=(0.8, 0.2), outside=0.25)
    assert eq.offer == (Fraction(1), Fraction(3, 5))
    assert eq.first == Fraction(4, 5) + Fraction(1, 5) * Fraction(3, 5) and eq.second == Fraction(8, 25)


def test_an_outside_option_worth_more_than_any_deal_is_taken_first() -> None:
    eq = spe(0.5, 2, 11, outside=0.9)
    assert eq.offer == () and eq.first == Fraction(9, 10) and eq.second == 0 and not eq.agreed


def test_the_theory_pays_what_the_variants_game_pays() -> None:
    """The cake with the outside option and then two flavours (the curriculum's final version), as
    an ultimatum game: the equilibrium offer, accepted, pays in the built env exactly the values the
    backward induction gives; one step of flavour B less for the responder and it is better off
    leaving (the env pays it the outside value)."""
    import numpy as np

    from gymwright.compile import compile_spec
    from gymwright.engineer.variants import apply_variant

    params = {"discount": 0.9, "max_rounds": 1, "offer_levels": 11, "taste_gap": 0.6, "outside_value": 0.25}
    spec = apply_variant(apply_variant("cake_negotiation", "outside_option", verify_it=False).spec, "two_flavours",
                         verify_it=False).spec
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from cake_curriculum import theory

    eq = theory(spec, params)
    assert eq == spe(0.9, 1, 11, weights=(0.8, 0.2), outside=0.25) and eq.offer == (Fraction(1), Fraction(3, 5))
    env = compile_spec(spec).parallel_env(**params)
    assert [c["name"] for c in spec["actions"]["bargainer"]] == ["propose", "accept", "reject", "take_outside"]

    levels = np.linspace(0, 1, 11)
    propose = {(a, b): 11 * i + j for i, a in enumerate(levels) for j, b in enumerate(levels)}  # share major
    accept, take_outside = 121, 123  # after the 121 proposals: accept, reject, take_outside
    env.reset(seed=0)
    env.step({"bargainer_0": propose[(1.0, levels[6])]})
    _, rewards, terms, _, _ = env.step({"bargainer_1": accept})
    assert all(terms.values())
    assert abs(rewards["bargainer_0"] - float(eq.first)) < 1e-9 and abs(rewards["bargainer_1"] - float(eq.second)) < 1e-9
    env.reset(seed=0)
    env.step({"bargainer_0": propose[(1.0, levels[7])]})  # the responder would get 0.8 * 0.3 = 0.24 < 0.25
    _, rewards, terms, _, _ = env.step({"bargainer_1": take_outside})
    assert rewards == {"bargainer_0": 0.0, "bargainer_1": 0.25} and all(terms.values())
