"""Write each literal table that generated code repeats once, as a module constant.

The generators write a table where it is used: the observation bounds of each role, an
argument's values in `make_params` and in the baselines' tables, the move table of each agent.
Where the same table (four or more numbers, strings or bools, in lists or tuples) appears more
than once, this pass names it once at module level and every use reads the name.

Only uses where sharing the value cannot change what the code does are rewritten:

- the first argument of `np.array(...)`, which copies it (a list or a tuple of the same numbers
  make the same array): it reads `NAME`;
- a tuple (immutable): it reads `NAME`;
- a list whose items are immutable: it reads `list(NAME)`, a fresh list as the literal was.

A table already written as a module constant (`ARGV_... = [...]`, assigned once, never changed
in place) is the name its other uses read (where the use runs after that constant is set);
otherwise a new constant `<CONTEXT>_TABLE` holds it as a tuple, just before the first statement
that uses it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

MIN_ITEMS = 4  # a table has at least this many numbers, strings or bools
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "fill",
                       "resize", "setflags", "put", "itemset"})


_LITERAL = (ast.Constant, ast.UnaryOp, ast.List, ast.Tuple)  # what a table's items are written as


class _NotTable(Exception):
    """A literal holds something other than numbers, strings and bools (a dict, None, ...)."""


@dataclass
class _Use:
    node: ast.List | ast.Tuple
    top: int  # index of its top-level statement
    deferred: bool  # inside a function: runs when called, after every module constant is set
    copied: bool  # the first argument of np.array(...)
    context: str  # a name for a new constant made for it
    named: bool  # the whole value of a module constant (`NAME = [...]`): it has a name already

    def reads(self, home: ast.List | ast.Tuple | None) -> str | None:
        """How the use reads the table's constant: `{}` (the name), `list({})`, or None (it keeps its
        literal). `home`: the literal of an existing constant (None: a new one, all tuples)."""
        if self.copied:
            return "{}"
        same = home is not None and ast.dump(home) == ast.dump(self.node)
        if isinstance(self.node, ast.Tuple):
            return "{}" if (same if home is not None else _all_tuples(self.node)) else None
        if home is not None:
            return "list({})" if same and _flat_items(self.node) else None
        return "list({})" if _flat_items(self.node) else None


def write_tables_once(source: str, taken: frozenset[str] = frozenset()) -> str:
    """`source` (generated code) with each repeated literal table written once (see the module
    doc); unchanged when it does not parse or has line breaks other than `\\n`. `taken`: names a
    new constant must not take (those of the runtime the module carries)."""
    if len(source.splitlines()) != source.count("\n") + 1 - source.endswith("\n"):
        return source
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    groups = _groups(tree)
    if not groups:
        return source
    lines = source.split("\n")
    names, homes = _homes(tree)
    bound = taken | names
    edits: list[tuple[int, int, int, int, str]] = []  # (line, col, end line, end col: bytes; new text)
    new: dict[int, list[str]] = {}  # line -> new constants to write before it
    for key, uses in groups.items():
        if key in homes:
            name, at, literal = homes[key]
            chosen = [(u, form) for u in uses if u.deferred or u.top > at if (form := u.reads(literal))]
        else:
            chosen = [(u, form) for u in uses if not u.named and (form := u.reads(None))]
            if len(chosen) < 2:
                continue
            name = _fresh(chosen[0][0].context, bound)
            bound |= {name}
            stmt = tree.body[min(u.top for u, _ in chosen)]
            new.setdefault(_first_line(stmt, lines), []).append(f"{name} = {key}")
        edits += [(*_span(u.node), form.format(name)) for u, form in chosen]
    for line, constants in new.items():
        gap = [""] if line > 1 and lines[line - 2].strip() else []
        block = [*gap, "# tables used in more than one place, written once", *constants, "", "", ""]
        edits.append((line, -1, 0, 0, "\n".join(block)))
    return _apply(source, edits) if edits else source


def _first_line(stmt: ast.stmt, lines: list[str]) -> int:
    """The first line of a top-level statement, with its decorators and the comments right above it."""
    line = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
    while line > 1 and lines[line - 2].startswith("#"):
        line -= 1
    return line


def _flat_items(node: ast.List | ast.Tuple) -> bool:
    """Every item is immutable: a constant or a tuple with no list inside."""
    return all(not isinstance(x, ast.List | ast.Dict | ast.Set) and _all_tuples(x) for x in node.elts)


# ----------------------------------------------------------------------------- finding tables
def _groups(tree: ast.Module) -> dict[str, list[_Use]]:
    """Repeated tables: their frozen value's repr -> every use (outermost literals only)."""
    found: dict[str, list[_Use]] = {}
    for top, stmt in enumerate(tree.body):
        _collect(stmt, top, False, [], found)
    return {k: uses for k, uses in found.items() if len(uses) >= 2}


