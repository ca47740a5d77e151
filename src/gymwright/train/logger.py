"""Per-update logs: `train.jsonl` (one JSON object per update) and, optionally, TensorBoard; and
the run's `Clock` (the seconds each update spent in the env and in the networks)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gymwright.atomic import write_atomic, write_error

LOG = "train.jsonl"


class RunLog:
    """Appends one row per update; on resume, first rewrites the log to the checkpoint's rows."""

    def __init__(self, out: Path, history: list[dict[str, Any]], tensorboard: bool) -> None:
        self.path = Path(out) / LOG
        # drops rows a killed run wrote after its last checkpoint
        write_atomic(self.path, "".join(json.dumps(row) + "\n" for row in history))
        try:
            self.file = open(self.path, "a")  # noqa: SIM115 - closed in close()
        except OSError as e:
            raise write_error(self.path, e) from e
        self.tb = None
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError as e:  # the tensorboard package is an optional extra
                raise ImportError("tensorboard=True needs the `tensorboard` package: pip install gymwright[tensorboard]") from e
            purge = history[-1]["env_steps"] + 1 if history else None
            self.tb = SummaryWriter(str(Path(out) / "tb"), purge_step=purge)

    def write(self, row: dict[str, Any]) -> None:
        try:  # an append, not a rewrite: a torn last line (full disk, kill) is skipped by read_log
            self.file.write(json.dumps(row) + "\n")
            self.file.flush()
        except OSError as e:
            raise write_error(self.path, e) from e
        if self.tb is not None:
            for k, v in row.items():
                if "/" in k and isinstance(v, int | float):
                    self.tb.add_scalar(k, v, row["env_steps"])

    def close(self) -> None:
        self.file.close()
        if self.tb is not None:
            self.tb.close()


def read_log(out: str | Path) -> list[dict[str, Any]]:
    """The rows of `out/train.jsonl` (a torn last line, from a killed run, is skipped)."""
    rows = []
    for line in (Path(out) / LOG).read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


class Clock:
    """Seconds a run spent: `totals` (env_s, network_s, total_s, over the whole run, kept in the
    checkpoint) and, for the update under way, `env_s` (stepping the env) and `network_s` (the
    networks: acting, advantages and losses)."""

    def __init__(self, totals: dict[str, float] | None = None) -> None:
        self.totals = dict(totals) if totals is not None else {"env_s": 0.0, "network_s": 0.0, "total_s": 0.0}
        self.env_s = self.network_s = self._began = 0.0

    def begin(self) -> None:
        """An update starts."""
        self.env_s = self.network_s = 0.0
        self._began = time.perf_counter()

    @contextmanager
    def env(self) -> Iterator[None]:
        began = time.perf_counter()
        yield
        self.env_s += time.perf_counter() - began

    @contextmanager
    def network(self) -> Iterator[None]:
        began = time.perf_counter()
        yield
        self.network_s += time.perf_counter() - began

    def end(self) -> float:
        """The update ends: its seconds join the totals; returns them."""
        elapsed = time.perf_counter() - self._began
        self.totals["env_s"] += self.env_s
        self.totals["network_s"] += self.network_s
        self.totals["total_s"] += elapsed
        return elapsed
