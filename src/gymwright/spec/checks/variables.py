"""`state` and `agent_state` variables: shapes, inits, bounds and the state's size limit."""

from __future__ import annotations

import re

from gymwright.spec.checked import CVar
from gymwright.spec.checks.context import CheckContext
from gymwright.spec.expr.check import Symbol
from gymwright.spec.expr.types import INF, Info
from gymwright.spec.limits import MAX_STATE_SIZE, state_values
from gymwright.spec.model import Var


def check_vars(ctx: CheckContext, section: str, per_agent: bool) -> list[CVar]:
    """`state` (`per_agent` False) or `agent_state`: each variable checked and declared, in order."""
    out = []
    decl: dict[str, Var] = getattr(ctx.spec, section)
    later = {name: f"is declared after this variable in {section}; move it earlier to use it in init" for name in decl}
    for name, var in decl.items():
        path = f"{section}.{name}"
        later.pop(name)
        cvar = _check_var(ctx, name, var, path, per_agent, later)
        if cvar is None:
            continue
        out.append(cvar)
        full = ((ctx.n_agents,) if per_agent else ()) + cvar.shape
        ctx.declare(Symbol(name, section, Info(cvar.dtype, full, cvar.lo, cvar.hi), f"v.{name}", var.doc), path)
    return out


def _count_state(ctx: CheckContext, name: str, shape: tuple[int, ...], per_agent: bool, path: str) -> None:
    """Add a variable's values to the state's total, refusing it past MAX_STATE_SIZE."""
    if ctx.state_size is None:  # the first variable: start from the mechanics modules' built-ins
        ctx.state_size = sum(state_values(v.shape, ctx.n_agents if v.per_agent else 1)
                             for v in ctx.builtin_state + ctx.builtin_agent_state)
    n = state_values(shape, ctx.n_agents if per_agent else 1)
    if ctx.state_size + n <= MAX_STATE_SIZE:
        ctx.state_size += n
        return
    sizes = ([f"{ctx.n_agents} agents"] if per_agent else []) + [f"{d:,}" for d in shape]
    held = f"{' x '.join(sizes)} = {n:,}" if len(sizes) > 1 else f"{n:,}"
    where = f"`{name}` alone holds {held} values" if n > MAX_STATE_SIZE else \
        f"state and agent_state would hold {ctx.state_size + n:,} values with `{name}` ({held})"
    ctx.error(path, f"{where}; the limit for all state and agent_state together is {MAX_STATE_SIZE:,}",
              "keep state small (a short history window, a small grid); agent_state is multiplied by the "
              "number of agents", value=n)


def _check_var(ctx: CheckContext, name: str, var: Var, path: str, per_agent: bool, later: dict[str, str]) -> CVar | None:
    shape = []
    before = set(ctx.structural)
    for i, d in enumerate(var.shape):
        v = d if isinstance(d, int) else ctx.const_int(d, f"{path}.shape[{i}]", "dimension", 1, MAX_STATE_SIZE)
        if v is None:
            return None
        if v < 1:
            ctx.error(f"{path}.shape[{i}]", f"dimension is {v}; it must be >= 1")
            return None
        shape.append(v)
    ctx.shape_params[name] = {n for d in var.shape if isinstance(d, str) for n in re.findall(r"[A-Za-z_]\w*", d) if n in ctx.spec.params}
    ctx.structural |= before
    _count_state(ctx, name, tuple(shape), per_agent, f"{path}.shape")
    where = f"{path}.init"
    scope = ctx.scope(f"the init of `{name}`", per_agent=per_agent, random=True, hidden=later)
    init = ctx.expr(var.init, scope, where)
    dtype = var.type or (init.info.dtype if init is not None else "float")
    if init is not None:
        ctx.assignable(init, dtype, tuple(shape), where, name)
    (lo, lo_c), (hi, hi_c) = ctx.bound(var.min, f"{path}.min", -INF, "lo"), ctx.bound(var.max, f"{path}.max", INF, "hi")
    if dtype == "bool":
        lo, hi, lo_c, hi_c = 0.0, 1.0, None, None
    return CVar(name, dtype, tuple(shape), init, lo, hi, per_agent, var.private, var.doc, path,
                min_expr=lo_c, max_expr=hi_c)
