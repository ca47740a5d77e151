"""`Store`: the one object the designer, the LLM client and the CLI talk to."""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from gymwright.llm.base import Completion, Usage
from gymwright.store.db import StoreError, connect, transaction
from gymwright.store.records import (
    FINAL_STATUSES,
    AttemptRecord,
    DesignRecord,
    DesignSummary,
    LineageEdge,
    SpecSummary,
    canonical_json,
    spec_hash,
)

DB_NAME = "gymwright.db"
ARTIFACTS = "artifacts"
DEFAULT_FOLDER = ".gymwright"
ENV_VAR = "GYMWRIGHT_STORE"
MIN_PREFIX = 6
_HEX = re.compile(r"[0-9a-f]+")
_JSON_HINT = "pass plain dicts, lists, strings, numbers and booleans (e.g. `report.to_dict()`)"


def default_store_path(cli_path: str | Path | None = None,
                       environ: Mapping[str, str] = os.environ) -> Path:
    """The store folder: `--store`, then `$GYMWRIGHT_STORE`, then `./.gymwright`."""
    if cli_path:
        return Path(cli_path).expanduser()
    if environ.get(ENV_VAR):
        return Path(environ[ENV_VAR]).expanduser()
    return Path(DEFAULT_FOLDER)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _json(value: Any, what: str) -> str:
    try:
        return canonical_json(value)
    except (TypeError, ValueError) as e:
        raise StoreError(f"{what} is not JSON-serialisable: {e}", value=value,
                         hint=_JSON_HINT) from e


def _json_or_null(value: Any, what: str) -> str | None:
    return None if value is None else _json(value, what)


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _process_alive(pid: int) -> bool:
    """Whether process `pid` on this host still runs (a zombie counts as dead)."""
    if pid == os.getpid() or os.name != "posix":  # elsewhere os.kill would kill it
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, owned by someone else
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def _effective_status(row: sqlite3.Row, result: dict[str, Any]) -> str:
    """A "running" design whose writer is gone from this host was interrupted; a "failed" one
    whose spec verified but was found not to fit the task is "unfit" (the status column's CHECK
    predates that status: it is stored as "failed" with the two verdicts in `result`); so is
    "review_failed" (verified, but the task-fit review call failed: `result["review_error"]`)."""
    if row["status"] == "failed" and result.get("verified") and result.get("fits_task") == "no":
        return "unfit"
    if row["status"] == "failed" and result.get("verified") and result.get("review_error"):
        return "review_failed"
    if row["status"] != "running" or row["host"] != socket.gethostname():
        return row["status"]
    return "running" if _process_alive(row["pid"]) else "interrupted"


def _verdicts(row: sqlite3.Row, result: dict[str, Any]) -> tuple[bool | None, str]:
    """(verified, fits_task) from a design's result; a store from before the task-fit review
    has neither: a passed design was verified, and nothing reviewed its fit ("unknown")."""
    verified = result.get("verified")
    if verified is None and row["status"] in ("passed", "failed"):
        verified = row["status"] == "passed" or None
    return verified, str(result.get("fits_task") or "unknown")


_ATTEMPT_COLUMNS = ("design_id, idx, stage, prompt, reply, parsed, parse_error, report, passed, "
                    "spec_sha, prompt_tokens, completion_tokens, cached, wall_s, created_at")
_INSERT_ATTEMPT = (f"INSERT INTO attempts ({_ATTEMPT_COLUMNS}) "
                   f"VALUES ({', '.join('?' * len(_ATTEMPT_COLUMNS.split(',')))})")

_SUMMARY_SQL = """
SELECT d.*, COUNT(a.id) AS n_attempts,
       COALESCE(SUM(a.prompt_tokens), 0) AS a_prompt,
       COALESCE(SUM(a.completion_tokens), 0) AS a_completion,
       COALESCE(SUM(a.wall_s), 0.0) AS a_wall
FROM designs d LEFT JOIN attempts a ON a.design_id = d.id
{where} GROUP BY d.id ORDER BY d.id DESC LIMIT ?
"""


