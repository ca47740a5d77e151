"""What the Python backend's parts (`compile/pygen/*`, a mechanics module's `python.py`) share
besides their `GenContext` (`pygen/context.py`): analyses of checked trees and small code helpers."""

from __future__ import annotations

import ast
from collections.abc import Collection

from gymwright.compile.pyexpr import PyEmitter
from gymwright.mechanics.registry import MECHANICS
from gymwright.spec.checked import CheckedSpec
from gymwright.spec.expr.check import Checked
from gymwright.spec.expr.types import draws
from gymwright.spec.names import ident

NP_DTYPE = {"bool": "bool", "int": "np.int64", "float": "np.float64"}


def uses_me_or_random(c: Checked) -> bool:
    if "me" in c.names:
        return True
    return any(draws(n) for n in ast.walk(c.tree))


def all_trees(cs: CheckedSpec) -> list[ast.AST]:
    """Every checked expression tree of the spec (for whole-spec analyses)."""
    found: list[Checked | None] = [cs.terminate, cs.truncate, cs.active]
    found += [x for var in cs.state + cs.agent_state for x in (var.init, var.min_expr, var.max_expr)]
    found += [r.when for r in cs.rules] + [c for r in cs.rules for _, c in r.sets]
    found += [m.expr for m in cs.metrics] + [e for pr in cs.probes for e in pr.expect]
    for role in cs.roles:
        found += [t.expr for t in role.terms] + [f.expr for f in role.features]
        found += [c.legal for c in role.choices]
        found += [part[0] for part in (role.text_observe or []) if not isinstance(part, str)]
    found += [part[0] for part in (cs.text_render or []) if not isinstance(part, str)]
    for m in MECHANICS.values():  # a mechanics module's own (a grid's can_move, a channel's messages)
        if m.name in cs.mechanics:
            found += m.checks.expressions(cs)
    return [c.tree for c in found if c is not None]


def draws_after_reset(cs: CheckedSpec) -> bool:
    """Whether the env may draw random numbers after `reset` (a random call in any expression
    but the variables' start values, the baselines' included, or a mechanics module): only then
    does `step` keep its draws' step counter (`v._rng.step`) up to date."""
    inits = {id(var.init.tree) for var in cs.state + cs.agent_state if var.init is not None}
    trees = [t for t in all_trees(cs) if id(t) not in inits]
    trees += [c.tree for b in cs.baselines for rules in b.rules.values() for rule in rules
              for c in ([rule.when] if rule.when is not None else []) + [x for _, x in rule.args]]
    return bool(cs.mechanics) or any(draws(n) for t in trees for n in ast.walk(t))


IMPLICIT = {name for m in MECHANICS.values() for name in m.implicit}  # read by functions without being named (a grid's tile(p): tiles)


def as_bool(code: str) -> str:
    return code if code.startswith("bool(") or code in ("True", "False") else f"bool({code})"


def unconditional(root: ast.AST, target: ast.AST) -> bool:
    """True if `target` is evaluated whenever `root` is (not inside a branch or a short-circuit)."""
    def walk(node: ast.AST) -> bool | None:
        if node is target:
            return True
        for child in ast.iter_child_nodes(node):
            found = walk(child)
            if found is not None:
                guarded = isinstance(node, ast.IfExp) and child is not node.test or \
                    isinstance(node, ast.BoolOp) and child is not node.values[0]
                return found and not guarded
        return None
    return bool(walk(root))


def is_true(c: Checked | None) -> bool:
    return c is None or c.source == "True"


def own_read(em: PyEmitter, node: ast.AST, names: Collection[str]) -> str | None:
    """The name x when `node` reads `x[me]` of one of the per-agent variables `names` (`v.x`, not
    a name the emitter overrides), else None."""
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in names
            and isinstance(node.slice, ast.Name) and node.slice.id == "me"
            and em.emit(node.value) == f"v.{ident(node.value.id)}"):
        return node.value.id
    return None
