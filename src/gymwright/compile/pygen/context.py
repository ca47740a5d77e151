"""`GenContext`: one generation of a module by the Python backend, and the whole interface its
parts share. Each part (`compile/pygen/*`, a mechanics module's `mechanics/<name>/python.py`) is a
function or a small object over a context: it writes through `w`, lowers expressions with `em`,
and reads per-agent values from lists through `flags_from_lists` / `read_lists` / `replaced`."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from gymwright.compile.common import class_name
from gymwright.compile.pyexpr import PyEmitter
from gymwright.compile.pygen.base import NP_DTYPE, all_trees, own_read
from gymwright.compile.writer import Writer
from gymwright.mechanics.emit import PythonPart, python_parts
from gymwright.spec.checked import CheckedSpec, CVar
from gymwright.spec.expr.types import info_of
from gymwright.spec.names import ident


@dataclass(eq=False)
class GenContext:
    """The checked spec, the writer, the options of this generation and what every part uses."""

    cs: CheckedSpec
    instrument: bool = False  # `self._hook(path)` after every variable init and step rule
    solved_pools: dict[str, str] = field(default_factory=dict)  # grid.solve pools the module carries
    w: Writer = field(default_factory=Writer, init=False)
    # In `step`: the per-agent lists `x_ = v.x.tolist()` read so far at the top level of its body
    # (depth `lists_depth`) whose v.x is not replaced since (each is read once until then); None
    # elsewhere (every read is written).
    lists: set[str] | None = field(default=None, init=False)
    lists_depth: int = field(default=0, init=False)

    UNROLL = 8  # up to this many agents, step is written out per agent (no per-agent loops)

    @property
    def n(self) -> int:
        return self.cs.n_agents

    @property
    def cls(self) -> str:
        """The name of the generated ParallelEnv class."""
        return class_name(self.cs.spec.name)

    @property
    def unrolled(self) -> bool:
        """Whether `step` is written out agent by agent (not where agents leave: `terminate_agent`)."""
        return self.n <= self.UNROLL and self.cs.agent_end is None

    def em(self, per_agent: bool = False, **overrides: str) -> PyEmitter:
        return PyEmitter(self.cs.symbols, per_agent=per_agent, overrides=overrides, nonzero=self.nonzero)

    @functools.cached_property
    def nonzero(self) -> frozenset[str]:
        """Scalar params whose declared range excludes 0 and scalar consts that are not 0:
        dividing by them needs no guard (make_params enforces the ranges)."""
        out = set()
        for name, prm in self.cs.spec.params.items():
            lo, hi = prm.min, prm.max
            if prm.type != "bool" and (lo is not None and lo > 0 or hi is not None and hi < 0):
                out.add(name)
        for name, value in self.cs.consts.items():
            if isinstance(value, int | float) and not isinstance(value, bool) and value != 0:
                out.add(name)
        return frozenset(n for n in out if n in self.cs.symbols)

    @functools.cached_property
    def list_actions(self) -> set[str]:
        """Action names read only as `x[scalar]`: plain lists are faster than numpy for those."""
        names = set(self.cs.choice_names) | set(self.cs.arg_names) | {"action"}
        for part in self.parts:  # read whole by a mechanics module's step (a grid's `delta[v.<choice>] = move`)
            names -= part.array_reads(self)
        for tree in all_trees(self.cs):
            parents = {id(ch): node for node in ast.walk(tree) for ch in ast.iter_child_nodes(node)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and node.id in names:
                    parent = parents.get(id(node))
                    scalar_index = (isinstance(parent, ast.Subscript) and parent.value is node
                                    and not isinstance(parent.slice, ast.Tuple | ast.Slice)
                                    and not info_of(parent.slice).shape)
                    if not scalar_index:
                        names.discard(node.id)
        return names

    @functools.cached_property
    def parts(self) -> list[PythonPart]:
        """The Python parts of the mechanics modules the spec uses (`mechanics.emit`)."""
        return python_parts(self.cs)

    def hook(self, path: str) -> None:
        if self.instrument:
            with self.w.block("if self._hook is not None:"):
                self.w(f"self._hook({path!r})")

    def cast(self, var: CVar, code: str) -> str:
        if var.shape:
            return f"np.array(np.broadcast_to({code}, {var.shape!r}), dtype={NP_DTYPE[var.dtype]})"
        try:
            value = ast.literal_eval(code)
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, bool | int | float) and not (isinstance(value, bool) and var.dtype != "bool"):
            return repr({"bool": bool, "int": int, "float": float}[var.dtype](value))  # a constant: cast now
        return f"{var.dtype}({code})"

    # ------------------------------------------------------------------ per-agent reads from lists
    def flags_from_lists(self, em: PyEmitter, trees: Sequence[ast.AST], me: str = "me") -> list[str]:
        """The per-agent variables that `trees` read one agent at a time (`x[me]`), to be read from
        a list `x_ = v.x.tolist()` made before them (a numpy scalar read costs several times a
        list's): maps those reads on `em` to `x_[<me>]` and returns the names, in order of reading.

        Bool flags are read so anywhere. An integer row (`pos[me]`, shape `(k,)`) is read so only
        where a list means the same as the numpy row (`rows_from_lists`)."""
        flags = {var.name for var in self.cs.agent_state if var.dtype == "bool" and not var.shape}
        found: list[str] = []
        for tree in trees:
            for node in ast.walk(tree):
                name = own_read(em, node, flags)
                if name is not None:
                    em.hoisted[id(node)] = f"{name}_[{me}]"
                    if name not in found:
                        found.append(name)
        for name in self.rows_from_lists(em, trees, me):
            if name not in found:
                found.append(name)
        return found

    def rows_from_lists(self, em: PyEmitter, trees: Sequence[ast.AST], me: str) -> list[str]:
        """Integer rows of agent `me` read as lists, in the four forms where a list of Python ints
        means what the numpy row does: `all(x[me] == y[me])` is the lists' `==` and
        `any(x[me] != y[me])` their `!=` (rows of one shape), and `tile(x[me])` /
        `manhattan(x[me], y[me])` take a cell's two coordinates (`rt_tile1` and `rt_manhattan1`
        read them with `int()`). Maps those on `em`; returns the row names, in order of reading.
        (Bool and float rows are left to numpy: a float list compares NaN by identity.)"""
        rows = {var.name: var.shape for var in self.cs.agent_state if var.dtype == "int" and len(var.shape) == 1}
        found: list[str] = []

        def read(name: str) -> str:
            if name not in found:
                found.append(name)
            return f"{name}_[{me}]"

        for tree in trees:
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords):
                    continue
                fn, args = node.func.id, node.args
                if fn in ("tile", "manhattan") and len(args) == (1 if fn == "tile" else 2):
                    cells = [(a, own_read(em, a, rows.keys())) for a in args]
                    if all(name is not None and rows[name] == (2,) for _, name in cells):
                        for a, name in cells:
                            assert name is not None
                            em.hoisted[id(a)] = read(name)
                elif fn in ("all", "any") and len(args) == 1 and isinstance(args[0], ast.Compare):
                    cmp = args[0]
                    op = ast.Eq if fn == "all" else ast.NotEq
                    if len(cmp.ops) == 1 and isinstance(cmp.ops[0], op):
                        x, y = own_read(em, cmp.left, rows.keys()), own_read(em, cmp.comparators[0], rows.keys())
                        if x is not None and y is not None and rows[x] == rows[y]:
                            sign = "==" if fn == "all" else "!="
                            em.hoisted[id(node)] = f"({read(x)} {sign} {read(y)})"
        return found

    @contextmanager
    def lists_read_once(self) -> Iterator[None]:
        """Within: at the current depth (the top level of `step`'s body), each list is read once
        until its variable is `replaced`."""
        self.lists, self.lists_depth = set(), self.w.depth
        try:
            yield
        finally:
            self.lists = None

    def read_lists(self, names: list[str]) -> None:
        """`x_ = v.x.tolist()` for each name, but those still valid in `step` (`lists`). Only a
        read at the top level of `step`'s body is kept or reused: one inside a block may not run."""
        fresh = self.lists if self.w.depth == self.lists_depth else None
        new = [name for name in names if fresh is None or name not in fresh]
        for k, name in enumerate(new):
            self.w(f"{name}_ = v.{ident(name)}.tolist()", comment="read per agent, from lists" if k == 0 else "")
        if fresh is not None:
            fresh.update(new)

    def replaced(self, names: list[str] | None = None) -> None:
        """The step just assigned v.<name> for `names` (None: it may have assigned anything):
        their lists are read again when next needed."""
        if self.lists is not None:
            if names is None:
                self.lists.clear()
            else:
                self.lists.difference_update(names)
