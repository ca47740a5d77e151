"""A spec's content hash: sha256 of its canonical JSON (one text per value).

The store addresses specs by it (`gymwright.store` re-exports both functions), checkpoints
record it, and a generated module's versioned name (`compile/common.py`) is read off it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(obj: Any) -> str:
    """One text per value: keys sorted, no spaces, UTF-8 kept as is."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def spec_hash(spec: dict[str, Any]) -> str:
    """sha256 (hex) of the spec's canonical JSON: the spec's address in the store."""
    return hashlib.sha256(canonical_json(spec).encode("utf-8")).hexdigest()
