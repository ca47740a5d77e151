"""Actions (choices, argument values, legal conditions, the mechanics modules' keys) and turns."""

from __future__ import annotations

from typing import Any

import numpy as np

from gymwright.mechanics.registry import MECHANICS
from gymwright.spec.checked import CArg, CChoice, CRole
from gymwright.spec.checks.context import CheckContext
from gymwright.spec.expr.check import Checked, Symbol, const_eval
from gymwright.spec.expr.types import INF, Info
from gymwright.spec.limits import MAX_ACTIONS, MAX_ARG_VALUES
from gymwright.spec.model import Choice
from gymwright.spec.names import ident, suggestion


def check_actions(ctx: CheckContext) -> None:
    """`actions`: each role's choices, their arguments and `legal`, and the action symbols."""
    n = ctx.n_agents
    for role_name in ctx.spec.actions:
        if role_name not in ctx.spec.agents:
            ctx.error(f"actions.{role_name}", f"actions for unknown role `{role_name}`", f"roles: {', '.join(ctx.spec.agents)}")
    arg_infos: dict[str, tuple[float, float]] = {}
    for role in ctx.roles:
        choices = ctx.spec.actions.get(role.name)
        if not choices:
            ctx.error(f"actions.{role.name}", f"role `{role.name}` has no actions", "give every role at least one choice (e.g. `{name: wait}`)")
            continue
        offset = 0
        seen: set[str] = set()
        for i, ch in enumerate(choices):
            path = f"actions.{role.name}[{i}]"
            if ch.name in seen:
                ctx.error(f"{path}.name", f"choice `{ch.name}` appears twice in role `{role.name}`")
                continue
            seen.add(ch.name)
            args = _check_args(ctx, ch.args, path, arg_infos)
            if args is not None and not _fits_actions(ctx, role, ch.name, args, offset, f"{path}.args"):
                args = None
            if args is None:  # reported; keep the names declared so later checks don't cascade
                ctx.broken_choices.add((role.name, ch.name))
                if ch.name not in ctx.choice_names:
                    ctx.choice_names.append(ch.name)
                for aname in ch.args:
                    ctx.arg_dtypes.setdefault(aname, "float")
                    arg_infos.setdefault(aname, (0.0, 0.0))
                continue
            role.choices.append(CChoice(role.name, ch.name, offset, args, None, path=path, doc=ch.doc))
            offset += role.choices[-1].n
            if ch.name not in ctx.choice_names:
                ctx.choice_names.append(ch.name)
    for name in ctx.choice_names:
        sym = Symbol(name, "action", Info("bool", (n,), 0.0, 1.0), f"v.{ident(name)}", "per agent: took this choice this step")
        _declare_action(ctx, sym)
    for name, (lo, hi) in arg_infos.items():
        sym = Symbol(name, "arg", Info(ctx.arg_dtypes[name], (n,), min(lo, 0.0), max(hi, 0.0)), f"v.{ident(name)}", "per agent: argument value chosen this step (0 if not chosen)")
        _declare_action(ctx, sym)
    _declare_action(ctx, Symbol("action", "action", Info("int", (n,), -1.0, INF), "v.action", "per agent: flat action index taken (-1 = none)"))
    for role in ctx.roles:
        kept = {x.name for x in role.choices}
        for cc, ch in zip(role.choices, [c for c in ctx.spec.actions.get(role.name, []) if c.name in kept], strict=False):
            _check_legal(ctx, role, cc, ch)
            for m in MECHANICS.values():  # the keys a mechanics module adds to a choice (`move`, `message`)
                m.checks.choice(ctx, role, cc, ch)


def _fits_actions(ctx: CheckContext, role: CRole, choice: str, args: list[CArg], offset: int, path: str) -> bool:
    """The role's action count stays within MAX_ACTIONS; computed from the argument sizes
    (a product), never by enumerating the combinations."""
    n = 1
    for a in args:
        n *= len(a.values)
    if offset + n <= MAX_ACTIONS:
        return True
    sizes = " x ".join(f"{len(a.values):,}" for a in args)
    alone = f"`{choice}` alone has {sizes} = {n:,}" if len(args) > 1 else f"`{choice}` has {n:,}"
    ctx.error(path, f"role `{role.name}` would have {offset + n:,} actions ({alone}); the limit is "
              f"{MAX_ACTIONS:,} actions per role",
              "every combination of argument values is one action: give arguments fewer values (e.g. "
              "`linspace(0, 1, 11)`), or choose one argument per step with separate choices", value=offset + n)
    return False


