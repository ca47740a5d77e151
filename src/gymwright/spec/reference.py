"""The spec-language reference, generated from the code (models, functions and limits).

One source of truth: `docs/spec-language.md` embeds `reference_markdown()` between markers
(a test keeps it current) and the designer's prompts will use the same text.
Run `python -m gymwright.spec.reference --write docs/spec-language.md` to refresh the doc.
"""

from __future__ import annotations

import ast
import re
import sys
import types
import typing
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel

from gymwright.atomic import write_atomic
from gymwright.mechanics.registry import MECHANICS as REGISTRY
from gymwright.spec import model as m
from gymwright.spec.expr.functions import FUNCTIONS
from gymwright.spec.expr.parse import (
    ALLOWED_NODES,
    MAX_CHARS,
    MAX_DEPTH,
    MAX_INT_LITERAL,
    MAX_NODES,
    PRECEDENCE,
)
from gymwright.spec.limits import limits_table
from gymwright.spec.names import reserved_table

BEGIN = "<!-- BEGIN GENERATED REFERENCE (python -m gymwright.spec.reference --write docs/spec-language.md) -->"
END = "<!-- END GENERATED REFERENCE -->"

# Sections (and function categories) of the optional mechanics modules: a prompt for a task that
# uses none of them leaves them out (`prompt_reference`).
MECHANICS: dict[str, tuple[type[BaseModel], ...]] = {x.name: (x.section, *x.models) for x in REGISTRY.values()}
MECHANICS_FUNCTIONS = {x.name: x.name for x in REGISTRY.values() if x.functions}  # module -> function category it brings
SECTIONS: list[type[BaseModel]] = [
    m.EnvSpec, m.Param, m.Constraint, m.Const, m.Enum, m.Role, m.Var, m.Choice, m.Turns, m.Rule, m.First,
    m.RewardTerm, m.Metric, m.Feature, m.Text, m.Probe, m.BaselineRule, *(s for models in MECHANICS.values() for s in models),
]
LIMITS_INTRO = (
    "What a spec may cost is bounded before any code is generated (`gymwright.spec.limits`). A spec "
    "beyond a limit is refused with a diagnostic that names the spec path (or the file location), the "
    "size and the limit; the file's size is measured before it is read, and the action count is the "
    "product of the argument sizes, never enumerated. Every library spec fits each limit with a wide margin. "
    "The first four, on reading, hold for every YAML or JSON document gymwright reads, not only specs: a "
    "`--config` file and a model's reply (the engineer's proposals and spec edits) are read the same way."
)
CATEGORIES = {
    "math": "Elementwise math", "reduce": "Reductions", "array": "Arrays",
    "table": "Tables (constant arguments; computed when the env is built)",
    "random": "Random (only in `init` and step rules; seeded, reproducible)",
    **{x.name: x.function_doc for x in REGISTRY.values() if x.functions},
}


def _type_name(t: object) -> str:
    """A short, readable name of a field type: `expr`, `map name -> Var`, `list of Rule`."""
    origin, args = typing.get_origin(t), typing.get_args(t)
    if t == (str | bool | int | float):
        return "expr"
    if t is type(None):
        return "null"
    if origin is typing.Annotated:
        if args[0] == (str | bool | int | float):
            return "expr"
        return "name" if args[0] is str else _type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(dict.fromkeys(_type_name(a) for a in args))
    if origin is typing.Literal:
        return " or ".join(f"`{a}`" for a in args)
    if origin is dict:
        return f"map {_type_name(args[0])} -> {_type_name(args[1])}"
    if origin is list:
        return f"list of {_type_name(args[0])}" if args else "list"
    if isinstance(t, type) and issubclass(t, BaseModel):
        return f"[{t.__name__}](#{t.__name__.lower()})"
    if t is typing.Any:
        return "any"
    return getattr(t, "__name__", repr(t))


GENERIC_DOC = m.DOC  # a `doc` key with this meaning is stated once (DOC_NOTE), not in every table
DOC_NOTE = "Sections marked (+doc) also take `doc`: free text for people and the engineer."
# What the language means by its names and its order of evaluation, in one place: the docs and
# every design prompt show it (tests/spec/test_reference_conventions.py checks each against the code).
CONVENTIONS = (
    "Agent ids count within a role; expressions index agents globally, in role order (with 2 "
    "predators, `prey_0` is index 2).",
    "Built-in names: `n_agents`, `n_<role>` (counts), `is_<role>` (per-agent bool), `t` (steps taken; "
    "`t >= E` in `terminate`/`truncate` bounds it by E), `me` (per-agent places), `action` (flat index, -1 = none).",
    "An agent that did not act (not its turn, illegal, another choice) is false in each choice array, 0 in each argument array.",
    "A step runs the actions, the step rules in order, `t += 1`, then rewards, metrics, "
    "`terminate`/`truncate` and observations: all see the state after the rules.",
    "`roll(x, k)` shifts like numpy: entry i moves to i + k, so `roll(x, -me)[0]` is `x[me]`.",
    "In a probe step, agents not listed take no action.",
)


