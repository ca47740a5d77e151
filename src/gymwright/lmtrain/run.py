"""A train-lm run folder: config.json, log.jsonl (one row per update), model/ (save_pretrained:
weights, config and tokenizer; `hf:DIR/model` loads it), result.json."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from gymwright.atomic import write_atomic
from gymwright.errors import GymwrightError


class RunFolder:
    """The files of one run under `root`."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    @property
    def model_dir(self) -> Path:
        return self.root / "model"

    def start(self, config: dict[str, Any]) -> None:
        """Create the folder (refusing one that holds another run) and write config.json."""
        if (self.root / "result.json").exists() or (self.root / "log.jsonl").exists():
            raise GymwrightError(f"{self.root} already holds a train-lm run", path="out",
                                 hint="pass a new --out folder (or delete the old run)")
        self.root.mkdir(parents=True, exist_ok=True)
        write_atomic(self.root / "config.json", dumps(config))

    def log(self, row: dict[str, Any]) -> None:
        with (self.root / "log.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(clean(row), sort_keys=True) + "\n")

    def rows(self) -> list[dict[str, Any]]:
        path = self.root / "log.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def save_model(self, model: Any, tokenizer: Any) -> Path:
        model.save_pretrained(self.model_dir)
        tokenizer.save_pretrained(self.model_dir)
        return self.model_dir

    def finish(self, result: dict[str, Any]) -> None:
        write_atomic(self.root / "result.json", dumps(result))

    def result(self) -> dict[str, Any]:
        return dict(json.loads((self.root / "result.json").read_text(encoding="utf-8")))


def clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become None, numpy and torch scalars plain numbers."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dumps(value: Any) -> str:
    return json.dumps(clean(value), indent=2, sort_keys=True) + "\n"
