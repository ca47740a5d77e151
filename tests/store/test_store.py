"""The SQLite store: round trips, content addressing, errors, and designs killed mid-write."""

from __future__ import annotations

import hashlib
import json
import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gymwright.llm.base import Completion, Message, Request, Usage
from gymwright.store import (
    SCHEMA_VERSION,
    AttemptRecord,
    Store,
    StoreError,
    canonical_json,
    default_store_path,
    spec_hash,
)
from tests.support import store_writer
from tests.support.paths import ROOT

WRITER = Path(store_writer.__file__)
SPEC = {"gymwright": 1, "name": "cake", "params": {"discount": {"default": 0.9}}}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "st") as s:
        yield s


def attempt(index: int, **kw: object) -> AttemptRecord:
    base: dict = dict(index=index, stage="spec", prompt=[{"role": "user", "content": f"q{index}"}],
                      reply=f"r{index}", usage=Usage(3, 4), wall_s=0.5)
    return AttemptRecord(**(base | kw))


def sql(store: Store, query: str, *args: object) -> list[tuple]:
    with sqlite3.connect(store.db_path) as conn:
        return conn.execute(query, args).fetchall()


# ------------------------------------------------------------------- content addressing
def test_canonical_json_is_sorted_compact_and_keeps_unicode() -> None:
    assert canonical_json({"b": [1, 2], "a": "é"}) == '{"a":"é","b":[1,2]}'


def test_spec_hash_ignores_key_order_and_is_sha256_of_canonical_json() -> None:
    shuffled = {"params": {"discount": {"default": 0.9}}, "name": "cake", "gymwright": 1}
    assert spec_hash(SPEC) == spec_hash(shuffled)
    text = json.dumps(SPEC, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert spec_hash(SPEC) == hashlib.sha256(text.encode()).hexdigest()
    assert spec_hash(SPEC) != spec_hash(SPEC | {"name": "pie"})


# ------------------------------------------------------------------------ where it lives
def test_store_path_precedence(tmp_path: Path) -> None:
    env = {"GYMWRIGHT_STORE": str(tmp_path / "env")}
    assert default_store_path(tmp_path / "cli", env) == tmp_path / "cli"
    assert default_store_path(None, env) == tmp_path / "env"
    assert default_store_path(None, {"GYMWRIGHT_STORE": ""}) == Path(".gymwright")
    assert default_store_path(None, {}) == Path(".gymwright")


def test_open_uses_env_then_explicit_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GYMWRIGHT_STORE", str(tmp_path / "env"))
    with Store.open() as s:
        assert s.path == tmp_path / "env"
    with Store.open(tmp_path / "cli") as s:
        assert s.path == tmp_path / "cli"
    monkeypatch.delenv("GYMWRIGHT_STORE")
    with Store.open() as s:
        assert s.path == Path(".gymwright")
    assert (tmp_path / "env" / "gymwright.db").is_file()
    assert (tmp_path / "cli" / "artifacts").is_dir()
    assert (tmp_path / ".gymwright" / "gymwright.db").is_file()


def test_connection_settings(store: Store) -> None:
    conn = store._conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] > 0
    assert sql(store, "SELECT value FROM meta WHERE key = 'schema_version'") == [
        (str(SCHEMA_VERSION),)]


# --------------------------------------------------------------------------------- specs
def test_spec_round_trip_is_content_addressed(store: Store) -> None:
    sha = store.put_spec(SPEC)
    assert sha == spec_hash(SPEC)
    assert store.put_spec(dict(reversed(SPEC.items())), name="cake") == sha
    assert store.put_spec(SPEC, name="other") == sha
    assert store.get_spec(sha) == SPEC
    assert store.get_spec(sha[:6].upper()) == SPEC
    assert [(s.sha, s.name) for s in store.specs()] == [(sha, "cake")]  # the first name sticks
    assert sql(store, "SELECT body FROM specs") == [(canonical_json(SPEC),)]


def colliding_specs() -> tuple[dict, dict]:
    seen: dict[str, dict] = {}
    for i in range(100_000):
        spec = {"i": i}
        prefix = spec_hash(spec)[:6]
        if prefix in seen:
            return seen[prefix], spec
        seen[prefix] = spec
    raise AssertionError("no collision")