def _summary(row: sqlite3.Row) -> DesignSummary:
    finished = row["wall_s"] is not None
    usage = (Usage(row["prompt_tokens"], row["completion_tokens"]) if finished
             else Usage(row["a_prompt"], row["a_completion"]))
    result = _loads(row["result"]) or {}
    verified, fits_task = _verdicts(row, result)
    return DesignSummary(
        id=row["id"], task=row["task"], model=row["model"], mode=row["mode"],
        status=_effective_status(row, result), started_at=row["started_at"],
        wall_s=row["wall_s"] if finished else row["a_wall"], n_attempts=row["n_attempts"],
        usage=usage, spec_sha=row["spec_sha"], template_hash=row["template_hash"],
        verified=verified, fits_task=fits_task)


def _attempt(row: sqlite3.Row) -> AttemptRecord:
    return AttemptRecord(
        index=row["idx"], stage=row["stage"], prompt=json.loads(row["prompt"]),
        reply=row["reply"], parsed=_loads(row["parsed"]), parse_error=row["parse_error"],
        report=_loads(row["report"]),
        passed=None if row["passed"] is None else bool(row["passed"]),
        spec_sha=row["spec_sha"], usage=Usage(row["prompt_tokens"], row["completion_tokens"]),
        cached=bool(row["cached"]), wall_s=row["wall_s"], id=row["id"])


@dataclass
class StoreReplyCache:
    """The store as `gymwright.llm`'s reply cache (`get(key)` / `put(key, completion)`)."""

    store: Store

    def get(self, key: str) -> Completion | None:
        return self.store.cache_get(key)

    def put(self, key: str, completion: Completion) -> None:
        self.store.cache_put(key, completion)


