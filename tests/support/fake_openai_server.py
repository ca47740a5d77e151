"""Fake OpenAI-compatible and Anthropic servers on 127.0.0.1, for real HTTP round trips
through the official clients without a network.

    with FakeOpenAIServer([{"status": 429, "retry_after": 0}, {"name": "cake"}]) as server:
        provider = OpenAIProvider("fake-model", base_url=server.base_url)
        ...
        assert server.requests[-1]["response_format"]["type"] == "json_schema"

Each request takes the next item of `replies`:
- a dict (not a control item) is sent as the reply's JSON text (`json.dumps`), a string as is;
- `{"status": 429, "retry_after": 0}`, `{"status": 500}`, ... answers with that HTTP error
  (`retry_after` sets the Retry-After header; `message` the error text);
- `{"sleep": seconds, "reply": ...}` waits, then answers with `reply` (default "late").
When the replies run out the server answers 400 "no reply left", which clients do not retry.
`FakeOpenAIServer(replies, truncate=True)` cuts every reply at the request's `max_tokens` (or
`max_completion_tokens`), counted as the server counts usage (4 characters a token), with
`finish_reason: "length"`, as real servers do.
`requests` holds every request body (parsed JSON), `headers` every request's headers.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Environment variables the providers read: tests clear them so the host's settings never leak in.
LLM_ENV_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_ADMIN_KEY",
    "OPENAI_CUSTOM_HEADERS",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "OLLAMA_HOST",
    "GYMWRIGHT_MODEL",
)
CONTROL_KEYS = frozenset({"status", "retry_after", "message", "sleep", "reply"})


def is_control(item: Any) -> bool:
    """A control item (an HTTP error or a delay), as opposed to a reply to send."""
    return (
        isinstance(item, dict)
        and bool(item)
        and set(item) <= CONTROL_KEYS
        and ("status" in item or "sleep" in item)
    )


class _FakeServer:
    """Serves `replies` in order at POST `path`; subclasses shape the success body."""

    path = "/"

    def __init__(self, replies: list[Any], *, truncate: bool = False) -> None:
        self.replies = list(replies)
        self.truncate = truncate
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> _FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # ------------------------------------------------------------------------ answering
    def answer(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict, Any]:
        """(status, headers, JSON body) for one request."""
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
            self.headers.append(headers)
        if index >= len(self.replies):
            return 400, {}, self.error_body(f"fake server: no reply left ({index} used)", 400)
        item = self.replies[index]
        if is_control(item) and "sleep" in item:
            time.sleep(float(item["sleep"]))
            item = item.get("reply", "late")
        if is_control(item):
            status = int(item["status"])
            extra = (
                {} if item.get("retry_after") is None else {"retry-after": str(item["retry_after"])}
            )
            message = item.get("message", f"fake error {status}")
            return status, extra, self.error_body(message, status)
        return 200, {}, self.success_body(body, item)

    def success_body(self, request: dict[str, Any], item: Any) -> dict[str, Any]:
        raise NotImplementedError

    def error_body(self, message: str, status: int) -> dict[str, Any]:
        return {"error": {"message": message, "type": "fake_error", "code": None}}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != server.path:
                    self._send(404, {}, server.error_body(f"no route {self.path}", 404))
                    return
                self._send(*server.answer(body, {k.lower(): v for k, v in self.headers.items()}))

            def _send(self, status: int, headers: dict[str, str], payload: Any) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to answer

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        return Handler


def _content(item: Any) -> str:
    return item if isinstance(item, str) else json.dumps(item)


CHARS_PER_TOKEN = 4  # the fake servers' token count: usage and truncation agree


def _rough_tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


class FakeOpenAIServer(_FakeServer):
    """POST /v1/chat/completions, answering well-formed `chat.completion` objects."""

    path = "/v1/chat/completions"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        super().__enter__()
        return self

    def success_body(self, request: dict[str, Any], item: Any) -> dict[str, Any]:
        content, finish = _content(item), "stop"
        limit = request.get("max_tokens") or request.get("max_completion_tokens")
        if self.truncate and limit is not None and _rough_tokens(content) > int(limit):
            content, finish = content[: CHARS_PER_TOKEN * int(limit)], "length"
        prompt = sum(len(str(m.get("content", ""))) for m in request.get("messages", []))
        usage = {"prompt_tokens": max(1, prompt // 4), "completion_tokens": _rough_tokens(content)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return {
            "id": f"chatcmpl-fake{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": usage,
        }


class FakeAnthropicServer(_FakeServer):
    """POST /v1/messages, answering Messages API objects: a `tool_use` block carrying a dict
    reply when the request forces a tool, else a text block."""

    path = "/v1/messages"

    @property
    def base_url(self) -> str:
        return self.root_url

    def __enter__(self) -> FakeAnthropicServer:
        super().__enter__()
        return self

    def success_body(self, request: dict[str, Any], item: Any) -> dict[str, Any]:
        tool = (request.get("tool_choice") or {}).get("name")
        if tool and not isinstance(item, str):
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": "toolu_fake",
                "name": tool,
                "input": item,
            }
            stop = "tool_use"
        else:
            block, stop = {"type": "text", "text": _content(item)}, "end_turn"
        prompt = sum(len(str(m.get("content", ""))) for m in request.get("messages", []))
        return {
            "id": f"msg_fake{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "fake"),
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": max(1, prompt // 4),
                "output_tokens": _rough_tokens(_content(item)),
            },
        }

    def error_body(self, message: str, status: int) -> dict[str, Any]:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
