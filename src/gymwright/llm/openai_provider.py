"""OpenAI and every OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio, ...).

Calls go through the official `openai` client with its own retries off (`max_retries=0`):
`gymwright.llm.client.LLM` retries, so that one policy (and one count of calls) holds for
every provider. The base URL comes from the argument, else `OPENAI_BASE_URL`; the key from the
argument, else `OPENAI_API_KEY` — a server on this machine gets a placeholder key when none is
set, since local servers rarely check it. `ollama:MODEL` is this provider pointed at Ollama.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import openai

from gymwright.llm.base import (
    Completion,
    LLMError,
    LLMTimeout,
    ProviderUnavailable,
    Request,
    TransientLLMError,
    Usage,
    parse_retry_after,
    status_error,
)

OPENAI_URL = "https://api.openai.com/v1"
OLLAMA_URL = "http://localhost:11434"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})
PLACEHOLDER_KEY = "no-key-needed"


class OpenAIProvider:
    """A model behind the OpenAI chat-completions API. `name` is the scheme it was chosen by
    (`openai`, or `ollama` for the Ollama preset)."""

    supports_schema = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        name: str = "openai",
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        self.name = name
        self.model = model
        self.timeout = timeout
        self.base_url = (base_url or environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")
        key = api_key or environ.get("OPENAI_API_KEY") or self._local_key()
        self._client = openai.OpenAI(
            api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0
        )

    @property
    def where(self) -> str:
        return f"{self.name}:{self.model} at {self.base_url}"

    def complete(self, request: Request) -> Completion:
        try:
            response = self._client.chat.completions.create(**self._arguments(request))
        except openai.OpenAIError as error:
            raise self._mapped(error) from error
        return self._completion(response)

    # ------------------------------------------------------------------------- request
    def _arguments(self, request: Request) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_dict() for m in request.messages],
            "temperature": request.temperature,
            # api.openai.com's newer models take only max_completion_tokens; most other
            # OpenAI-compatible servers know only max_tokens.
            self._max_tokens_field: request.max_tokens,
        }
        if request.seed is not None:
            arguments["seed"] = request.seed
        if request.schema is not None:
            arguments["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.schema_name,
                    "schema": request.schema,
                    "strict": False,
                },
            }
        return arguments

    @property
    def _max_tokens_field(self) -> str:
        official = urlsplit(self.base_url).hostname == "api.openai.com"
        return "max_completion_tokens" if official else "max_tokens"

    def _local_key(self) -> str:
        if urlsplit(self.base_url).hostname in LOCAL_HOSTS:
            return PLACEHOLDER_KEY
        if self.base_url == OPENAI_URL:
            raise ProviderUnavailable(
                "OPENAI_API_KEY is not set",
                hint="export it, or pass --base-url for a local server that needs no key",
            )
        raise ProviderUnavailable(
            f"OPENAI_API_KEY is not set, and {self.base_url} is not on this machine",
            hint="export OPENAI_API_KEY (any value, if that server checks no key)",
        )

    # ------------------------------------------------------------------------ response
    def _completion(self, response: Any) -> Completion:
        if not response.choices:
            raise LLMError(f"{self.where} returned no choices", hint="try again, or another model")
        message = response.choices[0].message
        if message.content is None and getattr(message, "refusal", None):
            raise LLMError(
                f"{self.where} refused the request: {message.refusal}",
                hint="rephrase the task, or use another model",
            )
        usage = response.usage
        return Completion(
            text=message.content or "",
            usage=Usage(
                getattr(usage, "prompt_tokens", 0) or 0,
                getattr(usage, "completion_tokens", 0) or 0,
            ),
            provider=self.name,
            model=self.model,
            truncated=getattr(response.choices[0], "finish_reason", None) == "length",
        )

    # -------------------------------------------------------------------------- errors
    def _mapped(self, error: openai.OpenAIError) -> LLMError:
        for kind, convert in _ERRORS:
            if isinstance(error, kind):
                return convert(self, error)
        return LLMError(f"{self.where} failed: {error}", hint="see the message above")


def _timeout(provider: OpenAIProvider, error: Any) -> LLMError:
    return LLMTimeout(
        f"{provider.where} sent no reply within {provider.timeout:g} s",
        hint="raise the timeout, or use a faster model or server",
    )


def _connection(provider: OpenAIProvider, error: Any) -> LLMError:
    cause = error.__cause__ or error
    return TransientLLMError(
        f"cannot reach {provider.base_url}: {cause}",
        hint="is the server running? check --base-url / OPENAI_BASE_URL",
    )


def _status(provider: OpenAIProvider, error: Any) -> LLMError:
    if getattr(error, "code", None) == "insufficient_quota":
        return LLMError(
            f"{provider.where}: the account's quota is used up (429 insufficient_quota)",
            hint="add credit or raise the plan's limits; retrying will not help",
        )
    return status_error(
        error.status_code,
        _server_message(error),
        where=provider.where,
        retry_after=parse_retry_after(error.response.headers),
        key_var="OPENAI_API_KEY",
    )


def _server_message(error: Any) -> str:
    """The server's own error text (without the client's "Error code: 429 - " prefix)."""
    body = getattr(error, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    return str(getattr(error, "message", "") or error)


_ERRORS: tuple[tuple[type[Exception], Callable[[OpenAIProvider, Any], LLMError]], ...] = (
    (openai.APITimeoutError, _timeout),  # before APIConnectionError, its base class
    (openai.APIConnectionError, _connection),
    (openai.APIStatusError, _status),
)


def ollama_provider(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 120.0,
    environ: Mapping[str, str] = os.environ,
) -> OpenAIProvider:
    """`ollama:MODEL`: Ollama's OpenAI-compatible API at `OLLAMA_HOST` (default localhost)."""
    url = base_url or _ollama_url(environ.get("OLLAMA_HOST") or OLLAMA_URL)
    return OpenAIProvider(
        model, base_url=url, api_key=api_key or "ollama", timeout=timeout, name="ollama"
    )


def _ollama_url(host: str) -> str:
    """`OLLAMA_HOST` (`host`, `host:port` or a URL) as the base URL of its /v1 API."""
    if "://" not in host:
        host = f"http://{host}"
    parts = urlsplit(host)
    netloc = parts.netloc if parts.port else f"{parts.netloc}:11434"
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{netloc}{path}/v1"