def _collect(node: ast.AST, top: int, deferred: bool, parents: list[ast.AST], found: dict[str, list[_Use]]) -> None:
    """Every table under `node` into `found` (`parents`: its ancestors, as a stack)."""
    if isinstance(node, ast.List | ast.Tuple) and isinstance(node.ctx, ast.Load):
        value = _table(node)
        if value is not None:
            copied = _is_np_array_arg(node, parents)
            named = len(parents) == 1 and isinstance(parents[0], ast.Assign)
            found.setdefault(repr(value), []).append(_Use(node, top, deferred, copied, _context([*parents, node]), named))
            return
    inner = deferred or isinstance(node, ast.FunctionDef | ast.Lambda)
    parents.append(node)
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.AST) and not isinstance(child, ast.expr_context | ast.operator | ast.cmpop):
            _collect(child, top, inner, parents, found)
    parents.pop()


def _table(node: ast.List | ast.Tuple) -> tuple[Any, ...] | None:
    """The literal's value with every list made a tuple, when it is a table (else None)."""
    if len(node.elts) < 2 or not all(isinstance(x, _LITERAL) for x in node.elts):
        return None
    try:
        frozen = _freeze(ast.literal_eval(node))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError, _NotTable):
        return None
    return frozen if _count(frozen) >= MIN_ITEMS else None


def _freeze(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_freeze(x) for x in value)
    if isinstance(value, bool | int | float | str):
        return value
    raise _NotTable


def _count(value: Any) -> int:
    return sum(_count(x) for x in value) if isinstance(value, tuple) else 1


def _all_tuples(node: ast.AST) -> bool:
    return not any(isinstance(n, ast.List) for n in ast.walk(node))


def _is_np_array_arg(node: ast.AST, parents: list[ast.AST]) -> bool:
    call = parents[-1] if parents else None
    return isinstance(call, ast.Call) and _is_np_array_call(call) and bool(call.args) and call.args[0] is node


def _context(chain: list[ast.AST]) -> str:
    """A name for a new constant: the variable, keyword, dict key or callee the table (last of
    `chain`, its ancestors before it) is given to, else the function it is in."""
    for i in range(len(chain) - 2, -1, -1):
        node, child = chain[i], chain[i + 1]
        if isinstance(node, ast.Call) and _is_np_array_call(node):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            return node.targets[0].id
        if isinstance(node, ast.keyword) and node.arg:
            return node.arg
        if isinstance(node, ast.Dict):
            keys = [k for k, v in zip(node.keys, node.values, strict=True) if v is child]
            if keys and isinstance(keys[0], ast.Constant) and isinstance(keys[0].value, str):
                return keys[0].value
        if isinstance(node, ast.Call):
            return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "call")
        if isinstance(node, ast.FunctionDef):
            return node.name
    return "shared"


def _is_np_array_call(node: ast.Call) -> bool:
    return (isinstance(node.func, ast.Attribute) and node.func.attr == "array"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "np")


# ----------------------------------------------------------------------------- existing constants
def _homes(tree: ast.Module) -> tuple[set[str], dict[str, tuple[str, int, ast.List | ast.Tuple]]]:
    """(every name the code names, the tables written as a module constant: frozen repr -> (name,
    statement index, its literal)), for constants assigned once and never changed in place
    (`x[i] = ...`, `x += ...`, `x.append(...)`)."""
    names: set[str] = set()
    assigned: dict[str, int] = {}
    changed: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            names.add(n.id)
            if isinstance(n.ctx, ast.Store | ast.Del):
                assigned[n.id] = assigned.get(n.id, 0) + 1
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store | ast.Del) and isinstance(n.value, ast.Name):
            changed.add(n.value.id)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            changed.add(n.target.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.attr in _MUTATORS:
            changed.add(n.value.id)
    out: dict[str, tuple[str, int, ast.List | ast.Tuple]] = {}
    for top, stmt in enumerate(tree.body):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.List | ast.Tuple)):
            continue
        name, value = stmt.targets[0].id, _table(stmt.value)
        if value is not None and assigned.get(name) == 1 and name not in changed:
            out.setdefault(repr(value), (name, top, stmt.value))
    return names, out


# ----------------------------------------------------------------------------- writing
def _fresh(context: str, bound: frozenset[str]) -> str:
    base = "_".join(part for part in context.upper().split("_") if part) or "SHARED"
    name = f"{base}_TABLE"
    k = 2
    while name in bound:
        name, k = f"{base}_TABLE_{k}", k + 1
    return name


def _span(node: ast.expr) -> tuple[int, int, int, int]:
    return node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0


def _apply(source: str, edits: list[tuple[int, int, int, int, str]]) -> str:
    """`source` with each span replaced by its text, last first (positions are UTF-8 byte offsets,
    as `ast` gives them; a column of -1 inserts the text before that line)."""
    text = source.encode()
    starts = [0]
    for row in source.split("\n"):
        starts.append(starts[-1] + len(row.encode()) + 1)
    for line, col, end_line, end_col, new in sorted(edits, reverse=True):
        if col < 0:
            at = starts[line - 1]
            text = text[:at] + new.encode() + text[at:]
        else:
            text = text[:starts[line - 1] + col] + new.encode() + text[starts[end_line - 1] + end_col:]
    return text.decode()
