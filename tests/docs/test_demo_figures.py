"""The demo's figures that README.md and docs/engineer.md quote are the ones the committed code
produced: `benchmarks/results/demo_latest.json` (the `comparison` of `gymwright demo --json`), from
which the quoted sentence is made here and looked for in both (line breaks as spaces)."""

from __future__ import annotations

import json
import math
import re

from tests.support.paths import DOCS, ROOT

RESULTS = ROOT / "benchmarks" / "results" / "demo_latest.json"


def verdict(diff: float, ci: float) -> str:
    return "inside the noise" if abs(diff) <= ci else "better beyond the noise" if diff > 0 else "worse beyond the noise"


def demo_sentence(comparison: dict) -> str:
    """What the docs say of the demo's held-out result, from its comparison."""
    arms = comparison["arms"]
    eng = arms["engineer"]
    parts = []
    for name in ("dr", "fixed"):
        other = arms[name]
        diff, ci = eng["mean"] - other["mean"], math.hypot(eng["ci95"], other["ci95"])
        parts.append(f"engineer - {name} {diff:+.3f} ± {ci:.3f} ({verdict(diff, ci)})")
    return (f"the engineer's curriculum reached {eng['mean']:.3f} held-out valid against {arms['dr']['mean']:.3f} for "
            f"domain randomization and {arms['fixed']['mean']:.3f} for the fixed environment: " + ", ".join(parts))


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_readme_and_the_engineer_doc_quote_the_demo_s_recorded_figures() -> None:
    data = json.loads(RESULTS.read_text())
    assert list(data["comparison"]["arms"]) == ["engineer", "dr", "fixed"]
    said = demo_sentence(data["comparison"])
    for doc in (ROOT / "README.md", DOCS / "engineer.md"):
        assert said in flat(doc.read_text()), f"{doc.name} does not say: {said}"
