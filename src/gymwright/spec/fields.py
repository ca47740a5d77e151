"""The building blocks of the spec schema: identifiers, expressions and the strict base model.

`spec/model.py` (the whole spec) and the mechanics modules' schema parts (`mechanics/<name>/schema.py`)
build on them, so a mechanics module's schema can live with its checks without an import cycle.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

from gymwright.spec.names import name_problem

IDENT = r"^[A-Za-z][A-Za-z0-9_]*$"

Expr = Annotated[
    str | bool | int | float,
    Field(description="An expression (Python syntax, whitelisted) or a literal number/bool."),
]


def key_field(default: Any, description: str) -> FieldInfo:
    """`Field(default, description=description)` for a key built outside a class body (a mechanics
    module's choice key or section), typed as the FieldInfo it is: pydantic types `Field` as its
    default, for `x: int = Field(1)`."""
    info: FieldInfo = Field(default, description=description)
    return info


def _declarable(name: str, kind: str = "name") -> str:
    problem = name_problem(name, kind)
    if problem:
        raise ValueError(problem)
    return name


def _named(kind: str) -> Any:
    return AfterValidator(lambda name: _declarable(name, kind))


Name = Annotated[str, Field(pattern=IDENT, description="An identifier: a letter, then letters, digits or _; not a Python keyword, no `__`."),
                 AfterValidator(_declarable)]
_USERS_WORD = "An identifier: a letter, then letters, digits or _; no `__`. It may be a word generated code cannot use (`pass`, `load`): its identifier there is mangled, the name is kept."
ChoiceName = Annotated[str, Field(pattern=IDENT, description=_USERS_WORD), _named("choice")]
ArgName = Annotated[str, Field(pattern=IDENT, description=_USERS_WORD), _named("argument")]
TermName = Annotated[str, Field(pattern=IDENT, description=_USERS_WORD), _named("term")]
_NAME = "An identifier: a letter, then letters, digits or _; not a Python keyword, no `__`."
ParamName = Annotated[str, Field(pattern=IDENT, description=_NAME), _named("param")]
ConstName = Annotated[str, Field(pattern=IDENT, description=_NAME), _named("const")]
VarName = Annotated[str, Field(pattern=IDENT, description=_NAME), _named("variable")]
_KEY = ("An identifier: a letter, then letters, digits or _; no `__`. It may be a word generated code cannot "
        "use (`pass`, `load`): generated code knows it only as a string or inside a name of its own.")
RoleName = Annotated[str, Field(pattern=IDENT, description=_KEY), _named("role")]
MetricName = Annotated[str, Field(pattern=IDENT, description=_KEY), _named("metric")]
BaselineName = Annotated[str, Field(pattern=IDENT, description=_KEY), _named("baseline")]
DType = Literal["int", "float", "bool"]
DOC = "Documentation for people and the engineer."


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
