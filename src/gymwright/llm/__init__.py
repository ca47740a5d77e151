"""Language models for gymwright: providers behind one small interface, and the client that
adds a reply cache, a budget and retries.

    from gymwright.llm import LLM, Budget, provider_from_name
    llm = LLM(provider_from_name("ollama:qwen3"), budget=Budget(max_calls=20))

`OpenAIProvider` and `AnthropicProvider` are imported on first use: importing this package
does not import the `openai` or `anthropic` clients.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from gymwright.llm.base import (
    BudgetExceeded,
    Completion,
    LLMError,
    LLMTimeout,
    Message,
    Provider,
    ProviderUnavailable,
    Request,
    TransientLLMError,
    Usage,
)
from gymwright.llm.client import LLM, Budget, MemoryCache, ReplyCache
from gymwright.llm.jsonreply import JSONReplyError, extract_json, schema_instruction
from gymwright.llm.resolve import PROVIDERS, choose_model, provider_from_name
from gymwright.llm.scripted import ScriptedProvider

if TYPE_CHECKING:
    from gymwright.llm.anthropic_provider import AnthropicProvider
    from gymwright.llm.openai_provider import OpenAIProvider, ollama_provider

_LAZY = {
    "OpenAIProvider": "gymwright.llm.openai_provider",
    "ollama_provider": "gymwright.llm.openai_provider",
    "AnthropicProvider": "gymwright.llm.anthropic_provider",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    # interface
    "Message",
    "Request",
    "Completion",
    "Usage",
    "Provider",
    # client
    "LLM",
    "Budget",
    "ReplyCache",
    "MemoryCache",
    # choosing a provider
    "provider_from_name",
    "choose_model",
    "PROVIDERS",
    # providers
    "OpenAIProvider",
    "ollama_provider",
    "AnthropicProvider",
    "ScriptedProvider",
    # JSON replies
    "extract_json",
    "schema_instruction",
    # errors
    "LLMError",
    "ProviderUnavailable",
    "TransientLLMError",
    "LLMTimeout",
    "BudgetExceeded",
    "JSONReplyError",
]
