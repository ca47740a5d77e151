"""An OpenAI-compatible server on 127.0.0.1 that *plays*: each reply is computed from the request
by a function (the stand-in for a remote model; gymwright's client, the official `openai` package
and the HTTP round trip are real).

    with PlayerServer(first_legal) as server:
        policy = make_llm_policy("openai:fake", spec, base_url=server.base_url) ...
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.support.fake_openai_server import FakeOpenAIServer

LEGAL = re.compile(r"^\[(\d+)\] (.+)$", re.M)


def legal_of(request: dict[str, Any]) -> list[tuple[int, str]]:
    """(number, name) of the legal actions listed in the request's last user message."""
    last = next(m for m in reversed(request["messages"]) if m["role"] == "user")
    return [(int(n), name.strip()) for n, name in LEGAL.findall(str(last["content"]))]


def first_legal(request: dict[str, Any]) -> str:
    return legal_of(request)[0][1]


def last_legal_with_reasoning(request: dict[str, Any]) -> str:
    return f"Thinking it over, the last option looks best.\n{legal_of(request)[-1][1]}"


class PlayerServer(FakeOpenAIServer):
    """Answers every chat completion with `play(request)`."""

    def __init__(self, play: Callable[[dict[str, Any]], str]) -> None:
        super().__init__([])
        self.play = play

    def answer(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict, Any]:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
        return 200, {}, self.success_body(body, self.play(body))

    def __enter__(self) -> PlayerServer:
        super().__enter__()
        return self