def test_ambiguous_prefix(store: Store) -> None:
    a, b = colliding_specs()
    sha_a, sha_b = store.put_spec(a, name="a"), store.put_spec(b)
    first, second = sorted([(sha_a, "a"), (sha_b, "unnamed")])
    with pytest.raises(StoreError) as e:
        store.get_spec(sha_a[:6])
    assert str(e.value) == (
        f"spec prefix {sha_a[:6]} is ambiguous in store {store.db_path}: it matches "
        f"{first[0][:12]} ({first[1]}), {second[0][:12]} ({second[1]})\n"
        "  hint: give more hex characters of the sha256")
    assert store.get_spec(sha_a[:12]) == a


def test_unknown_short_and_bad_spec_ids(store: Store) -> None:
    store.put_spec(SPEC)
    missing = "0" * 64 if not spec_hash(SPEC).startswith("0" * 6) else "f" * 64
    with pytest.raises(StoreError) as e:
        store.get_spec(missing[:8])
    assert str(e.value) == (
        f"no spec {missing[:8]} in store {store.db_path} (1 specs)\n  hint: give the sha256 of "
        "a stored spec or a unique prefix of at least 6 hex characters; `gymwright designs` "
        "shows the spec of each design")
    with pytest.raises(StoreError, match="^spec id abc is too short"):
        store.get_spec("abc")
    with pytest.raises(StoreError, match="^'cake!' is not a spec id"):
        store.get_spec("cake!")


def test_spec_must_be_json_data(store: Store) -> None:
    with pytest.raises(StoreError, match="^a spec must be a dict, not list"):
        store.put_spec([1])  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="^spec is not JSON-serialisable"):
        store.put_spec({"x": object()})


# ------------------------------------------------------------------------------- designs
def test_design_round_trip(store: Store) -> None:
    did = store.start_design("split a cake", model="scripted:x", mode="spec",
                             template_hash="abc", settings={"max_attempts": 3})
    first = attempt(0, stage="roles", parsed={"roles": ["a"]})
    second = attempt(1, parsed=None, parse_error="no JSON found", reply="oops", cached=True)
    third = attempt(2, parsed=SPEC, report={"passed": True, "diagnostics": []}, passed=True,
                    spec_sha=spec_hash(SPEC), usage=Usage(100, 50))
    ids = [store.add_attempt(did, a) for a in (first, second, third)]
    running = store.design(did)
    assert running.status == "running"
    assert running.usage == Usage(106, 58) and running.wall_s == 1.5 and running.result == {}
    store.finish_design(did, status="passed", spec_sha=spec_hash(SPEC), result={"ok": 1},
                        usage=Usage(7, 8), wall_s=9.5)
    rec = store.design(did)
    assert (rec.id, rec.task, rec.model, rec.mode, rec.template_hash) == (
        did, "split a cake", "scripted:x", "spec", "abc")
    assert (rec.status, rec.spec_sha, rec.usage, rec.wall_s, rec.n_attempts) == (
        "passed", spec_hash(SPEC), Usage(7, 8), 9.5, 3)
    assert rec.settings == {"max_attempts": 3} and rec.result == {"ok": 1}
    for a, i in zip((first, second, third), ids, strict=True):
        a.id = i
    assert rec.attempts == [first, second, third]
    assert rec.started_at.endswith("+00:00")


def test_designs_newest_first(store: Store) -> None:
    ids = [store.start_design(f"t{i}", model="m", mode="offline", template_hash="h",
                              settings={}) for i in range(3)]
    store.add_attempt(ids[1], attempt(0, prompt=[]))
    summaries = store.designs()
    assert [d.id for d in summaries] == ids[::-1]
    assert [d.n_attempts for d in summaries] == [0, 1, 0]
    assert [d.id for d in store.designs(limit=2)] == ids[:0:-1]


def test_unknown_design(store: Store) -> None:
    with pytest.raises(StoreError) as e:
        store.design(12)
    assert str(e.value) == (f"no design 12 in store {store.db_path} (no designs yet)\n"
                            "  hint: `gymwright designs` lists them")
    for _ in range(2):
        store.start_design("t", model="m", mode="spec", template_hash="h", settings={})
    with pytest.raises(StoreError) as e:
        store.design(12)
    assert str(e.value) == (f"no design 12 in store {store.db_path} (designs 1-2)\n"
                            "  hint: `gymwright designs` lists them")
    with pytest.raises(StoreError, match="^no design 12 in store"):
        store.add_attempt(12, attempt(0))
    with pytest.raises(StoreError, match="^no design 12 in store"):
        store.finish_design(12, status="failed", spec_sha=None, result={}, usage=Usage(),
                            wall_s=0)


