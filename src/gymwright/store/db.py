"""The SQLite file: connection settings, the schema, its version, and transactions.

Every write runs inside `transaction()` (BEGIN IMMEDIATE ... COMMIT, ROLLBACK on any exception,
KeyboardInterrupt included), so a process killed at any instant leaves either the whole write
or none of it. WAL mode lets other processes read while one writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gymwright.errors import GymwrightError

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 10_000

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS specs (
    sha        TEXT PRIMARY KEY,          -- sha256 hex of body
    name       TEXT NOT NULL DEFAULT '',
    body       TEXT NOT NULL,             -- canonical JSON
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS designs (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    task              TEXT NOT NULL,
    model             TEXT NOT NULL,
    mode              TEXT NOT NULL,
    template_hash     TEXT NOT NULL,
    settings          TEXT NOT NULL,      -- canonical JSON
    status            TEXT NOT NULL CHECK (status IN
                          ('running', 'passed', 'failed', 'interrupted', 'error')),
    started_at        TEXT NOT NULL,
    finished_at       TEXT,
    wall_s            REAL,               -- NULL until finished
    prompt_tokens     INTEGER,            -- NULL until finished
    completion_tokens INTEGER,
    spec_sha          TEXT,
    result            TEXT,               -- canonical JSON, NULL until finished
    pid               INTEGER NOT NULL,   -- the writer, to tell "running" from "interrupted"
    host              TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    design_id         INTEGER NOT NULL REFERENCES designs(id) ON DELETE CASCADE,
    idx               INTEGER NOT NULL,
    stage             TEXT NOT NULL,
    prompt            TEXT NOT NULL,      -- canonical JSON list of messages
    reply             TEXT,
    parsed            TEXT,               -- canonical JSON or NULL
    parse_error       TEXT,
    report            TEXT,               -- canonical JSON or NULL
    passed            INTEGER,            -- NULL, 0 or 1
    spec_sha          TEXT,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cached            INTEGER NOT NULL,
    wall_s            REAL NOT NULL,
    created_at        TEXT NOT NULL,
    UNIQUE (design_id, idx)
);
CREATE TABLE IF NOT EXISTS replies (
    key               TEXT PRIMARY KEY,   -- Request.cache_key(provider, model)
    provider          TEXT NOT NULL,
    model             TEXT NOT NULL,
    text              TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at        TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS lineage (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_sha TEXT NOT NULL,
    child_sha  TEXT NOT NULL,
    reason     TEXT NOT NULL,
    design_id  INTEGER REFERENCES designs(id) ON DELETE SET NULL,
    created_at TEXT NOT NULL,
    UNIQUE (parent_sha, child_sha, reason)
);
CREATE INDEX IF NOT EXISTS lineage_parent ON lineage (parent_sha);
CREATE INDEX IF NOT EXISTS lineage_child ON lineage (child_sha);
"""

# from-version -> SQL that brings a store to from-version + 1 (none yet)
MIGRATIONS: dict[int, str] = {}


class StoreError(GymwrightError):
    """The store cannot be opened, read or written as asked."""


def connect(db: Path) -> sqlite3.Connection:
    """Open `db` in autocommit mode (transactions are explicit), WAL, foreign keys on."""
    try:
        conn = sqlite3.connect(db, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.Error as e:
        raise StoreError(f"cannot open the store database {db}: {e}", path=str(db),
                         hint="check that the folder exists and is writable, or pick another "
                              "with --store or GYMWRIGHT_STORE") from e
    try:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        ensure_schema(conn, db)
    except sqlite3.DatabaseError as e:
        conn.close()
        raise db_error(db, e) from e
    except BaseException:
        conn.close()
        raise
    return conn


def db_error(db: Path, e: sqlite3.Error) -> StoreError:
    """A sqlite error as a StoreError that says what to do about it."""
    text = str(e)
    if "not a database" in text or "malformed" in text:
        hint = ("the file is not a gymwright store (or is damaged): move it away, or pick "
                "another store folder with --store or GYMWRIGHT_STORE")
    elif "locked" in text or "busy" in text:
        hint = ("another process kept the store busy for too long: wait for it to finish, "
                "or use another store with --store")
    elif "readonly" in text or "read-only" in text:
        hint = "make the store folder writable, or pick another with --store"
    else:
        hint = "pick another store folder with --store or GYMWRIGHT_STORE"
    return StoreError(f"store database {db}: {text}", path=str(db), hint=hint)


def ensure_schema(conn: sqlite3.Connection, db: Path) -> None:
    """Create the tables in a new store; refuse a store written by a newer gymwright."""
    with transaction(conn, db):
        version = stored_version(conn)
        if version is None:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)",
                         (str(SCHEMA_VERSION),))
            return
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"store {db} was written by schema version {version}; this gymwright reads "
                f"versions up to {SCHEMA_VERSION}", path=str(db),
                hint="upgrade gymwright (pip install -U gymwright), or use another store "
                     "with --store or GYMWRIGHT_STORE")
        migrate(conn, db, version)


def stored_version(conn: sqlite3.Connection) -> int | None:
    """The schema version in `meta`, or None for a new (empty) database."""
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
    if not has_meta:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else None


def migrate(conn: sqlite3.Connection, db: Path, version: int) -> None:
    """Bring an older store up to SCHEMA_VERSION, one step at a time."""
    while version < SCHEMA_VERSION:
        if version not in MIGRATIONS:
            raise StoreError(f"store {db} has schema version {version}, which this gymwright "
                             "cannot upgrade", path=str(db), hint="use a new store with --store")
        for statement in MIGRATIONS[version].split(";"):
            if statement.strip():
                conn.execute(statement)
        version += 1
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))


@contextmanager
def transaction(conn: sqlite3.Connection, db: Path) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT; any exception (KeyboardInterrupt too) rolls back."""
    if conn.in_transaction:  # left open by an interrupt that landed between BEGIN and try
        conn.execute("ROLLBACK")
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as e:
        raise db_error(db, e) from e
    try:
        yield conn
    except BaseException as e:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if isinstance(e, sqlite3.OperationalError):  # locked, disk full, read-only, ...
            raise db_error(db, e) from e
        raise
    try:
        conn.execute("COMMIT")
    except sqlite3.Error as e:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise db_error(db, e) from e
