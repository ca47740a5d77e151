"""Runs to compare (`gymwright report RUN RUN ...`): read, checked to be comparable, labelled.

Each run's settings are its resolved config (`config.yaml` in the folder, else the checkpoint's
config), its params flattened as `params.NAME`, and for a curriculum its engineer. A run's label
is what sets it apart from the others: the settings that differ between the runs, leaving out
the seed and the bookkeeping ones (`NOT_A_TREATMENT`); runs with the same label are seeds of one
group and are pooled. `group_by` names the settings to label by instead (`run`: each run alone).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymwright.report.folder import CONFIG, ReportError, RunFolder, read_run
from gymwright.report.records import RecordError, read_config

NOT_A_TREATMENT = ("seed", "out", "resume", "tensorboard", "threads", "checkpoint_every", "device", "init_from",
                   "stages")
EACH_RUN = "run"  # --group-by run: every run its own group


@dataclass
class Cohort:
    """The runs, each one's settings and label, and the groups (label -> indices of its runs)."""

    runs: list[RunFolder]
    settings: list[dict[str, Any]]
    labels: list[str]
    differing: list[str]  # settings whose values are not the same in every run
    grouped_by: list[str]  # the settings the labels are made of
    notes: list[str] = field(default_factory=list)

    @property
    def groups(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for i, label in enumerate(self.labels):
            out.setdefault(label, []).append(i)
        return out

    @property
    def spec_name(self) -> str | None:
        return next((r.spec_name for r in self.runs if r.spec_name), None)


def read_cohort(paths: list[Path], group_by: list[str] | None = None) -> Cohort:
    """Read every run folder and label it; `ReportError` naming the folder for a bad one."""
    seen: dict[Path, Path] = {}
    for p in paths:
        if Path(p).resolve() in seen:
            raise ReportError(f"given twice (as {seen[Path(p).resolve()]} and as {p})",
                              path=str(p), hint="pass each run folder once: a run counted twice would count as two seeds")
        seen[Path(p).resolve()] = Path(p)
    runs = [read_run(Path(p)) for p in paths]
    for run in runs:
        if not run.segments and not run.scorecard:
            raise ReportError("has no train.jsonl and no eval/scorecard.json: nothing to compare",
                              path=str(run.root), hint=f"train into it (`gymwright train SPEC --out {run.root}`), or leave it out")
    _same_spec(runs)
    settings = [run_settings(r) for r in runs]
    differing = [k for k in _keys(settings) if len({_text(s.get(k)) for s in settings}) > 1]
    by = _grouping(group_by, settings, differing)
    labels = [r.root.name if by == [EACH_RUN] else label(s, by) for r, s in zip(runs, settings, strict=True)]
    cohort = Cohort(runs, settings, labels, differing, by)
    cohort.notes += [n for r in runs for n in (f"{r.root}: {note}" for note in r.notes)]
    cohort.notes += _same_seeds(cohort)
    return cohort


def run_settings(run: RunFolder) -> dict[str, Any]:
    """The run's resolved config (config.yaml, else the checkpoint's), params as `params.NAME`
    (a curriculum's: its first stage's), the spec's name, and for a curriculum its engineer(s)."""
    config = _config_yaml(run) or dict((run.checkpoint or {}).get("config") or {})
    if run.curriculum:  # the params a curriculum started from (its last stage's are the engineer's doing)
        config["params"] = run.curriculum[0].get("params") or config.get("params")
    out: dict[str, Any] = {}
    for key, value in config.items():
        if key == "params" and isinstance(value, dict):
            out.update({f"params.{k}": v for k, v in value.items()})
        elif key == "spec":
            out[key] = value if isinstance(value, str) else run.spec_name
        else:
            out[key] = value
    if "spec" not in out and run.spec_name:
        out["spec"] = run.spec_name
    if run.curriculum:
        out["engineer"] = ", ".join(dict.fromkeys(str(r.get("engineer", "?")) for r in run.curriculum))
        out.setdefault("stages", len(run.curriculum))
    return out


def label(settings: dict[str, Any], by: list[str]) -> str:
    """`k=v, ...` of the settings `by`; "all runs" when there are none."""
    return ", ".join(f"{k}={_text(settings.get(k))}" for k in by) or "all runs"


def _config_yaml(run: RunFolder) -> dict[str, Any] | None:
    """The run's config.yaml, read as a `--config` file is (`gymwright.report.records.read_config`);
    one that cannot be read is said in the run's notes, and the checkpoint's config is used."""
    path = run.root / CONFIG
    try:
        if not path.exists():
            return None
        return read_config(path, CONFIG)
    except (RecordError, OSError) as e:
        why = f"{e.path}: {e.message}" if isinstance(e, RecordError) else f"{CONFIG}: {e.strerror or e}"
        instead = "the checkpoint's config is used instead" if (run.checkpoint or {}).get("config") \
            else "and the run has no checkpoint with its config: its settings are not known"
        run.notes.append(f"{why}; {instead}")
        return None


def _same_spec(runs: list[RunFolder]) -> None:
    named = [(r.root, r.spec_name) for r in runs if r.spec_name]
    other = next(((root, name) for root, name in named if name != named[0][1]), None)
    if other is not None:
        raise ReportError(f"trained {other[1]}, but {named[0][0]} trained {named[0][1]}: "
                          "a comparison pools runs of one spec", path=str(other[0]), value=other[1],
                          hint="report runs of different specs separately (`gymwright report RUN` for each)")


def _keys(settings: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(k for s in settings for k in s))


def _grouping(group_by: list[str] | None, settings: list[dict[str, Any]], differing: list[str]) -> list[str]:
    if not group_by:
        return [k for k in differing if k not in NOT_A_TREATMENT]
    names = [n.strip() for g in group_by for n in g.split(",") if n.strip()]
    known = _keys(settings)
    unknown = [n for n in names if n not in known and n != EACH_RUN]
    if unknown:
        raise ReportError(f"no run has a setting {', '.join(unknown)}", path="--group-by",
                          value=", ".join(unknown), hint=f"group by `{EACH_RUN}` (each run alone) or by settings of these runs: {', '.join(known)}")
    return [EACH_RUN] if EACH_RUN in names else names


def _same_seeds(c: Cohort) -> list[str]:
    """A note for each group with two runs of the same seed (not independent samples)."""
    notes = []
    for name, idx in c.groups.items():
        seeds = [_text(c.settings[i].get("seed")) for i in idx]
        dup = sorted({s for s in seeds if seeds.count(s) > 1 and s != ""})
        if dup:
            notes.append(f"group {name!r} holds several runs of seed {', '.join(dup)}: they are not independent "
                         "samples, so its interval is too narrow (train the repeats with different --seed)")
    return notes


def _text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(f"{k}={_text(v)}" for k, v in value.items())
    return "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
