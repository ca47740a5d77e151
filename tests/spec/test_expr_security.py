"""The expression language cannot reach anything the spec did not declare.

(a) Known escape attempts are refused with ExprError, quickly.
(b) Hostile expressions from a grammar: `check` raises ExprError or accepts; what it accepts
    uses only whitelisted nodes, names and functions, lowers to Python that names only the
    runtime's own objects, and evaluates without importing, opening, compiling or executing.
Plus positive tests of `check`'s typing (dtype, shape, constants, carets, suggestions).
"""

from __future__ import annotations

import ast
import builtins
import sys
import time
import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import gymwright.runtime.core as rt
from gymwright.compile.pyexpr import PyEmitter
from gymwright.errors import ExprError
from gymwright.spec.expr.check import Checked, Scope, Symbol, check
from gymwright.spec.expr.functions import FUNCTIONS
from gymwright.spec.expr.parse import ALLOWED_NODES
from gymwright.spec.expr.types import Info

SAFETY_BOUND_S = 2.0  # generous: a safety bound against unbounded work, not a benchmark
N_AGENTS = 2


# --------------------------------------------------------------------------- scopes

def _symbols() -> dict[str, Symbol]:
    table = np.array([[1, 2], [3, 4]])
    return {
        "x": Symbol("x", "state", Info("float", (), 0.0, 1.0), "v.x"),
        "n": Symbol("n", "state", Info("int", (), 0.0, 10.0), "v.n"),
        "flag": Symbol("flag", "state", Info("bool", (), 0.0, 1.0), "v.flag"),
        "y": Symbol("y", "state", Info("int", (3,), 0.0, 5.0), "v.y"),
        "grid2": Symbol("grid2", "state", Info("float", (2, 3), 0.0, 1.0), "v.grid2"),
        "score": Symbol("score", "agent_state", Info("float", (N_AGENTS,), 0.0, 10.0), "v.score"),
        "k": Symbol("k", "param", Info("int", (), 2.0, 2.0, True, 2), "p.k"),
        "rate": Symbol("rate", "param", Info("float", (), 0.5, 0.5, True, 0.5), "p.rate"),
        "table": Symbol("table", "const", Info("int", (2, 2), 1.0, 4.0, True, table), "p.table"),
    }


def global_scope() -> Scope:
    return Scope(symbols=_symbols(), context="test")


def agent_scope() -> Scope:
    """A per-agent place where random draws are allowed (like an agent_state init)."""
    syms = _symbols()
    syms["me"] = Symbol("me", "me", Info("int", (), 0.0, N_AGENTS - 1.0), "me")
    return Scope(symbols=syms, context="agent test", per_agent=True, random=True)


def namespaces() -> tuple[SimpleNamespace, SimpleNamespace]:
    """Small concrete values for every symbol: `p` (params, consts) and `v` (state)."""
    p = SimpleNamespace(k=2, rate=0.5, table=np.array([[1, 2], [3, 4]]))
    draws = rt.Draws()
    draws.reset(7)
    v = SimpleNamespace(x=0.3, n=4, flag=True, y=np.array([1, 2, 3]),
                        grid2=np.linspace(0.0, 1.0, 6).reshape(2, 3),
                        score=np.array([0.5, 9.5]), _rng=draws)
    return p, v


def timed_check(source: str, scope: Scope | None = None) -> tuple[Any, float]:
    """(result or exception, seconds); the exception is returned, not raised."""
    start = time.perf_counter()
    try:
        out: Any = check(source, scope or global_scope())
    except Exception as e:  # noqa: BLE001 - the caller asserts on the type
        out = e
    return out, time.perf_counter() - start


# --------------------------------------------------------------------------- (a) known escapes

