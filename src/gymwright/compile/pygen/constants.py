"""Module constants (spec identity, agents, action decoding, tables) and `make_params`."""

from __future__ import annotations

from gymwright.compile.common import spec_hash
from gymwright.compile.pygen.context import GenContext
from gymwright.compile.tables import baseline_tables, fixed_values


def tables(g: GenContext) -> None:
    """The module's tables: spec identity, agents, action decoding, the mechanics' tables."""
    cs, w = g.cs, g.w
    w(f"SPEC_NAME = {cs.spec.name!r}")
    w(f"SPEC_HASH = {spec_hash(cs)!r}")
    defaults = {k: p.default for k, p in cs.spec.params.items()}
    defaults.update(cs.params)
    w(f"DEFAULTS = {defaults!r}")
    specs = {k: (p.type, p.min, p.max) for k, p in cs.spec.params.items()}
    w(f"PARAM_SPECS = {specs!r}")
    w(f"STRUCTURAL = {{{', '.join(f'{k!r}: {cs.params[k]!r}' for k in sorted(cs.structural))}}}")
    w(f"AGENTS = {cs.agent_ids!r}")
    w("AGENT_INDEX = {a: i for i, a in enumerate(AGENTS)}")
    w(f"N_AGENTS = {g.n}")
    w(f"ROLE_OF = {[cs.role_of(i).name for i in range(g.n)]!r}")
    w("FLOAT32 = np.dtype(np.float32)", comment="the observations' dtype (numpy converts a type such as np.float32 at each call)")
    decode = {}
    for r in cs.roles:
        decode[r.name] = [(c.name, combo) for c in r.choices for combo in c.combos()]
    w("# per role: flat action index -> (choice, argument values)")
    w(f"DECODE = {decode!r}")
    for r in cs.roles:
        for c in r.choices:
            for arg in c.args:
                vals = [combo[arg.name] for combo in c.combos()]
                w(f"ARGV_{r.name}__{c.name}__{arg.name} = {vals!r}", comment=f"{c.path}.args.{arg.name} of each action of the choice")
    w(f"N_ACTIONS = {{{', '.join(f'{r.name!r}: {r.n_actions}' for r in cs.roles)}}}")
    w(f"CHOICES = {cs.choice_names!r}")
    w(f"ARGS = {cs.arg_names!r}")
    w(f"BASELINES = {[b.name for b in cs.baselines]!r}", comment="scripted baselines (spec `baselines:`)")
    w(f"STATE_VARS = {tuple(x.name for x in cs.state + cs.agent_state)!r}", comment="what a scenario may set")
    baseline_tables(w, cs)
    for part in g.parts:  # a mechanics module's tables (a grid's colours and layouts)
        part.constants(g)
    w("")
    w("")


def make_params(g: GenContext) -> None:
    """`Params`, `make_params` (param overrides checked against their types and ranges) and `Vars`."""
    cs, w = g.cs, g.w
    with w.block("class Params(Namespace):"):
        w('"""Param values, consts and derived sizes of one env instance (read as `p.<name>`)."""')
    w("")
    w("")
    with w.block("def make_params(overrides):"):
        w('"""Check param overrides against their types and ranges (ValueError naming the param)."""')
        w("unknown = sorted(set(overrides) - set(DEFAULTS))")
        with w.block("if unknown:"):
            w("raise ValueError(f'unknown param(s) {unknown}; this env has: {sorted(DEFAULTS)}' + rt_close(unknown, DEFAULTS))")
        w("p = Params()")
        with w.block("for name, (kind, lo, hi) in PARAM_SPECS.items():"):
            w("x = rt_param(name, kind, overrides.get(name, DEFAULTS[name]), lo, hi)")
            with w.block("if name in STRUCTURAL and x != STRUCTURAL[name]:"):
                w("raise ValueError(f'param `{name}` fixes shapes or agent counts; this module was generated for '")
                w("                 f'{name}={STRUCTURAL[name]!r}. Generate it again with that value (gymwright export --param).')")
            w("p._set(name, x)")
        for con in cs.constraints:  # conditions between params (spec `constraints:`)
            names = sorted(n for n in con.expr.names if n in cs.spec.params)
            shown = " + ', ' + ".join(f"{n + ' = '!r} + str(p.{n})" for n in names) or "''"
            with w.block(f"if not {g.em()(con.expr)}:", comment=con.path):
                w(f"raise ValueError({'params break constraint ' + con.describe() + ': '!r} + {shown})")
        fixed_values(w, cs)
        w("return p")
    w("")
    w("")
    with w.block("class Vars(Namespace):"):
        w('"""State of one episode (read as `v.<name>`)."""')
    w("")
    w("")
