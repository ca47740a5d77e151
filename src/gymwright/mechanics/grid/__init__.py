"""The `grid` mechanics module: positions on a grid of tile kinds, layouts (fixed, generated,
pooled, solved by a MAPF solver; random starts that avoid given cells or tile kinds), moves with
slip and a collision mode (`block`, `vertex`, `occupied`, `none`), a `can_move` that may read
this step's actions, local views.

One file per stage: `schema.py`, `checks.py` (with `checked.py`, its checked form) and
`functions.py` (spec); `python.py`, `batch.py` and `tables.py` (code generation); `runtime.py`,
`runtime_batch.py` and `runtime_solved.py` (the runtime generated modules inline); `module.py`
declares them (`GRID`, an entry of `gymwright.mechanics.registry.MECHANICS`).
"""
