"""The `LLM` client: reply cache, budget, retries with backoff — over the scripted provider."""

from __future__ import annotations

from pathlib import Path

import pytest

from gymwright.llm import (
    LLM,
    Budget,
    BudgetExceeded,
    Completion,
    LLMError,
    LLMTimeout,
    MemoryCache,
    Message,
    Request,
    ScriptedProvider,
    TransientLLMError,
    Usage,
)


class Sleeps(list):
    """A `sleep` that records the delays asked for instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def script(tmp_path: Path, text: str, name: str = "replies.yaml") -> ScriptedProvider:
    path = tmp_path / name
    path.write_text(text)
    return ScriptedProvider(path)


def ask(text: str = "design a cake split") -> Request:
    return Request(messages=(Message("user", text),))


def test_label_and_stamps(tmp_path: Path) -> None:
    llm = LLM(script(tmp_path, "- hello\n"))
    assert llm.label == "scripted:replies"
    reply = llm.complete(ask())
    assert (reply.text, reply.provider, reply.model, reply.cached) == (
        "hello",
        "scripted",
        "replies",
        False,
    )


def test_cache_hit_makes_no_call_and_costs_no_budget(tmp_path: Path) -> None:
    provider = script(
        tmp_path, "- text: first\n  usage: {prompt_tokens: 10, completion_tokens: 5}\n"
    )
    cache, budget = MemoryCache(), Budget(max_calls=1)
    llm = LLM(provider, cache=cache, budget=budget)
    first = llm.complete(ask())
    again = llm.complete(ask())  # the script has no second reply: only the cache can answer
    assert (first.text, first.cached) == ("first", False)
    assert (again.text, again.cached) == ("first", True)
    assert len(provider.requests) == 1 and llm.calls == 1 and llm.cache_hits == 1
    assert (budget.calls, budget.tokens) == (1, 15)
    assert llm.usage == Usage(10, 5)
    assert len(cache) == 1


def test_cache_is_shared_across_clients_but_keyed_by_request(tmp_path: Path) -> None:
    cache = MemoryCache()
    LLM(script(tmp_path, "- one\n", "a.yaml"), cache=cache).complete(ask("x"))
    other = script(tmp_path, "- two\n", "a2.yaml")  # a different model name: a different key
    assert LLM(other, cache=cache).complete(ask("x")).text == "two"
    same = script(tmp_path, "- unused\n", "a.yaml")
    assert LLM(same, cache=cache).complete(ask("x")).cached
    assert LLM(same, cache=cache).complete(ask("y")).text == "unused"


def test_budget_exhausted_by_calls(tmp_path: Path) -> None:
    llm = LLM(script(tmp_path, "- a\n- b\n- c\n"), budget=Budget(max_calls=2))
    llm.complete(ask("1"))
    llm.complete(ask("2"))
    with pytest.raises(BudgetExceeded) as caught:
        llm.complete(ask("3"))
    assert str(caught.value).startswith("LLM budget spent: max_calls=2 reached (2 calls made, ")
    assert caught.value.hint == "raise --max-calls/--max-tokens (the budget is per design run)"
    assert caught.value.value == 2
    assert llm.calls == 2


def test_budget_exhausted_by_tokens(tmp_path: Path) -> None:
    usage = "usage: {prompt_tokens: 600, completion_tokens: 500}"
    provider = script(tmp_path, f"- text: a\n  {usage}\n- text: b\n  {usage}\n")
    llm = LLM(provider, budget=Budget(max_calls=30, max_tokens=1000))
    llm.complete(ask())
    with pytest.raises(BudgetExceeded) as caught:
        llm.complete(ask("again"))
    assert caught.value.message == (
        "LLM budget spent: max_tokens=1,000 reached (1 calls made, 1,100 tokens used)"
    )
    assert len(provider.requests) == 1


def test_retries_count_every_try_but_charge_one_call(tmp_path: Path) -> None:
    budget, sleeps = Budget(), Sleeps()
    llm = LLM(
        script(tmp_path, "- error: 429\n- error: 503\n- error: connection\n- ok\n"),
        budget=budget,
        sleep=sleeps,
    )
    assert llm.complete(ask()).text == "ok"
    assert llm.calls == 4 and budget.calls == 1
    assert sleeps == [1.0, 2.0, 4.0]


def test_gives_up_after_retries_with_the_last_error(tmp_path: Path) -> None:
    sleeps = Sleeps()
    llm = LLM(
        script(tmp_path, "- error: 500\n- error: timeout\n- never\n"), retries=1, sleep=sleeps
    )
    with pytest.raises(LLMTimeout) as caught:
        llm.complete(ask())
    assert caught.value.message == "scripted timeout (gave up after 2 tries of scripted:replies)"
    assert isinstance(caught.value.__cause__, LLMTimeout)
    assert llm.calls == 2 and sleeps == [1.0]


def test_final_errors_are_not_retried(tmp_path: Path) -> None:
    llm = LLM(script(tmp_path, "- text: a\n  expect: nowhere\n- b\n"), sleep=Sleeps())
    with pytest.raises(LLMError, match="expects the last user message to contain 'nowhere'"):
        llm.complete(ask())
    assert llm.calls == 1


def test_backoff_honours_retry_after_and_the_cap() -> None:
    llm = LLM(ScriptedProviderStub(), backoff=1.0, max_backoff=10.0)
    plain = TransientLLMError("x")
    assert [llm.backoff_delay(i, plain) for i in range(6)] == [1, 2, 4, 8, 10, 10]
    assert llm.backoff_delay(3, TransientLLMError("x", retry_after=0.5)) == 0.5
    assert llm.backoff_delay(0, TransientLLMError("x", retry_after=300)) == 10.0
    assert llm.backoff_delay(0, TransientLLMError("x", retry_after=0)) == 0.0


def test_retry_after_from_the_script_reaches_sleep(tmp_path: Path) -> None:
    sleeps = Sleeps()
    llm = LLM(script(tmp_path, "- error: 429\n  retry_after: 2.5\n- ok\n"), sleep=sleeps)
    assert llm.complete(ask()).text == "ok"
    assert sleeps == [2.5]


class ScriptedProviderStub:
    name, model, supports_schema = "stub", "m", False

    def complete(self, request: Request) -> Completion:  # pragma: no cover - never called
        raise AssertionError