def conventions() -> str:
    return "\n".join(["## Conventions", ""] + [f"- {c}" for c in CONVENTIONS])


def grammar() -> str:
    """The expression grammar, from the parser's tables (`spec/expr/parse.py`): the forms it allows,
    loosest binding first, what each does on arrays, and its limits."""
    lines = ["## Expressions", "",
             "Python expression syntax, only these forms; rows bind loosest first, parentheses group as in Python.", "",
             "| binds | forms | meaning |", "|-|-|-|"]
    for k, (kinds, meaning) in enumerate(PRECEDENCE, 1):
        lines.append(f"| {k} | {', '.join(f'`{ALLOWED_NODES[t]}`' for t in kinds)} | {meaning} |")
    lines += [
        "",
        "- Leaves: declared names, int and float literals, `True`, `False`. No strings, `None`, attribute access "
        "(`x.T` included: `transpose(m)` swaps a 2-D array's axes), comprehensions, `in`/`is`, bitwise operators or `:=`.",
        "- Indexing counts from 0 and never from the end: an index whose range reaches below 0 or past the "
        "axis is an error; an int array index picks several entries (`x[idx]`); index arrays and slices "
        "do not mix in one subscript.",
        f"- At most {MAX_CHARS} characters, {MAX_NODES} parts and {MAX_DEPTH} levels of nesting; int literals up to {MAX_INT_LITERAL:.0e}.",
    ]
    return "\n".join(lines)


def reserved_names() -> str:
    """Every name a spec may not declare and what it is reserved for (`spec/names.py`). The
    planning prompts say it in one sentence (`spec.names.plan_note`, in `design.plans.length_limits`)."""
    keep = ("A choice, an argument or a reward term keeps the task's own word even where generated code cannot "
            "use it (`pass`, `load`, `match`, `v`): only its identifier in the generated module is mangled. A role, "
            "a metric or a baseline keeps it too: generated code knows those only as strings.")
    lines = ["## Reserved names", "", keep + " A name that is refused says what it is reserved for and suggests a rename.", "",
             "| names | reserved for | refused as |", "|-|-|-|"]
    lines += [f"| {names_} | {why} | {kinds} |" for names_, why, kinds in reserved_table()]
    return "\n".join(lines)


def grammar_line() -> str:
    """The grammar in one paragraph, for the design prompts (the same tables as `grammar`)."""
    shown = {ast.USub: "-x", ast.UAdd: "+x", ast.Subscript: "x[i]", ast.Call: "f(x)", ast.List: "[a, b]"}
    rows = " | ".join(" ".join(f"`{shown.get(t, ALLOWED_NODES[t])}`" for t in kinds) for kinds, _ in PRECEDENCE)
    return (f"Expressions, loosest binding first: {rows}. Comparisons chain; on arrays `and`, `or`, `not`, "
            "comparisons and `x if c else y` work elementwise; `/` and `**` give floats. No attribute access "
            "(`x.T`: write `transpose(m)`), strings, comprehensions, `in`, `is` or bitwise operators; "
            "indices count from 0, never from the end; slices take constant bounds.")


def _mechanics(field: typing.Any) -> str | None:
    extra = field.json_schema_extra
    return extra.get("mechanics") if isinstance(extra, dict) else None


