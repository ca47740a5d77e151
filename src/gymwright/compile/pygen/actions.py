"""Actions: decoding the action dict, and the action masks (cached where they are flags only)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from gymwright.compile.pygen.base import NP_DTYPE, as_bool, is_true
from gymwright.compile.pygen.context import GenContext
from gymwright.spec.checked import CChoice, CRole
from gymwright.spec.expr.types import draws
from gymwright.spec.names import ident


def decode(g: GenContext) -> None:
    """The action dict -> this step's action arrays (inline in step); `illegal` lists the
    agents whose action was illegal (it counts as no action)."""
    w = g.w
    w("", comment="actions: set this step's choice and argument arrays")
    clear_step_actions(g)
    w(f"last = self._last = {filled(g, '-1')}")
    w("illegal = []")
    w("masks = self._masks")
    if g.cs.agent_end is not None:
        w("gone = self._gone")
    with w.block("if actions.__class__ is not dict:"):
        w("actions = rt_actions(actions)", comment="a mapping, or ValueError")
    with w.block("for agent, a in actions.items():"):
        w("i = AGENT_INDEX.get(agent)")
        with w.block("if i is None:"):
            w("raise ValueError(f'unknown agent {agent!r}; agents: {AGENTS}')")
        with w.block("if a is None or gone[i]:" if g.cs.agent_end is not None else "if a is None:"):
            w("continue", comment="no action (an agent whose own episode ended acts no more)" if g.cs.agent_end is not None else "")
        with w.block("if a.__class__ is not int:"):
            w("a = rt_action(agent, a, N_ACTIONS[ROLE_OF[i]])", comment="numpy ints and 1-element int arrays; ValueError for the rest")
        roles = g.cs.roles
        for k, r in enumerate(roles):
            ctx: AbstractContextManager[None]
            if len(roles) == 1:
                ctx = nullcontext()
            elif k == len(roles) - 1:
                ctx = w.block("else:", comment=f"actions.{r.name}")
            else:
                ctx = w.block(f"{'if' if k == 0 else 'elif'} i < {r.start + r.count}:", comment=f"actions.{r.name}")
            with ctx:
                decode_role(g, r)
        w("v.action[i] = a")
        w("last[i] = a")


WRITTEN_OUT = 4  # up to this many agents, a list of one value per agent is written out: [False, False]


def filled(g: GenContext, value: str) -> str:
    """A new list of `value` for every agent: `[x, x]` up to WRITTEN_OUT agents (one build,
    where `[x] * n` builds two lists), `[x] * N_AGENTS` beyond."""
    if g.n <= WRITTEN_OUT:
        return "[" + ", ".join([value] * g.n) + "]"
    return f"[{value}] * N_AGENTS"


def clear_step_actions(g: GenContext) -> None:
    """The step's choice and argument arrays, cleared (`clear_actions`, the lists written out up
    to WRITTEN_OUT agents: the step builds them every time)."""
    clear_actions(g, (lambda value: filled(g, value)) if g.n <= WRITTEN_OUT else None)


def clear_actions(g: GenContext, listed: Callable[[str], str] | None = None) -> None:
    """The choice and argument arrays, cleared; `listed(value)` writes a list of one value per
    agent (default `[value] * n`). Those read only as `x[scalar]` are lists (`g.list_actions`)."""
    w, n = g.w, g.n
    lists = g.list_actions
    fill = listed or (lambda value: f"[{value}] * {n}")
    zero = {"bool": "False", "int": "0", "float": "0.0"}
    for c in g.cs.choice_names:
        w(f"v.{ident(c)} = {fill('False')}" if c in lists else f"v.{ident(c)} = np.zeros({n}, dtype=bool)")
    for a, dt in g.cs.arg_names.items():
        w(f"v.{ident(a)} = {fill(zero[dt])}" if a in lists else f"v.{ident(a)} = np.zeros({n}, dtype={NP_DTYPE[dt]})")
    w(f"v.action = {fill('-1')}" if "action" in lists else f"v.action = np.full({n}, -1, dtype=np.int64)")


def decode_role(g: GenContext, r: CRole) -> None:
    """Check one action of an agent of role `r` (`i`, `a`) and set its choice and arguments."""
    w = g.w
    with w.block(f"if not 0 <= a < {r.n_actions}:"):
        w(f"raise ValueError(f'action {{a}} of {{agent}} is outside Discrete({r.n_actions}): give 0..{r.n_actions - 1}, or None for no action')")
    with w.block("if not masks[i][a]:"):
        w("illegal.append(agent)")
        w("last[i] = -2 - a")
        w("continue")
    for k, c in enumerate(r.choices):
        ctx: AbstractContextManager[None]
        if len(r.choices) == 1:
            ctx = nullcontext()
        elif k == len(r.choices) - 1:
            ctx = w.block("else:")
        else:
            ctx = w.block(f"{'if' if k == 0 else 'elif'} a < {c.offset + c.n}:")
        with ctx:
            w(f"v.{ident(c.name)}[i] = True", comment=f"{c.path}")
            for arg in c.args:
                w(f"v.{ident(arg.name)}[i] = ARGV_{r.name}__{c.name}__{arg.name}[a - {c.offset}]" if c.offset else
                  f"v.{ident(arg.name)}[i] = ARGV_{r.name}__{c.name}__{arg.name}[a]")


def masks(g: GenContext) -> None:
    cs, w = g.cs, g.w
    with w.block("def _compute_masks(self):"):
        w('"""Action masks of every agent (those made of per-choice flags only: cached, read-only)."""')
        w("p, v = self.p, self.v")
        w("cache = self._mask_cache")
        if cs.active is not None:
            w(f"active = int({g.em()(cs.active)})", comment=f"turns.active: {cs.active.source}")
        shared = {r.name: shared_flags(g, r) if scalar_legal(r) else {} for r in cs.roles}
        given = mask_inputs(g, shared)
        if given is None:
            masks_by_agent(g, shared, with_flags=True)
        else:
            for r in cs.roles:
                shared_flag_lines(g, r, shared[r.name])
            w(f"given = ({', '.join(given)}{',' if len(given) == 1 else ''})",
              comment="every agent's mask follows from these: one cached list per value" if given else
              "every agent's mask is the same at every step: one cached list")
            w("masks = cache.get(given)")
            with w.block("if masks is None:"):
                masks_by_agent(g, shared, with_flags=False)
                if cs.active is None:
                    w("cache[given] = masks")
                else:
                    with w.block("if 0 <= active < N_AGENTS:", comment="a turn outside the agents is not kept"):
                        w("cache[given] = masks")
        w("self._masks = masks")
    w("")
    with w.block("def _frozen_mask(self, key, role, spans):"):
        w("m = np.zeros(N_ACTIONS[role], dtype=np.int8)")
        with w.block("if key is not None:"):
            with w.block("for flag, (lo, hi) in zip(key, spans):"):
                w("m[lo:hi] = flag")
        w("m.setflags(write=False)")
        w("return m")
    w("")


def legal_code(g: GenContext, r: CRole, c: CChoice, listed: bool = False) -> str:
    """Code of `c`'s legal flag for agent `me`; `listed`: reading per-agent flags from the lists
    `x_` made before the agents' loop (`flags_from_lists`)."""
    legal = c.legal
    if legal is None or is_true(legal):
        return "True"
    em = g.em(per_agent=True, **{a.name: f"p._argv_{r.name}__{c.name}__{a.name}" for a in c.args})
    if listed:
        g.flags_from_lists(em, [legal.tree.body])
    return em(legal)


