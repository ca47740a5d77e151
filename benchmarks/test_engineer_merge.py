"""`engineer.py --merge`: a later run of one method joins earlier baselines only when the runs
found in both files agree.

Run with `pytest benchmarks/test_engineer_merge.py` (not part of the main suite).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import engineer
import pytest

CELLS = list(engineer.EXPERIMENTS["in_distribution"].held_out)


def run(method: str, seed: int, valid: float) -> dict[str, Any]:
    cell = {"valid": valid, "optimal": valid / 4, "episodes": 10, "holes": 0.1, "conflicts": 0.1, "timeout": 0.1}
    stages = [{"index": k, "success": 0.5, "validation": {"mean": 0.4}, "guard": "", "guard_reason": "", "unchanged": k > 0,
               "engineer_error": "", "trained": [{"label": "size=4", "share": 1.0}], "mixture": [],
               "rationale": "", "policy": ""} for k in range(2)]
    return {"experiment": "in_distribution", "method": method, "seed": seed, "stages": stages,
            "held_out": {c: dict(cell) for c in CELLS}, "train_s": 1.0, "env_steps": 100}


def report(path: Path, runs: list[dict[str, Any]], budget: int = 100) -> Path:
    path.write_text(json.dumps({"budget_env_steps": budget, "seeds": [0, 1], "experiments": {
        "in_distribution": {"methods": {}, "paired": {}, "runs": runs}}}))
    return path


def test_a_later_method_joins_the_baselines_and_is_paired_with_them(tmp_path: Path) -> None:
    first = report(tmp_path / "a.json", [run("fixed", 0, 0.4), run("fixed", 1, 0.5), run("dr", 0, 0.45), run("dr", 1, 0.5)])
    later = report(tmp_path / "b.json", [run("fixed", 0, 0.4), run("fixed", 1, 0.5), run("llm", 0, 0.5), run("llm", 1, 0.6)])
    out = engineer.merge([first, later])
    exp = out["experiments"]["in_distribution"]
    assert list(exp["methods"]) == ["fixed", "dr", "llm"]
    assert exp["paired"]["llm-fixed"]["valid_diff"] == pytest.approx(0.1)
    assert exp["paired"]["llm-dr"]["valid_diff"] == pytest.approx(0.075)
    assert len(exp["runs"]) == 6 and out["merged_from"] == [str(first), str(later)]


def test_runs_that_disagree_or_other_budgets_are_refused(tmp_path: Path) -> None:
    first = report(tmp_path / "a.json", [run("fixed", 0, 0.4)])
    other = report(tmp_path / "b.json", [run("fixed", 0, 0.41), run("llm", 0, 0.5)])
    with pytest.raises(SystemExit, match="fixed seed 0 differs between .*a.json and .*b.json.*rerun them together"):
        engineer.merge([first, other])
    with pytest.raises(SystemExit, match="different budgets"):
        engineer.merge([first, report(tmp_path / "c.json", [run("llm", 0, 0.5)], budget=200)])


def test_a_file_that_is_not_a_result_is_refused_naming_it(tmp_path: Path) -> None:
    good = report(tmp_path / "a.json", [run("fixed", 0, 0.4)])
    with pytest.raises(SystemExit, match=r"--merge .*missing.json: cannot read it .*written by --json"):
        engineer.merge([good, tmp_path / "missing.json"])
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(SystemExit, match=r"--merge .*broken.json: not JSON \(line 1"):
        engineer.merge([good, tmp_path / "broken.json"])
    (tmp_path / "bounds.json").write_text(json.dumps({"bounds": {}, "command": "python engineer.py --bounds"}))
    with pytest.raises(SystemExit, match=r"--merge .*bounds.json: not an experiment result"):
        engineer.merge([good, tmp_path / "bounds.json"])


def test_other_learners_are_refused_a_renamed_method_joins_and_pair_compares_across(tmp_path: Path, capsys) -> None:
    plain = report(tmp_path / "a.json", [run("fixed", 0, 0.4), run("fixed", 1, 0.5)])
    runs = [run("fixed", 0, 0.3), run("fixed", 1, 0.3), run("heuristic", 0, 0.6), run("heuristic", 1, 0.7)]
    imitating = report(tmp_path / "b.json", runs)
    data = json.loads(imitating.read_text())
    data["learner"] = {"hidden": [64, 64], "imitate": 2000, "imitation_coef": 0.1}
    imitating.write_text(json.dumps(data))
    with pytest.raises(SystemExit, match=r"trained other learners \(imitate 2000 against 0, imitation_coef 0.1 against"):
        engineer.merge([plain, imitating])
    later = report(tmp_path / "c.json", [run("heuristic", 0, 0.65), run("heuristic", 1, 0.75)])
    data["learner"] = {"imitate": 2000, "imitation_coef": 0.1}
    json.dump(data, (tmp_path / "b2.json").open("w"))
    later.write_text(json.dumps({**json.loads(later.read_text()), "learner": data["learner"]}))
    out = engineer.merge([tmp_path / "b2.json", later], {"heuristic": "heuristic-band"})
    assert list(out["experiments"]["in_distribution"]["methods"]) == ["fixed", "heuristic-band", "heuristic"]
    assert out["experiments"]["in_distribution"]["paired"]["heuristic-fixed"]["valid_diff"] == pytest.approx(0.4)
    pair = engineer.pair_across(f"{later}:heuristic", f"{plain}:fixed")
    assert pair["experiments"]["in_distribution"]["valid_diff"] == pytest.approx(0.25)
    assert "valid +0.250" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="has no runs of 'dr'"):
        engineer.pair_across(f"{later}:dr", f"{plain}:fixed")


def test_more_seeds_of_every_method_join_an_earlier_run(tmp_path: Path) -> None:
    """`--first-seed 2 --seeds 1`, then `--merge`: the paired differences are over every seed."""
    first = report(tmp_path / "a.json", [run(m, s, x) for s in (0, 1) for m, x in (("fixed", 0.4), ("heuristic", 0.5))])
    more = report(tmp_path / "b.json", [run("fixed", 2, 0.4), run("heuristic", 2, 0.8)])
    out = engineer.merge([first, more])
    assert out["seeds"] == [0, 1, 2]
    exp = out["experiments"]["in_distribution"]
    assert exp["methods"]["heuristic"]["per_seed_valid"] == pytest.approx([0.5, 0.5, 0.8])
    assert exp["paired"]["heuristic-fixed"]["valid_diff"] == pytest.approx(0.2)
