"""Find the spec a run was trained on, and its verification summary.

The spec comes from design.json's `spec_path`, else the checkpoint's config (a file, a library
name, or the spec's data), else the library spec of the run's spec name. When the checkpoint
recorded the spec's sha256, a spec that has changed since is flagged. The verification summary
comes from design.json (the design's own report), else from running the verifier (fast).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gymwright.errors import GymwrightError
from gymwright.report.folder import RunFolder


@dataclass
class SpecText:
    """The spec's source text, where it came from, and its data (for the verifier)."""

    label: str
    text: str
    data: dict[str, Any]
    note: str = ""  # e.g. the file changed since training


def candidates(run: RunFolder) -> list[Any]:
    """Where the spec may be, most specific first."""
    out: list[Any] = []
    spec_path = (run.design or {}).get("spec_path")
    if spec_path:
        path = Path(str(spec_path))
        out.append(path if path.is_absolute() or path.exists() else run.root / path)
    config_spec = ((run.checkpoint or {}).get("config") or {}).get("spec")
    if isinstance(config_spec, dict | str | Path) and config_spec:
        out.append(config_spec)
    if run.spec_name:
        out.append(run.spec_name)
    return out


def find_spec(run: RunFolder) -> SpecText | None:
    """The first candidate that reads as a spec; None when none does."""
    from gymwright.spec.loader import read_data
    from gymwright.store import spec_hash

    for source in candidates(run):
        try:
            data, label = read_data(source)
        except (GymwrightError, OSError):
            continue
        if label in ("<dict>", "<text>"):
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        else:
            text = Path(label).read_text()
        trained = (run.checkpoint or {}).get("spec_hash")
        note = ""
        if trained and spec_hash(data) != trained:
            note = (f"this spec (sha256 {spec_hash(data)[:12]}) is not the one the policy was trained "
                    f"on (sha256 {str(trained)[:12]}): it has changed since training")
        return SpecText(label if label not in ("<dict>", "<text>") else "the checkpoint's config", text, data, note)
    return None


def verification(run: RunFolder, spec: SpecText | None, run_verifier: bool = True) -> tuple[dict[str, Any] | None, str]:
    """(`VerificationReport.to_dict()` or None, where it came from or why it is missing)."""
    recorded = (run.design or {}).get("report") or (run.design or {}).get("verification")
    if isinstance(recorded, dict):
        return recorded, "recorded by the design (design.json)"
    if spec is None:
        return None, "not recorded: no design.json, and the spec was not found"
    if not run_verifier:
        return None, "not recorded: no design.json (the verifier was not run: --no-verify)"
    from gymwright.verify.verifier import verify

    params = ", ".join(f"{k}={v}" for k, v in run.params.items()) or "default params"
    try:
        report = verify(spec.data, run.params)
    except GymwrightError as e:
        return None, f"the verifier could not run: {e.message}"
    return report.to_dict(), f"the verifier ran on {spec.label} with {params} while this report was written"
