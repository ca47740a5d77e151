"""Anthropic's Messages API, through the official `anthropic` client (its retries off).

System messages go to the `system` parameter. A request with a schema forces one tool call
whose `input_schema` is the schema, and the tool's input comes back as the reply's JSON text:
the server holds the reply to the schema (`supports_schema`). Tool inputs are objects, so a
schema of another type is wrapped as `{"value": ...}` and unwrapped again.

The Messages API in anthropic 2.x takes no `temperature`; `Request.temperature` and `seed` are
not sent (the reply cache is what makes a design run repeatable).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

import anthropic

from gymwright.llm.base import (
    Completion,
    LLMError,
    LLMTimeout,
    Message,
    ProviderUnavailable,
    Request,
    TransientLLMError,
    Usage,
    parse_retry_after,
    status_error,
)

ANTHROPIC_URL = "https://api.anthropic.com"
_WRAP_KEY = "value"


class AnthropicProvider:
    """A Claude model behind the Messages API."""

    name = "anthropic"
    supports_schema = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.base_url = (base_url or environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_URL).rstrip("/")
        key = api_key or environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ProviderUnavailable(
                "ANTHROPIC_API_KEY is not set",
                hint="export it, or choose another --model (openai:MODEL, ollama:MODEL, offline)",
            )
        self._client = anthropic.Anthropic(
            api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0
        )

    @property
    def where(self) -> str:
        return f"{self.name}:{self.model} at {self.base_url}"

    def complete(self, request: Request) -> Completion:
        try:
            response = self._client.messages.create(**self._arguments(request))
        except anthropic.AnthropicError as error:
            raise self._mapped(error) from error
        return Completion(
            text=self._text(response, request),
            usage=Usage(response.usage.input_tokens or 0, response.usage.output_tokens or 0),
            provider=self.name,
            model=self.model,
            truncated=response.stop_reason == "max_tokens",
        )

    # ------------------------------------------------------------------------- request
    def _arguments(self, request: Request) -> dict[str, Any]:
        system, messages = split_system(request.messages)
        arguments: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": messages,
        }
        if system:
            arguments["system"] = system
        if request.schema is not None:
            name = tool_name(request.schema_name)
            arguments["tools"] = [
                {
                    "name": name,
                    "description": "Give the reply as this tool's input.",
                    "input_schema": object_schema(request.schema),
                }
            ]
            arguments["tool_choice"] = {"type": "tool", "name": name}
        return arguments

    # ------------------------------------------------------------------------ response
    def _text(self, response: Any, request: Request) -> str:
        if response.stop_reason == "refusal":
            raise LLMError(f"{self.where} refused the request", hint="rephrase the task")
        if request.schema is not None:
            for block in response.content:
                if block.type == "tool_use":
                    return json.dumps(unwrap(request.schema, block.input), ensure_ascii=False)
            if response.stop_reason == "max_tokens":
                raise LLMError(
                    f"{self.where} stopped at max_tokens={request.max_tokens} before its reply",
                    hint="raise max_tokens, or ask for a smaller reply",
                )
        return "".join(block.text for block in response.content if block.type == "text")

    # -------------------------------------------------------------------------- errors
    def _mapped(self, error: anthropic.AnthropicError) -> LLMError:
        for kind, convert in _ERRORS:
            if isinstance(error, kind):
                return convert(self, error)
        return LLMError(f"{self.where} failed: {error}", hint="see the message above")


def split_system(messages: tuple[Message, ...]) -> tuple[str, list[dict[str, str]]]:
    """System text (joined) and the other messages, consecutive same-role ones merged."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    turns: list[dict[str, str]] = []
    for message in messages:
        if message.role == "system":
            continue
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"] += "\n\n" + message.content
        else:
            turns.append(message.to_dict())
    return system, turns


def tool_name(schema_name: str) -> str:
    """A valid tool name (letters, digits, `_`, `-`; at most 64) for `schema_name`."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", schema_name)[:64] or "reply"


def object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` itself when it describes an object, else an object holding it as `value`."""
    if schema.get("type") == "object":
        return schema
    inner = {k: v for k, v in schema.items() if k != "$defs"}
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {_WRAP_KEY: inner},
        "required": [_WRAP_KEY],
    }
    if "$defs" in schema:
        wrapped["$defs"] = schema["$defs"]
    return wrapped


def unwrap(schema: dict[str, Any], tool_input: Any) -> Any:
    """The reply value from a tool input (undoing `object_schema`'s wrapping)."""
    if schema.get("type") == "object" or not isinstance(tool_input, dict):
        return tool_input
    return tool_input.get(_WRAP_KEY, tool_input)


def _timeout(provider: AnthropicProvider, error: Any) -> LLMError:
    return LLMTimeout(
        f"{provider.where} sent no reply within {provider.timeout:g} s",
        hint="raise the timeout, or ask for a shorter reply",
    )


def _connection(provider: AnthropicProvider, error: Any) -> LLMError:
    cause = error.__cause__ or error
    return TransientLLMError(
        f"cannot reach {provider.base_url}: {cause}",
        hint="check the network, or ANTHROPIC_BASE_URL / --base-url",
    )


def _status(provider: AnthropicProvider, error: Any) -> LLMError:
    return status_error(
        error.status_code,
        getattr(error, "api_message", None) or getattr(error, "message", "") or str(error),
        where=provider.where,
        retry_after=parse_retry_after(error.response.headers),
        key_var="ANTHROPIC_API_KEY",
    )


_ERRORS: tuple[tuple[type[Exception], Callable[[AnthropicProvider, Any], LLMError]], ...] = (
    (anthropic.APITimeoutError, _timeout),  # before APIConnectionError, its base class
    (anthropic.APIConnectionError, _connection),
    (anthropic.APIStatusError, _status),
)
