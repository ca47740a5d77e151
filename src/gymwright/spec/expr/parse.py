"""Parse an expression and check it against the syntax whitelist.

Only the node types in `ALLOWED_NODES` may appear. Everything else (attributes, lambdas,
comprehensions, strings, starred, walrus, f-strings, ...) is refused with an error that
names the construct and quotes the source with a caret.
"""

from __future__ import annotations

import ast
import re

from gymwright.errors import ExprError
from gymwright.spec.names import STATEMENT_KEYWORDS

MAX_CHARS = 2000
MAX_NODES = 400
MAX_DEPTH = 40
MAX_INT_LITERAL = 10**12

ALLOWED_NODES: dict[type, str] = {
    ast.Expression: "expression",
    ast.Constant: "literal",
    ast.Name: "name",
    ast.Load: "load",
    ast.BinOp: "arithmetic",
    ast.UnaryOp: "unary operator",
    ast.BoolOp: "and/or",
    ast.Compare: "comparison",
    ast.IfExp: "x if c else y",
    ast.Subscript: "indexing",
    ast.Slice: "slice",
    ast.Tuple: "tuple (in indexing and shape= only)",
    ast.List: "list literal",
    ast.Call: "function call",
    ast.keyword: "keyword argument",
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**",
    ast.USub: "unary -", ast.UAdd: "unary +", ast.Not: "not",
    ast.And: "and", ast.Or: "or",
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
}

# Constructs refused on purpose, with the advice shown to the author.
REFUSED: dict[type, str] = {
    ast.Attribute: "attribute access (`a.b`) is not allowed; state, params and consts are plain names",
    ast.Lambda: "lambda is not allowed",
    ast.ListComp: "comprehensions are not allowed; use array functions such as sum(x * mask)",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "generator expressions are not allowed; use sum(), max(), count() over arrays",
    ast.NamedExpr: "assignment expressions (:=) are not allowed; use a step rule to set a variable",
    ast.Starred: "starred arguments are not allowed",
    ast.JoinedStr: "f-strings are not allowed",
    ast.Dict: "dict literals are not allowed",
    ast.Set: "set literals are not allowed",
    ast.Await: "await is not allowed",
    ast.Yield: "yield is not allowed",
    ast.YieldFrom: "yield is not allowed",
    ast.BitAnd: "bitwise & is not allowed; use `and`",
    ast.BitOr: "bitwise | is not allowed; use `or`",
    ast.BitXor: "bitwise ^ is not allowed; use `!=` on bools",
    ast.LShift: "shifts are not allowed",
    ast.RShift: "shifts are not allowed",
    ast.Invert: "~ is not allowed; use `not`",
    ast.MatMult: "@ is not allowed; use dot(a, b)",
    ast.Is: "`is` is not allowed; use ==",
    ast.IsNot: "`is not` is not allowed; use !=",
    ast.In: "`in` is not allowed; use any(x == v)",
    ast.NotIn: "`not in` is not allowed; use not any(x == v)",
}


def _err(msg: str, source: str, col: int | None, hint: str = "") -> ExprError:
    return ExprError(msg, source=source, col=col, hint=hint)


def parse(source: str | bool | int | float) -> tuple[str, ast.Expression]:
    """Parse and whitelist-check; returns the normalized source and the tree."""
    if isinstance(source, bool | int | float):
        source = repr(source) if not isinstance(source, bool) else str(source)
    if not isinstance(source, str):
        raise ExprError(f"expected an expression string, got {type(source).__name__}")
    text = source.strip()
    if not text:
        raise ExprError("empty expression", hint="write an expression such as `x + 1`")
    if len(text) > MAX_CHARS:
        raise ExprError(f"expression is {len(text)} characters long; the limit is {MAX_CHARS}",
                        hint="split the logic into several step rules or variables")
    if "\n" in text:
        text = " ".join(line.strip() for line in text.splitlines())
    try:
        tree = parse_names(text)
    except SyntaxError as e:
        col = (e.offset - 1) if e.offset else None
        raise ExprError(f"syntax error: {e.msg}", source=text, col=col,
                        hint="expressions use Python syntax; statements and assignments are not allowed") from None
    except (RecursionError, MemoryError, ValueError) as e:
        raise ExprError(f"expression cannot be parsed: {e}", source=text[:200]) from None
    _check_tree(tree, text)
    return text, tree


_STATEMENT_WORD = re.compile(r"(?<![A-Za-z0-9_.])(" + "|".join(sorted(STATEMENT_KEYWORDS)) + r")(?![A-Za-z0-9_])")


def parse_names(text: str) -> ast.Expression:
    """`ast.parse(text, mode="eval")`, reading a Python statement keyword (`pass`, `raise`),
    which never occurs in an expression, as a name: a choice or an argument may be called that
    (`pass[me]`, `bet(raise=2)`). Each such word is parsed as a placeholder of the same length
    (`_ass`; no spec name starts with `_`), so every column stays the source's, then renamed back."""
    words: dict[str, str] = {}

    def hide(m: re.Match[str]) -> str:
        words["_" + m.group(1)[1:]] = m.group(1)
        return "_" + m.group(1)[1:]

    tree = ast.parse(_STATEMENT_WORD.sub(hide, text), mode="eval")
    if words:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in words:
                node.id = words[node.id]
            elif isinstance(node, ast.keyword) and node.arg in words:
                node.arg = words[node.arg]
    return tree


