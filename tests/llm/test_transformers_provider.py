"""`hf:MODEL`: a chat model in this process (transformers). The fast tests need no model; the slow
one loads SmolLM2-135M from the local GGUF (about 15 s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gymwright.llm.base import Message, ProviderUnavailable, Request
from gymwright.llm.resolve import provider_from_name
from gymwright.llm.transformers_provider import TransformersProvider, model_source, pick_device


def test_hf_names_resolve_to_a_lazy_provider() -> None:
    provider = provider_from_name("hf:smollm2-135m")
    assert isinstance(provider, TransformersProvider)
    assert (provider.name, provider.model, provider.supports_schema) == ("hf", "smollm2-135m", False)
    assert provider._lm is None  # nothing loads before the first request


def test_model_sources(tmp_path: Path) -> None:
    assert model_source("Qwen/Qwen3-4B") == ("Qwen/Qwen3-4B", {"local_files_only": True})  # offline: the HF cache
    (tmp_path / "config.json").write_text("{}")
    assert model_source(str(tmp_path)) == (str(tmp_path), {})
    with pytest.raises(ProviderUnavailable, match="no config.json"):
        model_source(str(tmp_path.parent))
    with pytest.raises(ProviderUnavailable, match="neither a known local model") as e:
        model_source("no-such-model")
    assert "smollm2-135m" in e.value.hint


def test_devices() -> None:
    torch = pytest.importorskip("torch")
    assert pick_device("cpu") == "cpu"
    assert pick_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ProviderUnavailable, match="unknown device"):
        pick_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ProviderUnavailable, match="no CUDA GPU"):
            pick_device("cuda")


@pytest.mark.slow
def test_smollm2_answers_alone_and_in_a_batch_alike() -> None:
    provider = TransformersProvider("smollm2-135m", device="cpu")
    asks = [Request((Message("system", "Reply with one word: stag or hare."), Message("user", f"Round {i}. Your choice?")),
                    temperature=0.0, max_tokens=6) for i in range(3)]
    alone = [provider.complete(r) for r in asks]
    batch = provider.complete_many(asks)
    assert [c.text for c in batch] == [c.text for c in alone]  # left padding changes no greedy reply
    assert all(c.text and c.provider == "hf" and c.model == "smollm2-135m" for c in batch)
    assert all(c.usage.prompt_tokens > 10 and 1 <= c.usage.completion_tokens <= 6 for c in batch)
    assert all(c.truncated == (c.usage.completion_tokens == 6) for c in batch)
    assert provider.lm.parameters == 134_515_008
