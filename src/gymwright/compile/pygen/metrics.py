"""Episode metrics: each step's fold into the accumulators, their start values, and
`episode_metrics()`."""

from __future__ import annotations

from gymwright.compile.pygen.base import uses_me_or_random
from gymwright.compile.pygen.context import GenContext
from gymwright.spec.checked import CheckedSpec, CMetric


def lazy(m: CMetric) -> bool:
    """A `last` metric without random draws is evaluated when asked for, not at every step
    (the state does not change between the last step and the end of the episode)."""
    return m.reduce == "last" and not uses_me_or_random(m.expr)


def accumulated(cs: CheckedSpec) -> list[CMetric]:
    """The metrics folded step by step (`self._metric_acc`): all but the lazy ones."""
    return [m for m in cs.metrics if not lazy(m)]


def start(reduce: str) -> str:
    """Code of an accumulator's value before the first step."""
    return {"max": "-math.inf", "min": "math.inf"}.get(reduce, "0.0")


def code(g: GenContext, m: CMetric) -> str:
    value = g.em()(m.expr)
    return value if value.startswith("float(") else f"float({value})"


def fold(g: GenContext, m: CMetric) -> None:
    """Fold this step's value of metric `m` into its accumulator. `max` and `min` compare once
    (what the builtins do for two values, without their call): `max(acc, x)` is `x` only if
    `x > acc`, so NaNs and ties keep the same value."""
    w = g.w
    k = accumulated(g.cs).index(m)
    value, acc = code(g, m), f"self._metric_acc[{k}]"
    comment = f"{m.path}: {m.expr.source} ({m.reduce})"
    if m.reduce in ("max", "min"):
        w(f"metric{k} = {value}", comment=comment)
        with w.block(f"if metric{k} {'>' if m.reduce == 'max' else '<'} {acc}:"):
            w(f"{acc} = metric{k}")
        return
    w({"sum": f"{acc} += {value}", "mean": f"{acc} += {value}", "last": f"{acc} = {value}"}[m.reduce], comment=comment)


def episode_metrics(g: GenContext) -> None:
    """`episode_metrics()`: the metrics' values so far, reduced as the spec says."""
    w = g.w
    with w.block("def episode_metrics(self):"):
        w('"""Metric values of the episode so far, reduced as the spec says."""')
        w("p, v = self.p, self.v")
        items = []
        folded = accumulated(g.cs)
        for m in g.cs.metrics:
            if lazy(m):  # the value after the last step is the value now
                items.append(f"{m.name!r}: {code(g, m)} if v.t else 0.0")
            else:
                acc = f"self._metric_acc[{folded.index(m)}]"
                items.append(f"{m.name!r}: {acc} / max(v.t, 1)" if m.reduce == "mean" else f"{m.name!r}: {acc}")
        w("return {" + ", ".join(items) + "}")
    w("")