ESCAPES = [
    "__import__('os').system('x')",
    "__import__",
    "().__class__.__bases__[0].__subclasses__()",
    "().__class__",
    "(1).__class__.__mro__",
    "open('/etc/passwd')",
    "open",
    "eval('1')",
    "exec",
    "exec('x = 1')",
    "globals()",
    "locals()",
    "getattr(x, 'y')",
    "setattr(x, y, 1)",
    "lambda: 1",
    "(lambda: 1)()",
    "[x for x in y]",
    "sum(x for x in y)",
    "{x: 1 for x in y}",
    "(y := 1)",
    "f'{x}'",
    "x.__dict__",
    "np.zeros(3)",
    "np",
    "p.x",
    "v.x",
    "p",
    "v",
    "self",
    "rt_pow",
    "rt_pow(x, 2)",
    "draw_uniform(x)",
    "type(x)",
    "breakpoint()",
    "compile('1','','eval')",
    "vars()",
    "dir()",
    "print(x)",
    "input()",
    "__builtins__",
    "_x",
    "9**9**9**9",
    "k ** k ** k ** k ** k ** k",
    "10 ** 10 ** 10",
    '"a"*10**9',
    "b'x'",
    "zeros(10**9)",
    "ones(10**6 * 10**6)",
    "arange(10**12)",
    "linspace(0, 1, 10**12)",
    "onehot(k, 10**12)",
    "(" * 1000 + "1" + ")" * 1000,
    "-" * 1900 + "1",
    "[" * 60 + "1" + "]" * 60,
    "x+" * 50_000 + "x",
    "x" * 100_000,
    "x[::-1]",
    "y[::-1]",
    "y[...]",
    "max(*y)",
    "max(**y)",
    "max(y, key=x)",
    "x if x else y[5]",
    "y[10]",
    "{1: 2}",
    "{x}",
    "None",
    "1j",
    "x @ x",
    "y & y",
    "~flag",
    "x << 1",
    "x is x",
    "x in y",
    "me",
    "uniform()",
    "view(y, 1)",
    "x = 1",
    "import os",
    "x; y",
    "yield x",
    "await x",
    # array size limits hold for every node, not only for constructors
    "arange(1000000) * [[1], [1], [1], [1], [1], [1], [1], [1]]",
    "sum(x * arange(1000000) * [[1], [1], [1], [1]])",
    "sum(x * arange(1000000) * [[1], [1]] * [[[1]], [[1]]] * [[[[1]]], [[[1]]]])",
]


def test_escape_list_is_long_enough() -> None:
    assert len(ESCAPES) >= 30


@pytest.mark.parametrize("source", ESCAPES, ids=lambda s: s if len(s) <= 40 else s[:37] + "...")
def test_known_escape_is_refused_quickly(source: str) -> None:
    out, seconds = timed_check(source)
    assert isinstance(out, ExprError), (
        f"expected ExprError, got {type(out).__name__}: {out if isinstance(out, Exception) else out.info.describe()}")
    assert seconds < SAFETY_BOUND_S, f"check took {seconds:.2f}s"
    assert out.message.strip()
    assert "Traceback" not in str(out)


EDGE_CONSTANTS = [
    "int(1e308 * 10)",
    "round(1e308 * 10)",
    "floor(-1e308 * 10)",
    "ceil(1e308 * 10)",
    "int(log(0))",
    "int(sqrt(-1))",
    "int(0 / 0)",
    "round(1e308 * 10 - 1e308 * 10)",
    "onehot(int(1e308 * 10), 3)",
    "y[int(1e308 * 10)]",
    "arange(int(1e308 * 10))",
    "zeros(int(1e308 * 10))",
    "1e308 * 10 // 0",
    "(-8) ** 0.5",
    "0 ** -1",
    "clip(1e308 * 10, 0, 1)",
    "sum(y, axis=int(1e308 * 10))",
    "zeros(zeros(1))",
    "zeros([2, -3])",
    "1e308 // rate",
    "-1e308 // 0.5",
    "1e308 % 0.5 + 1e308 // 0.5",
    "not (1e308 // rate)",
    "flag ** table ** table",
    "arange(2 if [True, False] else 3)",
    "ones(2.5 if table else 2.5)",
    "ones(-1)",
]


@pytest.mark.parametrize("source", EDGE_CONSTANTS)
def test_edge_constants_never_crash_the_checker(source: str) -> None:
    """Infinities and NaNs in constants: accepted or ExprError, never another exception."""
    out, seconds = timed_check(source)
    assert not isinstance(out, Exception) or isinstance(out, ExprError), (
        f"{type(out).__name__}: {out}")
    assert seconds < SAFETY_BOUND_S


