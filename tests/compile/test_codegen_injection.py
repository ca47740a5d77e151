"""Free text never becomes code: the sweep of issue 13 over every library spec.

For every string leaf and every mapping key of every library spec, a payload (each line
separator Python's compiler knows, followed by code at several indents; triple quotes,
`\\N{`, NUL and a trailing backslash) is put in its place. The checker must refuse the spec
with a diagnostic, or both backends must generate a module (which passes the audit) whose
tokens contain no NAME of the payload.
"""

from __future__ import annotations

import copy
import functools
import io
import tokenize
from itertools import cycle
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gymwright.compile.batch_backend import generate_batch
from gymwright.compile.python_backend import generate
from gymwright.errors import SpecError
from gymwright.spec.checker import check_spec
from gymwright.spec.loader import load_spec, read_data
from tests.support.library_sample import every_spec

SEPARATORS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
MARK = "gwpayload"


def line_payload(orig: str, k: int) -> str:
    """`orig`, then every line separator, each followed by a statement at indent 0, 4 or 8."""
    return orig + "".join(f"{sep}{' ' * d}{MARK}{k} = __import__('os') #"
                          for sep, d in zip(SEPARATORS, cycle((0, 4, 8)), strict=False))


def quote_payload(orig: str, k: int) -> str:
    """Triple quotes, `\\N{`, `\\x`, NUL and a trailing backslash around a statement."""
    return orig + f'""" ; {MARK}{k} = 1 ; """ \'\'\' \\N{{ \\x \x00 C:\\users\\ \\'


PAYLOADS = (line_payload, quote_payload)


def leaves(data: Any, path: tuple = ()) -> list[tuple[tuple, str]]:
    """(path, kind) of every string leaf ('value') and every mapping key ('key')."""
    out: list[tuple[tuple, str]] = []
    if isinstance(data, dict):
        for key, value in data.items():
            out.append((path + (key,), "key"))
            out += leaves(value, path + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out += leaves(value, path + (i,))
    elif isinstance(data, str):
        out.append((path, "value"))
    return out


def mutate(data: dict, path: tuple, kind: str, make: Any, k: int) -> dict:
    out = copy.deepcopy(data)
    node = out
    for part in path[:-1]:
        node = node[part]
    last = path[-1]
    if kind == "key":
        node[make(str(last), k)] = node.pop(last)
    else:
        node[last] = make(node[last], k)
    return out


def refused(data: dict) -> bool:
    """True when the loader or the checker refuses `data` with an error diagnostic."""
    try:
        spec = load_spec(data)
    except SpecError as e:
        assert e.diagnostics and all(d.path is not None for d in e.diagnostics)
        return True
    cs, diags = check_spec(spec)
    if cs is None:
        assert any(d.severity.value == "error" for d in diags)
        return True
    return False


def payload_names(source: str) -> set[str]:
    return {t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type == tokenize.NAME and t.string.startswith(MARK)}


@pytest.mark.parametrize("make", PAYLOADS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("name", every_spec())
def test_no_free_text_of_a_library_spec_becomes_code(name: str, make: Any) -> None:
    data, _ = read_data(name)
    fields = leaves(data)
    accepted: list[tuple[tuple, str, int]] = []
    for k, (path, kind) in enumerate(fields):
        if not refused(mutate(data, path, kind, make, k)):
            accepted.append((path, kind, k))
    # every accepted payload at once (each field has its own marker): one generation
    combined = data
    for path, kind, k in sorted(accepted, key=lambda x: -len(x[0])):
        combined = mutate(combined, path, kind, make, k)
    spec = load_spec(combined)
    cs, diags = check_spec(spec)
    assert cs is not None, [d.format() for d in diags if d.severity.value == "error"]
    for source in (generate(cs), generate(cs, instrument=True), generate_batch(cs)):
        compile(source, "<generated>", "exec")
        assert payload_names(source) == set()
    assert accepted  # docs and templates are accepted: the sweep reaches the writer


_CHARS = list("ab #=()'\"\\Nx:") + [s for s in SEPARATORS if len(s) == 1] + ["\x00", "\t", "é"]
TEXT = st.text(alphabet=st.sampled_from(_CHARS), max_size=30)


@functools.cache
def _cake() -> tuple[dict, frozenset[str]]:
    data, _ = read_data("cake_negotiation")
    return data, frozenset(_names(generate(check_spec(load_spec(data))[0])))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=TEXT, rule_doc=TEXT, literal=TEXT)
def test_any_text_in_docs_and_templates_adds_no_code(doc: str, rule_doc: str, literal: str) -> None:
    """Text made of separators, quotes, backslashes and code-like characters (no `{`, which
    opens a placeholder) adds no name to the module: it stays in comments and literals."""
    base, names = _cake()
    data = copy.deepcopy(base)
    data["doc"] = doc + f"\n{MARK} = 1"
    data["step"][0]["doc"] = rule_doc + f"\r{MARK} = 1"
    data.setdefault("text", {})["render"] = literal + "{round}" + literal
    cs, diags = check_spec(load_spec(data))
    assert cs is not None, [d.format() for d in diags]
    source = generate(cs)
    assert set(_names(source)) <= names
    compile(source, "<generated>", "exec")


def _names(source: str) -> list[str]:
    return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.NAME]