def test_bad_attempts_and_statuses(store: Store) -> None:
    did = store.start_design("t", model="m", mode="spec", template_hash="h", settings={})
    store.add_attempt(did, attempt(0))
    with pytest.raises(StoreError, match=f"^design {did} already has an attempt 0"):
        store.add_attempt(did, attempt(0))
    with pytest.raises(StoreError, match=f"^attempt 1 of design {did}: report is not JSON"):
        store.add_attempt(did, attempt(1, report={"d": object()}))
    with pytest.raises(StoreError, match="^a design cannot finish with status 'running'"):
        store.finish_design(did, status="running", spec_sha=None, result={}, usage=Usage(),
                            wall_s=0)
    assert store.design(did).n_attempts == 1


def test_running_design_of_a_dead_process_is_interrupted(store: Store) -> None:
    did = store.start_design("t", model="m", mode="spec", template_hash="h", settings={})
    other = store.start_design("t", model="m", mode="spec", template_hash="h", settings={})
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    with sqlite3.connect(store.db_path) as conn:
        conn.execute("UPDATE designs SET pid = ? WHERE id = ?", (proc.pid, did))
        conn.execute("UPDATE designs SET pid = ?, host = 'elsewhere' WHERE id = ?",
                     (proc.pid, other))
    assert store.design(did).status == "interrupted"
    assert store.design(other).status == "running"  # another host: cannot tell
    assert sql(store, "SELECT status FROM designs WHERE id = ?", did) == [("running",)]


def test_interrupted_write_rolls_back(store: Store) -> None:
    did = store.start_design("t", model="m", mode="spec", template_hash="h", settings={})
    with pytest.raises(KeyboardInterrupt), store._tx() as c:
        c.execute("UPDATE designs SET task = 'half' WHERE id = ?", (did,))
        raise KeyboardInterrupt
    assert store.design(did).task == "t"
    store.add_attempt(did, attempt(0))  # the connection is usable again


# --------------------------------------------------------------------------- reply cache
def test_reply_cache(store: Store) -> None:
    key = Request((Message("user", "hi"),)).cache_key("openai", "gpt-x")
    assert store.cache_get(key) is None
    store.cache_put(key, Completion("hello", Usage(5, 2), provider="openai", model="gpt-x"))
    assert store.cache_get(key) == Completion("hello", Usage(5, 2), "openai", "gpt-x", cached=True)
    cache = store.reply_cache()
    cache.put(key, Completion("again", Usage(1, 1), "openai", "gpt-x"))
    assert cache.get(key) == Completion("again", Usage(1, 1), "openai", "gpt-x", cached=True)
    assert cache.get("0" * 64) is None


# ------------------------------------------------------------------------------- lineage
def test_lineage_both_directions(store: Store) -> None:
    parent = store.put_spec(SPEC)
    child = store.put_spec(SPEC | {"name": "cake2"})
    grandchild = spec_hash(SPEC | {"name": "cake3"})  # not stored: a reference by value
    did = store.start_design("t", model="m", mode="spec", template_hash="h", settings={})
    store.add_lineage(parent, child[:8], "raise discount", design_id=did)
    store.add_lineage(parent, child, "raise discount", design_id=did)  # a repeat: no-op
    store.add_lineage(child, grandchild, "add a round limit")
    edges = store.lineage(child[:10])
    assert [(e.parent, e.child, e.reason, e.design_id) for e in edges] == [
        (parent, child, "raise discount", did), (child, grandchild, "add a round limit", None)]
    assert [e.child for e in store.lineage(parent)] == [child]
    assert [e.parent for e in store.lineage(grandchild)] == [child]
    with pytest.raises(StoreError, match="^a spec cannot be its own parent"):
        store.add_lineage(parent, parent, "x")
    with pytest.raises(StoreError, match="^no design 99 in store"):
        store.add_lineage(parent, child, "x", design_id=99)


