"""The `channel` mechanics module's code generation for both backends: the symbols sent at each
step. Its checks are `spec/mechanics/channel.py`; it needs no runtime helper."""

from __future__ import annotations

from gymwright.compile.pygen.base import PyGenBase
from gymwright.compile.writer import Writer
from gymwright.spec.checked import CheckedSpec


class PyChannel(PyGenBase):
    """The Python backend's channel code."""

    def channel_step(self) -> None:
        w = self.w
        w(f"msg = np.full({self.n}, -1, dtype=np.int64)", comment="channel: symbols sent this step")
        for r in self.cs.roles:
            for c in r.choices:
                if c.message is not None:
                    with w.block(f"for me in range({r.start}, {r.start + r.count}):"):
                        with w.block(f"if v.{c.name}[me]:"):
                            w(f"msg[me] = {self.em(per_agent=True)(c.message)}", comment=f"{c.path}.message")
        w("v.msg = msg")


class BatchChannel:
    """The batch backend's channel code (a part of `_BatchGen` in `compile/batch_backend.py`, whose
    `em`, `value` and `role_locals` it uses)."""

    cs: CheckedSpec
    w: Writer
    n: int

    def channel_step(self) -> None:
        w = self.w
        w(f"msg = np.full((K, {self.n}), -1, dtype=np.int64)", comment="channel")
        for r in self.cs.roles:
            for c in r.choices:
                if c.message is not None:
                    self.role_locals(r.start, r.count)
                    code = self.value(c.message, 2, (), per_agent=True, agents=r.count)
                    sl = f"{r.start}:{r.start + r.count}"
                    w(f"msg[:, {sl}] = np.where(v.{c.name}[:, {sl}], {code}, msg[:, {sl}])", comment=f"{c.path}.message")
        w("v.msg = msg")
