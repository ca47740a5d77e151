"""Params (types, ranges, overrides), consts (literal, enum, computed) and structural params."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from gymwright.spec.checked import CConstraint
from gymwright.spec.checks.context import CheckContext
from gymwright.spec.expr.check import Symbol, const_eval
from gymwright.spec.expr.types import INF, Info
from gymwright.spec.limits import MAX_CONST_SIZE
from gymwright.spec.model import Const, Constraint, Enum


def check_params(ctx: CheckContext) -> None:
    """`params`: each value (the override or the default) of its type and in its range."""
    for name in ctx.overrides:
        if name not in ctx.spec.params:
            ctx.error(f"params.{name}", f"unknown param `{name}`", ctx.param_hint(name))
    for name, p in ctx.spec.params.items():
        path = f"params.{name}"
        given = name in ctx.overrides
        value = ctx.overrides.get(name, p.default)
        where = f"{path} (given {value!r})" if given else f"{path}.default"
        value = _coerce_param(ctx, value, p.type or "float", where)
        if value is None:  # reported; go on with the default so later checks don't cascade
            value = p.default
        if p.min is not None and p.max is not None and p.min > p.max:
            ctx.error(f"{path}.min", f"min {p.min:g} is larger than max {p.max:g}")
        if (p.min is not None and value < p.min) or (p.max is not None and value > p.max):
            ctx.error(where, f"param `{name}` = {value!r} is out of its range [{_fmt(p.min)}, {_fmt(p.max)}]",
                      f"choose a value in [{_fmt(p.min)}, {_fmt(p.max)}]", value=value)
        ctx.params[name] = value
        lo = float(p.min) if p.min is not None else -INF
        hi = float(p.max) if p.max is not None else INF
        if p.type == "bool":
            lo, hi = 0.0, 1.0
        ctx.declare(Symbol(name, "param", Info(p.type or "float", (), lo, hi, True, value), f"p.{name}", p.doc), path)


def check_constraints(ctx: CheckContext) -> list[CConstraint]:
    """`constraints`: scalar bools over params, each holding at the assignment checked; a broken
    one names itself, its doc and the params it reads."""
    out = []
    hidden = {n: "is not known where params are set (a constraint reads params only)"
              for n in [*ctx.spec.consts, *ctx.spec.state, *ctx.spec.agent_state, "t"]}
    for i, con in enumerate(ctx.spec.constraints):
        assert isinstance(con, Constraint), "EnvSpec's validator makes every constraint a Constraint"
        path = f"constraints[{i}]"
        c = ctx.expr(con.expr, ctx.scope("a constraint", hidden=hidden), f"{path}.expr")
        if c is None:
            continue
        if c.info.dtype != "bool" or c.info.shape:
            ctx.error(f"{path}.expr", f"a constraint must be one bool, got {c.info.describe()}",
                      "compare params, e.g. `n_players % 2 == 1` or `low < high`")
            continue
        checked = CConstraint(c, path, con.doc)
        value = const_eval(c.tree.body)
        if value is not None and not bool(value):
            names = sorted(n for n in c.names if n in ctx.spec.params)
            given = [n for n in names if n in ctx.overrides]
            values = ", ".join(f"{n} = {ctx.params[n]!r}" for n in names)
            where = "the params given" if given else "the params' defaults"
            ctx.error(path, f"{where} break constraint {checked.describe()}: {values}",
                      "choose values where it holds" + ("" if given else ", or change the defaults"),
                      value=c.source)
        out.append(checked)
    return out


def broken_constraints(spec: Any, params: dict[str, Any]) -> list[str]:
    """The errors of `params` (defaults for the rest) against the spec's params and constraints
    alone: cheap (no section past the params is checked), for whoever draws assignments."""
    if not spec.constraints:
        return []
    ctx = CheckContext(spec, {k: v for k, v in params.items() if k in spec.params})
    check_params(ctx)
    check_constraints(ctx)
    return [f"{d.path}: {d.message}" for d in ctx.diags if d.severity.value == "error"]


def _coerce_param(ctx: CheckContext, value: Any, dtype: str, where: str) -> Any:
    if dtype == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
            return value.lower() in ("true", "1")
    elif dtype == "int":
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    else:
        try:
            if not isinstance(value, bool):
                value = float(value)
                if math.isfinite(value):
                    return value
        except (TypeError, ValueError, OverflowError):
            pass
    article = "an" if dtype == "int" else "a"
    if dtype != "bool" and isinstance(value, float) and not math.isfinite(value):  # NaN fails no range check
        ctx.error(where, f"expected a finite {dtype} value, got {value!r}: NaN and infinities compare false "
                  "against every range, so no range check can hold them", f"give a finite {dtype}", value=repr(value))
        return None
    ctx.error(where, f"expected {article} {dtype} value, got {value!r}", f"give {article} {dtype}", value=value)
    return None


def check_consts(ctx: CheckContext) -> None:
    """Enums and literal consts; computed ones wait for the agent counts (check_computed_consts)."""
    for name, c in ctx.spec.consts.items():
        path = f"consts.{name}"
        if isinstance(c, Enum):
            for i, member in enumerate(c.enum):
                ctx.consts[member] = i
                ctx.declare(Symbol(member, "const", Info("int", (), i, i, True, i), f"p.{member}", f"{name} enum member"), f"{path}.enum[{i}]")
            continue
        raw = c.value if isinstance(c, Const) else c
        doc = c.doc if isinstance(c, Const) else ""
        if isinstance(raw, str):
            ctx.computed.append((name, raw, doc))
        else:
            declare_const(ctx, name, raw, doc)
            if name not in ctx.symbols:  # refused: what reads it is not reported again
                ctx.failed[name] = f"const `{name}` failed (see the error at consts.{name})"


def check_computed_consts(ctx: CheckContext) -> None:
    for name, source, doc in ctx.computed:
        errors = len(ctx.diags)
        value = computed_const(ctx, name, source, f"consts.{name}")
        if value is not None:
            declare_const(ctx, name, value, doc)
        if name not in ctx.symbols:  # refused: what reads it is not reported again
            cause = next((ctx.failed[n] for n in _names_in(source) if n in ctx.failed), None)
            ctx.failed[name] = cause if cause is not None and len(ctx.diags) == errors else \
                f"const `{name}` failed (see the error at consts.{name})"


def _names_in(source: str) -> list[str]:
    return re.findall(r"[A-Za-z_]\w*", source)


def declare_const(ctx: CheckContext, name: str, raw: Any, doc: str) -> None:
    path = f"consts.{name}"
    try:
        arr = np.asarray(raw)
    except ValueError:
        arr = np.asarray([], dtype=object)
    if arr.dtype.kind not in "biuf" or arr.size == 0:
        ctx.error(path, f"const `{name}` must be a number, a bool or a rectangular nested list of numbers, got {raw!r}",
                  "tables must have rows of equal length", value=raw)
        return
    dtype = {"b": "bool", "i": "int", "u": "int", "f": "float"}[arr.dtype.kind]
    value: Any = arr.item() if arr.shape == () else arr.astype({"bool": bool, "int": np.int64, "float": np.float64}[dtype])
    if arr.size > MAX_CONST_SIZE:
        ctx.error(path, f"const `{name}` has {arr.size:,} elements; the limit (MAX_CONST_SIZE) is {MAX_CONST_SIZE:,}",
                  "a const is a small table: give its params smaller values or filter it", value=arr.size)
        return
    ctx.consts[name] = value
    ctx.declare(Symbol(name, "const", Info(dtype, arr.shape, float(arr.min()), float(arr.max()), True, value), f"p.{name}", doc), path)


def computed_const(ctx: CheckContext, name: str, source: str, path: str) -> Any:
    """The value of a const written as an expression (None if refused). It is computed once,
    when the env is built, so every param it reads is structural (one value per module)."""
    why = "is not known when consts are computed (they are fixed when the env is built, before any episode)"
    hidden = {n: why for n in [*ctx.spec.state, *ctx.spec.agent_state, "t"]}
    c = ctx.expr(source, ctx.scope(f"const `{name}`", hidden=hidden), path)
    if c is None:
        return None
    value = const_eval(c.tree.body) if c.info.const else None
    if value is None:
        ctx.error(path, f"const `{name}` must be constant (literals, params, earlier consts), got `{c.source}`",
                  "state, actions, `t` and random draws are not known when the env is built")
        return None
    params = {n for n in c.names if ctx.symbols[n].kind == "param"}
    for p in sorted(params):
        if ctx.spec.params[p].type == "float":
            ctx.error(path, f"const `{name}` reads float param `{p}`: a computed const is fixed when the env "
                      "is built, so the params it reads must be int or bool", f"write `{c.source}` where it is used instead")
            return None
    ctx.structural |= params
    return value.tolist() if isinstance(value, np.ndarray) else value


def check_shape_params(ctx: CheckContext) -> None:
    """Params that size arrays or count agents must be ints. Only those: a float param that is
    structural for another reason (the values of an action argument, `linspace(-speed, speed, 5)`)
    is fixed per module, and a float is right for it."""
    sizing = ctx.sizing | ctx.shape_names
    for name in sorted(ctx.structural & sizing):
        p = ctx.spec.params.get(name)
        if p is not None and p.type == "float":
            ctx.error(f"params.{name}", f"param `{name}` sizes arrays or counts agents, so it must be an int", "set `type: int`")


def _fmt(v: float | None) -> str:
    return "-inf" if v is None else f"{v:g}"