def model_table(model: type[BaseModel], left_out: Iterable[str] = ()) -> str:
    """The keys of a section; keys of the mechanics modules `left_out` are not shown."""
    doc = (model.__doc__ or "").strip().splitlines()
    skip = set(left_out)
    plain = {k: f for k, f in model.model_fields.items()
             if not (k == "doc" and f.description == GENERIC_DOC) and _mechanics(f) not in skip}
    mark = " (+doc)" if "doc" in model.model_fields and "doc" not in plain else ""
    lines = [f"### `{model.__name__}`", "", " ".join(x.strip() for x in doc if x.strip()) + mark, "",
             "| key | type | default | meaning |", "|-|-|-|-|"]
    for key, field in plain.items():
        name = field.alias or key
        default = "required" if field.is_required() else repr(field.get_default(call_default_factory=True))
        desc = (field.description or "").replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{name}` | {_type_name(field.annotation).replace('|', chr(92) + '|')} | {default} | {desc} |")
    return "\n".join(lines)


def function_tables(categories: Iterable[str] | None = None) -> str:
    out = []
    wanted = set(CATEGORIES if categories is None else categories)
    for cat, title in CATEGORIES.items():
        if cat not in wanted:
            continue
        out += [f"### {title}", "", "| function | what it gives |", "|-|-|"]
        for f in FUNCTIONS.values():
            if f.category == cat:
                out.append(f"| `{f.signature}` | {f.doc} |")
        out.append("")
    return "\n".join(out)


def reference_markdown() -> str:
    """The whole generated reference: sections and keys, then functions."""
    parts = ["## Reference (generated from the code)", "", conventions(), "", grammar(), "", reserved_names(), "",
             "### Sections and keys", "", DOC_NOTE, ""]
    parts += [model_table(model) + "\n" for model in SECTIONS]
    parts += ["## Functions", "", function_tables()]
    parts += ["## Limits", "", LIMITS_INTRO, "", limits_table()]
    return "\n".join(parts).rstrip() + "\n"


def prompt_reference(mechanics: Iterable[str] = ()) -> str:
    """The reference a design prompt sends: every section and function the task may use, the
    mechanics modules (`grid`, `channel`) only when asked for; the limits as one line."""
    asked = set(mechanics)
    unknown = asked - set(MECHANICS)
    if unknown:
        raise ValueError(f"unknown mechanics {sorted(unknown)}; known: {sorted(MECHANICS)}")
    left_out = {model for name, models in MECHANICS.items() if name not in asked for model in models}
    parts = [conventions(), "", grammar_line(), "", "## Sections and keys", "", DOC_NOTE, ""]
    skipped_mechanics = [n for n in MECHANICS if n not in asked]
    # `Constraint` is said in its field (`constraints`: a bool, or `{expr, doc}`): a prompt skips its table
    parts += [model_table(model, skipped_mechanics) + "\n" for model in SECTIONS if model not in left_out | {m.Constraint}]
    if asked != set(MECHANICS):
        skipped = ", ".join(f"`{n}`" for n in MECHANICS if n not in asked)
        parts += [f"(The {skipped} mechanics {'module is' if len(MECHANICS) - len(asked) == 1 else 'modules are'} "
                  "left out of this reference: the plan does not use them.)", ""]
    categories = [c for c in CATEGORIES
                  if c not in MECHANICS_FUNCTIONS.values()
                  or any(MECHANICS_FUNCTIONS.get(n) == c for n in asked)]
    parts += ["## Functions", "", function_tables(categories)]
    parts += ["Limits: what a spec may cost (agents, state size, actions, steps, text) is bounded; "
              "every library spec fits each limit with a wide margin."]
    return "\n".join(parts).rstrip() + "\n"


_LINK = re.compile(r"\[(\w+)\]\(#\w+\)")


def compact_line(model: type[BaseModel]) -> str:
    """One section on one line: its keys (`?` = optional) and their types."""
    def one(name: str, field: typing.Any) -> str:
        kind = _LINK.sub(r"\1", _type_name(field.annotation))
        return f"{field.alias or name}{'' if field.is_required() else '?'}: {kind}"
    keys = ", ".join(one(name, field) for name, field in model.model_fields.items() if name != "doc")
    return f"{model.__name__}: {keys}"


def compact_reference() -> str:
    """The same reference in a few hundred tokens (for models with a short context): one line
    per section with its keys (`?` = optional) and types, one line per function category."""
    lines = [compact_line(model) for model in SECTIONS]
    for cat in CATEGORIES:
        lines.append(f"functions ({cat}): " + ", ".join(f.signature for f in FUNCTIONS.values() if f.category == cat))
    return "\n".join(lines)


def embed(doc: str) -> str:
    """`doc` with the generated block replaced (appended if the markers are missing)."""
    block = f"{BEGIN}\n\n{reference_markdown()}\n{END}"
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    return doc.rstrip() + "\n\n" + block + "\n"


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--write":
        path = Path(argv[1])
        write_atomic(path, embed(path.read_text() if path.exists() else ""))
        print(f"wrote the generated reference into {path}")
        return 0
    print(reference_markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
