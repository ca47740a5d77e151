"""Emitters shared by both backends: fixed values on `p` and the scripted baselines' tables."""

from __future__ import annotations

from typing import Any

import numpy as np

from gymwright.compile.writer import Writer
from gymwright.spec.checked import CheckedSpec
from gymwright.spec.expr.functions import FUNCTIONS

TABLES = tuple(f.name for f in FUNCTIONS.values() if f.category == "table")  # constant calls: emitted as their value


def literal(value: Any) -> str:
    """Python source for a constant (numpy arrays keep their dtype)."""
    if isinstance(value, np.ndarray):
        dt = {"b": "bool", "i": "np.int64", "u": "np.int64", "f": "np.float64"}[value.dtype.kind]
        return f"np.array({value.tolist()!r}, dtype={dt})"
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


def fixed_values(w: Writer, cs: CheckedSpec) -> None:
    """`p.<name> = ...` for consts, agent counts and role masks, the constants of the mechanics
    modules (a grid's size and tile kinds, a channel's vocabulary), argument values."""
    n = cs.n_agents
    for name, value in cs.consts.items():
        w(f"p.{name} = {literal(value)}", comment=f"consts.{name}")
    w(f"p.n_agents = {n}")
    for r in cs.roles:
        w(f"p.n_{r.name} = {r.count}")
        w(f"p.is_{r.name} = {literal(np.array([i in r.indices for i in range(n)]))}")
    for name, value in cs.builtin_values.items():
        w(f"p.{name} = {literal(value)}")
    for r in cs.roles:
        for c in r.choices:
            combos = c.combos()
            for a in c.args:
                vals = np.array([x[a.name] for x in combos])
                w(f"p._argv_{r.name}__{c.name}__{a.name} = {literal(vals)}", comment=f"{c.path}.args.{a.name}")


def baseline_tables(w: Writer, cs: CheckedSpec) -> None:
    """`SCRIPT_VALUES_<role>__<choice>__<arg>`: the values of each argument a scripted baseline sets
    (float64: a baseline's value is played as the nearest of them)."""
    done = set()
    for b in cs.baselines:
        for role, rules in b.rules.items():
            for rule in rules:
                for a, _ in rule.args:
                    key = f"{role}__{rule.choice.name}__{a.name}"
                    if key not in done:
                        done.add(key)
                        w(f"SCRIPT_VALUES_{key} = {literal(a.values.astype(np.float64))}", comment=f"{rule.choice.path}.args.{a.name}")
