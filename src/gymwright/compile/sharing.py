"""Common subexpressions: calls that several expressions of one method lower to identically."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

from gymwright.spec.expr.types import draws

AlwaysRuns = Callable[[ast.AST, ast.AST], bool]


def repeated_calls(trees: Sequence[ast.AST], code_of: Callable[[ast.AST], str],
                   always_runs: AlwaysRuns = lambda root, node: True) -> list[tuple[str, list[ast.AST]]]:
    """(code, nodes) for each pure call (no random draw) whose lowered code occurs more than once.

    `always_runs(root, node)` excludes calls that might not be evaluated (inside a branch), for
    backends that short-circuit: computing those up front could raise where the spec does not.
    """
    seen: dict[str, list[ast.AST]] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and not draws(node) and always_runs(tree, node):
                seen.setdefault(code_of(node), []).append(node)
    return [(code, nodes) for code, nodes in seen.items() if len(nodes) > 1]
