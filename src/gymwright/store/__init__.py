"""The store: one SQLite file (`<store>/gymwright.db`, WAL mode) plus `<store>/artifacts/`.

The folder is `--store`, else `$GYMWRIGHT_STORE`, else `./.gymwright`. Tables:

- `meta(key, value)`: `schema_version`; a store written by a newer version is refused.
- `specs(sha, name, body, created_at)`: specs, content-addressed by the sha256 of their
  canonical JSON (`body`); any unique prefix of >= 6 hex characters finds one.
- `designs(id, task, model, mode, template_hash, settings, status, started_at, finished_at,
  wall_s, prompt_tokens, completion_tokens, spec_sha, result, pid, host)`: one row per
  design. `status` is "running" until `finish_design`; a "running" design whose writer (`pid`
  on `host`) is gone is reported as "interrupted".
- `attempts(id, design_id, idx, stage, prompt, reply, parsed, parse_error, report, passed,
  spec_sha, prompt_tokens, completion_tokens, cached, wall_s, created_at)`: every model call
  (or offline step) of a design, each written in its own transaction.
- `replies(key, provider, model, text, prompt_tokens, completion_tokens, created_at)`: the
  LLM reply cache, keyed by `Request.cache_key` (a hash of provider, model, messages,
  sampling params and schema), so a repeated design pays for no call.
- `lineage(parent_sha, child_sha, reason, design_id, created_at)`: which spec came from which,
  and why.

JSON columns hold canonical JSON text. Spec shas in `designs`, `attempts` and `lineage` are
references by value: the spec they name need not be stored. Every write is one transaction,
so a design killed at any instant (Ctrl-C, `kill -9`) leaves each finished attempt readable
and the database consistent.
"""

from gymwright.store.db import SCHEMA_VERSION, StoreError
from gymwright.store.records import (
    AttemptRecord,
    DesignRecord,
    DesignSummary,
    LineageEdge,
    SpecSummary,
    canonical_json,
    spec_hash,
)
from gymwright.store.store import Store, StoreReplyCache, default_store_path

__all__ = [
    # the store
    "Store",
    "StoreReplyCache",
    "default_store_path",
    "SCHEMA_VERSION",
    # records
    "AttemptRecord",
    "DesignRecord",
    "DesignSummary",
    "LineageEdge",
    "SpecSummary",
    # content addressing
    "canonical_json",
    "spec_hash",
    # errors
    "StoreError",
]
