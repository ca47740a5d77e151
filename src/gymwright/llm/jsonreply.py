"""Find the JSON value in a model's reply, and ask for one in the prompt.

Models that are not held to a schema by the server wrap their JSON in prose or Markdown
fences. `extract_json` tries, in order: the whole reply; each fenced block (```json first);
each balanced `{...}` or `[...]` in the text. When none parses, `JSONReplyError` says why —
no JSON at all, or the syntax error's line and column in the reply with the offending line
quoted — in words fit for both a person and a repair prompt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gymwright.llm.base import LLMError

JSON_HINT = "reply with one JSON object only: no prose around it, no comments, no trailing commas"
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_CLOSERS = {"{": "}", "[": "]"}


class JSONReplyError(LLMError):
    """A reply holds no parseable JSON. `line`/`col` (1-based) locate a syntax error."""

    def __init__(
        self, message: str, *, line: int | None = None, col: int | None = None, snippet: str = ""
    ) -> None:
        self.line = line
        self.col = col
        self.snippet = snippet
        super().__init__(message, hint=JSON_HINT)


@dataclass(frozen=True)
class _Candidate:
    start: int  # offset of the candidate in the reply
    text: str
    closed: bool = True  # False when brackets never balanced (a reply cut off mid-way)


def extract_json(text: str) -> Any:
    """The JSON value in a model reply; `JSONReplyError` when there is none that parses."""
    if not text.strip():
        raise JSONReplyError("the reply is empty: no JSON found")
    failures: list[tuple[_Candidate, json.JSONDecodeError]] = []
    for candidate in _candidates(text):
        try:
            return json.loads(candidate.text)
        except json.JSONDecodeError as error:
            failures.append((candidate, error))
        except RecursionError:  # brackets nested past Python's limit: no spec is that deep
            raise JSONReplyError("the reply nests brackets too deeply to be a spec (thousands of levels)") from None
    structured = [f for f in failures if f[0].text.lstrip()[:1] in _CLOSERS]
    if not structured:
        raise JSONReplyError(f"no JSON found in the reply: {_preview(text)}")
    candidate, error = max(structured, key=lambda f: (len(f[0].text.strip()), not f[0].closed))
    raise _syntax_error(text, candidate, error)


def schema_instruction(schema: Mapping[str, Any], name: str = "reply") -> str:
    """Prompt text asking for a JSON reply that matches `schema` (for providers that do not
    enforce structured output)."""
    body = json.dumps(schema, indent=2, ensure_ascii=False)
    return (
        f"Reply with one JSON value (the `{name}`) and nothing else: no prose before or after "
        "it, no comments, no trailing commas. It must match this JSON Schema:\n"
        f"```json\n{body}\n```"
    )


# ------------------------------------------------------------------------- candidates
def _candidates(text: str) -> Iterator[_Candidate]:
    """Places where the JSON may be, most likely first."""
    yield _Candidate(len(text) - len(text.lstrip()), text.strip())
    fences = list(_FENCE.finditer(text))
    fences.sort(key=lambda m: m.group(1).lower() != "json")  # ```json blocks first
    for fence in fences:
        if fence.group(2).strip():
            yield _Candidate(fence.start(2), fence.group(2))
    yield from _balanced(text)


def _balanced(text: str) -> Iterator[_Candidate]:
    """Each `{...}`/`[...]` region, left to right, skipping past the ones already given."""
    pos = 0
    while True:
        start = _next_opener(text, pos)
        if start < 0:
            return
        end = _match_close(text, start)
        if end < 0:
            yield _Candidate(start, text[start:], closed=False)
            return
        yield _Candidate(start, text[start : end + 1])
        pos = end + 1


def _next_opener(text: str, pos: int) -> int:
    found = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
    return min(found) if found else -1


def _match_close(text: str, start: int) -> int:
    """Index of the bracket that closes (or mismatches) `text[start]`, minding JSON strings;
    -1 when the text ends first."""
    stack: list[str] = []
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in _CLOSERS:
            stack.append(_CLOSERS[ch])
        elif ch in "}]" and (stack.pop() != ch or not stack):
            return i
    return -1


# ---------------------------------------------------------------------------- errors
def _syntax_error(text: str, candidate: _Candidate, error: json.JSONDecodeError) -> JSONReplyError:
    offset = candidate.start + error.pos
    line = text.count("\n", 0, offset) + 1
    line_start = text.rfind("\n", 0, offset) + 1
    col = offset - line_start + 1
    source = text[line_start:].split("\n", 1)[0]
    snippet, caret = _window(source, col - 1)
    cause = _likely_cause(text, offset, candidate)
    message = (
        f"JSON syntax error at line {line} col {col}: {error.msg}{cause}\n"
        f"    {snippet}\n    {' ' * caret}^"
    )
    return JSONReplyError(message, line=line, col=col, snippet=snippet)


def _likely_cause(text: str, offset: int, candidate: _Candidate) -> str:
    if not candidate.closed:
        return " (its brackets never close: the reply may have been cut off at max_tokens)"
    before = text[:offset].rstrip()
    if text[offset : offset + 1] in ("}", "]") and before.endswith(","):
        return " (a trailing comma before it)"
    return ""


def _window(source: str, index: int, width: int = 80) -> tuple[str, int]:
    """At most `width` characters of `source` around `index`, and the index within them."""
    left = max(0, min(index - width // 2, len(source) - width))
    prefix = "..." if left else ""
    tail = "..." if left + width < len(source) else ""
    return f"{prefix}{source[left : left + width]}{tail}", len(prefix) + index - left


def _preview(text: str, width: int = 120) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= width else flat[:width] + "...")
