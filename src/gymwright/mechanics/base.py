"""What a mechanics module declares: `Mechanics`, one entry of `registry.MECHANICS`.

A mechanics module is an optional part of the spec language (a `grid:` world, a message
`channel:`) with one folder, `gymwright/mechanics/<name>/`. Its entry says what it adds to each
stage. The parts of the spec stage are objects (the section's schema, the keys it adds to an
action choice, its checks, its expression functions); the parts of later stages are named by
module path (`python`, `batch`: code generation) or by file (`runtime`: what generated modules
inline), so that importing the registry imports no code generator: each file keeps the layer
of its stage (docs/architecture.md, "Mechanics modules").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from gymwright.spec.expr.check import Checked
from gymwright.spec.expr.functions import Func

if TYPE_CHECKING:
    from gymwright.spec.checked import CChoice, CheckedSpec, CRole
    from gymwright.spec.checks.context import CheckContext
    from gymwright.spec.model import Choice


COMPILE_FILES = frozenset({"python", "batch", "tables", "emit"})
"""Names (stems) of the files of `gymwright/mechanics/` that generate code (the compile stage)."""


def stage_of(path: Path) -> str:
    """The stage of a file of `gymwright/mechanics/`, by its name: `runtime*.py` is runtime (numpy
    only, inlined into generated modules), `python.py`, `batch.py`, `tables.py` and `emit.py` are
    compile, every other file (schema, checks, functions, the entries, the registry) is spec."""
    if path.stem.startswith("runtime"):
        return "runtime"
    return "compile" if path.stem in COMPILE_FILES else "spec"


class ModuleChecks(Protocol):
    """A module's checks (its folder's `checks.py`), called by `spec.checker.run`."""

    def declare(self, ctx: CheckContext, section: Any) -> None:
        """Its section (None when the spec has none), once the agent counts and the computed consts
        are known and before `state`: report what is wrong, declare its names (`ctx.builtin`) and
        variables (`ctx.builtin_var`), and keep its checked form in `ctx.mechanics[<name>]`."""

    def choice(self, ctx: CheckContext, role: CRole, cc: CChoice, choice: Choice) -> None:
        """The keys it adds to an action choice (`choice_fields`), after the choice's `legal`
        (every action name is known): keep their checked values in `cc.fields`."""

    def after_actions(self, ctx: CheckContext) -> bool:
        """What reads this step's actions and turns (after both are checked); False refuses the spec."""

    def expressions(self, cs: CheckedSpec) -> list[Checked | None]:
        """Every expression of its checked form (for the generators' whole-spec analyses)."""


@dataclass(frozen=True)
class Mechanics:
    """One mechanics module: what it adds to each stage."""

    name: str
    """Its section in a spec (`grid:`), its key in `CheckedSpec.mechanics`, its functions' category."""
    section: type[BaseModel]
    """The section's schema (`EnvSpec.<name>` is it or None)."""
    doc: str
    """What the section is (the description of the `EnvSpec` field)."""
    checks: ModuleChecks
    models: tuple[type[BaseModel], ...] = ()
    """The section's models after `section` (nested ones), for the language reference."""
    choice_fields: Mapping[str, tuple[Any, FieldInfo]] = field(default_factory=dict)
    """Keys it adds to an action choice: name -> (type, pydantic Field)."""
    maintained: frozenset[str] = frozenset()
    """Its variables that it updates itself each step: step rules may read them, never set them."""
    implicit: frozenset[str] = frozenset()
    """Variables its expression functions read without being named (`tile(p)` reads `tiles`)."""
    functions: tuple[Func, ...] = ()
    """Its expression functions (category `name`), added to `spec.expr.functions.FUNCTIONS` when
    the registry is imported; each backend's lowering of them is in its `python` and `batch` part."""
    function_doc: str = ""
    """The heading of its functions in the language reference."""
    python: str = ""
    """Module path of its part of the Python backend (`PYTHON`, a `compile.mechanics.PythonPart`)."""
    batch: str = ""
    """Module path of its part of the batch backend (`BATCH`, a `compile.mechanics.BatchPart`)."""
    legend: Callable[[CheckedSpec], list[tuple[str, tuple[int, int, int], str]]] | None = None
    """What the colours of its RGB frames are: (label, rgb, `disc` or `tile`), for the frames
    `play --gif` and the reports draw; None: it draws none."""
    card: Callable[[Any], str] | None = None
    """Its fact in an exported module's card (`compile/card.py`), from its checked form; None: none."""
    choice_card: Mapping[str, Callable[[Any], str]] = field(default_factory=dict)
    """How the card states a key it adds to a choice (`choice_fields`), from its checked value."""
    size: Callable[[Any], tuple[Any, Any]] | None = None
    """Its section's height and width as written (a param's name or a number), which a task's
    "8x8" sets (`design/params_from_text.py`); None: it has no size."""
    runtime: tuple[str, ...] = ()
    """Its runtime files (standalone: numpy and the standard library), relative to the package
    `gymwright`, inlined into generated modules after the core runtime, in this order."""
