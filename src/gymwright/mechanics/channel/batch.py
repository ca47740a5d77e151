"""The channel module's part of the batch backend: the symbols sent at each step."""

from __future__ import annotations

from gymwright.mechanics.emit import BatchGen, BatchPart
from gymwright.spec.names import ident


class BatchChannel(BatchPart):
    """`BATCH` of the channel module: no function, no table; every episode starts silent."""

    def reset(self, gen: BatchGen) -> None:
        gen.w(f"v.msg = np.full((K, {gen.n}), -1, dtype=np.int64)")

    def step(self, gen: BatchGen) -> None:
        w = gen.w
        w(f"msg = np.full((K, {gen.n}), -1, dtype=np.int64)", comment="channel")
        for r in gen.cs.roles:
            for c in r.choices:
                message = c.fields.get("message")
                if message is not None:
                    gen.role_locals(r.start, r.count)
                    code = gen.value(message, 2, (), per_agent=True, agents=r.count)
                    sl = f"{r.start}:{r.start + r.count}"
                    w(f"msg[:, {sl}] = np.where(v.{ident(c.name)}[:, {sl}], {code}, msg[:, {sl}])", comment=f"{c.path}.message")
        w("v.msg = msg")

BATCH = BatchChannel()
