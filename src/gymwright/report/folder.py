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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from gymwright.codemode.source import is_code_source
from gymwright.errors import GymwrightError
from gymwright.evaluate.scorecard import NO_SPEC
from gymwright.evaluate.trajectories import Step, Trajectory
from gymwright.report.records import (
    ComparisonRecord,
    DesignRecord,
    RecordError,
    ScorecardRecord,
    StageLine,
    TrajectoryLine,
    read_json,
    read_jsonl,
    shape_problem,
)

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
    """Read a run or curriculum folder; `ReportError` if it is neither, or cannot be read."""
    root = Path(root)
    try:
        _check_folder(root)
        return _read(root)
    except OSError as e:  # a folder (or a stage's) this user may not open
        where = e.filename or root
        raise ReportError(f"cannot read {where}: {e.strerror or e}",
                          hint="check that the run folder and everything in it are readable by this user "
                               f"(`ls -ld {where}`)") from None


def _check_folder(root: Path) -> None:
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


def _read(root: Path) -> RunFolder:
    run = RunFolder(root)
    run.design = _json(run, root / DESIGN, DesignRecord)
    run.curriculum = _jsonl(run, root / CURRICULUM, shape=StageLine) if (root / CURRICULUM).exists() else None
    stages = _stage_folders(root, run.curriculum)
    last = stages[-1] if stages else root
    for label, folder in ([(f"stage {i}", f) for i, f in enumerate(stages)] or [("run", root)]):
        if (folder / TRAIN_LOG).exists():
            run.segments.append(Segment(label, _jsonl(run, folder / TRAIN_LOG, numbers=True)))
    if (root / COMPARISON).exists():
        _read_comparison(run, root)
    run.checkpoint = _checkpoint(run, last / CHECKPOINT)
    eval_dir = next((f / "eval" for f in (root, last) if (f / SCORECARD).exists()), None)
    if eval_dir is not None:
        run.eval_dir = eval_dir
        run.scorecard = _json(run, eval_dir / "scorecard.json", ScorecardRecord)
        if (eval_dir / "trajectories.jsonl").exists():
            path = eval_dir / "trajectories.jsonl"
            run.trajectories = trajectories(_jsonl(run, path, shape=TrajectoryLine))
        run.gifs = _gifs(eval_dir, run.scorecard or {})
    return run


def _read_comparison(run: RunFolder, root: Path) -> None:
    """comparison.json and the training log of every compared curriculum (its folder is written
    relative to the run folder)."""
    run.comparison = _json(run, root / COMPARISON, ComparisonRecord)
    for name, arm in ((run.comparison or {}).get("arms") or {}).items():
        folder = root / str(arm.get("folder", ""))
        if _is_dir(folder) and folder.resolve() == root.resolve():  # the run folder itself (the demo's engineer)
            run.arm_segments[name] = run.segments
            continue
        records = _jsonl(run, folder / CURRICULUM, shape=StageLine) if _exists(folder / CURRICULUM) else []
        run.arm_segments[name] = [Segment(f"stage {i}", _jsonl(run, f / TRAIN_LOG, numbers=True))
                                  for i, f in enumerate(_stage_folders(folder, records)) if (f / TRAIN_LOG).exists()]


def _stage_folders(root: Path, records: list[dict[str, Any]] | None) -> list[Path]:
    """Each stage's run folder: where its checkpoint was written, else `root/stageK` (K: the
    record's index, else its place)."""
    folders = []
    for rec in records or []:
        index, ckpt = rec.get("index"), rec.get("checkpoint")
        here = root / f"stage{index if isinstance(index, int) and not isinstance(index, bool) else len(folders)}"
        written = Path(ckpt).parent if isinstance(ckpt, str) and ckpt else None
        folders.append(written if written is not None and _is_dir(written) else here)
    return [f for f in folders if _is_dir(f)]


def _is_dir(path: Path) -> bool:
    """`path.is_dir()`, False for a name no folder can have (too long, a NUL in it)."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def _json(run: RunFolder, path: Path, shape: type[BaseModel] | None = None) -> dict[str, Any] | None:
    """A JSON record (`gymwright.report.records.read_json`); one that cannot be read, is not an
    object or not of its `shape` (`gymwright.report.records`) is left out and said."""
    if not _exists(path):
        return None
    label = _label(run, path)
    try:
        data = read_json(path, label)
    except RecordError as e:
        run.notes.append(f"{e.path}: {e.message}; left out")
        return None
    if not isinstance(data, dict):
        run.notes.append(f"{label}: a JSON {type(data).__name__}, not an object; left out")
        return None
    wrong = shape_problem(shape, data) if shape is not None else None
    if wrong is not None:
        run.notes.append(f"{label}: {wrong}, not what gymwright writes; left out")
        return None
    return data


def _jsonl(run: RunFolder, path: Path, numbers: bool = False, shape: type[BaseModel] | None = None
           ) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines log (`gymwright.report.records.read_jsonl`): a torn,
    foreign, too long or too deep line, or one not of its `shape`, is skipped, and with `numbers`
    (train.jsonl) a value that is not a finite number is left out of its row, each said in the notes."""
    label = _label(run, path)
    try:
        log = read_jsonl(path, label, numbers, shape)
    except RecordError as e:
        run.notes.append(f"{e.path}: {e.message}; left out")
        return []
    run.notes += log.notes(label)
    return log.rows


def _label(run: RunFolder, path: Path) -> str:
    """A file as the notes name it: its path in the run folder."""
    try:
        return str(path.relative_to(run.root))
    except ValueError:  # a compared curriculum's folder may lie elsewhere
        return str(path)


def _exists(path: Path) -> bool:
    """Whether `path` is there (a file this user may not look at is said when it is read); False
    for a name no file can have (a NUL in it)."""
    try:
        return path.exists()
    except OSError:
        return True
    except ValueError:
        return False


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
    """Trajectories back from the lines `gymwright.evaluate.write_jsonl` wrote (each of the shape
    `gymwright.report.records.TrajectoryLine`; pydantic's ValidationError for one that is not)."""
    by_episode: dict[int, Trajectory] = {}
    for row in rows:
        line = TrajectoryLine.model_validate(row)
        tr = by_episode.setdefault(line.episode, Trajectory(line.seed))
        if line.t == "end":
            tr.returns, tr.metrics = dict(line.returns), dict(line.metrics)
        else:
            tr.steps.append(Step(line.t, dict(line.actions), dict(line.rewards), {a: dict(t) for a, t in line.terms.items()},
                                 line.text, dict(line.notes)))
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
