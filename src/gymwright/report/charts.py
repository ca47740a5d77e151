"""Learning curves as PNG bytes, drawn with matplotlib's Agg canvas (no pyplot, no display).

Curves come from train.jsonl rows, x = env steps. A curriculum's stages are laid end to end,
with a dashed line where each stage begins.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gymwright.report.folder import Segment

WIDTH, ROW_HEIGHT, DPI = 8.0, 2.6, 100
PANELS_PER_ROW = 3


@dataclass
class Curves:
    """name -> (x, y) for the row keys under one prefix, and where stages begin."""

    series: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)
    stage_starts: list[float] = field(default_factory=list)


def offsets(segments: list[Segment]) -> list[float]:
    """Where each segment starts on the shared env-steps axis. A stage that counts from zero is
    placed after the one before; one that continued the count keeps its own steps."""
    out, end, last_raw = [], 0.0, None
    for seg in segments:
        xs = [x for x in (_number(r.get("env_steps")) for r in seg.rows) if x is not None]
        if not xs:
            out.append(end)
            continue
        offset = 0.0 if last_raw is not None and xs[0] > last_raw else end
        out.append(offset)
        end, last_raw = offset + xs[-1], xs[-1]
    return out


def ends(segments: list[Segment]) -> list[float]:
    """Where each segment ends on the shared axis (its last row's env steps, placed)."""
    out = []
    for seg, offset in zip(segments, offsets(segments), strict=True):
        xs = [x for x in (_number(r.get("env_steps")) for r in seg.rows) if x is not None]
        out.append(offset + xs[-1] if xs else offset)
    return out


def curves(segments: list[Segment], prefix: str) -> Curves:
    """The keys `prefix<name>` of every row, over env steps laid end to end across segments."""
    out = Curves(stage_starts=ends(segments)[:-1])
    for seg, offset in zip(segments, offsets(segments), strict=True):
        for row in seg.rows:
            x = _number(row.get("env_steps"))
            if x is None:
                continue
            for key, value in row.items():
                y = _number(value)
                if key.startswith(prefix) and y is not None:
                    xs, ys = out.series.setdefault(key[len(prefix):], ([], []))
                    xs.append(offset + x)
                    ys.append(y)
    return out


def _number(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return None
    return float(v)


def _figure(rows: int) -> Figure:
    fig = Figure(figsize=(WIDTH, ROW_HEIGHT * rows), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _decorate(ax: Axes, c: Curves, title: str) -> None:
    for x in c.stage_starts:
        ax.axvline(x, color="#888", linestyle="--", linewidth=0.8)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("env steps", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.grid(alpha=0.3)
    ax.ticklabel_format(axis="x", style="sci", scilimits=(-3, 4))


def line_chart(c: Curves, title: str) -> bytes:
    """Every series of `c` on one axis, with a legend."""
    fig = _figure(1)
    ax = fig.add_subplot()
    for name, (xs, ys) in c.series.items():
        ax.plot(xs, ys, marker="." if len(xs) < 30 else None, linewidth=1.4, label=name)
    _decorate(ax, c, title)
    if c.series:
        ax.legend(fontsize=8, loc="best")
    return _png(fig)


def small_multiples(c: Curves, title: str) -> bytes:
    """One small panel per series (they have different scales)."""
    n = max(1, len(c.series))
    rows = math.ceil(n / PANELS_PER_ROW)
    fig = _figure(rows)
    fig.suptitle(title, fontsize=11)
    for i, (name, (xs, ys)) in enumerate(c.series.items()):
        ax = fig.add_subplot(rows, PANELS_PER_ROW, i + 1)
        ax.plot(xs, ys, marker="." if len(xs) < 30 else None, linewidth=1.4, color=f"C{i % 10}")
        _decorate(ax, c, name)
    return _png(fig)
