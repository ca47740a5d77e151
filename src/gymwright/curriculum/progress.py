"""A stage's progress while it trains: one plain line at most every `every` seconds (and when the
stage's training ends), with the stage, a bar, env steps, rate, elapsed time and an ETA, so a
long curriculum is never silent and the lines read the same on a terminal, in a pipe and from a
worker process (the demo's arms send them through a queue)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

BAR = 20
"""characters of the bar"""


def clock(seconds: float) -> str:
    """`m:ss`, or `h:mm:ss` past an hour."""
    s = int(round(seconds))
    h, m = divmod(s // 60, 60)
    return f"{h}:{m:02d}:{s % 60:02d}" if h else f"{m}:{s % 60:02d}"


@dataclass
class StageProgress:
    """Called with each training log row of stage `stage` (0-based) of `stages`; says a line through `say`."""

    stage: int
    stages: int
    total: int  # env steps the stage trains for
    say: Callable[[str], None]
    every: float = 10.0
    now: Callable[[], float] = time.monotonic
    _start: float = field(default=-1.0, init=False)
    _last: float = field(default=-1.0, init=False)

    def __call__(self, row: dict[str, Any]) -> None:
        t = self.now()
        if self._start < 0:
            self._start = self._last = t
        steps = int(row.get("env_steps", 0))
        done = steps >= self.total
        if not done and t - self._last < self.every:
            return
        self._last = t
        self.say(self.line(steps, t - self._start))

    def line(self, steps: int, elapsed: float) -> str:
        share = min(1.0, steps / self.total) if self.total else 1.0
        filled = int(round(share * BAR))
        rate = steps / elapsed if elapsed > 0 else 0.0
        eta = (self.total - steps) / rate if rate > 0 and steps < self.total else 0.0
        return (f"stage {self.stage + 1}/{self.stages} [{'#' * filled}{'.' * (BAR - filled)}] {share:4.0%} "
                f"{steps:,}/{self.total:,} env steps, {rate:,.0f}/s, {clock(elapsed)} elapsed, ETA {clock(eta)}")
