"""Rewards and their terms (a method, or written out per agent), and the unrolled step outputs."""

from __future__ import annotations

from collections.abc import Callable

from gymwright.compile.pyexpr import hoist
from gymwright.compile.pygen.base import uses_me_or_random
from gymwright.compile.pygen.context import GenContext
from gymwright.compile.pygen.observe import Observations
from gymwright.spec.checked import CRole


def rewards(g: GenContext) -> None:
    cs, w = g.cs, g.w
    with w.block("def _rewards(self):"):
        w('"""Reward of every agent and the value of each of its terms."""')
        w("p, v = self.p, self.v")
        w(f"rewards = [0.0] * {g.n}")
        w(f"terms = [None] * {g.n}")
        for r in cs.roles:
            em = g.em(per_agent=True)
            for name, code in hoist(em, [t.expr.tree.body for t in r.terms], f"h_{r.name}_"):
                w(f"{name} = {code}", comment="the same for every agent")
            with w.block(f"for me in range({r.start}, {r.start + r.count}):", comment=f"rewards.{r.name}"):
                names = []
                for j, term in enumerate(r.terms):
                    w(f"x{j} = float({em(term.expr)})", comment=f"{term.path}: {term.name} = {term.expr.source}")
                    names.append(f"{term.name!r}: x{j}")
                total = " + ".join(f"x{j}" if t.weight == 1.0 else f"{t.weight!r} * x{j}" for j, t in enumerate(r.terms)) or "0.0"
                w(f"rewards[me] = {total}")
                w("terms[me] = {" + ", ".join(names) + "}")
        w("return rewards, terms")
    w("")


def rewards_inline(g: GenContext) -> None:
    """Rewards and their terms, agent by agent: locals x<i>_<j> (term j of agent i), r<i>."""
    cs, w = g.cs, g.w
    for r in cs.roles:
        em = g.em(per_agent=True)
        trees = [t.expr.tree.body for t in r.terms]
        for name, code in hoist(em, trees, f"h_{r.name}_"):
            w(f"{name} = {code}", comment="the same for every agent")
        g.read_lists(g.flags_from_lists(em, trees))
        for i in range(r.start, r.start + r.count):
            em.overrides["me"] = str(i)
            g.flags_from_lists(em, trees, str(i))
            w("", comment=f"rewards.{r.name} of {cs.agent_ids[i]}")
            names = [term_local(r, i, j) for j in range(len(r.terms))]
            for j, term in enumerate(r.terms):
                if names[j] == f"x{i}_{j}":  # else the first agent's, the same for every agent
                    w(f"x{i}_{j} = float({em(term.expr)})",
                      comment=f"{term.path}: {term.name} = {term.expr.source}" if i == r.start else "")
            total = " + ".join(x if t.weight == 1.0 else f"{t.weight!r} * {x}" for x, t in zip(names, r.terms, strict=True)) or "0.0"
            w(f"r{i} = {total}")
    w(f"rewards = [{', '.join(f'r{i}' for i in range(g.n))}]")


def term_local(r: CRole, i: int, j: int) -> str:
    """The local holding term j of agent i's reward: the role's first agent's for a term the
    same for every agent (no `me`, no random draw: computed once)."""
    return f"x{r.start}_{j}" if not uses_me_or_random(r.terms[j].expr) else f"x{i}_{j}"


def outputs_unrolled(g: GenContext, observations: Observations) -> None:
    """The unrolled step's outputs, agent by agent (its observations written out by `observations`)."""
    cs, w = g.cs, g.w
    ids = cs.agent_ids
    def unpack(prefix: str) -> str:
        return ", ".join(f"{prefix}{i}" for i in range(g.n)) + ("," if g.n == 1 else "")

    w(f"{unpack('m')} = self._masks")
    w(f"{unpack('g')} = self._returns")
    w(f"self._returns = [{', '.join(f'g{i} + r{i}' for i in range(g.n))}]")

    def literal(name: str, value: Callable[[int], str]) -> None:
        w(f"{name} = {{")
        for i in range(g.n):
            w(f"    {ids[i]!r}: {value(i)},")
        w("}")

    observations.observe_all_calls()
    # one statement, so that the wrapper splits an observation written out (`obs_code`) too
    w("obs = {" + ", ".join(f"{ids[i]!r}: {observations.obs_code(i)}" for i in range(g.n)) + "}")
    literal("rew", lambda i: f"r{i}")
    literal("term", lambda i: "terminated")
    literal("trunc", lambda i: "truncated")
    terms = {i: ", ".join(f"{t.name!r}: {term_local(cs.role_of(i), i, j)}" for j, t in enumerate(cs.role_of(i).terms))
             for i in range(g.n)}
    literal("infos", lambda i: f"{{'action_mask': m{i}, 'reward_terms': {{{terms[i]}}}}}")
