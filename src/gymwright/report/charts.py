"""Learning curves as PNG bytes, drawn with matplotlib's Agg canvas (no pyplot, no display).

Curves come from train.jsonl rows, x = env steps (or the seconds of training, `time_s`). A
curriculum's stages are laid end to end, with a dashed line where each stage begins. A band
chart draws, per group of runs, the IQM over seeds and its 95% bootstrap band.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gymwright.evaluate.checks import stage_offsets
from gymwright.report.folder import Segment

WIDTH, ROW_HEIGHT, DPI = 8.0, 2.6, 100
PANELS_PER_ROW = 3
X_KEYS = {"steps": "env_steps", "time": "time_s"}  # `gymwright report --x`: the row key of each axis
X_LABELS = {"env_steps": "env steps", "time_s": "wall-clock seconds of training"}
MAX_SERIES = 32  # series of one chart: a flood of names in a log (metrics) is cut here, and the page says so


@dataclass
class Curves:
    """name -> (x, y) for the row keys under one prefix, and where stages begin."""

    series: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)
    stage_starts: list[float] = field(default_factory=list)
    x_label: str = "env steps"
    left_out: set[str] = field(default_factory=set)  # names past the first MAX_SERIES, not drawn


def offsets(segments: list[Segment], key: str = "env_steps") -> list[float]:
    """Where each segment starts on the shared axis of `key` (env steps, or `time_s`): stages laid
    end to end as `gymwright.evaluate.checks.stage_offsets` lays them."""
    spans = []
    for seg in segments:
        xs = _xs(seg, key)
        spans.append((xs[0], xs[-1]) if xs else None)
    return stage_offsets(spans)


def _xs(seg: Segment, key: str) -> list[float]:
    return [x for x in (_number(r.get(key)) for r in seg.rows) if x is not None]


def ends(segments: list[Segment], key: str = "env_steps") -> list[float]:
    """Where each segment ends on the shared axis (its last row's `key`, placed)."""
    out = []
    for seg, offset in zip(segments, offsets(segments, key), strict=True):
        xs = _xs(seg, key)
        out.append(offset + xs[-1] if xs else offset)
    return out


def curves(segments: list[Segment], prefix: str, key: str = "env_steps") -> Curves:
    """The keys `prefix<name>` of every row, over `key` (env steps, or `time_s`: seconds of
    training) laid end to end across segments: the first MAX_SERIES names met (the others in
    `left_out`)."""
    out = Curves(stage_starts=ends(segments, key)[:-1], x_label=X_LABELS.get(key, key))
    for seg, offset in zip(segments, offsets(segments, key), strict=True):
        for row in seg.rows:
            x = _number(row.get(key))
            if x is None:
                continue
            for name, value in row.items():
                y = _number(value)
                if name.startswith(prefix) and y is not None:
                    if name[len(prefix):] not in out.series and len(out.series) >= MAX_SERIES:
                        out.left_out.add(name[len(prefix):])
                        continue
                    xs, ys = out.series.setdefault(name[len(prefix):], ([], []))
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
    ax.set_xlabel(c.x_label, fontsize=8)
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


@dataclass
class Band:
    """One group's curve: x, the centre (IQM over seeds) and the band's low and high edges."""

    x: list[float]
    center: list[float]
    low: list[float]
    high: list[float]
    runs: int


def band_chart(bands: dict[str, Band], title: str, x_label: str) -> bytes:
    """Every group's centre line and shaded band on one axis, with a legend (label, seeds)."""
    fig = _figure(1)
    ax = fig.add_subplot()
    for i, (name, b) in enumerate(bands.items()):
        color = f"C{i % 10}"
        ax.plot(b.x, b.center, linewidth=1.6, color=color, label=f"{name} ({b.runs} seed{'s' * (b.runs != 1)})")
        if b.runs > 1:
            ax.fill_between(b.x, b.low, b.high, color=color, alpha=0.2, linewidth=0)
    _decorate(ax, Curves(x_label=x_label), title)
    if bands:
        ax.legend(fontsize=8, loc="best")
    return _png(fig)
