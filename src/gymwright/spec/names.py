"""Which identifiers a spec may declare.

Spec names reach generated source as attribute names (`v.offer`, `p.discount`) and inside the
generator's own names (`ARGV_<role>__<choice>__<arg>`), so besides the identifier pattern a name
may not be a Python keyword or soft keyword, may not contain `__` (the generator's separator,
which keeps its composite names from colliding) and may not be one of the few attribute
names that reach files or memory from inside numpy (the audit of generated modules refuses
those attributes everywhere, so a spec name cannot make them legitimate).
"""

from __future__ import annotations

import keyword

UNSAFE_ATTRIBUTES = frozenset({
    "tofile", "dump", "dumps", "ctypes", "ctypeslib", "format", "format_map", "mro",
    "save", "savez", "savez_compressed", "savetxt", "load", "loads", "loadtxt", "fromfile",
    "genfromtxt", "fromregex", "memmap", "lib", "f2py", "testing", "DataSource",
})
"""Attributes no generated module may use (file and memory access, reflection, str.format)."""


def name_problem(name: str) -> str | None:
    """Why `name` cannot be declared in a spec, as a sentence with its fix; None when it can."""
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return f"`{name}` is a Python keyword; choose another name (e.g. `{name}_`)"
    if "__" in name:
        return f"`{name}` contains `__`, which gymwright reserves for generated names; use a single `_`"
    if name in UNSAFE_ATTRIBUTES:
        return (f"`{name}` is reserved (generated code may not use an attribute of that name); "
                f"choose another name (e.g. `{name}_count`)")
    return None
