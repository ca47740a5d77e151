"""How generated code cites the spec, read back: a block's comment starts with the spec path it
comes from (`# step[2].set.x: ...`, `# observe.walker[0]: ...`), and a spec path starts with a
section of `EnvSpec`. The verifier maps a line that raised to the spec through `cited_path`, so
a new section or mechanics module is cited with no list to keep here."""

from __future__ import annotations

import functools
import re

from gymwright.spec.model import EnvSpec


@functools.cache
def _cite() -> re.Pattern[str]:
    sections = sorted({f.alias or name for name, f in EnvSpec.model_fields.items()}, key=len, reverse=True)
    return re.compile(r"\s*# ((?:" + "|".join(map(re.escape, sections)) + r")(?!\w)[\w.\[\]]*)")


def cited_path(line: str) -> str | None:
    """The spec path a generated comment line cites (None for code and for other comments)."""
    m = _cite().match(line)
    return m.group(1) if m else None
