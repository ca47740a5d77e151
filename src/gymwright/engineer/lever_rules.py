"""The heuristic engineer's rule for designer levers (`gymwright.engineer.levers`).

A lever with a failure signal (`Lever.signal`, e.g. `park_cost` and `imitation` answer episodes
that run out of steps with no hole and no conflict: a walker parked on another's only way, or
walkers that never found their order; `end_on:conflicts` answers conflicts) is:

- **turned on** at its default strength when the policy fails in at least `MIN_FAILED` of the
  recorded episodes and the signal's kind is at least `CALLED` of those failures: the evidence
  names the behaviour the lever teaches, and it is common enough to be worth a change of game;
  A lever with its own threshold (`Lever.called_at`: the `end_on` rules, which change nothing in an
  episode without their failure) is also called for while its kind is seen in at least that share of
  the recorded episodes;
- **kept** while that holds;
- **annealed** one allowed strength toward off when it no longer holds (the scaffolding is taken
  down as the skill is learned, as shaping and demonstration weights are annealed in DAPG,
  Rajeswaran et al. 2018), and off at the end of that.

Levers without a signal (the reward weights) are left to a model engineer. A setting the
guardrail undid before is not proposed again: the levers stay as they are.
"""

from __future__ import annotations

from gymwright.engineer.evidence import StageEvidence
from gymwright.engineer.levers import Lever

MIN_FAILED = 0.2
"""share of recorded episodes that must fail before a lever is turned on"""
CALLED = 0.5
"""share of the failed episodes whose kind is the lever's signal, for the evidence to call for it"""


def propose_levers(ev: StageEvidence) -> tuple[dict[str, float], list[str]]:
    """The next stage's lever strengths and why, from the stage's failures (see the module)."""
    shares = ev.failure_shares()
    failed = sum(shares.values())
    settings, why = dict(ev.levers), []
    for name, lever in ev.lever_menu.items():
        if not isinstance(lever, Lever) or not lever.signal:
            continue
        now = settings.get(name, lever.off)
        seen = shares.get(lever.signal, 0.0)
        called = failed >= MIN_FAILED and seen >= CALLED * failed or 0 < lever.called_at <= seen
        settings[name], note = _move(lever, now, called)
        why.append(f"{name} {now:g} -> {settings[name]:g}: {note} ({lever.signal} in {seen:.2f} of the recorded "
                   f"episodes, failures in {failed:.2f})")
    return settings, why


def _move(lever: Lever, now: float, called: bool) -> tuple[float, str]:
    if called:
        if now == lever.off:
            return lever.default, "on, the failures call for it"
        return now, "kept, the failures still call for it"
    if now == lever.off:
        return now, "stays off, the failures do not call for it"
    lower = [v for v in lever.values if abs(v - lever.off) < abs(now - lever.off)]
    nxt = max(lower, key=lambda v: abs(v - lever.off)) if lower else lever.off
    return nxt, "annealed toward off, the failures no longer call for it"
