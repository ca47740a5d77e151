"""Read what a run folder holds into one `RunFolder`; every part may be absent.

A *run folder* (`gymwright train --out RUN`) holds `train.jsonl` and `checkpoint.pt`, and after
`gymwright evaluate` an `eval/` folder (`scorecard.json`, `trajectories.jsonl`, `frames/*.gif`).
A *curriculum folder* (`gymwright evolve`) holds `curriculum.jsonl` and one run folder per stage
(`stage0/`, `stage1/`, ...). Either may hold `design.json` (a design result). A part that is
missing or unreadable is left empty and named in `notes`; the page says "not recorded". A run of
a code-mode module (`code_mode`) has no trajectories.jsonl or frames: its evaluation plays in
sandbox workers, and no steps come back over the pipe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymwright.codemode.source import is_code_source
from gymwright.errors import GymwrightError
from gymwright.evaluate.scorecard import NO_SPEC
from gymwright.evaluate.trajectories import Step, Trajectory

TRAIN_LOG = "train.jsonl"
CHECKPOINT = "checkpoint.pt"
SCORECARD = "eval/scorecard.json"
CURRICULUM = "curriculum.jsonl"
COMPARISON = "comparison.json"
DESIGN = "design.json"
CONFIG = "config.yaml"  # the resolved TrainConfig (`gymwright train` and `evolve` write it)
MARKERS = (TRAIN_LOG, CHECKPOINT, SCORECARD, CURRICULUM, DESIGN)
GIF_ORDER = ("best", "worst")  # then failure0, failure1, ...


class ReportError(GymwrightError):
    """The folder is not a run folder, or holds nothing to report."""


@dataclass
class Segment:
    """The train.jsonl rows of one training run (one per curriculum stage)."""

    label: str
    rows: list[dict[str, Any]]


@dataclass
class RunFolder:
    """Everything the report reads, parsed; `None` or empty where the folder lacks it."""

    root: Path
    segments: list[Segment] = field(default_factory=list)
    checkpoint: dict[str, Any] | None = None  # spec_name, spec_hash, params, config (no weights)
    scorecard: dict[str, Any] | None = None
    eval_dir: Path | None = None
    trajectories: list[Trajectory] = field(default_factory=list)
    gifs: dict[str, Path] = field(default_factory=dict)  # best, worst, failure0, ... -> file
    curriculum: list[dict[str, Any]] | None = None
    design: dict[str, Any] | None = None
    comparison: dict[str, Any] | None = None  # comparison.json: curricula judged on the same held-out cells
    arm_segments: dict[str, list[Segment]] = field(default_factory=dict)  # per compared curriculum, its stages
    notes: list[str] = field(default_factory=list)  # parts that could not be read, and why

    @property
    def spec_name(self) -> str | None:
        for source in (self.scorecard, self.checkpoint):
            if source and source.get("spec_name", source.get("spec")):
                return str(source.get("spec_name", source.get("spec")))
        return (self.design or {}).get("spec_name")

    @property
    def code_mode(self) -> bool:
        """A run of a code-mode module: designed in code mode, trained on a `.py` module, or
        evaluated as one (its scorecard's spec checks say a code-mode design has no spec)."""
        if (self.design or {}).get("mode") == "code":
            return True
        if is_code_source(((self.checkpoint or {}).get("config") or {}).get("spec")):
            return True
        return any(str(c.get("message", "")).startswith(NO_SPEC) for c in (self.scorecard or {}).get("checks") or []
                   if isinstance(c, dict))

    @property
    def params(self) -> dict[str, Any]:
        """The params the (last) policy was trained and evaluated with."""
        if self.scorecard and isinstance(self.scorecard.get("params"), dict):
            return dict(self.scorecard["params"])
        if self.checkpoint and self.checkpoint.get("params"):
            first = self.checkpoint["params"][0]
            return dict(first) if isinstance(first, dict) else {}
        if self.curriculum:
            return dict(self.curriculum[-1].get("params") or {})
        return {}


def read_run(root: Path) -> RunFolder:
    """Read a run or curriculum folder; `ReportError` if it is neither."""
    root = Path(root)
    if not root.exists():
        raise ReportError(f"{root} does not exist",
                          hint="pass the folder written by `gymwright train SPEC --out RUN` "
                               "or `gymwright evolve`")
    if not root.is_dir():
        parent = f"its folder {root.parent}" if root.name in MARKERS or root.suffix == ".pt" else "a folder"
        raise ReportError(f"{root} is a file, not a run folder",
                          hint=f"pass {parent}: a run folder holds {TRAIN_LOG} and {CHECKPOINT}")
    if not any((root / m).exists() for m in MARKERS):
        raise ReportError(
            f"nothing to report in {root}: it has none of {', '.join(MARKERS)}",
            hint=f"train into it first (`gymwright train SPEC --out {root}`), then "
                 f"`gymwright evaluate SPEC --policy {root}`")
    run = RunFolder(root)
    run.design = _json(run, root / DESIGN)
    run.curriculum = _jsonl(run, root / CURRICULUM) if (root / CURRICULUM).exists() else None
    stages = _stage_folders(root, run.curriculum)
    last = stages[-1] if stages else root
    for label, folder in ([(f"stage {i}", f) for i, f in enumerate(stages)] or [("run", root)]):
        if (folder / TRAIN_LOG).exists():
            run.segments.append(Segment(label, _jsonl(run, folder / TRAIN_LOG)))
    if (root / COMPARISON).exists():
        _read_comparison(run, root)
    run.checkpoint = _checkpoint(run, last / CHECKPOINT)
    eval_dir = next((f / "eval" for f in (root, last) if (f / SCORECARD).exists()), None)
    if eval_dir is not None:
        run.eval_dir = eval_dir
        run.scorecard = _json(run, eval_dir / "scorecard.json")
        if (eval_dir / "trajectories.jsonl").exists():
            run.trajectories = trajectories(_jsonl(run, eval_dir / "trajectories.jsonl"))
        run.gifs = _gifs(eval_dir, run.scorecard or {})
    return run


def _read_comparison(run: RunFolder, root: Path) -> None:
    """comparison.json and the training log of every compared curriculum (its folder is written
    relative to the run folder)."""
    run.comparison = _json(run, root / COMPARISON)
    for name, arm in ((run.comparison or {}).get("arms") or {}).items():
        folder = root / str(arm.get("folder", ""))
        if folder.resolve() == root.resolve():  # the run folder itself (the demo's engineer): read already
            run.arm_segments[name] = run.segments
            continue
        records = _jsonl(run, folder / CURRICULUM) if (folder / CURRICULUM).exists() else []
        run.arm_segments[name] = [Segment(f"stage {i}", _jsonl(run, f / TRAIN_LOG))
                                  for i, f in enumerate(_stage_folders(folder, records)) if (f / TRAIN_LOG).exists()]


def _stage_folders(root: Path, records: list[dict[str, Any]] | None) -> list[Path]:
    """Each stage's run folder: where its checkpoint was written, else `root/stageK`."""
    folders = []
    for rec in records or []:
        ckpt = Path(str(rec.get("checkpoint") or ""))
        here = root / f"stage{rec.get('index', len(folders))}"
        folders.append(ckpt.parent if rec.get("checkpoint") and ckpt.parent.is_dir() else here)
    return [f for f in folders if f.is_dir()]


def _json(run: RunFolder, path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        run.notes.append(f"{path.name} is unreadable ({e}); left out")
        return None
    return data if isinstance(data, dict) else None


def _jsonl(run: RunFolder, path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file; a torn or foreign line is skipped (and noted)."""
    rows, bad = [], 0
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        run.notes.append(f"{path.name} is unreadable ({e}); left out")
        return []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(row, dict):
            rows.append(row)
    if bad:
        run.notes.append(f"{path.name}: skipped {bad} unreadable line{'s' * (bad != 1)}")
    return rows


def _checkpoint(run: RunFolder, path: Path) -> dict[str, Any] | None:
    """What the checkpoint says about the run (not its weights); read safely (weights_only, no pickled objects)."""
    if not path.exists():
        return None
    from gymwright.train import checkpoint as ck

    try:
        data = ck.load(path)
    except GymwrightError as e:
        run.notes.append(f"{path.name}: {e.message}")
        return None
    return {k: data.get(k) for k in ("spec_name", "spec_hash", "params", "config", "algo", "update", "env_steps")}


def trajectories(rows: list[dict[str, Any]]) -> list[Trajectory]:
    """Trajectories back from the lines `gymwright.evaluate.write_jsonl` wrote."""
    by_episode: dict[Any, Trajectory] = {}
    for row in rows:
        tr = by_episode.setdefault(row.get("episode"), Trajectory(int(row.get("seed", 0))))
        if row.get("t") == "end":
            tr.returns = {str(a): float(r) for a, r in (row.get("returns") or {}).items()}
            tr.metrics = {str(k): float(v) for k, v in (row.get("metrics") or {}).items()}
        else:
            tr.steps.append(Step(int(row.get("t", len(tr.steps))), dict(row.get("actions") or {}),
                                 dict(row.get("rewards") or {}), dict(row.get("terms") or {}),
                                 str(row.get("text", ""))))
    return list(by_episode.values())


def _gifs(eval_dir: Path, scorecard: dict[str, Any]) -> dict[str, Path]:
    """The selected episodes' GIFs: in eval/frames, else where the scorecard says they were."""
    found = {p.stem: p for p in sorted((eval_dir / "frames").glob("*.gif"))}
    for key, where in (scorecard.get("files") or {}).items():
        name = str(key).removesuffix(".gif")
        if str(key).endswith(".gif") and name not in found and Path(str(where)).is_file():
            found[name] = Path(str(where))
    return dict(sorted(found.items(), key=lambda kv: (GIF_ORDER.index(kv[0]) if kv[0] in GIF_ORDER
                                                      else len(GIF_ORDER), kv[0])))