def _check_tree(tree: ast.Expression, source: str) -> None:
    count = 0
    # Each node travels with its column: operators (ast.Invert, ast.LShift, ...) have none of their
    # own and point at their operation's. They are interpreter-wide singletons, so the column is
    # never written onto them: a column set there would show up under another expression's caret.
    stack: list[tuple[ast.AST, int, int | None]] = [(tree, 0, None)]
    while stack:
        node, depth, col = stack.pop()
        col = getattr(node, "col_offset", col)
        count += 1
        if count > MAX_NODES:
            raise _err(f"expression has more than {MAX_NODES} parts", source, None,
                       "split it into several variables or step rules")
        if depth > MAX_DEPTH:
            raise _err(f"expression is nested more than {MAX_DEPTH} levels deep", source, col)
        _check_node(node, source, col)
        stack.extend((child, depth + 1, col) for child in ast.iter_child_nodes(node))


def _check_node(node: ast.AST, source: str, col: int | None) -> None:
    _check_kind(node, source, col)
    if isinstance(node, ast.Name) and (node.id.startswith("_")):
        raise _err(f"names starting with '_' are not allowed (`{node.id}`)", source, col)
    if isinstance(node, ast.Constant):
        _check_constant(node, source)
    if isinstance(node, ast.Call):
        _check_call(node, source, col)
    if isinstance(node, ast.Slice) and node.step is not None:
        raise _err("slices with a step are not allowed", source, col)


def _check_kind(node: ast.AST, source: str, col: int | None) -> None:
    """Refuse a node whose kind of syntax expressions may not use (`.T` among them)."""
    kind = type(node)
    if isinstance(node, ast.Attribute) and node.attr == "T":
        raise _err(REFUSED[kind], source, col, "to swap the rows and columns of a 2-D array write transpose(m)")
    if kind in REFUSED:
        raise _err(REFUSED[kind], source, col)
    if kind not in ALLOWED_NODES:
        raise _err(f"`{kind.__name__}` syntax is not allowed in expressions", source, col)


def _check_call(node: ast.Call, source: str, col: int | None) -> None:
    """Refuse a call of anything but a plain function name, or one with `**kwargs`."""
    if not isinstance(node.func, ast.Name):
        raise _err("only listed functions can be called, by plain name (e.g. `max(a, b)`)", source, col)
    for kw in node.keywords:
        if kw.arg is None:
            raise _err("`**kwargs` is not allowed", source, col)


def _check_constant(node: ast.Constant, source: str) -> None:
    v = node.value
    if isinstance(v, bool):
        return
    if isinstance(v, int):
        if abs(v) > MAX_INT_LITERAL:
            raise _err(f"integer literal {v} is larger than {MAX_INT_LITERAL}", source, node.col_offset)
        return
    if isinstance(v, float):
        return
    what = "strings" if isinstance(v, str | bytes) else f"`{type(v).__name__}` literals"
    raise _err(f"{what} are not allowed in expressions", source, node.col_offset,
               "use numbers, bools, or an `enum` const for named values")


# The grammar, loosest binding first: the reference (`spec/reference.py`) renders it, with each
# operator's symbol from ALLOWED_NODES, and a test keeps every allowed operator in exactly one row.
PRECEDENCE: tuple[tuple[tuple[type, ...], str], ...] = (
    ((ast.IfExp,), "c a scalar picks one branch; c an array picks elementwise "
                   "(the batch backend computes both branches)"),
    ((ast.Or,), "scalars: Python's `or`, as a bool; arrays: elementwise (both sides computed)"),
    ((ast.And,), "scalars: Python's `and`, as a bool; arrays: elementwise (both sides computed)"),
    ((ast.Not,), "`not x`: a bool; elementwise on arrays"),
    ((ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE),
     "bools, elementwise on arrays; a chain `a < b <= c` is `a < b and b <= c`"),
    ((ast.Add, ast.Sub), "numpy's broadcasting; a bool counts as 0 / 1"),
    ((ast.Mult, ast.Div, ast.FloorDiv, ast.Mod),
     "`/` gives a float; `//` floors and `%` takes the divisor's sign (`-1 % 3` is 2); by 0 no error: inf or nan (floats), 0 (ints)"),
    ((ast.USub, ast.UAdd), "unary minus and plus"),
    ((ast.Pow,), "in float; binds tighter than a unary minus on its left (`-x ** 2` is `-(x ** 2)`), "
                 "right to left (`a ** b ** c` is `a ** (b ** c)`)"),
    ((ast.Subscript, ast.Call, ast.List),
     "`x[i]`, `x[i, j]` (ints or int arrays), `x[a:b]` (constant bounds, no step), `f(...)` (the function "
     "table), `[a, b]` (a list literal: items of one shape make an array with a new first axis)"),
)
