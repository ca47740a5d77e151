"""Emitters shared by both backends: fixed values on `p` and the grid tables of a module."""

from __future__ import annotations

from typing import Any

import numpy as np

from gymwright.compile.writer import Writer
from gymwright.spec.checked import CheckedSpec
from gymwright.spec.expr.functions import FUNCTIONS

GRID_SITE = 1 << 20  # first draw site of grid layouts (expression sites are numbered from 1)
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
    """`p.<name> = ...` for consts, agent counts and role masks, tile kinds, vocab, argument values."""
    n = cs.n_agents
    for name, value in cs.consts.items():
        w(f"p.{name} = {literal(value)}", comment=f"consts.{name}")
    w(f"p.n_agents = {n}")
    for r in cs.roles:
        w(f"p.n_{r.name} = {r.count}")
        w(f"p.is_{r.name} = {literal(np.array([i in r.indices for i in range(n)]))}")
    if cs.grid:
        w(f"p.height, p.width = {cs.grid.height}, {cs.grid.width}")
        for k, kind in enumerate(cs.grid.kinds):
            w(f"p.{kind} = {k}")
    if cs.vocab is not None:
        w(f"p.vocab = {cs.vocab}")
    for r in cs.roles:
        for c in r.choices:
            combos = c.combos()
            for a in c.args:
                vals = np.array([x[a.name] for x in combos])
                w(f"p._argv_{r.name}__{c.name}__{a.name} = {literal(vals)}", comment=f"{c.path}.args.{a.name}")


def grid_tables(w: Writer, cs: CheckedSpec) -> None:
    """Module constants of the grid module: kinds, passability, fixed map, starts and goals."""
    g = cs.grid
    if g is None:
        return
    w(f"GRID_CHARS = {g.chars!r}")
    w(f"GRID_COLORS = {[list(c) for c in g.colors]!r}")
    w(f"GRID_BLOCKED = {g.blocked!r}")
    w(f"GRID_PASSABLE = np.array({g.passable!r}, dtype=bool)")
    w(f"GRID_MAP = {literal(g.fixed_map) if g.fixed_map is not None else None}")
    w(f"GRID_STARTS = {literal(g.starts) if g.starts is not None else None}")
    w(f"GRID_GOALS = {literal(g.goals) if g.goals is not None else None}")
    w(f"GRID_SITE = {GRID_SITE}")


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
