"""Static checks beyond typing: declarations nothing reads, rewards that cannot teach."""

from __future__ import annotations

from gymwright.diagnostic import Diagnostic, warning
from gymwright.spec.checked import CheckedSpec
from gymwright.spec.model import Enum

STAGE = "static"


def static_findings(cs: CheckedSpec) -> list[Diagnostic]:
    return unused_declarations(cs) + silent_rewards(cs)


def unused_declarations(cs: CheckedSpec) -> list[Diagnostic]:
    """Params, consts and variables that no expression reads."""
    out = []
    used = cs.used
    for name in cs.spec.params:
        if name not in used:
            out.append(warning(STAGE, f"params.{name}", f"param `{name}` is never used",
                               "use it in an expression, or remove it: an unused knob misleads the engineer"))
    for name, c in cs.spec.consts.items():
        members = c.enum if isinstance(c, Enum) else [name]
        if not any(m in used for m in members):
            out.append(warning(STAGE, f"consts.{name}", f"const `{name}` is never used", "use it or remove it"))
    for var in cs.state + cs.agent_state:
        if not var.builtin and var.name not in used:
            out.append(warning(STAGE, var.path, f"variable `{var.name}` is never read (not observed, rewarded, "
                               "tested by a rule or an end condition)",
                               "observe it, use it, or remove it"))
    return out


def silent_rewards(cs: CheckedSpec) -> list[Diagnostic]:
    """Roles without reward and terms that are zero by their form."""
    out = []
    for role in cs.roles:
        if not role.terms:
            out.append(warning(STAGE, f"rewards.{role.name}", f"role `{role.name}` gets no reward: it has nothing to learn",
                               "add reward terms for it"))
        for term in role.terms:
            info = term.expr.info
            if term.weight == 0:
                out.append(warning(STAGE, term.path + ".weight", f"reward term `{term.name}` has weight 0",
                                   "give it a non-zero weight or remove it"))
            elif info.lo == 0 and info.hi == 0:
                out.append(warning(STAGE, term.path + ".expr", f"reward term `{term.name}` can never be non-zero: "
                                   f"`{term.expr.source}` is always 0 by its form",
                                   "check the expression: a term that is always 0 teaches nothing"))
    return out
