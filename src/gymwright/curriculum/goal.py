"""`Goal`: what a curriculum's final policy is judged on, and the levers an engineer may use to
get there; `task_goal`, the goal of a spec no `GoalMaker` knows (`gymwright.curriculum.compare.GOALS`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gymwright.engineer.space import ConfigSpace


@dataclass
class Goal:
    """What the final policy is judged on, and the levers an engineer may use to get there."""

    held_out: dict[str, dict[str, Any]]  # label -> params, judged once on the final policy
    target: str  # the same in words, for the engineer
    start: dict[str, Any] = field(default_factory=dict)  # the first stage's config (the task's, levers explicit)
    space: ConfigSpace | None = None  # None: the knobs of the task's configuration only
    validation: dict[str, dict[str, Any]] | None = None  # drawn like the held-out cells, other instances
    secondary: tuple[str, ...] = ()  # metrics reported next to the task metric


GoalMaker = Callable[[str, Any, dict[str, Any]], Goal | None]
"""(spec, the loaded spec, the task's params) -> the goal for a spec of the kind it knows, else None"""


def task_goal(params: dict[str, Any]) -> Goal:
    """The task's own configuration (other episodes), with the knobs as the only levers."""
    return Goal({"the task": dict(params)}, f"the task's own configuration {dict(params)} (other episodes)", dict(params))
