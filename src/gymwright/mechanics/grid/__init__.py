"""The `grid` mechanics module: positions on a grid of tile kinds, layouts (fixed, generated,
pooled, solved by a MAPF solver), moves with slip and collisions, local views.

One file per stage: `schema.py`, `checks.py` (with `checked.py`, its checked form) and
`functions.py` (spec); `python.py`, `batch.py` and `tables.py` (code generation); `runtime.py`,
`runtime_batch.py` and `runtime_solved.py` (the runtime generated modules inline); `module.py`
declares them (`GRID`, an entry of `gymwright.mechanics.registry.MECHANICS`).
"""
