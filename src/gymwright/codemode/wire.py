"""What crosses the pipe between gymwright and a sandbox worker: length-prefixed JSON frames.

No pickle, in either direction: a frame is a 4-byte big-endian length and UTF-8 JSON. numpy
arrays travel as `{"__nd__": [dtype, shape, base64 bytes]}` and numpy scalars as plain numbers.
The parent decodes what the worker sends as untrusted data: the dtype must be a plain numeric
one, the shape must match the bytes, and a frame is at most `MAX_FRAME` bytes.

Both sides import this module (the worker before any model code exists in it).
"""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import numpy as np

MAX_FRAME = 32 * 1024 * 1024
MAX_DEPTH = 24
DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                    "float16", "float32", "float64"})
ND = "__nd__"
HEADER = struct.Struct(">I")


class WireError(Exception):
    """A frame that is not what the protocol allows (too long, not JSON, a bad array)."""


def encode_value(value: Any, depth: int = 0) -> Any:
    """`value` as JSON-ready data; raises WireError for what cannot cross (objects, deep nests)."""
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.ndarray):
        arr = np.ascontiguousarray(value)
        if arr.dtype.name not in DTYPES:
            raise WireError(f"an array of dtype {arr.dtype} (only numeric and bool arrays cross)")
        return {ND: [arr.dtype.name, list(arr.shape), base64.b64encode(arr.tobytes()).decode("ascii")]}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): encode_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode_value(v, depth + 1) for v in value]
    raise WireError(f"a value of type {type(value).__name__} (only numbers, strings, lists, "
                    "dicts and numeric arrays cross)")


def _decode_array(spec: Any) -> np.ndarray:
    if not (isinstance(spec, list) and len(spec) == 3 and spec[0] in DTYPES
            and isinstance(spec[1], list) and all(isinstance(n, int) and 0 <= n for n in spec[1])
            and isinstance(spec[2], str)):
        raise WireError("a malformed array")
    raw = base64.b64decode(spec[2], validate=True)
    dtype = np.dtype(spec[0])
    if int(np.prod(spec[1], dtype=np.int64)) * dtype.itemsize != len(raw):
        raise WireError("an array whose shape does not match its bytes")
    return np.frombuffer(raw, dtype=dtype).reshape(spec[1]).copy()


def decode_value(data: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested deeper than {MAX_DEPTH} levels")
    if isinstance(data, dict):
        if set(data) == {ND}:
            return _decode_array(data[ND])
        return {k: decode_value(v, depth + 1) for k, v in data.items()}
    if isinstance(data, list):
        return [decode_value(v, depth + 1) for v in data]
    return data


def pack(message: dict[str, Any]) -> bytes:
    body = json.dumps(encode_value(message), separators=(",", ":")).encode("utf-8")
    if len(body) > MAX_FRAME:
        raise WireError(f"a frame of {len(body)} bytes (at most {MAX_FRAME})")
    return HEADER.pack(len(body)) + body


def frame_length(header: bytes) -> int:
    (n,) = HEADER.unpack(header)
    if n > MAX_FRAME:
        raise WireError(f"a frame of {n} bytes announced (at most {MAX_FRAME})")
    return n


def unpack(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError) as e:
        raise WireError(f"a frame that is not JSON ({type(e).__name__})") from None
    if not isinstance(data, dict):
        raise WireError("a frame that is not a JSON object")
    out = decode_value(data)
    assert isinstance(out, dict)
    return out


__all__ = ["MAX_FRAME", "WireError", "decode_value", "encode_value", "frame_length", "pack", "unpack"]
