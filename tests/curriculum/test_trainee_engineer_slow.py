"""The trainee as its own engineer, end to end at toy scale on a CPU (benchmarks/trainee_engineer.py):
SmolLM2-135M trained with GRPO on MAPF-FrozenLake's text form, 1 seed, 2 stages of 2 updates, five
arms (fixed, dr, heuristic, the base model as engineer, the trained model as engineer), each judged
on the held-out lakes. It checks that every arm trained and was judged with the same budget, that
the trained-engineer arm's engineer was answered by the stage-1 checkpoint (its weights, not the
base's), and that the results name every arm. It shows the pipeline runs, not which engineer wins."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.benchmark_module import benchmark_module

STAGES, UPDATES = 2, 2


def bench() -> ModuleType:
    return benchmark_module("trainee_engineer")


def saved(checkpoint: str) -> bool:
    return checkpoint.startswith("hf:") and (Path(checkpoint.removeprefix("hf:")) / "config.json").is_file()


@pytest.mark.slow
def test_every_arm_trains_and_is_judged_and_the_trained_model_engineers(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    m = bench()
    report = m.main(["--seeds", "1", "--stages", str(STAGES), "--steps-per-stage", str(UPDATES), "--episodes", "1",
                     "--eval-episodes", "1", "--device", "cpu", "--out", str(tmp_path)])
    runs = {r["name"]: r for r in report["runs"]}
    goal = m.goal_of("toy")
    assert set(runs) == set(m.ARMS)
    for name, r in runs.items():  # every arm: the same budget, a saved checkpoint a stage, judged on every cell
        assert r["updates"] == STAGES * UPDATES, name
        assert len(r["stages"]) == STAGES and all(saved(s["checkpoint"]) for s in r["stages"]), name
        assert r["checkpoint"] == r["stages"][-1]["checkpoint"]
        assert set(r["held_out"]["cells"]) == set(goal.held_out)
        assert all(f["episodes"] == 1 for f in r["held_out"]["figures"].values())
    fixed, dr = runs["fixed"]["stages"], runs["dr"]["stages"]
    assert len(dr[0]["trained"]) == len(goal.space.levels()) > 1 and len(fixed[0]["trained"]) == 1
    for name in ("heuristic", "llm-base", "llm-trained"):  # the same first stage as fixed: trained once, shared
        assert runs[name]["stages"][0]["checkpoint"] == fixed[0]["checkpoint"] and runs[name]["stages"][0]["shared"]

    trained, base = runs["llm-trained"]["stages"], runs["llm-base"]["stages"]
    asked, base_asked = trained[0]["answered_by"], base[0]["answered_by"]
    assert [a["which"] for a in asked] == ["current"] and asked[0]["model"] == trained[0]["checkpoint"]
    assert [a["which"] for a in base_asked] == ["base"] and base_asked[0]["model"] == "hf:smollm2-135m"
    from gymwright.engineer.trainee import fingerprint
    from gymwright.llm.transformers_provider import load_model

    stage1 = load_model(trained[0]["checkpoint"].removeprefix("hf:"), "cpu")
    assert asked[0]["fingerprint"] == pytest.approx(fingerprint(stage1), rel=1e-9)  # the stage-1 weights answered
    logs = [Path(r["model"].removeprefix("hf:")).parent / "log.jsonl" for r in trained[0]["runs"]]
    rows = [json.loads(line) for log in logs for line in log.read_text(encoding="utf-8").splitlines() if line]
    moved = any((row.get("trl/grad_norm") or 0) > 0 for row in rows)  # an update with a signal (not a dead group)
    assert not moved or asked[0]["fingerprint"] != base_asked[0]["fingerprint"]  # then they are not the base's
    assert trained[-1]["answered_by"] == [] and trained[0]["engineer"] == "llm-trainee"  # no proposal after the last

    data = json.loads((tmp_path / "trainee_engineer.json").read_text(encoding="utf-8"))
    assert set(data["summary"]["methods"]) == set(m.ARMS)
    assert {f"{a} - {b}" for b in ("fixed", "dr") for a in m.ARMS if a != b} == set(data["summary"]["paired"])
    table = (tmp_path / "trainee_engineer.md").read_text(encoding="utf-8")
    assert "not which engineer is better" in table and all(f"| {a} |" in table for a in m.ARMS)
