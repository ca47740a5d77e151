"""The mechanics modules: `MECHANICS`, name -> entry (`base.Mechanics`). A new module is one folder
beside `grid/` and one entry here (docs/extending.md).

The checker, the schema (`spec/model.py`), the language reference, both code generators and the
runtime inliner iterate this registry; none of them names a module. Importing it registers each
module's expression functions in `spec.expr.functions.FUNCTIONS`.
"""

from __future__ import annotations

from gymwright.mechanics.base import Mechanics
from gymwright.mechanics.channel.module import CHANNEL
from gymwright.mechanics.grid.module import GRID
from gymwright.spec.expr.functions import register

MECHANICS: dict[str, Mechanics] = {m.name: m for m in (GRID, CHANNEL)}

for _m in MECHANICS.values():
    for _f in _m.functions:
        register(_f)
