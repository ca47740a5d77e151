"""A run folder's records, read within bounds: nothing a folder holds can hang, flood or crash
the report (issue 39, item 10).

A JSON file (`scorecard.json`, `design.json`, `comparison.json`) is at most MAX_RECORD_BYTES,
measured before it is read; a JSON-lines log (`train.jsonl`, `curriculum.jsonl`,
`trajectories.jsonl`) is read a line at a time, each line at most MAX_ROW_BYTES; `config.yaml`
is read as a `--config` file is (`gymwright.spec.loader.read_document` with `limits.CONFIG`,
then each numeric TrainConfig field in its range). All of them are regular files of UTF-8 text
nested at most `limits.MAX_NESTING_DEPTH` levels: the spec's reading (`gymwright.spec.limits`),
whose refusals name the file, the line and the fix. A file that cannot be read is a
`RecordError`; a log's lines that cannot be read are skipped and said, as a torn last line (a
killed run) always was.

A record is also of the shape gymwright writes it: a pydantic model in strict mode (no text read
as a number) that allows fields it does not name, so that a record of a newer gymwright still
reads (`ScorecardRecord`, `DesignRecord`, `ComparisonRecord`, `TrajectoryLine`, `StageLine`;
`shape_problem` names the first field that is not). A train.jsonl row is a JSON object of finite numbers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gymwright.diagnostic import shown
from gymwright.errors import GymwrightError, SpecError
from gymwright.spec import limits
from gymwright.spec.loader import read_document

MAX_RECORD_BYTES = 16 * 1024 * 1024
"""bytes of a JSON record of a run folder (gymwright writes a few kilobytes)"""
MAX_ROW_BYTES = 4 * 1024 * 1024
"""bytes of one line of a run's JSON-lines log (a train.jsonl row of 3,000 metrics is about 100 KB)"""
SHOWN = 3  # lines named in a note about a log's skipped lines (then "and N more")


class RecordError(GymwrightError):
    """A record of a run folder that cannot be read: `path` is the file (and line)."""


# ---------------------------------------------------------------------------- one JSON file
def read_json(path: Path, label: str) -> Any:
    """The data of the JSON file `path` (named `label` in errors); `RecordError` for a file that
    is not regular, too large, not UTF-8, nested too deep or not JSON."""
    raw = _read_bytes(path, label)
    try:
        return limits.load_json(limits.decode_utf8(raw, label, limits.RECORD), label, limits.RECORD)
    except SpecError as e:
        raise _record_error(e) from None
    except json.JSONDecodeError as e:
        raise RecordError(f"not JSON: {e.msg} (line {e.lineno}, column {e.colno})", path=label,
                          hint=_REWRITE) from None
    except ValueError as e:  # an int past Python's 4,300 digits
        raise RecordError(f"a value cannot be read: {str(e).split(';')[0]}", path=label, hint=_REWRITE) from None


def _read_bytes(path: Path, label: str) -> bytes:
    try:
        if not path.is_file():
            raise RecordError("not a regular file", path=label, hint=_REWRITE)
        size = path.stat().st_size
        if size > MAX_RECORD_BYTES:
            raise RecordError(f"the file is {size:,} bytes; a record is at most {MAX_RECORD_BYTES:,}",
                              path=label, hint=_REWRITE)
        with path.open("rb") as f:
            raw = f.read(MAX_RECORD_BYTES + 1)  # a file that grew since stat() is still cut at the limit
    except OSError as e:
        raise RecordError(f"cannot read it: {e.strerror or e}", path=label,
                          hint="check that the file is readable by this user") from None
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordError(f"the file is more than {MAX_RECORD_BYTES:,} bytes; a record is at most "
                          f"{MAX_RECORD_BYTES:,}", path=label, hint=_REWRITE)
    return raw


_REWRITE = ("gymwright writes this file itself: it was changed or damaged since; train or evaluate again to "
            "write it afresh, or remove it")