class Store:
    """A store folder: `gymwright.db` (SQLite, WAL) and `artifacts/`. Open with `Store.open`."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        conn.row_factory = sqlite3.Row

    # --------------------------------------------------------------------------- lifecycle
    @classmethod
    def open(cls, path: str | Path | None = None) -> Store:
        """Open (creating if needed) the store at `path`, or the default one."""
        folder = default_store_path(path)
        _make_folder(folder)
        return cls(folder, connect(folder / DB_NAME))

    @property
    def db_path(self) -> Path:
        return self.path / DB_NAME

    @property
    def artifacts(self) -> Path:
        return self.path / ARTIFACTS

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    def _tx(self) -> AbstractContextManager[sqlite3.Connection]:
        return transaction(self._conn, self.db_path)

    # ------------------------------------------------------------------------------- specs
    def put_spec(self, spec: dict[str, Any], *, name: str = "") -> str:
        """Store a spec under its sha256 (a no-op when present; a first name sticks)."""
        if not isinstance(spec, dict):
            raise StoreError(f"a spec must be a dict, not {type(spec).__name__}",
                             hint="pass the spec as data, e.g. `EnvSpec.model_dump()`")
        body = _json(spec, "spec")
        sha = spec_hash(spec)
        with self._tx() as c:
            c.execute("INSERT INTO specs (sha, name, body, created_at) VALUES (?, ?, ?, ?) "
                      "ON CONFLICT (sha) DO UPDATE SET name = excluded.name "
                      "WHERE specs.name = ''", (sha, name, body, _now()))
        return sha

    def get_spec(self, sha_or_prefix: str) -> dict[str, Any]:
        """The spec with this sha256, or with this unique prefix (>= 6 hex characters)."""
        sha = self.resolve_sha(sha_or_prefix)
        row = self._conn.execute("SELECT body FROM specs WHERE sha = ?", (sha,)).fetchone()
        return json.loads(row["body"])

    def specs(self, limit: int = 50) -> list[SpecSummary]:
        """Stored specs, newest first."""
        rows = self._conn.execute("SELECT sha, name, created_at FROM specs "
                                  "ORDER BY rowid DESC LIMIT ?", (limit,))
        return [SpecSummary(r["sha"], r["name"], r["created_at"]) for r in rows]

    def resolve_sha(self, sha_or_prefix: str) -> str:
        """The full sha256 of the one stored spec that starts with `sha_or_prefix`."""
        key = _check_hex(sha_or_prefix)
        rows = self._conn.execute(
            "SELECT sha, name FROM specs WHERE sha >= ? AND sha < ? ORDER BY sha LIMIT 6",
            (key, key + "g")).fetchall()
        if len(rows) == 1:
            return rows[0]["sha"]
        if not rows:
            raise self._no_spec(key)
        shown = ", ".join(f"{r['sha'][:12]} ({r['name'] or 'unnamed'})" for r in rows[:5])
        more = " and more" if len(rows) > 5 else ""
        raise StoreError(f"spec prefix {key} is ambiguous in store {self.db_path}: it matches "
                         f"{shown}{more}", value=sha_or_prefix,
                         hint="give more hex characters of the sha256")

    def _no_spec(self, key: str) -> StoreError:
        n = self._conn.execute("SELECT COUNT(*) FROM specs").fetchone()[0]
        return StoreError(f"no spec {key} in store {self.db_path} ({n} specs)", value=key,
                          hint="give the sha256 of a stored spec or a unique prefix of at least "
                               f"{MIN_PREFIX} hex characters; `gymwright designs` shows the "
                               "spec of each design")

    def _sha_arg(self, sha: str) -> str:
        """A full sha256 as given (stored or not), or a prefix resolved against the specs."""
        key = _check_hex(sha)
        return key if len(key) == 64 else self.resolve_sha(key)

    # ----------------------------------------------------------------------------- designs
    def start_design(self, task: str, *, model: str, mode: str, template_hash: str,
                     settings: dict[str, Any]) -> int:
        """Record a design as "running" by this process; returns its id."""
        body = _json(settings, "design settings")
        with self._tx() as c:
            cur = c.execute(
                "INSERT INTO designs (task, model, mode, template_hash, settings, status, "
                "started_at, pid, host) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                (task, model, mode, template_hash, body, _now(), os.getpid(),
                 socket.gethostname()))
        return int(cur.lastrowid or 0)

    def add_attempt(self, design_id: int, attempt: AttemptRecord) -> int:
        """Record one attempt, committed before this returns; returns its row id."""
        what = f"attempt {attempt.index} of design {design_id}"
        row = (design_id, attempt.index, attempt.stage, _json(attempt.prompt, f"{what}: prompt"),
               attempt.reply, _json_or_null(attempt.parsed, f"{what}: parsed"),
               attempt.parse_error, _json_or_null(attempt.report, f"{what}: report"),
               None if attempt.passed is None else int(attempt.passed), attempt.spec_sha,
               attempt.usage.prompt_tokens, attempt.usage.completion_tokens,
               int(attempt.cached), float(attempt.wall_s), _now())
        self._require_design(design_id)
        try:
            with self._tx() as c:
                cur = c.execute(_INSERT_ATTEMPT, row)
        except sqlite3.IntegrityError as e:
            raise StoreError(f"design {design_id} already has an attempt {attempt.index}",
                             hint="number the attempts of a design 0, 1, 2, ...") from e
        return int(cur.lastrowid or 0)

    def finish_design(self, design_id: int, *, status: str, spec_sha: str | None,
                      result: dict[str, Any], usage: Usage, wall_s: float) -> None:
        """Record how a design ended."""
        if status not in FINAL_STATUSES:
            raise StoreError(f"a design cannot finish with status {status!r}", value=status,
                             hint=f"use one of {', '.join(FINAL_STATUSES)}")
        body = _json(result, f"result of design {design_id}")
        if status in ("unfit", "review_failed"):  # stored as "failed"; `result` holds the verdicts
            status = "failed"
        with self._tx() as c:
            cur = c.execute(
                "UPDATE designs SET status = ?, spec_sha = ?, result = ?, prompt_tokens = ?, "
                "completion_tokens = ?, wall_s = ?, finished_at = ? WHERE id = ?",
                (status, spec_sha, body, usage.prompt_tokens, usage.completion_tokens,
                 float(wall_s), _now(), design_id))
        if cur.rowcount == 0:
            raise self._no_design(design_id)

    def designs(self, limit: int = 50) -> list[DesignSummary]:
        """The latest designs, newest first."""
        rows = self._conn.execute(_SUMMARY_SQL.format(where=""), (limit,))
        return [_summary(r) for r in rows]

    def design(self, design_id: int) -> DesignRecord:
        """One design with its settings, result and attempts (in order)."""
        row = self._conn.execute(_SUMMARY_SQL.format(where="WHERE d.id = ?"),
                                 (design_id, 1)).fetchone()
        if row is None:
            raise self._no_design(design_id)
        attempts = self._conn.execute("SELECT * FROM attempts WHERE design_id = ? ORDER BY idx",
                                      (design_id,))
        return DesignRecord(**vars(_summary(row)), settings=json.loads(row["settings"]),
                            result=_loads(row["result"]) or {},
                            attempts=[_attempt(a) for a in attempts])

    def _require_design(self, design_id: int) -> None:
        if not self._conn.execute("SELECT 1 FROM designs WHERE id = ?", (design_id,)).fetchone():
            raise self._no_design(design_id)

    def _no_design(self, design_id: int) -> StoreError:
        lo, hi, n = self._conn.execute("SELECT MIN(id), MAX(id), COUNT(*) FROM designs").fetchone()
        have = "no designs yet" if not n else f"design {lo}" if lo == hi else f"designs {lo}-{hi}"
        return StoreError(f"no design {design_id} in store {self.db_path} ({have})",
                          value=design_id, hint="`gymwright designs` lists them")

    # ------------------------------------------------------------------------- reply cache
    def cache_get(self, key: str) -> Completion | None:
        """The cached completion for a request key, or None."""
        row = self._conn.execute("SELECT * FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return Completion(text=row["text"], usage=Usage(row["prompt_tokens"],
                          row["completion_tokens"]), provider=row["provider"],
                          model=row["model"], cached=True)

    def cache_put(self, key: str, completion: Completion) -> None:
        """Remember a completion under its request key (the latest one wins)."""
        with self._tx() as c:
            c.execute("INSERT OR REPLACE INTO replies (key, provider, model, text, "
                      "prompt_tokens, completion_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                      (key, completion.provider, completion.model, completion.text,
                       completion.usage.prompt_tokens, completion.usage.completion_tokens, _now()))

    def reply_cache(self) -> StoreReplyCache:
        return StoreReplyCache(self)

    # ----------------------------------------------------------------------------- lineage
    def add_lineage(self, parent_sha: str, child_sha: str, reason: str,
                    design_id: int | None = None) -> None:
        """Record that `child_sha` was made from `parent_sha` (a repeat is a no-op)."""
        parent, child = self._sha_arg(parent_sha), self._sha_arg(child_sha)
        if parent == child:
            raise StoreError(f"a spec cannot be its own parent ({parent[:12]})",
                             hint="record lineage only between two different specs")
        if design_id is not None:
            self._require_design(design_id)
        with self._tx() as c:
            c.execute("INSERT OR IGNORE INTO lineage (parent_sha, child_sha, reason, design_id, "
                      "created_at) VALUES (?, ?, ?, ?, ?)",
                      (parent, child, reason, design_id, _now()))

    def lineage(self, sha: str) -> list[LineageEdge]:
        """Every edge where the spec is the parent or the child, oldest first."""
        key = self._sha_arg(sha)
        rows = self._conn.execute("SELECT * FROM lineage WHERE parent_sha = ? OR child_sha = ? "
                                  "ORDER BY id", (key, key))
        return [LineageEdge(r["parent_sha"], r["child_sha"], r["reason"], r["design_id"],
                            r["created_at"]) for r in rows]


def _check_hex(text: str) -> str:
    key = text.strip().lower()
    if not _HEX.fullmatch(key) or len(key) > 64:
        raise StoreError(f"{text!r} is not a spec id", value=text,
                         hint=f"give a spec's sha256, or at least {MIN_PREFIX} of its first "
                              "hex characters")
    if len(key) < MIN_PREFIX:
        raise StoreError(f"spec id {key} is too short", value=text,
                         hint=f"give at least {MIN_PREFIX} hex characters of the sha256")
    return key


def _make_folder(folder: Path) -> None:
    """Create the store folder and its artifacts folder; refuse a file in the way."""
    if folder.exists() and not folder.is_dir():
        hint = ("pass the folder that holds it" if folder.name == DB_NAME
                else "move the file away, or pick another folder with --store or GYMWRIGHT_STORE")
        raise StoreError(f"store folder {folder} is a file, not a folder", path=str(folder),
                         hint=hint)
    try:
        (folder / ARTIFACTS).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot create the store folder {folder}: {e.strerror}",
                         path=str(folder), hint="pick a writable folder with --store or "
                                                "GYMWRIGHT_STORE") from e
