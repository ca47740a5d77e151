"""Which identifiers a spec may declare, and the identifier generated code uses for each.

Spec names reach generated source as attribute names (`v.offer`, `p.discount`) and inside the
generator's own names (`ARGV_<role>__<choice>__<arg>`). A name may not contain `__` (the
generator's separator, which keeps its composite names from colliding), so the generator can
always make a name of its own out of a spec name by adding `__`.

That is what it does for the names a task's own words most often collide with: a choice, an
argument or a reward term keeps the user's name everywhere a person or a policy sees it
(masks, `DECODE`, logs, reports, probes, baselines, expressions) and only its identifier in the
generated module is mangled (`ident`: `pass` -> `v.pass__`, `load` -> `v.load__`). A role, a metric
or a baseline never is an identifier there (`KEY_KINDS`), so it needs no mangling to keep the word. An expression
may read a choice named by a Python statement keyword (`pass[me]`): the parser reads the word as
a name (`spec.expr.parse`).

A name stays refused where no mangling can help (`RESERVED`, listed with what each is reserved
for in the generated language reference): the keywords that are expression syntax (`if`, `and`,
`not`, ...), the names expressions and probes already give a meaning (`me`, `t`, `reward`, ...),
the namespaces of generated code (`p`, `v`, `np`, `rt`) for the names generated code refers to
by attribute everywhere (params, consts, variables, enum members), the env options a param
would shadow, and, for those same names, the attributes the audit of generated modules refuses
everywhere (file and memory access, reflection: `UNSAFE_ATTRIBUTES`) and every Python keyword.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterable

UNSAFE_ATTRIBUTES = frozenset({
    "tofile", "dump", "dumps", "ctypes", "ctypeslib", "format", "format_map", "mro",
    "save", "savez", "savez_compressed", "savetxt", "load", "loads", "loadtxt", "fromfile",
    "genfromtxt", "fromregex", "memmap", "lib", "f2py", "testing", "DataSource",
})
"""Attributes no generated module may use (file and memory access, reflection, str.format)."""

EXPRESSION_KEYWORDS = frozenset({
    "and", "or", "not", "if", "else", "in", "is", "True", "False", "None", "lambda", "for",
    "async", "await", "yield", "from",
})
"""Keywords that are (or start) expression syntax: no name can be spelled like them."""

STATEMENT_KEYWORDS = frozenset(keyword.kwlist) - EXPRESSION_KEYWORDS
"""Keywords that never occur in an expression (`pass`, `raise`, `return`, ...): an expression
reads one as a name, so a choice or an argument may be called that (mangled in code)."""

EXPRESSION_NAMES = {
    "me": "the index of the agent an expression speaks for",
    "t": "the steps taken in the episode",
    "action": "each agent's flat action index this step",
    "reward": "a probe's rewards (`reward.<agent>`)",
    "ret": "a probe's returns (`ret.<agent>`)",
    "terminated": "a probe's end flag",
    "truncated": "a probe's end flag",
    "metric": "a probe's metrics (`metric.<name>`)",
}
"""Names expressions and probe expectations already give a meaning, refused for every name an
expression reads (`READ_KINDS`)."""

NAMESPACES = {
    "p": "the params and consts of generated code",
    "v": "the variables of generated code",
    "np": "numpy in generated code",
    "rt": "the runtime of generated code",
}
"""Names of generated code's namespaces; a param, const or variable named so would shadow one
(a choice, an argument or a term may use them: their identifiers are attributes of `v`)."""

ENV_OPTIONS = {
    "render_mode": "an option of every generated env's constructor",
    "max_cycles": "an option of every generated env's constructor",
    "action_mask_in_obs": "an option of every generated env's constructor",
    "self": "the generated env's own instance (the first argument of its constructor)",
}
"""Keyword arguments of every generated env's constructor (its options and `self`): a param of that
name would be taken as the option, or clash with the instance (`parallel_env(self=0.25)`)."""

MANGLED_KINDS = frozenset({"choice", "argument", "term"})
"""The kinds of name that keep the user's word: generated code uses `ident(name)`."""
KEY_KINDS = frozenset({"role", "metric", "baseline", "feature"})
"""The kinds of name generated code never uses as an identifier: it keeps them as strings (dict
keys, agent ids, `DECODE`) or inside a name of its own (`_script_<baseline>`, `MASK_ROWS_<role>`,
a probe's `metric_<name>`), so a Python keyword or an attribute the audit refuses is free for them."""
DECLARED_KINDS = frozenset({"param", "const", "variable", "enum member"})
"""The kinds of name generated code reads from its namespaces (`p.<name>`, `v.<name>`)."""
READ_KINDS = DECLARED_KINDS | {"choice", "argument"}
"""The kinds of name an expression reads (a role, a term or a metric is never a name there)."""

NOUNS = {"param": "param", "const": "const", "variable": "state", "choice": "action",
         "argument": "arg", "term": "term", "role": "role", "metric": "metric", "enum member": "kind",
         "feature": "feature", "baseline": "baseline", "name": "name"}
"""The word a suggested rename appends, by kind (`pass` -> `pass_action`)."""


def ident(name: str) -> str:
    """The identifier generated code uses for a choice or argument `name` (`v.<ident>`): the
    name itself, or `name__` where the name is a Python keyword or an attribute generated code
    may not use (no spec name contains `__`, so the mangled one collides with none)."""
    if keyword.iskeyword(name) or name in UNSAFE_ATTRIBUTES:
        return f"{name}__"
    return name


def suggestion(name: str, kind: str = "name") -> str:
    """A rename in the style of the word itself: the word and the kind's noun (`pass_action`)."""
    return f"{name}_{NOUNS.get(kind, 'name')}"


