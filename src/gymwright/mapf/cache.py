"""A disk cache of pools: one ``.npz`` per (config, n, seed, code version), written atomically.

The folder is ``$GYMWRIGHT_CACHE/mapf`` (else ``~/.cache/gymwright/mapf``). The code version
is a hash of the sources that decide what a pool contains, so a change to the solver or the
generator never serves a stale pool.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from gymwright.atomic import atomic_writer

_SOURCES = ("maps.py", "space_time.py", "mdd.py", "joint.py", "cbs.py", "instances.py", "pool.py", "lazy.py")


def code_version() -> str:
    """A short hash of the generating modules' source."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in _SOURCES:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    """Where pools are cached."""
    root = os.environ.get("GYMWRIGHT_CACHE") or str(Path.home() / ".cache" / "gymwright")
    return Path(root) / "mapf"


def cache_key(fields: dict[str, Any]) -> str:
    """A stable file name for the given fields plus the code version."""
    blob = json.dumps({**fields, "code": code_version()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` to ``path`` atomically (a temporary file in the folder, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(path) as handle:
        np.savez(handle, **arrays)


def load_npz(path: Path) -> dict[str, np.ndarray] | None:
    """The arrays stored at ``path``, or None when absent or unreadable (then regenerated)."""
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError):
        return None
