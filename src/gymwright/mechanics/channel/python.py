"""The channel module's part of the Python backend: the symbols sent at each step."""

from __future__ import annotations

from gymwright.mechanics.emit import PyGen, PythonPart
from gymwright.spec.names import ident


class PyChannel(PythonPart):
    """`PYTHON` of the channel module: no function, no table, no picture."""

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
                        with w.block(f"if v.{ident(c.name)}[me]:"):
                            w(f"msg[me] = {gen.em(per_agent=True)(message)}", comment=f"{c.path}.message")
        w("v.msg = msg")
        gen.replaced()


PYTHON = PyChannel()
