"""The channel module's part of the Python backend: the symbols sent at each step."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from gymwright.compile.pyexpr import PyEmitter
from gymwright.mechanics.emit import PyGen
from gymwright.spec.checked import CheckedSpec


class PyChannel:
    """`PYTHON` of the channel module (a `mechanics.emit.PythonPart`)."""

    calls: dict[str, Callable[[PyEmitter, ast.Call], str]] = {}
    axis_calls: dict[str, Callable[[object, ast.Call], tuple[str, bool]]] = {}

    def constants(self, gen: PyGen) -> None:
        pass

    def methods(self, gen: PyGen) -> None:
        pass

    def reset(self, gen: PyGen) -> None:
        gen.w(f"v.msg = np.full({gen.n}, -1, dtype=np.int64)")

    def step(self, gen: PyGen) -> None:
        w = gen.w
        w(f"msg = np.full({gen.n}, -1, dtype=np.int64)", comment="channel: symbols sent this step")
        for r in gen.cs.roles:
            for c in r.choices:
                message = c.fields.get("message")
                if message is not None:
                    with w.block(f"for me in range({r.start}, {r.start + r.count}):"):
                        with w.block(f"if v.{c.name}[me]:"):
                            w(f"msg[me] = {gen.em(per_agent=True)(message)}", comment=f"{c.path}.message")
        w("v.msg = msg")
        gen.replaced()

    def array_reads(self, gen: PyGen) -> set[str]:
        return set()

    def frame(self, gen: PyGen, cell: int) -> str | None:
        return None

    def text(self, gen: PyGen) -> str | None:
        return None

    def carried(self, cs: CheckedSpec, make_env: Callable[[], Any]) -> dict[str, str]:
        return {}

    def carried_note(self, cs: CheckedSpec) -> str | None:
        return None


PYTHON = PyChannel()