def _declare_action(ctx: CheckContext, sym: Symbol) -> None:
    """A choice or argument name expressions may read. A reserved one never gets here: the schema
    (`spec.fields.ChoiceName`, `ArgName`) refuses it, saying what for (`spec.names.name_problem`)."""
    kind = "choice" if sym.kind == "action" else "argument"
    if sym.name in ctx.symbols:
        ctx.error("actions", f"action name `{sym.name}` clashes with a {ctx.symbols[sym.name].kind} of the same name",
                  f"rename the {kind} (e.g. `{suggestion(sym.name, kind)}`)")
        return
    ctx.action_symbols[sym.name] = sym


def _check_args(ctx: CheckContext, args: dict[str, Any], path: str, arg_infos: dict[str, tuple[float, float]]) -> list[CArg] | None:
    out = []
    for aname, src in args.items():
        apath = f"{path}.args.{aname}"
        c = ctx.expr(src, ctx.scope("argument values"), apath)
        if c is None:
            return None
        value = const_eval(c.tree.body)
        if value is None or not c.info.const:
            ctx.error(apath, f"argument values must be constant (literals, params, consts), got `{c.source}`")
            return None
        arr = np.atleast_1d(np.asarray(value))
        if arr.ndim != 1 or arr.size == 0 or arr.size > MAX_ARG_VALUES:
            ctx.error(apath, f"argument values must be a 1-D list of 1..{MAX_ARG_VALUES} numbers, got shape {list(arr.shape)}",
                      "e.g. `linspace(0, 1, 11)`, `arange(5)` or `[1, 2, 5]`")
            return None
        ctx.structural |= {n for n in c.names if n in ctx.spec.params}
        dtype = c.info.dtype
        prev = ctx.arg_dtypes.get(aname)
        if prev is not None and prev != dtype:
            ctx.error(apath, f"argument `{aname}` is {dtype} here but {prev} in another choice", "use one dtype for an argument name, or rename one")
            return None
        ctx.arg_dtypes[aname] = dtype
        lo, hi = arg_infos.get(aname, (INF, -INF))
        arg_infos[aname] = (min(lo, float(arr.min())), max(hi, float(arr.max())))
        out.append(CArg(aname, arr.astype({"bool": bool, "int": np.int64, "float": np.float64}[dtype]), dtype))
    return out


def _check_legal(ctx: CheckContext, role: CRole, cc: CChoice, ch: Choice) -> None:
    combos = cc.combos()
    k = len(combos)
    extra = {}
    for a in cc.args:
        vals = np.array([c[a.name] for c in combos])
        extra[a.name] = Symbol(a.name, "arg", Info(a.dtype, (k,), float(vals.min()), float(vals.max()), False, None),
                               f"p._argv_{role.name}__{cc.name}__{a.name}")
    scope = ctx.scope(f"the legal condition of `{cc.name}`", per_agent=True, me=role_span(role), extra=extra)
    c = ctx.expr(ch.legal, scope, f"{cc.path}.legal")
    if c is not None:
        if c.info.dtype != "bool" or c.info.shape not in ((), (k,)):
            ctx.error(f"{cc.path}.legal", f"legal must be a bool per agent (or per argument value), got {c.info.describe()}",
                      "compare, e.g. `phase == 0`")
        cc.legal = c


def role_span(role: CRole) -> tuple[int, int]:
    """The first and last agent index of `role` (the range of `me` in its per-agent places)."""
    return role.start, role.start + role.count - 1


def check_turns(ctx: CheckContext) -> Checked | None:
    """`turns`: `simultaneous`, or an `active` agent index per step."""
    turns = ctx.spec.turns
    if isinstance(turns, str):  # "simultaneous"
        return None
    c = ctx.expr(turns.active, ctx.scope("turns.active"), "turns.active")
    if c is None:
        return None
    if c.info.dtype not in ("int", "bool") or c.info.shape:
        ctx.error("turns.active", f"active must be a scalar int (an agent index), got {c.info.describe()}")
    elif c.info.lo < 0 or c.info.hi > ctx.n_agents - 1:
        if c.info.lo > -INF and c.info.hi < INF:
            ctx.error("turns.active", f"active can be {c.info.lo:g}..{c.info.hi:g} but agents are 0..{ctx.n_agents - 1}",
                      "use `x % n_agents` or clip()")
    return c
