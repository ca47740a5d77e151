"""`scripted:FILE`: replay model replies from a file, in order — for tests and demos.

The file (YAML or JSON) is a list; each item is one reply:

    - "plain reply text"
    - text: "reply text"
      usage: {prompt_tokens: 120, completion_tokens: 30}   # default: about len/4 each
    - json: {name: cake, params: {}}        # any value, sent as json.dumps(value)
      expect: "alternating offers"          # the last user message must contain this
    - error: 429                            # 429, 500, 503, timeout or connection
      retry_after: 0                        # (errors only) the server's hint, seconds
    - delay: 5                              # sleep this long before replying
      text: "late reply"

Every item is used once, whether it is a reply or an error; a request past the end is an
error. `requests` records every request received, so tests can count calls.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gymwright.llm.base import (
    Completion,
    LLMError,
    LLMTimeout,
    Request,
    TransientLLMError,
    Usage,
)

_CONTENT_KEYS = ("text", "json", "error")
_OPTIONAL_KEYS = ("usage", "delay", "expect", "retry_after")
_ERRORS: dict[str, Callable[[float | None], TransientLLMError]] = {
    "429": lambda after: TransientLLMError("scripted rate limit (HTTP 429)", retry_after=after),
    "500": lambda after: TransientLLMError("scripted server error (HTTP 500)", retry_after=after),
    "503": lambda after: TransientLLMError("scripted overload (HTTP 503)", retry_after=after),
    "timeout": lambda after: LLMTimeout("scripted timeout", retry_after=after),
    "connection": lambda after: TransientLLMError("scripted connection error", retry_after=after),
}


@dataclass(frozen=True)
class ScriptedReply:
    """One parsed item of a script: a reply `text`, or an `error` to raise."""

    text: str | None = None
    error: str | None = None
    usage: Usage | None = None
    delay: float = 0.0
    expect: str | None = None
    retry_after: float | None = None


class ScriptedProvider:
    """Replays the replies of a script file in order (see the module doc for the format)."""

    name = "scripted"
    supports_schema = False

    def __init__(self, path: str | Path, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.path = Path(path)
        self.model = self.path.stem
        self.replies = load_script(self.path)
        self.requests: list[Request] = []
        self._sleep = sleep
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        return max(0, len(self.replies) - len(self.requests))

    def complete(self, request: Request) -> Completion:
        with self._lock:
            index = len(self.requests)
            self.requests.append(request)
        if index >= len(self.replies):
            raise LLMError(
                f"scripted replies exhausted after {len(self.replies)} replies "
                f"(file {self.path}): add more replies",
                hint=f"append items to {self.path}; request {index + 1} asked for one more",
            )
        reply = self.replies[index]
        if reply.delay > 0:
            self._sleep(reply.delay)
        self._check_expect(reply, request, index)
        if reply.error is not None:
            raise _ERRORS[reply.error](reply.retry_after)
        text = reply.text or ""
        return Completion(text, reply.usage or _rough_usage(request, text), self.name, self.model)

    def _check_expect(self, reply: ScriptedReply, request: Request, index: int) -> None:
        if reply.expect is None:
            return
        last = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
        if reply.expect not in last:
            raise LLMError(
                f"scripted reply {index} expects the last user message to contain "
                f"{reply.expect!r}, but it reads: {_preview(last)}",
                path=str(self.path),
                hint="the script and the prompts are out of step: fix the order or the expect:",
            )


# ---------------------------------------------------------------------------- loading
def load_script(path: Path) -> list[ScriptedReply]:
    """Parse and check a script file; `LLMError` naming the file and item when it is bad."""
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as error:
        raise LLMError(
            f"cannot read the scripted replies: {error.strerror or error}",
            path=str(path),
            hint="pass scripted:PATH with the path of a YAML or JSON list of replies",
        ) from error
    data = _parse(raw, path)
    if not isinstance(data, list):
        raise LLMError(
            f"expected a list of replies, got {type(data).__name__}",
            path=str(path),
            hint='write one item per reply, e.g. `- text: "..."` or `- json: {...}`',
        )
    return [_item(entry, i, path) for i, entry in enumerate(data)]


def _parse(raw: str, path: Path) -> Any:
    try:
        return json.loads(raw) if path.suffix.lower() == ".json" else yaml.safe_load(raw)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} col {error.colno}: {error.msg}"
        raise _bad_file(path, f"is not valid JSON ({where})") from error
    except yaml.YAMLError as error:
        raise _bad_file(path, f"is not valid YAML ({' '.join(str(error).split())})") from error


def _bad_file(path: Path, what: str) -> LLMError:
    return LLMError(f"the script {what}", path=str(path), hint="fix the file's syntax")


def _item(entry: Any, index: int, path: Path) -> ScriptedReply:
    if isinstance(entry, str):
        return ScriptedReply(text=entry)
    if not isinstance(entry, dict):
        raise _bad_item(path, index, f"is a {type(entry).__name__}, not a string or a mapping")
    unknown = sorted(set(map(str, entry)) - {*_CONTENT_KEYS, *_OPTIONAL_KEYS})
    if unknown:
        raise _bad_item(path, index, f"has unknown key(s) {', '.join(unknown)}")
    given = [k for k in _CONTENT_KEYS if k in entry]
    if len(given) != 1:
        found = f"has {' and '.join(given)}" if given else "has none of them"
        raise _bad_item(path, index, f"needs exactly one of text, json, error; it {found}")
    return ScriptedReply(
        text=_text(entry, index, path),
        error=_error(entry, index, path),
        usage=_usage(entry.get("usage"), index, path),
        delay=_seconds(entry, "delay", index, path) or 0.0,
        expect=None if entry.get("expect") is None else str(entry["expect"]),
        retry_after=_seconds(entry, "retry_after", index, path),
    )


def _text(entry: dict[str, Any], index: int, path: Path) -> str | None:
    if "json" in entry:
        return json.dumps(entry["json"], ensure_ascii=False)
    if "text" in entry and not isinstance(entry["text"], str):
        value = entry["text"]
        what = f"text: {value!r} is a {type(value).__name__}, not a string (quote it in YAML)"
        raise _bad_item(path, index, what)
    return entry.get("text")


def _error(entry: dict[str, Any], index: int, path: Path) -> str | None:
    if "error" not in entry:
        return None
    kind = str(entry["error"]).lower()
    if kind not in _ERRORS:
        raise _bad_item(
            path, index, f"error: {entry['error']!r} is not one of {', '.join(_ERRORS)}"
        )
    return kind


def _usage(value: Any, index: int, path: Path) -> Usage | None:
    if value is None:
        return None
    keys = {"prompt_tokens", "completion_tokens"}
    ok = isinstance(value, dict) and set(value) <= keys
    if not ok or not all(isinstance(v, int) and v >= 0 for v in value.values()):
        raise _bad_item(path, index, "usage: must map prompt_tokens/completion_tokens to counts")
    return Usage(value.get("prompt_tokens", 0), value.get("completion_tokens", 0))


def _seconds(entry: dict[str, Any], key: str, index: int, path: Path) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise _bad_item(path, index, f"{key}: {value!r} is not a number of seconds >= 0")
    return float(value)


def _bad_item(path: Path, index: int, what: str) -> LLMError:
    return LLMError(
        f"item {index} {what}",
        path=str(path),
        hint="each item is a string, or a mapping with one of text:, json:, error: "
        "and optionally usage:, delay:, expect:, retry_after:",
    )


def _rough_usage(request: Request, text: str) -> Usage:
    prompt = sum(len(m.content) for m in request.messages)
    return Usage(prompt // 4, len(text) // 4)


def _preview(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= width else flat[:width] + "...")
