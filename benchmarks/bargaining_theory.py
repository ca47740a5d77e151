"""What game theory says for the cake-negotiation family: subgame-perfect play by backward induction.

The game (the library's `cake_negotiation` and its harder versions from the variants library):
in round k = 0, 1, ..., max_rounds - 1 agent k % 2 proposes a split of the cake for itself from
the offer grid; the other accepts (the deal pays each its share of what is left, discount^k of
the cake, and ends the game), rejects (the roles swap, k + 1; after the last round nobody gets
anything) or, with an outside option, takes the outside payoff instead (it gets `outside`, the
other nothing; the game ends). The proposer may take the outside option too instead of proposing.

With two flavours there are two cakes, A and B, each split by its own share: a proposal is a pair
(a, b) of the proposer's shares of A and of B, and agent i values a split at weights[i] * a +
(1 - weights[i]) * b (all of both cakes is worth 1 to anyone). When the agents value the flavours
differently a split can give each more of what it likes (gains from trade).

`spe(...)` returns the first proposer's offer and both agents' values in the subgame-perfect
equilibrium (ties: the responder accepts, the proposer takes the outside option only when it is
strictly better, and the proposer picks the smallest share for itself among its best offers).
Exact fractions, so a test can compare to hand-worked cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import product


@dataclass(frozen=True)
class Equilibrium:
    offer: tuple[Fraction, ...]  # the first proposer's shares for itself (one per flavour); () = took the outside option
    first: Fraction  # the first proposer's value
    second: Fraction  # the first responder's value
    agreed: bool  # the first offer is accepted


def _f(x: float | Fraction) -> Fraction:
    return x if isinstance(x, Fraction) else Fraction(x).limit_denominator(10**6)


def spe(discount: float, max_rounds: int, offer_levels: int, weights: tuple[float, float] | None = None,
        outside: float | None = None) -> Equilibrium:
    """Backward induction over the rounds. `weights`: the two agents' values of flavour A (None: one
    flavour); `outside`: the outside option's payoff, undiscounted (None: no outside option)."""
    d = _f(discount)
    grid = [Fraction(i, offer_levels - 1) for i in range(offer_levels)]
    flavours = 1 if weights is None else 2
    w = (Fraction(1), Fraction(1)) if weights is None else (_f(weights[0]), _f(weights[1]))
    out = None if outside is None else _f(outside)
    # values of the subgame starting at round k, in absolute terms: (proposer's, responder's)
    nxt = (Fraction(0), Fraction(0))
    eq = Equilibrium((), Fraction(0), Fraction(0), False)
    for k in reversed(range(max_rounds)):
        proposer = k % 2
        wp, wr = w[proposer], w[1 - proposer]
        cake = d**k
        reject_r, reject_p = nxt[0], nxt[1]  # the responder proposes next
        walk_r = out if out is not None and out > reject_r else None  # the responder's best refusal
        refuse_p, refuse_r = (Fraction(0), walk_r) if walk_r is not None else (reject_p, reject_r)
        best: tuple[Fraction, Fraction, tuple[Fraction, ...], bool] | None = None
        for shares in product(grid, repeat=flavours):
            mine = cake * (wp * shares[0] + (1 - wp) * shares[-1]) if flavours == 2 else cake * shares[0]
            theirs = (cake * (wr * (1 - shares[0]) + (1 - wr) * (1 - shares[-1])) if flavours == 2
                      else cake * (1 - shares[0]))
            accepted = theirs >= refuse_r
            value = (mine, theirs, shares, True) if accepted else (refuse_p, refuse_r, shares, False)
            if best is None or value[0] > best[0]:
                best = value
        assert best is not None
        if out is not None and out > best[0]:
            best = (out, Fraction(0), (), False)
        nxt = (best[0], best[1])
        eq = Equilibrium(best[2], best[0], best[1], best[3])
    return eq
