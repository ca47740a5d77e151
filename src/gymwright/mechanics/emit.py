"""What a mechanics module adds to code generation: its part of each backend's generator, and the
lowering of its expression functions.

A registry entry (`base.Mechanics`) names its parts by module path; this file (of the compile
stage) loads them. `python_parts(cs)` and `batch_parts(cs)` are the parts of the modules a spec
uses, which the generators call at fixed points (module constants, reset, step, render); the
`calls` of every module extend the emitters' tables (`compile/pyexpr.py`, `compile/npexpr.py`,
`compile/agent_axis.py`), which fall back on `calls(...)` for a name they do not have.
"""

from __future__ import annotations

import ast
import functools
import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from gymwright.mechanics.registry import MECHANICS

if TYPE_CHECKING:
    from gymwright.compile.npexpr import NpEmitter
    from gymwright.compile.pyexpr import PyEmitter
    from gymwright.compile.writer import Writer
    from gymwright.spec.checked import CheckedSpec


class PyGen(Protocol):
    """What a module's Python part uses of the Python backend's generator."""

    cs: CheckedSpec
    w: Writer
    solved_pools: dict[str, str]

    @property
    def n(self) -> int:
        """The number of agents (read-only: the spec's)."""

    def em(self, per_agent: bool = False, **overrides: str) -> PyEmitter: ...
    def hook(self, path: str) -> None: ...
    def replaced(self, names: list[str] | None = None) -> None: ...
    def read_lists(self, names: list[str]) -> None: ...
    def flags_from_lists(self, em: PyEmitter, trees: list[ast.AST], me: str = "me") -> list[str]: ...


class PythonPart:
    """A module's part of the Python backend (`PYTHON` in the file its entry's `python` names): a
    subclass overrides what its module adds; each default adds nothing."""

    calls: Mapping[str, Callable[[PyEmitter, ast.Call], str]] = {}
    """The lowering of its expression functions (`compile/pyexpr.py`'s `CALLS` for these names)."""
    axis_calls: Mapping[str, Callable[[Any, ast.Call], tuple[str, bool]]] = {}
    """Those of its functions that can be lowered over a role's agent axis (`compile/agent_axis.py`)."""

    def constants(self, gen: PyGen) -> None:
        """Module-level tables, after the spec's."""

    def methods(self, gen: PyGen) -> None:
        """Methods of the env class it adds (after `reset`)."""

    def reset(self, gen: PyGen) -> None:
        """In `reset`, before the spec's variables: its variables' values (`v.<name>`)."""

    def step(self, gen: PyGen) -> None:
        """In `step`, after this step's actions are decoded and before the step rules."""

    def array_reads(self, gen: PyGen) -> set[str]:
        """Action names its step code reads as whole numpy arrays (never kept as lists)."""
        return set()

    def frame(self, gen: PyGen, cell: int) -> str | None:
        """Code of an RGB frame (`render_mode='rgb_array'`), cells `cell` pixels wide; None: none."""
        return None

    def text(self, gen: PyGen) -> str | None:
        """Code of a text picture added to `render_text` (a string); None: none."""
        return None

    def carried(self, cs: CheckedSpec, make_env: Callable[[], Any]) -> dict[str, str]:
        """What an exported module carries for it at `cs`'s params, by name (a grid's solved layout
        pools, `grid.solve`); `make_env()` makes the env at those params. {}: nothing."""
        return {}

    def carried_note(self, cs: CheckedSpec) -> str | None:
        """What an export's card says it carries and what it needs beyond (None: nothing)."""
        return None


class BatchGen(Protocol):
    """What a module's batch part uses of the batch backend's generator."""

    cs: CheckedSpec
    w: Writer
    n: int
    powers_at: tuple[int, str]  # where `__init__` may take more lines (line, indent)
    restart_at: tuple[int, str]  # where a restart has just written the rows of the copies it starts

    def em(self, per_agent: bool = False, hoist: Callable[[str], str] | None = None, /,
           **overrides: tuple[str, int]) -> NpEmitter: ...
    def value(self, c: Any, kind: int, shape: tuple[int, ...], per_agent: bool = False,
              size: str = "K", agents: int | None = None, **overrides: tuple[str, int]) -> str: ...
    def role_locals(self, start: int, count: int) -> None: ...


class BatchPart:
    """A module's part of the batch backend (`BATCH` in the file its entry's `batch` names): a
    subclass overrides what its module adds; each default adds nothing."""

    calls: Mapping[str, Callable[[NpEmitter, ast.Call], tuple[str, int]]] = {}
    """The lowering of its expression functions (`compile/npexpr.py`'s `CALLS` for these names)."""

    def tables(self, gen: BatchGen) -> None:
        """Module-level tables, after the spec's."""

    def fixed_start(self, cs: CheckedSpec) -> bool:
        """Whether every episode of a copy may start as the first did (no draw at its reset)."""
        return True

    def reset(self, gen: BatchGen) -> None:
        """In `_init_copies` (K copies), before the spec's variables: its variables' values."""

    def step(self, gen: BatchGen) -> None:
        """In `step`, after this step's actions are applied and before the step rules."""

    def finish(self, gen: BatchGen) -> None:
        """Once the module is written: what it adds to lines written before (`gen.w.lines`)."""


def _load(path: str, attr: str) -> Any:
    return getattr(importlib.import_module(path), attr) if path else None


@functools.cache
def _python(name: str) -> PythonPart | None:
    part: PythonPart | None = _load(MECHANICS[name].python, "PYTHON")
    return part


@functools.cache
def _batch(name: str) -> BatchPart | None:
    part: BatchPart | None = _load(MECHANICS[name].batch, "BATCH")
    return part


def python_parts(cs: CheckedSpec) -> list[PythonPart]:
    """The Python parts of the mechanics modules `cs` uses, in registry order."""
    return [p for name in MECHANICS if name in cs.mechanics and (p := _python(name)) is not None]


def batch_parts(cs: CheckedSpec) -> list[BatchPart]:
    """The batch parts of the mechanics modules `cs` uses, in registry order."""
    return [p for name in MECHANICS if name in cs.mechanics and (p := _batch(name)) is not None]


@functools.cache
def python_calls() -> dict[str, Callable[[PyEmitter, ast.Call], str]]:
    """Every module's lowering of its functions for the Python backend."""
    return {k: f for name in MECHANICS if (p := _python(name)) is not None for k, f in p.calls.items()}


@functools.cache
def axis_calls() -> dict[str, Callable[[Any, ast.Call], tuple[str, bool]]]:
    """Every module's lowering of its functions over the agent axis."""
    return {k: f for name in MECHANICS if (p := _python(name)) is not None for k, f in p.axis_calls.items()}


@functools.cache
def batch_calls() -> dict[str, Callable[[NpEmitter, ast.Call], tuple[str, int]]]:
    """Every module's lowering of its functions for the batch backend."""
    return {k: f for name in MECHANICS if (p := _batch(name)) is not None for k, f in p.calls.items()}