def _record_error(e: SpecError) -> RecordError:
    d = e.diagnostics[0]
    return RecordError(d.message, path=d.path, hint=d.hint)


# ---------------------------------------------------------------------------- a JSON-lines log
@dataclass
class Log:
    """The JSON objects of a log, and what was left out of it, line by line."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    unreadable: int = 0  # lines that are not JSON (or not UTF-8): a torn last line, as a killed run leaves
    skipped: list[str] = field(default_factory=list)  # other lines left out: `line N: why`
    dropped: list[str] = field(default_factory=list)  # values left out of kept rows: `line N: key = value`

    def notes(self, label: str) -> list[str]:
        """What the report says about what it left out of the log `label`."""
        notes = [f"{label}: skipped {self.unreadable} unreadable line{'s' * (self.unreadable != 1)}"] \
            if self.unreadable else []
        if self.skipped:
            notes.append(f"{label}: skipped {_some(self.skipped)}")
        if self.dropped:
            notes.append(f"{label}: left out {len(self.dropped)} value{'s' * (len(self.dropped) != 1)} that "
                         f"{'is' if len(self.dropped) == 1 else 'are'} not a finite number: {_some(self.dropped)}")
        return notes


def _some(items: list[str]) -> str:
    more = len(items) - SHOWN
    return "; ".join(items[:SHOWN]) + (f"; and {more:,} more" if more > 0 else "")


def read_jsonl(path: Path, label: str, numbers: bool = False, shape: type[BaseModel] | None = None) -> Log:
    """The JSON objects of the log `path`, a line at a time; a line too long, nested too deep, not
    JSON, not an object or not of its `shape` (`TrajectoryLine`, `StageLine`) is skipped, and with
    `numbers` (train.jsonl, whose values are all numbers) a value that is not a finite number is
    left out of its row. `RecordError` for a file that is not regular or cannot be opened."""
    log = Log()
    try:
        if not path.is_file():
            raise RecordError("not a regular file", path=label, hint=_REWRITE)
        with path.open("rb") as f:
            for n, raw, size in _lines(f):
                if raw is None:
                    log.skipped.append(f"line {n}: {size:,} bytes, past the {MAX_ROW_BYTES:,} of a line of a log")
                    continue
                _read_row(log, n, raw, label, numbers, shape)
    except OSError as e:
        raise RecordError(f"cannot read it: {e.strerror or e}", path=label,
                          hint="check that the file is readable by this user") from None
    return log


def _lines(f: IO[bytes]) -> Any:
    """(line number, bytes or None when past MAX_ROW_BYTES, its size) of each line; a line too
    long is read on to its end in pieces, never held whole."""
    n = 0
    while raw := f.readline(MAX_ROW_BYTES + 1):
        n += 1
        if len(raw) <= MAX_ROW_BYTES or raw.endswith(b"\n"):
            yield n, raw, len(raw)
            continue
        size = len(raw)
        while raw and not raw.endswith(b"\n"):
            raw = f.readline(MAX_ROW_BYTES)
            size += len(raw)
        yield n, None, size


def _read_row(log: Log, n: int, raw: bytes, label: str, numbers: bool, shape: type[BaseModel] | None) -> None:
    if not raw.strip():
        return
    try:
        row = limits.load_json(raw.decode("utf-8"), f"{label}:{n}", limits.RECORD)
    except SpecError as e:
        log.skipped.append(f"line {n}: {e.diagnostics[0].message}")
        return
    except ValueError:  # not UTF-8, not JSON, or an int past Python's 4,300 digits
        log.unreadable += 1
        return
    if not isinstance(row, dict):
        log.skipped.append(f"line {n}: a JSON {_kind(row)}, not an object")
        return
    wrong = shape_problem(shape, row) if shape is not None else None
    if wrong is not None:
        log.skipped.append(f"line {n}: {wrong}")
        return
    if numbers:
        bad = [k for k, v in row.items() if not _finite(v)]
        log.dropped += [f"line {n}: {shown(k, 40)} = {shown(repr(row.pop(k)), 30)}" for k in bad]
    log.rows.append(row)


def _finite(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, int | float) and math.isfinite(v)


def _kind(value: Any) -> str:
    """A JSON (or YAML) value's kind, as a note says it."""
    kinds = {list: "list", str: "string", int: "number", float: "number", bool: "bool", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


# ---------------------------------------------------------------------------- config.yaml
def read_config(path: Path, label: str) -> dict[str, Any]:
    """The settings of a run's `config.yaml` (`gymwright train` writes it), read as a `--config`
    file is: within the reading limits, a mapping of TrainConfig fields whose numbers are in their
    ranges (`gymwright.train.config.RANGES`); `RecordError` naming the file (and line) otherwise."""
    from gymwright.train.config import value_problem  # here: gymwright.train imports torch

    try:
        data, _ = read_document(path, limits.CONFIG)
    except SpecError as e:
        d = e.diagnostics[0]
        raise RecordError(d.message, path=label + d.path.removeprefix(str(path)), hint=d.hint) from None
    if not isinstance(data, dict):
        got = "an empty file" if data is None else f"a {_kind(data)}"
        raise RecordError(f"a config is a mapping of TrainConfig fields (`field: value`), got {got}", path=label,
                          hint=_REWRITE)
    for key, value in data.items():
        problem = f"a key must be a field's name, got {shown(repr(key))}" if not isinstance(key, str) \
            else (f"{key}: {p}" if (p := value_problem(key, value)) is not None else None)
        if problem is not None:
            raise RecordError(problem, path=label, hint=_REWRITE)
    return data


# ---------------------------------------------------------------------------- shapes
Numbers = dict[str, float]


class _Record(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


class Played(_Record):
    """One policy's play in a scorecard (`gymwright.train.episodes.EvalResult.to_dict`)."""

    episodes: int = 0
    returns: Numbers = Field(default_factory=dict)
    ci95: Numbers = Field(default_factory=dict)
    metrics: Numbers = Field(default_factory=dict)
    length: float | None = None


class CheckRecord(_Record):
    """One check of a scorecard (`gymwright.evaluate.checks.Check.to_dict`)."""

    name: str
    verdict: str
    message: str = ""
    evidence: dict[str, Any] = Field(default_factory=dict)


class ScorecardRecord(_Record):
    """`eval/scorecard.json` (`gymwright.evaluate.scorecard.Scorecard.to_dict`)."""

    spec: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    task_metric: str | None = None
    verdict: str | None = None
    checks: list[CheckRecord] = Field(default_factory=list)
    trained: Played | None = None
    random: Played | None = None
    files: dict[str, str] = Field(default_factory=dict)
    scripted: dict[str, Played] = Field(default_factory=dict)
    legend: list[Any] = Field(default_factory=list)


Finite = Annotated[float, Field(allow_inf_nan=False)]


class TrajectoryLine(_Record):
    """One line of `eval/trajectories.jsonl` (`gymwright.evaluate.trajectories.write_jsonl`): a
    step of an episode, or its end (`t: "end"`, with its returns and metrics)."""

    episode: int
    seed: int = 0
    t: int | Literal["end"]
    actions: dict[str, Any] = Field(default_factory=dict)
    rewards: dict[str, Finite] = Field(default_factory=dict)
    terms: dict[str, dict[str, Finite]] = Field(default_factory=dict)
    text: str = ""
    notes: dict[str, str] = Field(default_factory=dict)  # a language model's reply per agent
    returns: dict[str, Finite] = Field(default_factory=dict)
    metrics: dict[str, Finite] = Field(default_factory=dict)


class Bucket(_Record):
    """One config of a stage's mixture (`gymwright.engineer.mixture.Bucket` and its outcome)."""

    label: str = ""
    share: float = 0.0
    params: dict[str, Any] = Field(default_factory=dict)
    success: float | None = None


class Edit(_Record):
    """The spec edit a stage trained on (`gymwright.engineer.edits`' outcome, as recorded)."""

    status: str = ""
    reason: str = ""
    parent_sha: str = ""
    spec_sha: str = ""
    repairs: int = 0
    summary: str = ""
    diff: str | None = None
    variant: dict[str, Any] | None = None


class StageLine(_Record):
    """One line of `curriculum.jsonl` (`gymwright.curriculum.StageRecord`); every field
    may be missing (older records), none may be of another type."""

    index: int = 0
    params: dict[str, Any] = Field(default_factory=dict)
    success: float | None = None
    returns: dict[str, float] = Field(default_factory=dict)
    failures: dict[str, float] = Field(default_factory=dict)
    checkpoint: str = ""
    spec_sha: str = ""
    engineer: str = ""
    proposal: dict[str, Any] = Field(default_factory=dict)
    rationale: str = ""
    mixture: list[Bucket] = Field(default_factory=list)
    proposed_mixture: list[Bucket] = Field(default_factory=list)
    trained_mixture: list[Bucket] = Field(default_factory=list)
    validation: dict[str, Any] | None = None
    guard: str = ""
    guard_reason: str = ""
    edit: Edit | None = None


class ArmStage(_Record):
    """One stage of a compared curriculum (`gymwright.curriculum.compare`'s `Arm.stages`)."""

    index: int = 0
    trained: list[Bucket] = Field(default_factory=list)
    success: float | None = None
    validation: float | None = None
    guard: str = ""
    guard_reason: str = ""
    rationale: str = ""


class Arm(_Record):
    """One compared curriculum and its held-out result (`gymwright.curriculum.compare.Arm`)."""

    name: str = ""
    engineer: str = ""
    folder: str = ""
    mean: float = 0.0
    ci95: float = 0.0
    cells: dict[str, float | None] = Field(default_factory=dict)
    secondary: dict[str, float | None] = Field(default_factory=dict)
    stages: list[ArmStage] = Field(default_factory=list)


class ComparisonRecord(_Record):
    """`comparison.json` (`gymwright.curriculum.compare.Comparison.to_json_dict`)."""

    spec: str | None = None
    task_metric: str | None = None
    env_steps: int = 0
    episodes: int | None = None
    held_out: dict[str, dict[str, Any]] = Field(default_factory=dict)
    arms: dict[str, Arm] = Field(default_factory=dict)


class Finding(_Record):
    """One diagnostic of a verification (`gymwright.diagnostic.Diagnostic.to_dict`)."""

    severity: str = ""
    stage: str = ""
    path: str = ""
    message: str = ""
    hint: str = ""


class Verification(_Record):
    """A verification's summary (`gymwright.verify.report.VerificationReport.to_dict`)."""

    passed: bool | None = None
    stages: list[str] = Field(default_factory=list)
    stopped_at: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    diagnostics: list[Finding] = Field(default_factory=list)


class DesignRecord(_Record):
    """`design.json` (`gymwright.design.designer.DesignResult.to_json_dict`)."""

    design_id: int | None = None
    status: str | None = None
    task: str | None = None
    mode: str | None = None
    model: str | None = None
    spec_name: str | None = None
    spec_path: str | None = None
    explanation: str | None = None
    verified: bool | None = None
    fits_task: str | None = None
    findings: list[str] = Field(default_factory=list)
    report: Verification | None = None
    verification: Verification | None = None


def shape_problem(shape: type[BaseModel], data: Any) -> str | None:
    """What is wrong with `data` as a `shape` record, or None: its first problem, as a note says
    it (`trained.ci95.player: input should be a valid number, got 'wide'`)."""
    try:
        shape.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<top>"
        return f"{where}: {first['msg'].lower()}, got {shown(repr(first.get('input')), 40)}"
    return None
