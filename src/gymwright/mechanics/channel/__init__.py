"""The `channel` mechanics module: a message channel. A choice with `message` sends a symbol;
`msg` holds each agent's last symbol (-1 = silent).

`schema.py` and `checks.py` (spec), `python.py` and `batch.py` (code generation); it needs no
runtime helper. `module.py` declares them (`CHANNEL`, an entry of
`gymwright.mechanics.registry.MECHANICS`).
"""
