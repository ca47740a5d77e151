"""Per-update logs: `train.jsonl` (one JSON object per update) and, optionally, TensorBoard."""

from __future__ import annotations

import json
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
