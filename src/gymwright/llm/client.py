"""`LLM`: any provider plus the policies every caller wants — reply cache, budget, retries.

    llm = LLM(provider_from_name("openai:gpt-4o"), budget=Budget(max_calls=30), cache=store)
    reply = llm.complete(Request(messages=(Message("user", "..."),)))

Order of work in `complete`: a cache hit is returned at once (no call, no budget spent);
otherwise the budget is checked, the provider is called — transient failures (429, 5xx,
connection, timeout) are retried with exponential backoff that honours the server's
`retry_after` — and the reply's usage is charged to the budget and the reply cached.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from gymwright.llm.base import (
    BudgetExceeded,
    Completion,
    Provider,
    Request,
    TransientLLMError,
    Usage,
)

BUDGET_HINT = "raise --max-calls/--max-tokens (the budget is per design run)"


class ReplyCache(Protocol):
    """Where replies are kept by request hash (the SQLite store implements it)."""

    def get(self, key: str) -> Completion | None: ...

    def put(self, key: str, completion: Completion) -> None: ...


class MemoryCache:
    """A `ReplyCache` in a dict: for tests and one-off scripts."""

    def __init__(self) -> None:
        self.entries: dict[str, Completion] = {}

    def get(self, key: str) -> Completion | None:
        return self.entries.get(key)

    def put(self, key: str, completion: Completion) -> None:
        self.entries[key] = completion

    def __len__(self) -> int:
        return len(self.entries)


@dataclass
class Budget:
    """Limits on one design run's model use. A call is one reply obtained from a provider
    (retries of a failed try are not charged; cache hits cost nothing)."""

    max_calls: int = 30
    max_tokens: int = 400_000
    calls: int = 0
    tokens: int = 0

    def check(self) -> None:
        """Raise `BudgetExceeded` when no further call may be made."""
        if self.calls >= self.max_calls:
            self._exceeded(f"max_calls={self.max_calls} reached", self.max_calls)
        if self.tokens >= self.max_tokens:
            self._exceeded(f"max_tokens={self.max_tokens:,} reached", self.max_tokens)

    def charge(self, usage: Usage) -> None:
        """Count one call and its tokens."""
        self.calls += 1
        self.tokens += usage.total

    @property
    def remaining_calls(self) -> int:
        return max(0, self.max_calls - self.calls)

    @property
    def remaining_tokens(self) -> int:
        return max(0, self.max_tokens - self.tokens)

    def _exceeded(self, what: str, limit: int) -> None:
        used = f"{self.calls} calls made, {self.tokens:,} tokens used"
        raise BudgetExceeded(f"LLM budget spent: {what} ({used})", hint=BUDGET_HINT, value=limit)


class LLM:
    """A provider wrapped with a reply cache, a budget and retries (see the module doc)."""

    def __init__(
        self,
        provider: Provider,
        *,
        budget: Budget | None = None,
        cache: ReplyCache | None = None,
        retries: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.provider = provider
        self.budget = budget
        self.cache = cache
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.sleep = sleep
        self.calls = 0  # provider calls made, failed tries included
        self.cache_hits = 0
        self.usage = Usage()

    @property
    def label(self) -> str:
        """`scheme:model`, e.g. `openai:gpt-4o`."""
        return f"{self.provider.name}:{self.provider.model}"

    @property
    def supports_schema(self) -> bool:
        return self.provider.supports_schema

    def complete(self, request: Request) -> Completion:
        """The reply to `request`: from the cache, else from the provider (see module doc)."""
        key = request.cache_key(self.provider.name, self.provider.model)
        hit = self._hit(key)
        if hit is not None:
            return hit
        if self.budget is not None:
            self.budget.check()
        completion = self._call_with_retries(request)
        self._keep(key, completion)
        return completion

    def complete_many(self, requests: list[Request], workers: int = 8) -> list[Completion]:
        """The replies to `requests`, in order: cache hits at once; the rest in one batch where the
        provider batches (`complete_many`: a model in this process), else `workers` calls at a time
        (a server). The budget is checked before the batch and charged per reply."""
        keys = [r.cache_key(self.provider.name, self.provider.model) for r in requests]
        out: list[Completion | None] = [self._hit(k) for k in keys]
        todo = [i for i, c in enumerate(out) if c is None]
        if todo and self.budget is not None:
            self.budget.check()
        batch = getattr(self.provider, "complete_many", None)
        if callable(batch) and todo:
            self.calls += len(todo)
            done = [self._stamped(c) for c in batch([requests[i] for i in todo])]
        else:
            with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
                done = list(pool.map(self._call_with_retries, [requests[i] for i in todo]))
        for i, completion in zip(todo, done, strict=True):
            self._keep(keys[i], completion)
            out[i] = completion
        return [c for c in out if c is not None]

    def _hit(self, key: str) -> Completion | None:
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is None:
            return None
        self.cache_hits += 1
        return dataclasses.replace(hit, cached=True)

    def _keep(self, key: str, completion: Completion) -> None:
        self.usage = self.usage + completion.usage
        if self.budget is not None:
            self.budget.charge(completion.usage)
        if self.cache is not None:
            self.cache.put(key, completion)

    def backoff_delay(self, retry: int, error: TransientLLMError) -> float:
        """Seconds to wait before retry number `retry` (0-based): the server's `retry_after`
        when it gave one, else `backoff * 2**retry`; never more than `max_backoff`."""
        wanted = error.retry_after if error.retry_after is not None else self.backoff * 2**retry
        return max(0.0, min(self.max_backoff, wanted))

    def _call_with_retries(self, request: Request) -> Completion:
        for retry in range(self.retries + 1):
            self.calls += 1
            try:
                return self._stamped(self.provider.complete(request))
            except TransientLLMError as error:
                if retry == self.retries:
                    raise self._gave_up(error, tries=retry + 1) from error
                self.sleep(self.backoff_delay(retry, error))
        raise AssertionError("unreachable: the loop returns or raises")

    def _stamped(self, completion: Completion) -> Completion:
        """The completion with provider and model filled in when the provider left them out."""
        return dataclasses.replace(
            completion,
            provider=completion.provider or self.provider.name,
            model=completion.model or self.provider.model,
            cached=False,
        )

    def _gave_up(self, error: TransientLLMError, *, tries: int) -> TransientLLMError:
        """The last error again (same class), its message saying how many tries were made."""
        return type(error)(
            f"{error.message} (gave up after {tries} tries of {self.label})",
            retry_after=error.retry_after,
            hint=error.hint or "the provider kept failing: check the server, or try again later",
        )