# ------------------------------------------------------------------- opening and schema
def test_newer_schema_is_refused(tmp_path: Path) -> None:
    Store.open(tmp_path).close()
    with sqlite3.connect(tmp_path / "gymwright.db") as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError) as e:
        Store.open(tmp_path)
    assert str(e.value) == (
        f"{tmp_path / 'gymwright.db'}: store {tmp_path / 'gymwright.db'} was written by schema "
        f"version 99; this gymwright reads versions up to {SCHEMA_VERSION}\n  hint: upgrade "
        "gymwright (pip install -U gymwright), or use another store with --store or "
        "GYMWRIGHT_STORE")


def test_reopen_keeps_data(tmp_path: Path) -> None:
    with Store.open(tmp_path) as s:
        sha = s.put_spec(SPEC)
    with Store.open(tmp_path) as s:
        assert s.get_spec(sha) == SPEC


def test_store_folder_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(StoreError) as e:
        Store.open(tmp_path / "f")
    assert str(e.value) == (
        f"{tmp_path / 'f'}: store folder {tmp_path / 'f'} is a file, not a folder\n  hint: move "
        "the file away, or pick another folder with --store or GYMWRIGHT_STORE")


def test_database_that_is_not_sqlite(tmp_path: Path) -> None:
    (tmp_path / "gymwright.db").write_bytes(b"not sqlite at all " * 100)
    with pytest.raises(StoreError, match="file is not a database") as e:
        Store.open(tmp_path)
    assert "not a gymwright store" in e.value.hint


def test_two_connections_share_the_store(tmp_path: Path) -> None:
    with Store.open(tmp_path) as a, Store.open(tmp_path) as b:
        did = a.start_design("t", model="m", mode="spec", template_hash="h", settings={})
        a.add_attempt(did, attempt(0))
        assert b.design(did).n_attempts == 1
        b.add_attempt(did, attempt(1))
        assert a.design(did).n_attempts == 2


# ------------------------------------------------------------- designs killed mid-write
def start_writer(folder: Path) -> tuple[subprocess.Popen[str], int]:
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, str(WRITER), str(folder)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    line = proc.stdout.readline() if ready else ""
    if not line.startswith("ready"):
        proc.kill()
        pytest.fail(f"writer did not start: {line!r} {proc.communicate()[1]}")
    return proc, int(line.split()[1])


def wait_for_attempts(folder: Path, design_id: int, n: int) -> None:
    deadline = time.monotonic() + 30
    with Store.open(folder) as s:  # a second process reads while the writer writes
        while s.design(design_id).n_attempts < n:
            assert time.monotonic() < deadline, "the writer stopped writing"
            time.sleep(0.02)
        assert s.design(design_id).status == "running"


def assert_consistent(folder: Path, design_id: int) -> None:
    with sqlite3.connect(folder / "gymwright.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        rows = conn.execute("SELECT idx, prompt, parsed, report FROM attempts "
                            "WHERE design_id = ? ORDER BY idx", (design_id,)).fetchall()
    assert [r[0] for r in rows] == list(range(len(rows))) and len(rows) >= 5
    for _, *texts in rows:
        assert all(isinstance(json.loads(t), list | dict) for t in texts)


def test_kill_9_mid_design_leaves_finished_attempts(tmp_path: Path) -> None:
    proc, did = start_writer(tmp_path)
    wait_for_attempts(tmp_path, did, 5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert_consistent(tmp_path, did)
    with Store.open(tmp_path) as s:
        rec = s.design(did)
    assert rec.status == "interrupted" and rec.result == {}
    assert rec.n_attempts == len(rec.attempts) >= 5
    assert rec.usage == Usage(10 * rec.n_attempts, 20 * rec.n_attempts)
    assert all(a.reply and a.reply.startswith(f"reply {a.index} ") for a in rec.attempts)


def test_ctrl_c_mid_design_records_interrupted(tmp_path: Path) -> None:
    proc, did = start_writer(tmp_path)
    wait_for_attempts(tmp_path, did, 5)
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.strip() == "finished"
    assert_consistent(tmp_path, did)
    assert sql_status(tmp_path, did) == "interrupted"
    with Store.open(tmp_path) as s:
        rec = s.design(did)
    assert rec.status == "interrupted" and rec.n_attempts >= 5
    # the interrupt may land after an attempt's commit but before the writer counted it
    assert rec.result["stopped_after"] in (rec.n_attempts - 1, rec.n_attempts)


def sql_status(folder: Path, design_id: int) -> str:
    with sqlite3.connect(folder / "gymwright.db") as conn:
        return conn.execute("SELECT status FROM designs WHERE id = ?", (design_id,)).fetchone()[0]