_KEYWORD_REASON = ("Python syntax (a keyword); only a choice, an argument, a reward term, a role, a metric or a "
                   "baseline may be called that")
_UNSAFE_REASON = ("an attribute generated code may not use (file access or reflection); only a choice, "
                  "an argument, a reward term, a role, a metric or a baseline may be called that")


def reserved_for(name: str, kind: str = "name") -> str | None:
    """What `name` is reserved for when a name of `kind` (see `NOUNS`); None when it is free."""
    if name in EXPRESSION_KEYWORDS:
        return "expression syntax (a Python keyword)"
    if name in EXPRESSION_NAMES and kind in READ_KINDS:
        return EXPRESSION_NAMES[name]
    if kind in MANGLED_KINDS or kind in KEY_KINDS:
        return None
    return _reserved_attribute(name, kind)


def _reserved_attribute(name: str, kind: str) -> str | None:
    """What `name` is reserved for as a `kind` generated code reads by its own name (neither
    mangled nor a key): a namespace, an env option, a keyword or an unsafe attribute."""
    if name in NAMESPACES and kind in DECLARED_KINDS:
        return NAMESPACES[name]
    if kind == "param" and name in ENV_OPTIONS:
        return ENV_OPTIONS[name]
    if keyword.iskeyword(name):
        return _KEYWORD_REASON
    if name in UNSAFE_ATTRIBUTES:
        return _UNSAFE_REASON
    return None


def name_problem(name: str, kind: str = "name") -> str | None:
    """Why `name` cannot be declared as a `kind` in a spec (or a plan), as a sentence with its
    fix; None when it can. `kind` "name" is any kind that generated code reads by attribute."""
    if "__" in name:
        return f"`{name}` contains `__`, which gymwright reserves for generated names; use a single `_`"
    why = reserved_for(name, kind)
    if why is not None:
        return f"`{name}` is reserved for {why}; rename the {kind} (e.g. `{suggestion(name, kind)}`)"
    return None


def reserved_table() -> list[tuple[str, str, str]]:
    """Every reserved name, for the language reference: (names, reserved for, which kinds)."""
    every = "every kind"
    rows = [(", ".join(f"`{k}`" for k in sorted(EXPRESSION_KEYWORDS)), "expression syntax", every)]
    rows += [(f"`{n}`", why, "params, consts, enum members, variables, choices, arguments")
             for n, why in EXPRESSION_NAMES.items()]
    rest = "every kind but a choice, an argument, a reward term, a role, a metric or a baseline"
    rows += [(f"`{n}`", why, "params, consts, enum members, variables") for n, why in NAMESPACES.items()]
    rows += [(f"`{n}`", why, "params") for n, why in ENV_OPTIONS.items()]
    rows.append((", ".join(f"`{k}`" for k in sorted(STATEMENT_KEYWORDS)), "Python statements", rest))
    rows.append((", ".join(f"`{k}`" for k in sorted(UNSAFE_ATTRIBUTES)), "attributes generated code may not use", rest))
    rows.append(("any name with `__`", "names the generator makes", every))
    return rows


PLAN_KINDS = {"RolePlan": "role", "ParamPlan": "param", "ConstPlan": "const", "VarPlan": "variable",
              "ActionPlan": "choice", "RewardTermPlan": "term", "MetricPlan": "metric", "BaselinePlan": "baseline"}
"""The kind of name each item of a design plan declares (`design/plans.py`, by class name)."""


def plan_name_problem(item: object) -> str | None:
    """Why an item of a design plan (a `RolePlan`, `ActionPlan`, ...) names something the spec will
    refuse, as `name_problem` says it; None when its names are free. The planning stages refuse
    the reply with this sentence, so a reserved word is renamed before a spec is written."""
    kind = PLAN_KINDS.get(type(item).__name__)
    name = getattr(item, "name", None)
    if kind is None or not isinstance(name, str) or not name:
        return None
    named = [(name, kind)]
    named += [(a, "argument") for a in (getattr(item, "args", None) or {}) if kind == "choice"]
    named += [(e, "enum member") for e in (getattr(item, "enum", None) or []) if kind == "const"]
    for n, k in named:
        problem = name_problem(n, k)
        if problem is not None:
            return problem
    return None


def plan_note() -> str:
    """One sentence for the planning prompts: which names are free, and that a reserved one is
    refused; built from the tables `reserved_for` reads, so it says what is refused."""
    def words(names: Iterable[str]) -> str:
        listed = [f"`{n}`" for n in names]
        return ", ".join(listed[:-1]) + f" or {listed[-1]}" if len(listed) > 1 else listed[0]

    kw = ", ".join(f"`{k}`" for k in sorted(EXPRESSION_KEYWORDS - {"True", "False", "None"}))
    spaces = ", ".join(f"`{n}`" for n in NAMESPACES)
    return ("Names: a choice, an argument, a reward term, a role, a metric or a baseline may be the task's own word "
            f"(`pass`, `load`, `match`, `v`); no name may be {kw} or contain `__`; no param, const, enum member, "
            f"variable, choice or argument may be {words(EXPRESSION_NAMES)}; a param, const, enum member or variable "
            f"may not be another Python keyword, {spaces}, or an attribute such as `load` or `format`; "
            f"and no param may be {words(ENV_OPTIONS)} (the reply is refused saying why: rename in the word's style, "
            "`pass_turn`, `load_food`).")


def spec_note() -> str:
    """The names rule in one line for the spec stage (its plan's names passed `plan_note`'s check)."""
    return ("Names: a choice, argument, reward term, role, metric or baseline may be the task's own word "
            "(`pass`, `load`, `match`); a param, const or variable may not be a Python keyword, `me`, `t`, `p`, "
            "`v`, `np`, `rt` or an attribute such as `load`.")