def masks_by_agent(g: GenContext, shared: dict[str, dict[str, str]], with_flags: bool) -> None:
    """`masks`: the list of every agent's mask, role by role and agent by agent (a cached mask
    per key); `with_flags`: each role's shared flags first (else they are computed already)."""
    w = g.w
    w("masks = []")
    for r in g.cs.roles:
        scalar = scalar_legal(r)
        if with_flags:
            shared_flag_lines(g, r, shared[r.name])
        legal = [c.legal.tree.body for c in r.choices if c.legal is not None]
        if scalar:
            g.read_lists(g.flags_from_lists(g.em(per_agent=True), legal))
        with w.block(f"for me in range({r.start}, {r.start + r.count}):", comment=f"actions.{r.name}"):
            if scalar:
                cached_mask(g, r, shared[r.name])
            else:
                built_mask(g, r)
            w("masks.append(m)")


def shared_flag_lines(g: GenContext, r: CRole, shared: dict[str, str]) -> None:
    for k, (code, name) in enumerate(shared.items()):
        g.w(f"{name} = {as_bool(code)}", comment="" if k else f"actions.{r.name}: flags that are the same for every agent")


def scalar_legal(r: CRole) -> bool:
    """Whether every legal flag of `r` is one bool per agent (its masks are then cached)."""
    return all(c.legal is None or not c.legal.info.shape for c in r.choices)


