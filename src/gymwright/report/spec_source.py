"""Find the spec a run was trained on, and its verification summary.

The spec comes from design.json's `spec_path`, else the checkpoint's config (a file, a library
name, or the spec's data), else the library spec of the run's spec name. A code-mode run's
"spec" is its module (a `.py` file): read as text, never imported, shown escaped. When the
checkpoint recorded the spec's (or module's) sha256, one that has changed since is flagged. The
verification summary comes from design.json (the design's own report), else from running the
verifier (fast), or for a module the code-mode checks in a sandbox worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gymwright.codemode.source import code_identity, is_code_source, read_code
from gymwright.errors import GymwrightError
from gymwright.report.folder import RunFolder


@dataclass
class SpecText:
    """The spec's source text, where it came from, and its data (for the verifier)."""

    label: str
    text: str
    data: dict[str, Any]
    note: str = ""  # e.g. the file changed since training
    code: bool = False  # a code-mode module: `text` is its Python source, `data` only its name


def candidates(run: RunFolder) -> list[Any]:
    """Where the spec may be, most specific first."""
    out: list[Any] = []
    spec_path = (run.design or {}).get("spec_path")
    if spec_path:
        path = Path(str(spec_path))
        out.append(path if path.is_absolute() or path.exists() else run.root / path)
    config = (run.checkpoint or {}).get("config") or {}
    config_spec = config.get("spec")
    if isinstance(config_spec, dict | str | Path) and config_spec:
        out.append(config_spec)
        trained_in = training_folder(run.root, config.get("out"))
        if is_code_source(config_spec) and trained_in is not None and not Path(config_spec).is_absolute():
            out.append(trained_in / config_spec)
    if run.spec_name:
        out.append(run.spec_name)
    return out


def training_folder(root: Path, out: Any) -> Path | None:
    """The folder training ran in, when the run was written to a relative `--out` that `root`
    still ends with (a relative spec path in the config is relative to it)."""
    if not isinstance(out, str) or not out or Path(out).is_absolute():
        return None
    parts, here = Path(out).parts, root.resolve()
    if ".." in parts or here.parts[-len(parts):] != parts:
        return None
    return Path(*here.parts[:-len(parts)])


def find_spec(run: RunFolder) -> SpecText | None:
    """The first candidate that reads as a spec (or a code-mode module); None when none does."""
    from gymwright.spec.loader import read_data
    from gymwright.store import spec_hash

    for source in candidates(run):
        if is_code_source(source):
            found = code_text(run, Path(source))
            if found is not None:
                return found
            continue
        try:
            data, label = read_data(source)
        except (GymwrightError, OSError):
            continue
        if label in ("<dict>", "<text>"):
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        else:
            text = Path(label).read_text()
        return SpecText(label if label not in ("<dict>", "<text>") else "the checkpoint's config", text, data,
                        changed(run, spec_hash(data)))
    return None


def code_text(run: RunFolder, path: Path) -> SpecText | None:
    """A code-mode module as text (read, never imported); None when it is not there, and a note
    when it is there but unreadable."""
    if not path.is_file():
        return None
    try:
        text = read_code(path)
        sha, name = code_identity(path)
    except GymwrightError as e:
        run.notes.append(f"{path}: {e.message}; the module is not shown")
        return None
    return SpecText(str(path), text, {"name": name}, changed(run, sha, "module"), code=True)


def changed(run: RunFolder, sha: str, what: str = "spec") -> str:
    """A note when the checkpoint was trained on another spec (or module) than the one found."""
    trained = (run.checkpoint or {}).get("spec_hash")
    if not trained or sha == trained:
        return ""
    return (f"this {what} (sha256 {sha[:12]}) is not the one the policy was trained "
            f"on (sha256 {str(trained)[:12]}): it has changed since training")


def verification(run: RunFolder, spec: SpecText | None, run_verifier: bool = True) -> tuple[dict[str, Any] | None, str]:
    """(`VerificationReport.to_dict()` or None, where it came from or why it is missing)."""
    recorded = (run.design or {}).get("report") or (run.design or {}).get("verification")
    if isinstance(recorded, dict):
        return recorded, "recorded by the design (design.json)"
    if spec is None:
        what = "module" if run.code_mode else "spec"
        return None, f"not recorded: no design.json, and the {what} was not found"
    if not run_verifier:
        return None, "not recorded: no design.json (the verifier was not run: --no-verify)"
    if spec.code:
        return code_checks(spec)
    from gymwright.verify.verifier import verify

    params = ", ".join(f"{k}={v}" for k, v in run.params.items()) or "default params"
    try:
        report = verify(spec.data, run.params)
    except GymwrightError as e:
        return None, f"the verifier could not run: {e.message}"
    return report.to_dict(), f"the verifier ran on {spec.label} with {params} while this report was written"


def code_checks(spec: SpecText) -> tuple[dict[str, Any] | None, str]:
    """The checks `gymwright design --mode code` runs (vetting, then the module in a sandbox
    worker: PettingZoo's API tests, random legal play, determinism), run on the module now."""
    from gymwright.design.coded import check_candidate
    from gymwright.design.designer import VERIFY_EPISODES

    try:
        report = check_candidate({"name": spec.data["name"], "code": spec.text}, VERIFY_EPISODES)
    except GymwrightError as e:
        return None, f"the code-mode checks could not run: {e.message}"
    return report.to_dict(), (f"the code-mode checks ran on {spec.label} while this report was written: vetting "
                              "with ast, then the module in a sandbox worker (nothing of it imported here)")
