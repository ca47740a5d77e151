"""`state` and `agent_state` variables: shapes, inits, bounds and the state's size limit."""

from __future__ import annotations

import re

from gymwright.spec.checked import CVar
from gymwright.spec.checks.base import CheckerBase
from gymwright.spec.expr.check import Symbol
from gymwright.spec.expr.types import INF, Info
from gymwright.spec.limits import MAX_STATE_SIZE, state_values
from gymwright.spec.model import Var


class VarChecks(CheckerBase):
    """`state` and `agent_state`."""

    def check_vars(self, section: str, per_agent: bool) -> list[CVar]:
        out = []
        decl: dict[str, Var] = getattr(self.spec, section)
        later = {name: f"is declared after this variable in {section}; move it earlier to use it in init" for name in decl}
        for name, var in decl.items():
            path = f"{section}.{name}"
            later.pop(name)
            cvar = self._check_var(name, var, path, per_agent, later)
            if cvar is None:
                continue
            out.append(cvar)
            full = ((self.n_agents,) if per_agent else ()) + cvar.shape
            self.declare(Symbol(name, section, Info(cvar.dtype, full, cvar.lo, cvar.hi), f"v.{name}", var.doc), path)
        return out

    def _count_state(self, name: str, shape: tuple[int, ...], per_agent: bool, path: str) -> None:
        """Add a variable's values to the state's total, refusing it past MAX_STATE_SIZE."""
        if self.state_size is None:  # the first variable: start from the mechanics modules' built-ins
            self.state_size = sum(state_values(v.shape, self.n_agents if v.per_agent else 1)
                                  for v in self.builtin_state + self.builtin_agent_state)
        n = state_values(shape, self.n_agents if per_agent else 1)
        if self.state_size + n <= MAX_STATE_SIZE:
            self.state_size += n
            return
        sizes = ([f"{self.n_agents} agents"] if per_agent else []) + [f"{d:,}" for d in shape]
        held = f"{' x '.join(sizes)} = {n:,}" if len(sizes) > 1 else f"{n:,}"
        where = f"`{name}` alone holds {held} values" if n > MAX_STATE_SIZE else \
            f"state and agent_state would hold {self.state_size + n:,} values with `{name}` ({held})"
        self.error(path, f"{where}; the limit for all state and agent_state together is {MAX_STATE_SIZE:,}",
                   "keep state small (a short history window, a small grid); agent_state is multiplied by the "
                   "number of agents", value=n)

    def _check_var(self, name: str, var: Var, path: str, per_agent: bool, later: dict[str, str]) -> CVar | None:
        shape = []
        before = set(self.structural)
        for i, d in enumerate(var.shape):
            v = d if isinstance(d, int) else self.const_int(d, f"{path}.shape[{i}]", "dimension", 1, MAX_STATE_SIZE)
            if v is None:
                return None
            if v < 1:
                self.error(f"{path}.shape[{i}]", f"dimension is {v}; it must be >= 1")
                return None
            shape.append(v)
        self.shape_params[name] = {n for d in var.shape if isinstance(d, str) for n in re.findall(r"[A-Za-z_]\w*", d) if n in self.spec.params}
        self.structural |= before
        self._count_state(name, tuple(shape), per_agent, f"{path}.shape")
        ctx = f"{path}.init"
        scope = self.scope(f"the init of `{name}`", per_agent=per_agent, random=True, hidden=later)
        init = self.expr(var.init, scope, ctx)
        dtype = var.type or (init.info.dtype if init is not None else "float")
        if init is not None:
            self._assignable(init, dtype, tuple(shape), ctx, name)
        (lo, lo_c), (hi, hi_c) = self._bound(var.min, f"{path}.min", -INF, "lo"), self._bound(var.max, f"{path}.max", INF, "hi")
        if dtype == "bool":
            lo, hi, lo_c, hi_c = 0.0, 1.0, None, None
        return CVar(name, dtype, tuple(shape), init, lo, hi, per_agent, var.private, var.doc, path,
                    min_expr=lo_c, max_expr=hi_c)
