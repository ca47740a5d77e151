"""The expression grammar in the reference (issue 42, point 8): made from the parser's tables, so
every operator and form the parser allows is documented once, in the docs and in the prompts."""

from __future__ import annotations

import ast

from gymwright.spec.expr.parse import ALLOWED_NODES, PRECEDENCE
from gymwright.spec.reference import grammar, grammar_line, prompt_reference, reference_markdown

STRUCTURE = {ast.Expression, ast.Constant, ast.Name, ast.Load, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare,
             ast.Slice, ast.Tuple, ast.keyword}  # containers of the forms below, and leaves


def test_every_allowed_form_has_one_row_of_the_grammar() -> None:
    rows = [t for kinds, _ in PRECEDENCE for t in kinds]
    assert len(rows) == len(set(rows))
    assert set(rows) | STRUCTURE == set(ALLOWED_NODES)


def test_the_docs_and_the_prompts_carry_the_grammar() -> None:
    table = grammar()
    for _, meaning in PRECEDENCE:
        assert meaning in table
    assert table in reference_markdown()
    assert grammar_line() in prompt_reference() and grammar_line() in prompt_reference(["grid"])
    for words in ("elementwise", "transpose(m)", "never from the end", "`**`", "`//`", "`not`"):
        assert words in table and words in grammar_line(), words


def test_python_binds_as_the_table_says() -> None:
    """The rows are Python's own precedence: each row binds tighter than the one before."""
    tree = ast.parse("not a == b + c * -d ** e[0]", mode="eval").body
    chain = []
    node: ast.AST = tree
    while True:
        chain.append(type(node.op) if isinstance(node, ast.UnaryOp | ast.BinOp) else
                     type(node.ops[0]) if isinstance(node, ast.Compare) else type(node))
        children = [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.Name | ast.expr_context | ast.operator | ast.unaryop | ast.cmpop)]
        if not children:
            break
        node = children[-1]
    level = {t: k for k, (kinds, _) in enumerate(PRECEDENCE) for t in kinds}
    levels = [level[t] for t in chain if t in level]
    assert levels == sorted(levels), chain
