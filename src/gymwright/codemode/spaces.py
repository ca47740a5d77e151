"""Gymnasium spaces as data, so that a space crosses the pipe and is rebuilt in the parent.

The worker describes the model's spaces (`describe`); the parent rebuilds them (`rebuild`)
from that untrusted data, refusing anything but Box, Discrete, MultiDiscrete, MultiBinary and
Dict/Tuple of them (at most `MAX_SUBSPACES` entries each), with at most `MAX_ELEMENTS` elements
each. The parent's checks, samples and containment tests then run on its own space objects,
never on the model's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from gymwright.codemode.wire import WireError

MAX_ELEMENTS = 65_536  # values of one space (a Box's low and high cross the pipe in full; a batch takes 16,384)
MAX_DISCRETE = 1_000_000
MAX_SUBSPACES = 256  # entries of one Dict or Tuple


def describe(space: Any) -> dict[str, Any]:
    """Worker side: `space` as data (raises WireError for a space that cannot cross; a Box too
    large is refused here, before its bounds are written to the pipe)."""
    if isinstance(space, spaces.Box):
        if _count(space.shape) > MAX_ELEMENTS:
            raise WireError(_too_many(space.shape))
        return {"type": "Box", "low": np.asarray(space.low), "high": np.asarray(space.high),
                "dtype": np.dtype(space.dtype).name}
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": np.asarray(space.nvec, dtype=np.int64)}
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": [int(x) for x in np.atleast_1d(space.n)]}
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": {str(k): describe(v) for k, v in space.spaces.items()}}
    if isinstance(space, spaces.Tuple):
        return {"type": "Tuple", "spaces": [describe(v) for v in space.spaces]}
    raise WireError(f"a space of type {type(space).__name__} (use Box, Discrete, MultiDiscrete, "
                    "MultiBinary, or a Dict/Tuple of them)")


def _count(shape: Any) -> int:
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


def _too_many(shape: Any) -> str:
    return f"a Box of shape {tuple(shape)}: {_count(shape):,} elements (at most {MAX_ELEMENTS:,})"


def _int(value: Any, what: str, low: int = 1, high: int = MAX_DISCRETE) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise WireError(f"{what} must be an integer in [{low}, {high}], got {value!r}")
    return value


def _box(desc: dict[str, Any]) -> spaces.Box:
    low, high = desc.get("low"), desc.get("high")
    if not (isinstance(low, np.ndarray) and isinstance(high, np.ndarray) and low.shape == high.shape):
        raise WireError("a Box needs low and high arrays of one shape")
    if _count(low.shape) > MAX_ELEMENTS:
        raise WireError(_too_many(low.shape))
    dtype = desc.get("dtype")
    if dtype not in ("float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"):
        raise WireError(f"a Box of dtype {dtype!r}")
    return spaces.Box(low=low.astype(dtype), high=high.astype(dtype), shape=low.shape, dtype=dtype)


def rebuild(desc: Any, depth: int = 0) -> spaces.Space[Any]:
    """Parent side: the space `desc` describes; WireError names what is wrong."""
    if depth > 4 or not isinstance(desc, dict):
        raise WireError("a space description that is not an object (or nested too deep)")
    kind = desc.get("type")
    if kind == "Box":
        return _box(desc)
    if kind == "Discrete":
        return spaces.Discrete(_int(desc.get("n"), "Discrete.n"),
                               start=_int(desc.get("start", 0), "Discrete.start", -MAX_DISCRETE))
    if kind == "MultiDiscrete":
        nvec = desc.get("nvec")
        if not isinstance(nvec, np.ndarray) or nvec.size > MAX_ELEMENTS or (nvec < 1).any():
            raise WireError("MultiDiscrete.nvec must be an array of positive integers")
        return spaces.MultiDiscrete(nvec)
    if kind == "MultiBinary":
        n = desc.get("n")
        if not isinstance(n, list) or not n or _count([_int(x, "MultiBinary.n") for x in n]) > MAX_ELEMENTS:
            raise WireError("MultiBinary.n must be a short list of positive integers")
        return spaces.MultiBinary(n if len(n) > 1 else n[0])
    if kind in ("Dict", "Tuple") and isinstance(desc.get("spaces"), dict | list) and len(desc["spaces"]) > MAX_SUBSPACES:
        raise WireError(f"a {kind} of {len(desc['spaces']):,} spaces (at most {MAX_SUBSPACES})")
    if kind == "Dict" and isinstance(desc.get("spaces"), dict):
        return spaces.Dict({k: rebuild(v, depth + 1) for k, v in desc["spaces"].items()})
    if kind == "Tuple" and isinstance(desc.get("spaces"), list):
        return spaces.Tuple([rebuild(v, depth + 1) for v in desc["spaces"]])
    raise WireError(f"a space of type {kind!r}")


__all__ = ["describe", "rebuild"]
