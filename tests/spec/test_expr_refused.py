"""Features the expression language refuses on purpose, each pinned with its message.

Like simpleeval's "deliberately missed features": if one of these starts to pass, the
language grew a hole (or the message changed and the docs must follow).
"""

from __future__ import annotations

import pytest

from gymwright.errors import ExprError
from gymwright.spec.expr.check import Scope, Symbol, check
from gymwright.spec.expr.types import Info


def scope() -> Scope:
    return Scope(symbols={
        "x": Symbol("x", "state", Info("float", (), 0.0, 1.0), "v.x"),
        "flag": Symbol("flag", "state", Info("bool", (), 0.0, 1.0), "v.flag"),
        "y": Symbol("y", "state", Info("int", (4,), 0.0, 9.0), "v.y"),
    }, context="test")


REFUSED = [
    # (feature, source, exact message substring)
    ("attribute", "x.real", "attribute access (`a.b`) is not allowed"),
    ("dunder attribute", "x.__class__", "attribute access (`a.b`) is not allowed"),
    ("lambda", "lambda: x", "lambda is not allowed"),
    ("lambda with args", "lambda a: a + x", "lambda is not allowed"),
    ("list comprehension", "[a for a in y]", "comprehensions are not allowed"),
    ("set comprehension", "{a for a in y}", "comprehensions are not allowed"),
    ("dict comprehension", "{a: a for a in y}", "comprehensions are not allowed"),
    ("generator expression", "sum(a for a in y)", "generator expressions are not allowed"),
    ("string", "'abc'", "strings are not allowed in expressions"),
    ("string in arithmetic", "x + 'a'", "strings are not allowed in expressions"),
    ("bytes", "b'abc'", "strings are not allowed in expressions"),
    ("walrus", "(z := 1)", "assignment expressions (:=) are not allowed"),
    ("starred", "max(*y)", "starred arguments are not allowed"),
    ("bitwise and", "flag & flag", "bitwise & is not allowed; use `and`"),
    ("bitwise or", "flag | flag", "bitwise | is not allowed; use `or`"),
    ("bitwise xor", "flag ^ flag", "bitwise ^ is not allowed"),
    ("bitwise not", "~flag", "~ is not allowed; use `not`"),
    ("left shift", "y << 1", "shifts are not allowed"),
    ("right shift", "y >> 1", "shifts are not allowed"),
    ("matmul", "y @ y", "@ is not allowed; use dot(a, b)"),
    ("is", "x is x", "`is` is not allowed; use =="),
    ("is not", "x is not x", "`is not` is not allowed; use !="),
    ("in", "x in y", "`in` is not allowed; use any(x == v)"),
    ("not in", "x not in y", "`not in` is not allowed; use not any(x == v)"),
    ("dict", "{1: x}", "dict literals are not allowed"),
    ("set", "{x, 1}", "set literals are not allowed"),
    ("f-string", "f'{x}'", "f-strings are not allowed"),
    ("slice with a step", "y[::2]", "slices with a step are not allowed"),
    ("slice with a negative step", "y[0:3:-1]", "slices with a step are not allowed"),
    ("keyword **", "max(**y)", "`**kwargs` is not allowed"),
    ("None", "None", "literals are not allowed in expressions"),
    ("ellipsis", "y[...]", "literals are not allowed in expressions"),
    ("complex", "1j", "literals are not allowed in expressions"),
    ("underscore name", "_x", "names starting with '_' are not allowed"),
    ("dunder name", "__import__", "names starting with '_' are not allowed"),
    ("call of an attribute", "y.sum()", "only listed functions can be called, by plain name"),
    ("call of a call", "max(x, 1)(2)", "only listed functions can be called, by plain name"),
    ("tuple outside indexing", "(x, 1)", "tuples are only allowed in indexing"),
    ("assignment statement", "x = 1", "syntax error"),
    ("import statement", "import os", "syntax error"),
    ("two statements", "x; x", "syntax error"),
    ("empty", "   ", "empty expression"),
    ("huge int literal", "10000000000000", "is larger than 1000000000000"),
    ("too long", "x + " * 600 + "x", "characters long; the limit is 2000"),
    ("too deep", "-" * 60 + "x", "nested more than 40 levels deep"),
    ("too many parts", "[" + ", ".join(["x"] * 300) + "]", "more than 400 parts"),
    ("constant negative index", "y[-1]", "index -1 is negative: indices count from 0 here"),
    ("computed constant negative index", "y[1 - 2]", "index -1 is negative: indices count from 0 here"),
]


@pytest.mark.parametrize(("feature", "source", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_deliberately_missed_features(feature: str, source: str, message: str) -> None:
    with pytest.raises(ExprError) as info:
        check(source, scope())
    assert message in info.value.message, f"{feature}: {info.value.message!r}"


# Refused constructs quote the source with a caret under the construct (parse.py's promise).
CARET = [r for r in REFUSED if r[0] not in ("empty", "too long", "too many parts")]


@pytest.mark.parametrize(("feature", "source", "message"), CARET, ids=[r[0] for r in CARET])
def test_refusal_points_at_the_construct(feature: str, source: str, message: str) -> None:
    with pytest.raises(ExprError) as info:
        check(source, scope())
    err = info.value
    assert err.col is not None, f"{feature}: no column for {err.message!r}"
    assert 0 <= err.col <= len(source.strip()), f"{feature}: column {err.col} outside the source"
    caret = err.caret()
    assert caret and caret.splitlines()[-1].strip() == "^"
    assert caret in str(err)


def test_refused_message_names_the_construct_not_python_internals() -> None:
    for feature, source, _ in REFUSED:
        with pytest.raises(ExprError) as info:
            check(source, scope())
        text = str(info.value)
        assert "Traceback" not in text and "ast." not in text, (feature, text)


@pytest.mark.parametrize(("earlier", "source"), [("x + x + ~flag", "~flag"), ("x + (y << 1)", "y << 1")])
def test_the_caret_does_not_carry_over_from_an_earlier_expression(earlier: str, source: str) -> None:
    """Python's parser shares one operator node (ast.Invert, ast.LShift) across every tree, so a
    column written onto it by one refusal would point the next refusal's caret at the wrong place."""
    with pytest.raises(ExprError) as first:
        check(earlier, scope())
    assert first.value.col == earlier.index(source)
    with pytest.raises(ExprError) as info:
        check(source, scope())
    assert info.value.col == 0, info.value.caret()
