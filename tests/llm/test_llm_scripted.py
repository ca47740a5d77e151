"""`ScriptedProvider`: replies replayed in order from a file, errors, and clear complaints
about bad scripts."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from gymwright.llm import (
    LLMError,
    LLMTimeout,
    Message,
    Request,
    ScriptedProvider,
    TransientLLMError,
    Usage,
)


def ask(text: str = "design a cake split") -> Request:
    return Request(messages=(Message("system", "sys"), Message("user", text)))


def write(tmp_path: Path, text: str, name: str = "replies.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_replies_in_order(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "- first\n"
        "- text: second\n"
        "  usage: {prompt_tokens: 7, completion_tokens: 3}\n"
        "- json: {name: cake, rounds: [1, 2]}\n",
    )
    provider = ScriptedProvider(path)
    assert (provider.name, provider.model, provider.supports_schema) == (
        "scripted",
        "replies",
        False,
    )
    first, second, third = (provider.complete(ask(str(i))) for i in range(3))
    assert first.text == "first" and first.usage == Usage(len("sys0") // 4, len("first") // 4)
    assert second.text == "second" and second.usage == Usage(7, 3)
    assert json.loads(third.text) == {"name": "cake", "rounds": [1, 2]}
    assert [r.messages[-1].content for r in provider.requests] == ["0", "1", "2"]
    assert provider.remaining == 0


def test_json_file(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps(["a", {"json": [1, 2]}]), "script.json")
    provider = ScriptedProvider(path)
    assert provider.model == "script"
    assert [provider.complete(ask()).text for _ in range(2)] == ["a", "[1, 2]"]


@pytest.mark.parametrize(
    ("kind", "error_type", "message"),
    [
        (429, TransientLLMError, "scripted rate limit (HTTP 429)"),
        (500, TransientLLMError, "scripted server error (HTTP 500)"),
        ("503", TransientLLMError, "scripted overload (HTTP 503)"),
        ("timeout", LLMTimeout, "scripted timeout"),
        ("connection", TransientLLMError, "scripted connection error"),
    ],
)
def test_errors(tmp_path: Path, kind: object, error_type: type, message: str) -> None:
    provider = ScriptedProvider(write(tmp_path, f"- error: {kind}\n- after\n"))
    with pytest.raises(error_type) as caught:
        provider.complete(ask())
    assert caught.value.message == message
    assert provider.complete(ask()).text == "after"  # the error used up its item


def test_exhausted(tmp_path: Path) -> None:
    path = write(tmp_path, "- only\n")
    provider = ScriptedProvider(path)
    provider.complete(ask())
    with pytest.raises(LLMError) as caught:
        provider.complete(ask())
    assert caught.value.message == (
        f"scripted replies exhausted after 1 replies (file {path}): add more replies"
    )
    assert len(provider.requests) == 2


def test_delay_sleeps_before_replying(tmp_path: Path) -> None:
    provider = ScriptedProvider(write(tmp_path, "- delay: 0.2\n  text: late\n"))
    start = time.perf_counter()
    assert provider.complete(ask()).text == "late"
    assert time.perf_counter() - start >= 0.2


def test_expect_checks_the_last_user_message(tmp_path: Path) -> None:
    path = write(tmp_path, "- text: ok\n  expect: cake\n- text: nope\n  expect: auction\n")
    provider = ScriptedProvider(path)
    assert provider.complete(ask("split a cake")).text == "ok"
    with pytest.raises(LLMError) as caught:
        provider.complete(ask("split a cake"))
    assert str(caught.value).startswith(
        f"{path}: scripted reply 1 expects the last user message to contain 'auction', "
        "but it reads: 'split a cake'"
    )


BAD = [
    ("{a: 1}\n", "expected a list of replies, got dict"),
    ("- [1, 2]\n", "item 0 is a list, not a string or a mapping"),
    (
        "- ok\n- text: a\n  json: 1\n",
        "item 1 needs exactly one of text, json, error; it has text and json",
    ),
    (
        "- usage: {prompt_tokens: 1}\n",
        "item 0 needs exactly one of text, json, error; it has none of them",
    ),
    ("- text: a\n  colour: red\n", "item 0 has unknown key(s) colour"),
    ("- error: 404\n", "item 0 error: 404 is not one of 429, 500, 503, timeout, connection"),
    ("- text: no\n", "item 0 text: False is a bool, not a string (quote it in YAML)"),
    ("- text: a\n  delay: soon\n", "item 0 delay: 'soon' is not a number of seconds >= 0"),
    (
        "- text: a\n  usage: {tokens: 3}\n",
        "item 0 usage: must map prompt_tokens/completion_tokens to counts",
    ),
    ("- a\n - b: [\n", "the script is not valid YAML"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_scripts_name_file_and_item(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(LLMError) as caught:
        ScriptedProvider(path)
    assert caught.value.path == str(path)
    assert caught.value.message.startswith(message)
    assert caught.value.hint


def test_bad_json_file_names_line_and_col(tmp_path: Path) -> None:
    path = write(tmp_path, '["a",\n  "b",,]', "bad.json")
    with pytest.raises(LLMError) as caught:
        ScriptedProvider(path)
    assert caught.value.message == "the script is not valid JSON (line 2 col 7: Expecting value)"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(LLMError) as caught:
        ScriptedProvider(tmp_path / "nope.yaml")
    assert caught.value.message == "cannot read the scripted replies: No such file or directory"
    assert caught.value.path == str(tmp_path / "nope.yaml")
