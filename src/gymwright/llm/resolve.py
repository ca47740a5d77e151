"""From a model name (`openai:gpt-4o`, `ollama:qwen3`, `anthropic:...`, `scripted:FILE`) to a
provider, and which model name is in force (`--model`, else `GYMWRIGHT_MODEL`, else none:
the offline designer, the best designer measured).

Providers are looked up in `PROVIDERS`, a dict from scheme to factory: a new scheme is one
entry. Factories import their client package only when called, so that choosing the offline
designer never pays for importing `openai` or `anthropic`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any, Protocol

from gymwright.llm.base import LLMError, Provider, ProviderUnavailable

OFFLINE = "offline"
MODEL_ENV = "GYMWRIGHT_MODEL"
DEFAULT_SOURCE = "default (offline designer)"


class ProviderFactory(Protocol):
    """Builds a provider for the part of the name after `scheme:`."""

    def __call__(
        self, model: str, *, base_url: str | None, api_key: str | None, timeout: float
    ) -> Provider: ...


def client_module(module: str, package: str) -> Any:
    """Import a provider module whose client package (`openai`, `anthropic`) is an extra; a
    clear ProviderUnavailable naming the extra when it is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if e.name != package:
            raise
        raise ProviderUnavailable(f"the `{package}` client package is not installed",
                                  hint=f"pip install 'gymwright[{package}]' (or 'gymwright[models]' for every client)") from None


def _openai(model: str, *, base_url: str | None, api_key: str | None, timeout: float) -> Provider:
    provider = client_module("gymwright.llm.openai_provider", "openai")
    return provider.OpenAIProvider(model, base_url=base_url, api_key=api_key, timeout=timeout)


def _ollama(model: str, *, base_url: str | None, api_key: str | None, timeout: float) -> Provider:
    provider = client_module("gymwright.llm.openai_provider", "openai")
    return provider.ollama_provider(model, base_url=base_url, api_key=api_key, timeout=timeout)


def _anthropic(
    model: str, *, base_url: str | None, api_key: str | None, timeout: float
) -> Provider:
    provider = client_module("gymwright.llm.anthropic_provider", "anthropic")
    return provider.AnthropicProvider(model, base_url=base_url, api_key=api_key, timeout=timeout)


def _scripted(model: str, *, base_url: str | None, api_key: str | None, timeout: float) -> Provider:
    from gymwright.llm.scripted import ScriptedProvider

    return ScriptedProvider(model)


def _local(model: str, *, base_url: str | None, api_key: str | None, timeout: float) -> Provider:
    from gymwright.llm.local_provider import LocalProvider

    return LocalProvider(model, timeout=max(timeout, 600.0))


def _hf(model: str, *, base_url: str | None, api_key: str | None, timeout: float) -> Provider:
    from gymwright.llm.transformers_provider import TransformersProvider

    return TransformersProvider(model)


PROVIDERS: dict[str, ProviderFactory] = {
    "openai": _openai,  # api.openai.com, or any OpenAI-compatible server via --base-url
    "ollama": _ollama,
    "anthropic": _anthropic,
    "scripted": _scripted,  # replies replayed from a file: tests and demos
    "local": _local,  # a GGUF model served by llama.cpp on this machine (gymwright[local])
    "hf": _hf,  # a chat model run in this process by transformers (gymwright[lm])
}


def provider_from_name(
    name: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 120.0,
) -> Provider:
    """The provider for `scheme:model`; `LLMError` naming the known schemes otherwise."""
    scheme, sep, model = name.strip().partition(":")
    factory = PROVIDERS.get(scheme.lower()) if sep else None
    if factory is None:
        what = f"unknown provider {scheme!r}" if sep else "no provider scheme"
        raise LLMError(
            f"model {name!r}: {what}",
            hint=f"write SCHEME:MODEL with SCHEME one of {', '.join(PROVIDERS)} "
            f"(e.g. openai:gpt-4o, ollama:qwen3), or {OFFLINE} for the offline designer",
        )
    if not model.strip():
        raise LLMError(
            f"model {name!r} names no model after {scheme}:",
            hint=f"write {scheme}:MODEL",
        )
    return factory(model.strip(), base_url=base_url, api_key=api_key, timeout=timeout)


def choose_model(
    cli_model: str | None, environ: Mapping[str, str] = os.environ
) -> tuple[str | None, str]:
    """(model name, or None for the offline designer; where the choice came from):
    `--model` beats `GYMWRIGHT_MODEL`, which beats the default, the offline designer; `offline`
    means None. The default is the designer that scores best on benchmarks/design_quality.py
    (benchmarks/README.md, "Design-quality benchmark"): the offline designer picked the right template for 29 of 30 library
    tasks and got every stated param right on 18, the local Qwen2.5-Coder 1.5B 22 and 2, the
    0.5B 11 and 1, at 20-40 s a task instead of under 1 s; a local model runs only when named
    (`--model local:qwen2.5-coder-1.5b`)."""
    for value, source in ((cli_model, "--model"), (environ.get(MODEL_ENV), MODEL_ENV)):
        if value and value.strip():
            value = value.strip()
            return (None if value.lower() == OFFLINE else value), source
    return None, DEFAULT_SOURCE
