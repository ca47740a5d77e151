"""The one small interface every language-model provider implements.

A `Request` (messages, an optional JSON schema for structured output, sampling params) goes
in; a `Completion` (the reply text and its token usage) comes out. Providers do only that:
retries, budgets and the reply cache live in `gymwright.llm.client.LLM`, which wraps any
provider, so a new provider is one small class.

Providers signal failures with the errors below: `TransientLLMError` (429, 5xx, connection
reset, timeout) is retried with backoff by the client; every other `LLMError` is final.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from gymwright.errors import GymwrightError

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}


@dataclass(frozen=True)
class Request:
    """What to ask. `schema` (a JSON Schema object) asks for a reply that is JSON matching it:
    providers that support structured output pass it on; the others get it as an instruction
    and the caller extracts and validates the JSON (`gymwright.llm.jsonreply`)."""

    messages: tuple[Message, ...]
    schema: dict[str, Any] | None = None
    schema_name: str = "reply"
    temperature: float = 0.0
    max_tokens: int = 4096
    seed: int | None = 0

    def cache_key(self, provider: str, model: str) -> str:
        """sha256 of (provider, model, messages, sampling params, schema), canonical JSON."""
        body = {
            "provider": provider,
            "model": model,
            "messages": [m.to_dict() for m in self.messages],
            "schema": self.schema,
            "schema_name": self.schema_name,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage = field(default_factory=Usage)
    provider: str = ""
    model: str = ""
    cached: bool = False  # True when the client served it from the reply cache (no call made)
    truncated: bool = False  # the server stopped the reply at `Request.max_tokens` (cut off)


@runtime_checkable
class Provider(Protocol):
    """A model behind some API. `name` is the scheme (`openai`, `anthropic`, `scripted`, ...),
    `model` the model id; `supports_schema` says whether `Request.schema` is enforced by the
    server (constrained decoding / structured outputs) rather than only asked for."""

    name: str
    model: str
    supports_schema: bool

    def complete(self, request: Request) -> Completion: ...


# ----------------------------------------------------------------------------------- errors
class LLMError(GymwrightError):
    """A model call failed for good (bad key, unknown model, refused request, ...)."""


class ProviderUnavailable(LLMError):
    """The provider cannot be used here: missing API key, package or server."""


class TransientLLMError(LLMError):
    """Worth retrying: rate limit (429), server error (5xx), connection error, timeout.
    `retry_after` is the server's hint in seconds, when it gave one."""

    def __init__(self, message: str, *, retry_after: float | None = None, hint: str = "") -> None:
        self.retry_after = retry_after
        super().__init__(message, hint=hint)


class LLMTimeout(TransientLLMError):
    """The call did not finish within the provider's timeout."""


class BudgetExceeded(LLMError):
    """The per-design budget (calls or tokens) is spent; the design stops here."""


# ------------------------------------------------------------------ HTTP errors, shared
TRANSIENT_STATUSES = frozenset({408, 409, 425, 429, 529})  # plus every 5xx

_STATUS_HINTS: dict[int, str] = {
    400: "the server refused the request: check that the model supports what was sent "
    "(structured output, temperature, seed) and that the prompt fits its context",
    401: "the API key was rejected: check {key_var}; it may be missing, mistyped or revoked",
    403: "the API key may not use this model: check the account's access, or pick another model",
    404: "check the model name and the base URL (an OpenAI-compatible server's URL usually "
    "ends in /v1; for ollama, `ollama pull MODEL` first)",
    413: "the prompt is too long for this server: use a model with a larger context",
    422: "the server could not process the request: check that the model supports structured "
    "output, or use a different model",
}
_TRANSIENT_HINT = "retried automatically; if it persists, wait a while or lower the request rate"


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (numeric form), else None."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            seconds = float(raw) / scale
        except ValueError:
            continue
        if seconds >= 0 and seconds != float("inf"):
            return seconds
    return None


def status_error(
    status: int,
    detail: str,
    *,
    where: str,
    retry_after: float | None = None,
    key_var: str = "the API key",
) -> LLMError:
    """The error for an HTTP error status from a provider API: 408, 409, 425, 429, 529 and
    every 5xx are transient (retried by the client), the rest are final. `where` names the
    model and server (`openai:gpt-4o at https://...`), `detail` is the server's message."""
    detail = " ".join(detail.split())[:300]
    message = f"{where} answered HTTP {status}: {detail}" if detail else f"{where}: HTTP {status}"
    if status in TRANSIENT_STATUSES or status >= 500:
        return TransientLLMError(message, retry_after=retry_after, hint=_TRANSIENT_HINT)
    hint = _STATUS_HINTS.get(status, "see the server's message above").format(key_var=key_var)
    return LLMError(message, hint=hint)