def mask_inputs(g: GenContext, shared: dict[str, dict[str, str]]) -> list[str] | None:
    """Where no legal flag depends on the agent (`me`), the locals that fix every agent's mask
    (the active agent and the shared flags), so that the whole list is cached per value;
    None where some flag is the agent's own."""
    for r in g.cs.roles:
        if not scalar_legal(r):
            return None
        for c in r.choices:
            code = legal_code(g, r, c)
            if code != "True" and code not in shared[r.name]:
                return None
    names = ["active"] if g.cs.active is not None else []
    return names + [name for r in g.cs.roles for name in shared[r.name].values()]


def shared_flags(g: GenContext, r: CRole) -> dict[str, str]:
    """Legal flags of role `r` that do not depend on `me` (and cannot raise: no indexing,
    no draws): computed once before the per-agent loop. Code -> local name."""
    out: dict[str, str] = {}
    for c in r.choices:
        if c.legal is None or "me" in c.legal.names or any(
                isinstance(n, ast.Subscript) or draws(n) for n in ast.walk(c.legal.tree)):
            continue
        code = legal_code(g, r, c)
        if code != "True" and code not in out:
            out[code] = f"legal_{r.name}_{len(out)}"
    return out


def cached_mask(g: GenContext, r: CRole, shared: dict[str, str]) -> None:
    w, cs = g.w, g.cs
    codes: dict[str, str] = dict(shared)  # legal code -> its local flag (choices often share one)
    for c in r.choices:
        code = legal_code(g, r, c, listed=True)
        if code not in codes and code != "True":
            codes[code] = f"f{len(codes)}"
    flags = ", ".join("True" if (code := legal_code(g, r, c, listed=True)) == "True" else codes[code] for c in r.choices)
    comment = "; ".join(f"{c.path}.legal: {c.legal.source if c.legal else True}" for c in r.choices)
    ctx = w.block("if me == active:") if cs.active is not None else nullcontext()
    with ctx:
        for code, name in codes.items():
            if code not in shared:
                w(f"{name} = {as_bool(code)}")
        w(f"key = ({r.name!r}, {flags})", comment=comment)
    if cs.active is not None:
        with w.block("else:"):
            w(f"key = ({r.name!r}, None)")
    spans = [(c.offset, c.offset + c.n) for c in r.choices]
    w("m = cache.get(key)")
    with w.block("if m is None:"):
        w(f"m = self._frozen_mask(key[1:] if key[1] is not None else None, {r.name!r}, {spans!r})")
        w("cache[key] = m")


def built_mask(g: GenContext, r: CRole) -> None:
    w, cs = g.w, g.cs
    w(f"m = np.zeros({r.n_actions}, dtype=np.int8)")
    ctx = w.block("if me == active:") if cs.active is not None else nullcontext()
    with ctx:
        for c in r.choices:
            sl = f"{c.offset}" if c.n == 1 else f"{c.offset}:{c.offset + c.n}"
            w(f"m[{sl}] = {legal_code(g, r, c)}", comment=f"{c.path}.legal: {c.legal.source if c.legal else True}")