@pytest.mark.parametrize("source", ["ones(-1)", "zeros(2.5)", "zeros([2, -3])", "zeros(zeros(1))",
                                    "zeros([2.5, 2])", "zeros(0)", "zeros(rate)", "ones([2, 0])"])
def test_constructor_shapes_must_be_positive_ints(source: str) -> None:
    """Like arange(2.5), arange(0) and linspace(0, 1, 0), which are refused."""
    out, _ = timed_check(source)
    assert isinstance(out, ExprError), (
        f"{type(out).__name__}: {out if isinstance(out, Exception) else out.info.describe()}")


# --------------------------------------------------------------------------- (b) hostile grammar

DANGEROUS_NAMES = [
    "__import__", "__builtins__", "__class__", "__dict__", "__globals__", "__subclasses__",
    "eval", "exec", "open", "compile", "globals", "locals", "vars", "dir", "getattr", "setattr",
    "type", "object", "breakpoint", "input", "print", "os", "sys", "subprocess", "np", "p", "v",
    "self", "rt_pow", "rt_div", "draw_uniform", "Draws", "math", "numpy", "builtins", "None",
    "Ellipsis", "help", "exit", "quit", "memoryview", "bytes", "id", "hash", "iter", "next",
]
DECLARED = sorted(_symbols()) + ["me", "True", "False"]
LITERALS = [
    "0", "1", "2", "3", "-1", "0.5", "1e308", "1e-308", "10**12", "10**13", "2**64",
    "999999999999", "1000000000000000000000", "True", "False", "'os'", '"x"', "b''", "None", "...",
    "1j", "0x10", "1_000",
]
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>", "@"]
CMPOPS = ["==", "!=", "<", "<=", ">", ">=", "is", "is not", "in", "not in"]
IDENT = st.from_regex(r"\A_{0,2}[a-z][a-z0-9_]{0,6}_{0,2}\Z")
NAMES = st.one_of(st.sampled_from(DECLARED), st.sampled_from(DANGEROUS_NAMES), IDENT)
FUNC_NAMES = st.one_of(st.sampled_from(sorted(FUNCTIONS)), st.sampled_from(DANGEROUS_NAMES), IDENT)
SMALL = st.sampled_from(["0", "1", "2", "3", "k", "n", "-1", "2.5", "10**12", "10**13"])


_EXTRA_ARGS = ["", "*y", "**y", "shape=(2, 3)", "shape=k", "axis=0", "key=x", "n=3", "shape=10**13"]
_REDUCERS = ["sum", "mean", "max", "min", "count", "any", "all", "argmax"]


def _call(fname: str, args: list[str], extra: str) -> str:
    return f"{fname}(" + ", ".join([*args, extra] if extra else args) + ")"


