"""What the store holds, as plain dataclasses; specs are addressed by `spec_hash`, the sha256 of
their canonical JSON (`gymwright.spec.digest`, re-exported here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gymwright.llm.base import Usage
from gymwright.spec.digest import canonical_json as canonical_json
from gymwright.spec.digest import spec_hash as spec_hash

STATUSES = ("running", "passed", "failed", "interrupted", "error")
# "unfit" (verified, but the task-fit review says it does not fit) is stored as "failed" with
# both verdicts in the design's result, and read back as "unfit" (old stores stay readable).
FINAL_STATUSES = (*STATUSES[1:], "unfit", "review_failed")


@dataclass
class AttemptRecord:
    """One model call (or offline step) of a design, with what came of it."""

    index: int  # 0, 1, 2, ... within the design
    stage: str  # "roles", "dynamics", "rewards", "spec", "repair", "template", "offline"
    prompt: list[dict[str, Any]]  # messages [{role, content}]; [] for the offline designer
    reply: str | None = None
    parsed: Any = None  # the parsed JSON / spec dict when the reply parsed
    parse_error: str | None = None
    report: dict[str, Any] | None = None  # a VerificationReport as a JSON-serialisable dict
    passed: bool | None = None
    spec_sha: str | None = None
    usage: Usage = field(default_factory=Usage)
    cached: bool = False  # the reply came from the reply cache (no call was paid for)
    wall_s: float = 0.0
    id: int | None = None  # filled when read back


@dataclass
class DesignSummary:
    """One line of `gymwright designs`. `status` is "interrupted" for a design whose writer
    died while it was "running"; `usage` and `wall_s` sum its attempts until it finishes."""

    id: int
    task: str
    model: str
    mode: str
    status: str  # "running" | "passed" | "unfit" | "review_failed" | "failed" | "interrupted" | "error"
    started_at: str  # ISO 8601, UTC
    wall_s: float
    n_attempts: int
    usage: Usage
    spec_sha: str | None
    template_hash: str
    verified: bool | None = None  # the spec passed verification (None: not known, or no spec)
    fits_task: str = "unknown"  # the task-fit review: yes, no, unknown


@dataclass
class DesignRecord(DesignSummary):
    """A whole design: its settings, its result and every attempt, in order."""

    settings: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)
    attempts: list[AttemptRecord] = field(default_factory=list)


@dataclass(frozen=True)
class LineageEdge:
    """`child` was made from `parent` (full sha256s), and why."""

    parent: str
    child: str
    reason: str
    design_id: int | None
    created_at: str


@dataclass(frozen=True)
class SpecSummary:
    """A stored spec, without its body."""

    sha: str
    name: str
    created_at: str
