"""`extract_json` finds the JSON in a model reply, or says exactly what is wrong with it."""

from __future__ import annotations

import pytest

from gymwright.llm import JSONReplyError, LLMError, extract_json, schema_instruction
from gymwright.llm.jsonreply import JSON_HINT

FOUND = [
    ('{"a": 1}', {"a": 1}),
    ("  [1, 2, 3]\n", [1, 2, 3]),
    ('Here you go:\n```json\n{"a": [1, 2]}\n```\nDone.', {"a": [1, 2]}),
    ('```\n{"plain": "fence"}\n```', {"plain": "fence"}),
    ('```yaml\nnot: json\n```\n```json\n{"b": 2}\n```', {"b": 2}),  # ```json blocks first
    ('Sure! The spec {as asked}:\n{"x": {"y": "}"}} hope it helps', {"x": {"y": "}"}}),
    ('ok {"a": "x\\"y}"} fine', {"a": 'x"y}'}),
    ('[1, 2] and then {"b": 2}', [1, 2]),
    ('"just a string"', "just a string"),
]


@pytest.mark.parametrize(("reply", "value"), FOUND)
def test_finds_the_json(reply: str, value: object) -> None:
    assert extract_json(reply) == value


def test_no_json_at_all() -> None:
    with pytest.raises(JSONReplyError) as caught:
        extract_json("I cannot design that environment.")
    error = caught.value
    assert error.message == "no JSON found in the reply: 'I cannot design that environment.'"
    assert error.hint == JSON_HINT
    assert error.hint.startswith("reply with one JSON object only")
    assert isinstance(error, LLMError)


def test_empty_reply() -> None:
    with pytest.raises(JSONReplyError, match="the reply is empty: no JSON found"):
        extract_json(" \n ")


def test_syntax_error_names_line_col_and_quotes_the_line() -> None:
    reply = 'Here it is:\n```json\n{\n  "name": "cake",\n  "rounds": ten\n}\n```'
    with pytest.raises(JSONReplyError) as caught:
        extract_json(reply)
    error = caught.value
    assert (error.line, error.col) == (5, 13)
    assert error.message == (
        "JSON syntax error at line 5 col 13: Expecting value\n"
        '      "rounds": ten\n'
        "                ^"
    )


def test_trailing_comma_is_named() -> None:
    with pytest.raises(JSONReplyError) as caught:
        extract_json('{"a": 1, "b": 2,}')
    assert caught.value.message.splitlines()[0] == (
        "JSON syntax error at line 1 col 17: Expecting property name enclosed in double quotes"
        " (a trailing comma before it)"
    )


def test_cut_off_reply_is_named() -> None:
    with pytest.raises(JSONReplyError) as caught:
        extract_json('The spec:\n{"name": "cake",\n "params": {"discount": 0.9, ')
    first = caught.value.message.splitlines()[0]
    assert first.startswith("JSON syntax error at line 3 col 30:")
    assert first.endswith(
        "(its brackets never close: the reply may have been cut off at max_tokens)"
    )


def test_long_lines_are_windowed_around_the_error() -> None:
    reply = '{"k": [' + ", ".join(["1"] * 100) + ", oops]}"
    with pytest.raises(JSONReplyError) as caught:
        extract_json(reply)
    _, snippet, caret = caught.value.message.splitlines()
    assert snippet.startswith("    ...") and len(snippet) < 100
    assert snippet[caret.index("^") :].startswith("oops")


def test_schema_instruction_embeds_the_schema() -> None:
    text = schema_instruction({"type": "object", "required": ["name"]}, "env_spec")
    assert text.startswith("Reply with one JSON value (the `env_spec`) and nothing else")
    assert '"required": [\n    "name"\n  ]' in text