def _hostile(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Constructs outside the language, or allowed ones applied to anything at all."""
    inner = _named(inner)
    pair = st.tuples(inner, inner)
    return st.one_of(
        st.builds(lambda ab, op: f"({ab[0]} {op} {ab[1]})", pair, st.sampled_from(BINOPS)),
        st.builds(lambda ab, op: f"({ab[0]} {op} {ab[1]})", pair, st.sampled_from(CMPOPS)),
        st.builds(lambda a, op: f"({op}{a})", inner, st.sampled_from(["-", "+", "not ", "~"])),
        st.builds(lambda a, b, c: f"({a} ** {b} ** {c})", inner, inner, inner),
        st.builds(lambda a, i: f"{a}[{i}]", inner, inner),
        st.builds(lambda a, i: f"{a}[::{i}]", inner, SMALL),
        st.builds(lambda a, attr: f"{a}.{attr}", inner, NAMES),
        st.builds(_call, FUNC_NAMES, st.lists(inner, max_size=3), st.sampled_from(_EXTRA_ARGS)),
        st.builds(lambda name, a: f"(lambda {name}: {a})", IDENT, inner),
        st.builds(lambda a: f"(lambda: {a})()", inner),
        st.builds(lambda a, name, b: f"[{a} for {name} in {b}]", inner, IDENT, inner),
        st.builds(lambda a, name, b: f"sum({a} for {name} in {b})", inner, IDENT, inner),
        st.builds(lambda a, b: f"{{{a}: {b}}}", inner, inner),
        st.builds(lambda a: f"{{{a}}}", inner),
        st.builds(lambda name, a: f"({name} := {a})", IDENT, inner),
        st.builds(lambda a: f"f'{{{a}}}'", inner),
        st.builds(lambda a, b: f"({a}, {b})", inner, inner),
        st.builds(lambda a: f"{a}.__class__.__bases__[0].__subclasses__()", inner),
    )


def _listed_call(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A call of a listed function with an admissible number of arguments."""
    def args_for(name: str) -> st.SearchStrategy[str]:
        lo, hi = FUNCTIONS[name].nargs
        return st.lists(inner, min_size=lo, max_size=max(lo, min(hi, 3))).map(
            lambda args: f"{name}({', '.join(args)})")
    return st.sampled_from(sorted(FUNCTIONS)).flatmap(args_for)


def _allowed(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Constructs of the language, so that a good share of examples is accepted and run."""
    inner = _named(inner)
    pair = st.tuples(inner, inner)
    return st.one_of(
        st.builds(lambda ab, op: f"({ab[0]} {op} {ab[1]})", pair,
                  st.sampled_from(["+", "-", "*", "/", "//", "%", "**"])),
        st.builds(lambda ab, op: f"({ab[0]} {op} {ab[1]})", pair,
                  st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "and", "or"])),
        st.builds(lambda a, op: f"({op}{a})", inner, st.sampled_from(["-", "+", "not "])),
        st.builds(lambda a, b, c: f"({a} if {b} else {c})", inner, inner, inner),
        st.builds(lambda a, i: f"{a}[{i}]", inner, SMALL),
        st.builds(lambda a, i, j: f"{a}[{i}, {j}]", inner, SMALL, SMALL),
        st.builds(lambda a, i, j: f"{a}[{i}:{j}]", inner, SMALL, SMALL),
        st.builds(lambda f, a, ax: f"{f}({a}, axis={ax})", st.sampled_from(_REDUCERS), inner, SMALL),
        _listed_call(inner),
        st.builds(lambda items: "[" + ", ".join(items) + "]", st.lists(inner, min_size=1, max_size=3)),
    )


def _weighted(*choices: tuple[int, st.SearchStrategy[str]]) -> st.SearchStrategy[str]:
    """Pick one of the strategies with the given relative weights."""
    table = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.integers(0, len(table) - 1).flatmap(lambda i: table[i])


def _named(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """`inner` behind a repr of constant size.

    Each level of `st.recursive` names `inner` a dozen times; a plain strategy's repr spells it
    out each time, so the repr grows by that factor per level (about 60 MB at the fourth), and
    Hypothesis builds it when it reports a failure: the worker was killed for memory instead.
    """
    return st.deferred(lambda: inner)


def _mixed(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Mostly the language, with a hostile construct now and then."""
    return _weighted((8, _allowed(inner)), (1, _hostile(inner)))


SCALAR_LEAVES = st.sampled_from(["x", "n", "flag", "k", "rate", "0", "1", "2", "3", "0.5", "-1",
                                 "2.5", "1e308", "True"])
ARRAY_LEAVES = st.sampled_from(["y", "grid2", "score", "table", "me"])
HOSTILE_LEAVES = st.one_of(NAMES, st.sampled_from(LITERALS))
MIXED = st.recursive(_weighted((6, SCALAR_LEAVES), (2, ARRAY_LEAVES), (1, HOSTILE_LEAVES)),
                     _mixed, max_leaves=10)
HOSTILE = st.one_of(MIXED, MIXED, st.recursive(HOSTILE_LEAVES, _hostile, max_leaves=12))

# builtins the lowering calls: pure functions of the values they are given (`all` and `any` take
# a short array's `.tolist()`, pyexpr.SHORT)
ALLOWED_PY_NAMES = {"p", "v", "me", "np", "view", "agents_view", "True", "False", "abs", "min",
                    "max", "int", "float", "bool", "all", "any"}
ATTRIBUTE_OWNERS = {"p", "v", "np"}
ESCAPE_EVENTS = ("import", "open", "exec", "compile")
ESCAPE_PREFIXES = ("os.", "subprocess.", "socket.", "ctypes.", "shutil.", "pty.", "urllib.",
                   "http.", "webbrowser.", "code.__new__", "function.__new__", "builtins.input")


class _Audit:
    """One permanent audit hook per process; it records only while `active`."""

    installed = False
    active = False
    events: list[str] = []

    @classmethod
    def hook(cls, event: str, args: tuple[Any, ...]) -> None:
        if cls.active and (event in ESCAPE_EVENTS or event.startswith(ESCAPE_PREFIXES)):
            cls.events.append(f"{event}{args!r:.200}")

    @classmethod
    def install(cls) -> None:
        if not cls.installed:
            sys.addaudithook(cls.hook)
            cls.installed = True


def _runtime_globals() -> dict[str, Any]:
    """What a generated module gives lowered code: numpy, the rt_/draw_ helpers, builtins."""
    out: dict[str, Any] = {"__builtins__": builtins, "np": np}
    out.update({k: v for k, v in vars(rt).items() if k.startswith(("rt_", "draw_"))})
    return out


def assert_checked_tree_is_whitelisted(checked: Checked, scope: Scope) -> None:
    for node in ast.walk(checked.tree):
        assert type(node) in ALLOWED_NODES, f"{type(node).__name__} in {checked.source!r}"
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS, checked.source
    called = {id(n.func) for n in ast.walk(checked.tree) if isinstance(n, ast.Call)}
    for node in ast.walk(checked.tree):
        if isinstance(node, ast.Name) and id(node) not in called:
            assert node.id in scope.symbols or node.id in ("True", "False"), (
                f"name `{node.id}` is neither declared nor a builtin in {checked.source!r}")


# numpy array methods the lowering may call on values it computed (reductions in method form)
ARRAY_METHODS = {"astype", "sum", "mean", "any", "all", "argmax", "argmin", "ravel", "tolist"}


def assert_lowered_code_is_closed(code: str, source: str) -> None:
    tree = ast.parse(code, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            ok = node.id in ALLOWED_PY_NAMES or node.id.startswith(("rt_", "draw_"))
            assert ok, f"lowered code names `{node.id}`: {code!r} (from {source!r})"
        elif isinstance(node, ast.Attribute):
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            internal = (owner, node.attr) == ("v", "_rng")  # the env's seeded stream, for draws
            ok = internal or (owner in ATTRIBUTE_OWNERS or node.attr in ARRAY_METHODS) and not node.attr.startswith("_")
            assert ok, f"lowered code reads `.{node.attr}`: {code!r} (from {source!r})"
        else:
            assert not isinstance(node, ast.Lambda | ast.NamedExpr | ast.comprehension), code


def evaluate_under_audit(code: str, per_agent: bool) -> list[str]:
    """Run the lowered code once on small values; the audit events it raised."""
    env = _runtime_globals()
    exec(compile(f"def _f(p, v, me):\n    return ({code})\n", "<lowered>", "exec"), env)  # noqa: S102
    fn: Callable[..., Any] = env["_f"]
    p, v = namespaces()
    _Audit.install()
    _Audit.events = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        _Audit.active = True
        try:
            fn(p, v, 1 if per_agent else 0)
        except Exception:  # noqa: BLE001,S110 - numeric failures are not escapes
            pass
        finally:
            _Audit.active = False
    return list(_Audit.events)


@settings(max_examples=1000, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(source=HOSTILE, per_agent=st.booleans())
@example(source="all(y)", per_agent=False)  # short reductions lower to builtins (rare in draws)
@example(source="any(score > me)", per_agent=True)
@example(source="(-(+(not k)))", per_agent=False)  # a folded bool through unary plus, then minus
def test_hostile_expressions_are_refused_or_harmless(source: str, per_agent: bool) -> None:
    scope = agent_scope() if per_agent else global_scope()
    start = time.perf_counter()
    try:
        checked = check(source, scope)
    except ExprError:
        assert time.perf_counter() - start < SAFETY_BOUND_S
        return
    assert time.perf_counter() - start < SAFETY_BOUND_S
    assert_checked_tree_is_whitelisted(checked, scope)
    code = PyEmitter(scope.symbols, per_agent=per_agent)(checked)
    assert_lowered_code_is_closed(code, source)
    events = evaluate_under_audit(code, per_agent)
    assert events == [], f"{source!r} -> {code!r} raised audit events {events}"


def test_strategy_reprs_stay_small() -> None:
    """Hypothesis spells strategies out when it reports a failure: that must not take the memory."""
    nested = SCALAR_LEAVES
    for _ in range(4):
        nested = _mixed(nested)
    assert len(repr(nested)) < 10_000


def test_audit_harness_sees_an_escape() -> None:
    """The harness is not blind: lowered code that imports is caught."""
    events = evaluate_under_audit("(open('/dev/null').close(), __import__('os').listdir('/'))",
                                  per_agent=False)
    assert any(e.startswith("open") for e in events), events
    assert any(e.startswith("os.listdir") for e in events), events


def test_closure_check_sees_a_stray_name() -> None:
    with pytest.raises(AssertionError):
        assert_lowered_code_is_closed("open(p.x)", "x")
    with pytest.raises(AssertionError):
        assert_lowered_code_is_closed("v.x.__class__", "x")


# --------------------------------------------------------------------------- positive typing

def info_of(source: str, scope: Scope | None = None) -> Info:
    return check(source, scope or global_scope()).info


@pytest.mark.parametrize(("source", "dtype", "shape"), [
    ("x + 1", "float", ()),
    ("n + 1", "int", ()),
    ("flag + flag", "int", ()),
    ("n / 2", "float", ()),
    ("n // 2", "int", ()),
    ("n ** 2", "float", ()),
    ("y * 2", "int", (3,)),
    ("y * x", "float", (3,)),
    ("grid2 + y", "float", (2, 3)),
    ("y > 1", "bool", (3,)),
    ("x < 1 and flag", "bool", ()),
    ("not flag", "bool", ()),
    ("y[0]", "int", ()),
    ("grid2[1]", "float", (3,)),
    ("grid2[1, 2]", "float", ()),
    ("grid2[0:1]", "float", (1, 3)),
    ("table[k - 1, 0]", "int", ()),
    ("sum(y)", "int", ()),
    ("sum(grid2, axis=0)", "float", (3,)),
    ("mean(grid2, axis=1)", "float", (2,)),
    ("count(y > 1)", "int", ()),
    ("any(grid2 > 0.5, axis=0)", "bool", (3,)),
    ("argmax(y)", "int", ()),
    ("max(y)", "int", ()),
    ("max(x, n)", "float", ()),
    ("where(y > 1, y, 0)", "int", (3,)),
    ("linspace(0, 1, 11)", "float", (11,)),
    ("linspace(0, rate, k + 3)", "float", (5,)),
    ("arange(k)", "int", (2,)),
    ("zeros(k)", "float", (2,)),
    ("zeros([2, 3])", "float", (2, 3)),
    ("ones([k, 3]) * grid2", "float", (2, 3)),
    ("[1, 2] ** 2", "float", (2,)),
    ("table ** 2", "float", (2, 2)),
    ("2 ** table", "float", (2, 2)),
    ("onehot(n, 4)", "float", (4,)),
    ("[x, 1, 2]", "float", (3,)),
    ("x if flag else n", "float", ()),
])
def test_dtype_and_shape_inference(source: str, dtype: str, shape: tuple[int, ...]) -> None:
    info = info_of(source)
    assert (info.dtype, info.shape) == (dtype, shape)


SOUNDNESS = [
    "sum(grid2, axis=0)", "y[k]", "grid2[0:1]", "grid2[1, 0:2]", "onehot(y, 4)", "where(flag, y, 0)",
    "x if flag else y", "max(y, 1)", "clip(grid2, 0, x)", "push(y, 7)", "roll(y, 1)",
    "argmax(grid2, axis=1)", "[x, 1, 2]", "not y", "y > 1 and flag", "count(grid2 > 0.5, axis=0)",
    "table[y[0:2] - 1, 0]", "linspace(0, rate, 3)", "linspace(y, 1, 3)", "linspace(0, grid2, 2)",
    "mean(score) - score[me]", "uniform(0, 1, shape=(2, 3))", "bernoulli(x)",
    "zeros(0) + 1", "clip(zeros(0), 2, x)",
]


@pytest.mark.parametrize("source", SOUNDNESS)
def test_static_shape_matches_runtime_shape(source: str) -> None:
    """What `check` says about an accepted expression is what its lowered code computes."""
    scope = agent_scope()
    try:
        checked = check(source, scope)
    except ExprError:
        return  # refusing is sound
    code = PyEmitter(scope.symbols, per_agent=True)(checked)
    env = _runtime_globals()
    p, v = namespaces()
    with np.errstate(all="ignore"):
        value = eval(code, env, {"p": p, "v": v, "me": 1})  # noqa: S307
    assert np.shape(value) == checked.info.shape, f"{source} -> {code}"
    kind = np.asarray(value).dtype.kind
    assert {"bool": "b", "int": "iu", "float": "f"}[checked.info.dtype].find(kind) >= 0 or (
        checked.info.dtype == "float" and kind in "iu"), f"{source}: {checked.info.dtype} vs {kind}"


def test_agent_arrays_index_with_me() -> None:
    scope = agent_scope()
    mine = check("score[me]", scope).info
    assert (mine.dtype, mine.shape, mine.lo, mine.hi) == ("float", (), 0.0, 10.0)
    assert check("sum(score) - score[me]", scope).info.shape == ()
    assert check("score[1 - me]", scope).info.shape == ()


def test_intervals_follow_declared_bounds() -> None:
    info = info_of("2 * x + 1")
    assert (info.lo, info.hi) == (1.0, 3.0)
    assert (info_of("sum(y)").lo, info_of("sum(y)").hi) == (0.0, 15.0)
    assert (info_of("count(y > 1)").lo, info_of("count(y > 1)").hi) == (0.0, 3.0)


def test_constant_folding() -> None:
    info = info_of("linspace(0, 1, 5)")
    assert info.const
    np.testing.assert_allclose(info.value, [0.0, 0.25, 0.5, 0.75, 1.0])
    assert info_of("k * 3 + 1").value == 7
    assert not info_of("x + 1").const


def test_linspace_needs_a_constant_count() -> None:
    with pytest.raises(ExprError, match="constant"):
        check("linspace(0, 1, n)", global_scope())


def test_broadcast_error_quotes_the_source_with_a_caret() -> None:
    source = "x + y + grid2[0:1, 0:2]"
    with pytest.raises(ExprError) as info:
        check(source, global_scope())
    err = info.value
    assert "do not broadcast" in err.message
    assert "float array of shape 3" in err.message and "float array of shape 1x2" in err.message
    caret = err.caret()
    line, mark = caret.splitlines()
    assert line.strip() == source
    assert mark.strip() == "^"
    assert caret in str(err)


def test_caret_points_at_the_offending_name() -> None:
    source = "x + 2 * scroe"
    with pytest.raises(ExprError) as info:
        check(source, global_scope())
    line, mark = info.value.caret().splitlines()
    assert line[mark.index("^"):].startswith("scroe")


def test_index_must_be_int() -> None:
    with pytest.raises(ExprError, match="index must be an int"):
        check("y[x]", global_scope())


def test_out_of_range_constant_index() -> None:
    with pytest.raises(ExprError, match="out of bounds"):
        check("y[3]", global_scope())


def test_reduction_axis_out_of_range() -> None:
    with pytest.raises(ExprError, match="axis 2 is out of range"):
        check("sum(grid2, axis=2)", global_scope())


@pytest.mark.parametrize(("source", "message", "hint"), [
    ("scroe + 1", "undefined name `scroe`", "did you mean `score`?"),
    ("flg", "undefined name `flg`", "`flag`"),
    ("tabel[0, 0]", "undefined name `tabel`", "`table`"),
    ("summ(y)", "unknown function `summ`", "`sum`"),
    ("lenspace(0, 1, 3)", "unknown function `lenspace`", "`linspace`"),
    ("argmx(y)", "unknown function `argmx`", "`argmax`"),
])
def test_did_you_mean(source: str, message: str, hint: str) -> None:
    with pytest.raises(ExprError) as info:
        check(source, global_scope())
    assert message in info.value.message
    assert hint in info.value.hint


def test_function_used_as_a_name_says_call_it() -> None:
    with pytest.raises(ExprError, match="is a function"):
        check("sum + 1", global_scope())
