"""Real HTTP round trips through the official `openai` and `anthropic` clients, against the
fake servers in `tests/support/fake_openai_server.py` (127.0.0.1 only: no test needs the network)."""

from __future__ import annotations

import json

import pytest

from gymwright.llm import (
    LLM,
    LLMError,
    LLMTimeout,
    Message,
    ProviderUnavailable,
    Request,
    TransientLLMError,
    extract_json,
)
from gymwright.llm.anthropic_provider import AnthropicProvider
from gymwright.llm.openai_provider import OpenAIProvider, ollama_provider
from tests.support.fake_openai_server import LLM_ENV_VARS, FakeAnthropicServer, FakeOpenAIServer

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "rounds": {"type": "integer"}},
    "required": ["name"],
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in LLM_ENV_VARS:
        monkeypatch.delenv(var, raising=False)


def ask(text: str = "split a cake", *, schema: dict | None = None) -> Request:
    return Request(
        messages=(Message("system", "You design environments."), Message("user", text)),
        schema=schema,
        schema_name="env_spec",
    )


class Sleeps(list):
    """A `sleep` that records the delays asked for instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


# ----------------------------------------------------------------------------- openai
def test_openai_plain_text_round_trip() -> None:
    with FakeOpenAIServer(["Hello from the fake."]) as server:
        reply = OpenAIProvider("fake-model", base_url=server.base_url).complete(ask())
    assert reply.text == "Hello from the fake."
    assert (reply.provider, reply.model) == ("openai", "fake-model")
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    body = server.requests[0]
    assert body["model"] == "fake-model"
    assert body["messages"][0] == {"role": "system", "content": "You design environments."}
    assert body["max_tokens"] == 4096 and body["temperature"] == 0.0 and body["seed"] == 0
    assert "response_format" not in body
    assert server.headers[0]["authorization"] == "Bearer no-key-needed"  # local: placeholder


def test_openai_structured_output_sends_json_schema() -> None:
    with FakeOpenAIServer([{"name": "cake", "rounds": 10}]) as server:
        provider = OpenAIProvider("fake-model", base_url=server.base_url, api_key="sk-test")
        reply = provider.complete(ask(schema=SCHEMA))
    assert provider.supports_schema
    assert extract_json(reply.text) == {"name": "cake", "rounds": 10}
    assert server.requests[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "env_spec", "schema": SCHEMA, "strict": False},
    }
    assert server.headers[0]["authorization"] == "Bearer sk-test"


def test_openai_key_and_base_url_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer(["ok"]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
        assert OpenAIProvider("m").complete(ask()).text == "ok"
    assert server.headers[0]["authorization"] == "Bearer sk-env"


def test_openai_429_then_success_is_retried_honouring_retry_after() -> None:
    sleeps = Sleeps()
    with FakeOpenAIServer([{"status": 429, "retry_after": 7}, "done"]) as server:
        llm = LLM(OpenAIProvider("m", base_url=server.base_url), sleep=sleeps)
        reply = llm.complete(ask())
    assert reply.text == "done"
    assert llm.calls == 2 and len(server.requests) == 2
    assert sleeps == [7.0]  # the server's Retry-After, not the default backoff


def test_openai_500_then_success_backs_off() -> None:
    sleeps = Sleeps()
    with FakeOpenAIServer([{"status": 500}, {"status": 503}, "done"]) as server:
        llm = LLM(OpenAIProvider("m", base_url=server.base_url), backoff=0.5, sleep=sleeps)
        assert llm.complete(ask()).text == "done"
    assert llm.calls == 3
    assert sleeps == [0.5, 1.0]


def test_openai_timeout_is_retried_then_raised() -> None:
    slow = {"sleep": 0.8, "reply": "too late"}
    with FakeOpenAIServer([slow, slow]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, timeout=0.25)
        llm = LLM(provider, retries=1, sleep=Sleeps())
        with pytest.raises(LLMTimeout) as caught:
            llm.complete(ask())
    assert llm.calls == 2
    assert caught.value.message == (
        f"openai:m at {server.base_url} sent no reply within 0.25 s"
        " (gave up after 2 tries of openai:m)"
    )


def test_openai_connection_refused_is_transient() -> None:
    with FakeOpenAIServer([]) as server:
        url = server.base_url
    provider = OpenAIProvider("m", base_url=url)  # the server is gone: nothing listens
    with pytest.raises(TransientLLMError, match=r"cannot reach http://127\.0\.0\.1:\d+/v1"):
        provider.complete(ask())


@pytest.mark.parametrize(
    ("status", "hint"),
    [
        (401, "the API key was rejected: check OPENAI_API_KEY"),
        (404, "check the model name and the base URL"),
        (400, "the server refused the request"),
    ],
)
def test_openai_final_errors_are_not_retried(status: int, hint: str) -> None:
    with FakeOpenAIServer([{"status": status, "message": "nope"}]) as server:
        llm = LLM(OpenAIProvider("m", base_url=server.base_url), sleep=Sleeps())
        with pytest.raises(LLMError) as caught:
            llm.complete(ask())
    error = caught.value
    assert not isinstance(error, TransientLLMError)
    assert error.message == f"openai:m at {server.base_url} answered HTTP {status}: nope"
    assert error.hint.startswith(hint)
    assert llm.calls == 1


def test_openai_insufficient_quota_is_final() -> None:
    class QuotaServer(FakeOpenAIServer):
        def error_body(self, message: str, status: int) -> dict:
            return {"error": {"message": message, "type": "x", "code": "insufficient_quota"}}

    with QuotaServer([{"status": 429}]) as server:
        with pytest.raises(LLMError, match="quota is used up") as caught:
            OpenAIProvider("m", base_url=server.base_url).complete(ask())
    assert not isinstance(caught.value, TransientLLMError)


def test_openai_missing_key_for_the_hosted_api() -> None:
    with pytest.raises(ProviderUnavailable) as caught:
        OpenAIProvider("gpt-4o")
    assert str(caught.value) == (
        "OPENAI_API_KEY is not set\n"
        "  hint: export it, or pass --base-url for a local server that needs no key"
    )


def test_openai_missing_key_for_a_remote_server() -> None:
    with pytest.raises(ProviderUnavailable, match="is not on this machine"):
        OpenAIProvider("m", base_url="https://llm.example.org/v1")


def test_hosted_openai_gets_max_completion_tokens() -> None:
    provider = OpenAIProvider("gpt-4o", api_key="sk-test")
    arguments = provider._arguments(ask())
    assert arguments["max_completion_tokens"] == 4096 and "max_tokens" not in arguments


def test_ollama_preset(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = ollama_provider("qwen3")
    assert (provider.name, provider.model) == ("ollama", "qwen3")
    assert provider.base_url == "http://localhost:11434/v1"
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.5")
    assert ollama_provider("qwen3").base_url == "http://10.0.0.5:11434/v1"
    monkeypatch.setenv("OLLAMA_HOST", "https://ollama.lan:8443/")
    assert ollama_provider("qwen3").base_url == "https://ollama.lan:8443/v1"


def test_ollama_round_trip_sends_the_ollama_key() -> None:
    with FakeOpenAIServer(["hi"]) as server:
        reply = ollama_provider("qwen3", base_url=server.base_url).complete(ask())
    assert (reply.text, reply.provider) == ("hi", "ollama")
    assert server.headers[0]["authorization"] == "Bearer ollama"


# -------------------------------------------------------------------------- anthropic
def test_anthropic_text_round_trip() -> None:
    with FakeAnthropicServer(["Hello from Claude."]) as server:
        provider = AnthropicProvider("claude-x", base_url=server.base_url, api_key="sk-ant")
        reply = provider.complete(ask())
    assert reply.text == "Hello from Claude."
    assert (reply.provider, reply.model) == ("anthropic", "claude-x")
    assert reply.usage.completion_tokens > 0
    body = server.requests[0]
    assert body["system"] == "You design environments."
    assert body["messages"] == [{"role": "user", "content": "split a cake"}]
    assert "tools" not in body


def test_anthropic_structured_output_through_a_forced_tool() -> None:
    with FakeAnthropicServer([{"name": "cake", "rounds": 3}]) as server:
        provider = AnthropicProvider("claude-x", base_url=server.base_url, api_key="sk-ant")
        reply = provider.complete(ask(schema=SCHEMA))
    assert json.loads(reply.text) == {"name": "cake", "rounds": 3}
    body = server.requests[0]
    assert body["tools"][0]["name"] == "env_spec"
    assert body["tools"][0]["input_schema"] == SCHEMA
    assert body["tool_choice"] == {"type": "tool", "name": "env_spec"}


def test_anthropic_non_object_schema_is_wrapped_and_unwrapped() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    with FakeAnthropicServer([{"value": [1, 2, 3]}]) as server:
        provider = AnthropicProvider("claude-x", base_url=server.base_url, api_key="sk-ant")
        reply = provider.complete(ask(schema=schema))
    assert json.loads(reply.text) == [1, 2, 3]
    assert server.requests[0]["tools"][0]["input_schema"]["properties"]["value"] == schema


def test_anthropic_overloaded_then_success() -> None:
    sleeps = Sleeps()
    with FakeAnthropicServer([{"status": 529}, {"status": 429, "retry_after": 3}, "ok"]) as server:
        provider = AnthropicProvider("claude-x", base_url=server.base_url, api_key="sk-ant")
        llm = LLM(provider, backoff=0.25, sleep=sleeps)
        assert llm.complete(ask()).text == "ok"
    assert llm.calls == 3 and sleeps == [0.25, 3.0]


def test_anthropic_auth_error_is_final() -> None:
    with FakeAnthropicServer([{"status": 401, "message": "invalid x-api-key"}]) as server:
        provider = AnthropicProvider("claude-x", base_url=server.base_url, api_key="bad")
        with pytest.raises(LLMError) as caught:
            provider.complete(ask())
    assert caught.value.message.endswith("answered HTTP 401: invalid x-api-key")
    assert "ANTHROPIC_API_KEY" in caught.value.hint


def test_anthropic_timeout() -> None:
    with FakeAnthropicServer([{"sleep": 0.8}]) as server:
        provider = AnthropicProvider(
            "claude-x", base_url=server.base_url, api_key="k", timeout=0.25
        )
        with pytest.raises(LLMTimeout, match="sent no reply within 0.25 s"):
            provider.complete(ask())


def test_anthropic_missing_key() -> None:
    with pytest.raises(ProviderUnavailable) as caught:
        AnthropicProvider("claude-x")
    assert caught.value.message == "ANTHROPIC_API_KEY is not set"
    assert caught.value.hint.startswith("export it, or choose another --model")
