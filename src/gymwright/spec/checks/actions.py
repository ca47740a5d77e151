"""Actions (choices, argument values, legal conditions, messages) and turns."""

from __future__ import annotations

from typing import Any

import numpy as np

from gymwright.spec.checked import CArg, CChoice, CRole
from gymwright.spec.checks.base import RESERVED, CheckerBase
from gymwright.spec.expr.check import Checked, Symbol, const_eval
from gymwright.spec.expr.types import INF, Info
from gymwright.spec.limits import MAX_ACTIONS, MAX_ARG_VALUES
from gymwright.spec.mechanics.grid import DIRECTIONS


class ActionChecks(CheckerBase):
    """`actions` and `turns`."""

    def check_actions(self) -> None:
        self.arg_dtypes: dict[str, str] = {}
        self.choice_names: list[str] = []
        n = self.n_agents
        for role_name in self.spec.actions:
            if role_name not in self.spec.agents:
                self.error(f"actions.{role_name}", f"actions for unknown role `{role_name}`", f"roles: {', '.join(self.spec.agents)}")
        arg_infos: dict[str, tuple[float, float]] = {}
        for role in self.roles:
            choices = self.spec.actions.get(role.name)
            if not choices:
                self.error(f"actions.{role.name}", f"role `{role.name}` has no actions", "give every role at least one choice (e.g. `{name: wait}`)")
                continue
            offset = 0
            seen: set[str] = set()
            for i, ch in enumerate(choices):
                path = f"actions.{role.name}[{i}]"
                if ch.name in seen:
                    self.error(f"{path}.name", f"choice `{ch.name}` appears twice in role `{role.name}`")
                    continue
                seen.add(ch.name)
                args = self._check_args(ch.args, path, arg_infos)
                if args is not None and not self._fits_actions(role, ch.name, args, offset, f"{path}.args"):
                    args = None
                if args is None:  # reported; keep the names declared so later checks don't cascade
                    self.broken_choices.add((role.name, ch.name))
                    if ch.name not in self.choice_names:
                        self.choice_names.append(ch.name)
                    for aname in ch.args:
                        self.arg_dtypes.setdefault(aname, "float")
                        arg_infos.setdefault(aname, (0.0, 0.0))
                    continue
                cc = CChoice(role.name, ch.name, offset, args, None, path=path, doc=ch.doc)
                if ch.move is not None:
                    cc.move = DIRECTIONS[ch.move] if isinstance(ch.move, str) else tuple(ch.move)  # type: ignore[assignment]
                    if len(cc.move) != 2:  # type: ignore[arg-type]
                        self.error(f"{path}.move", f"move must be a direction or [drow, dcol], got {ch.move}")
                role.choices.append(cc)
                offset += cc.n
                if ch.name not in self.choice_names:
                    self.choice_names.append(ch.name)
        for name in self.choice_names:
            sym = Symbol(name, "action", Info("bool", (n,), 0.0, 1.0), f"v.{name}", "per agent: took this choice this step")
            self._declare_action(sym)
        for name, (lo, hi) in arg_infos.items():
            sym = Symbol(name, "arg", Info(self.arg_dtypes[name], (n,), min(lo, 0.0), max(hi, 0.0)), f"v.{name}", "per agent: argument value chosen this step (0 if not chosen)")
            self._declare_action(sym)
        self._declare_action(Symbol("action", "action", Info("int", (n,), -1.0, INF), "v.action", "per agent: flat action index taken (-1 = none)"))
        for role in self.roles:
            for cc, ch in zip(role.choices, [c for c in self.spec.actions.get(role.name, []) if c.name in {x.name for x in role.choices}], strict=False):
                self._check_legal(role, cc, ch.legal, ch.message)

    def _fits_actions(self, role: CRole, choice: str, args: list[CArg], offset: int, path: str) -> bool:
        """The role's action count stays within MAX_ACTIONS; computed from the argument sizes
        (a product), never by enumerating the combinations."""
        n = 1
        for a in args:
            n *= len(a.values)
        if offset + n <= MAX_ACTIONS:
            return True
        sizes = " x ".join(f"{len(a.values):,}" for a in args)
        alone = f"`{choice}` alone has {sizes} = {n:,}" if len(args) > 1 else f"`{choice}` has {n:,}"
        self.error(path, f"role `{role.name}` would have {offset + n:,} actions ({alone}); the limit is "
                   f"{MAX_ACTIONS:,} actions per role",
                   "every combination of argument values is one action: give arguments fewer values (e.g. "
                   "`linspace(0, 1, 11)`), or choose one argument per step with separate choices", value=offset + n)
        return False

    def _declare_action(self, sym: Symbol) -> None:
        if sym.name in self.symbols or sym.name in RESERVED - {"action"}:
            self.error("actions", f"action name `{sym.name}` clashes with a {self.symbols[sym.name].kind if sym.name in self.symbols else 'reserved name'} of the same name",
                       "rename the choice or argument")
            return
        self.action_symbols[sym.name] = sym

    def _check_args(self, args: dict[str, Any], path: str, arg_infos: dict[str, tuple[float, float]]) -> list[CArg] | None:
        out = []
        for aname, src in args.items():
            apath = f"{path}.args.{aname}"
            c = self.expr(src, self.scope("argument values"), apath)
            if c is None:
                return None
            value = const_eval(c.tree.body)
            if value is None or not c.info.const:
                self.error(apath, f"argument values must be constant (literals, params, consts), got `{c.source}`")
                return None
            arr = np.atleast_1d(np.asarray(value))
            if arr.ndim != 1 or arr.size == 0 or arr.size > MAX_ARG_VALUES:
                self.error(apath, f"argument values must be a 1-D list of 1..{MAX_ARG_VALUES} numbers, got shape {list(arr.shape)}",
                           "e.g. `linspace(0, 1, 11)`, `arange(5)` or `[1, 2, 5]`")
                return None
            self.structural |= {n for n in c.names if n in self.spec.params}
            dtype = c.info.dtype
            prev = self.arg_dtypes.get(aname)
            if prev is not None and prev != dtype:
                self.error(apath, f"argument `{aname}` is {dtype} here but {prev} in another choice", "use one dtype for an argument name, or rename one")
                return None
            self.arg_dtypes[aname] = dtype
            lo, hi = arg_infos.get(aname, (INF, -INF))
            arg_infos[aname] = (min(lo, float(arr.min())), max(hi, float(arr.max())))
            out.append(CArg(aname, arr.astype({"bool": bool, "int": np.int64, "float": np.float64}[dtype]), dtype))
        return out

    def _check_legal(self, role: CRole, cc: CChoice, legal: Any, message: Any) -> None:
        combos = cc.combos()
        k = len(combos)
        extra = {}
        for a in cc.args:
            vals = np.array([c[a.name] for c in combos])
            extra[a.name] = Symbol(a.name, "arg", Info(a.dtype, (k,), float(vals.min()), float(vals.max()), False, None),
                                   f"p._argv_{role.name}__{cc.name}__{a.name}")
        me = (role.start, role.start + role.count - 1)
        scope = self.scope(f"the legal condition of `{cc.name}`", per_agent=True, me=me, extra=extra)
        c = self.expr(legal, scope, f"{cc.path}.legal")
        if c is not None:
            if c.info.dtype != "bool" or c.info.shape not in ((), (k,)):
                self.error(f"{cc.path}.legal", f"legal must be a bool per agent (or per argument value), got {c.info.describe()}",
                           "compare, e.g. `phase == 0`")
            cc.legal = c
        if message is not None:
            if self.vocab is None:
                self.error(f"{cc.path}.message", "`message` needs a `channel:` section", "declare `channel: {vocab: N}`")
                return
            mscope = self.scope(f"the message of `{cc.name}`", per_agent=True, me=me, actions=True)
            m = self.expr(message, mscope, f"{cc.path}.message")
            if m is not None and (m.info.dtype != "int" or m.info.shape):
                self.error(f"{cc.path}.message", f"message must be an int symbol per agent, got {m.info.describe()}", "e.g. `word[me]`")
            cc.message = m

    def check_turns(self) -> Checked | None:
        turns = self.spec.turns
        if turns == "simultaneous":
            return None
        c = self.expr(turns.active, self.scope("turns.active"), "turns.active")  # type: ignore[union-attr]
        if c is None:
            return None
        if c.info.dtype not in ("int", "bool") or c.info.shape:
            self.error("turns.active", f"active must be a scalar int (an agent index), got {c.info.describe()}")
        elif c.info.lo < 0 or c.info.hi > self.n_agents - 1:
            if c.info.lo > -INF and c.info.hi < INF:
                self.error("turns.active", f"active can be {c.info.lo:g}..{c.info.hi:g} but agents are 0..{self.n_agents - 1}",
                           "use `x % n_agents` or clip()")
        return c
