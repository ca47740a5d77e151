"""Mechanics modules' code generation, one file per module, registered here: `PYTHON` are parts
of the Python backend's generator (`compile/python_backend.py`), `BATCH` of the batch backend's
(`compile/batch_backend.py`). Their checks are in `spec/mechanics/`, their runtime in `runtime/`."""

from __future__ import annotations

from gymwright.compile.mechanics.channel import BatchChannel, PyChannel
from gymwright.compile.mechanics.grid import BatchGrid, PyGrid

PYTHON = (PyGrid, PyChannel)
BATCH = (BatchGrid, BatchChannel)
