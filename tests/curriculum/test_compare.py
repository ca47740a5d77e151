"""An engineer against the fixed baseline for the same budget, judged on held-out configurations."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gymwright.curriculum import CurriculumOptions
from gymwright.curriculum.compare import compare, goal_for
from gymwright.engineer import FixedEngineer, HeuristicEngineer

MAPF = {"size": 3, "n_agents": 2, "max_steps": 12, "view_radius": 1}


def test_the_goal_of_a_lake_is_its_harder_lakes_and_the_levers_to_reach_them() -> None:
    goal = goal_for("mapf_frozenlake", {**MAPF, "size": 4})
    assert list(goal.held_out) == ["2 ag 5x5 w 0.50", "2 ag 5x5 w 0.75", "2 ag 6x6 w 0.50", "2 ag 6x6 w 0.75"]
    assert all(c["hole_density"] == 0.3 and c["n_agents"] == 2 and c["max_steps"] == 12 and c["layout_pool"] == 250
               for c in goal.held_out.values())
    assert goal.start == {**MAPF, "size": 4, "wait_ratio": 0.25, "hole_density": 0.2}  # the levers made explicit
    assert goal.space is not None and goal.space.structural == {"size": [3, 4, 5, 6], "n_agents": [2]}
    assert goal.validation is not None and list(goal.validation) == list(goal.held_out)
    assert goal.secondary == ("optimal",)
    # each cell judged on its own family of solved pools, none that any stage trains or validates
    # on: no judged instance was trained on, none is judged in two cells
    for i, (cell, held) in enumerate(goal.held_out.items()):
        assert held["layout_seed"] == 1 + i and "layout_seed" not in goal.validation[cell]
        assert {k: v for k, v in held.items() if k not in ("layout_seed", "layout_pool")} == goal.validation[cell]
    assert all("layout_seed" not in b for b in goal.space.levels())
    other = goal_for("cake_negotiation", {})
    assert other.held_out == {"the task": {}} and other.space is None and other.validation is None


@pytest.mark.slow  # two curricula and their held-out evaluation (the demo's test runs the same path)
def test_compare_trains_both_arms_for_the_same_budget_and_judges_them_on_the_same_cells(tmp_path: Path) -> None:
    goal = goal_for("mapf_frozenlake", MAPF)
    opts = CurriculumOptions(stages=2, steps_per_stage=2048, num_envs=16, eval_episodes=10, record_episodes=2,
                             validation_episodes=10, band=(0.3, 0.6))
    folders = {"engineer": tmp_path, "fixed": tmp_path / "baseline"}
    result = compare("mapf_frozenlake", MAPF, {"engineer": HeuristicEngineer(), "fixed": FixedEngineer()}, goal,
                     folders, tmp_path / "comparison.json", opts, episodes=20)
    assert result.task_metric == "valid" and result.env_steps == 4096
    for name, arm in result.arms.items():
        assert list(arm.cells) == list(goal.held_out) and arm.mean == pytest.approx(sum(arm.cells.values()) / 4)
        assert 0.0 <= arm.mean <= 1.0 and arm.ci95 >= 0  # 0 when no episode succeeded (a tiny budget)
        assert len(arm.stages) == 2 and (folders[name] / "curriculum.jsonl").exists()
    fixed = result.arms["fixed"].stages
    assert fixed[0]["trained"][0]["params"] == fixed[1]["trained"][0]["params"] == goal.start  # it never moves
    diff, ci = result.difference("engineer", "fixed")
    assert diff == pytest.approx(result.arms["engineer"].mean - result.arms["fixed"].mean)
    assert ci == pytest.approx((result.arms["engineer"].ci95 ** 2 + result.arms["fixed"].ci95 ** 2) ** 0.5)
    saved = json.loads((tmp_path / "comparison.json").read_text())
    assert saved["arms"]["engineer"]["cells"] == result.arms["engineer"].cells


@pytest.mark.slow  # two tiny curricula, each run twice (one at a time, then side by side)
def test_arms_trained_side_by_side_give_what_they_give_one_at_a_time(tmp_path: Path) -> None:
    """`jobs=2` trains the arms in two processes; each arm seeds its own stages, so its result is
    the one it gives alone, and every progress line of both arms reaches the caller."""
    goal = goal_for("mapf_frozenlake", MAPF)
    opts = CurriculumOptions(stages=2, steps_per_stage=2048, num_envs=16, eval_episodes=10, record_episodes=2,
                             validation_episodes=10, band=(0.3, 0.6))
    results, said = [], []
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        lines: list[str] = []
        results.append(compare("mapf_frozenlake", MAPF, {"engineer": HeuristicEngineer(), "fixed": FixedEngineer()}, goal,
                               {"engineer": out, "fixed": out / "baseline"}, out / "comparison.json", opts, episodes=20,
                               progress=lines.append, jobs=jobs))
        said.append(lines)
    one, two = results
    for name in ("engineer", "fixed"):
        assert two.arms[name].cells == one.arms[name].cells and two.arms[name].stages == one.arms[name].stages
        assert two.arms[name].folder == one.arms[name].folder
    timed = re.compile(r"/s, \d+:\d\d elapsed, ETA")  # a progress line's clock differs from run to run
    steady = [sorted(re.sub(r"[\d,]+/s, [\d:]+ elapsed, ETA [\d:]+", "", x) for x in lines) for lines in said]
    assert steady[1] == steady[0] and any("[fixed]" in x for x in said[1])
    assert any(timed.search(x) and "[engineer] stage 2/2" in x for x in said[1])  # progress reaches the caller


def test_an_error_raised_in_a_worker_process_keeps_where_what_and_the_fix() -> None:
    import pickle

    from gymwright.errors import ExprError, GymwrightError

    err = pickle.loads(pickle.dumps(GymwrightError("no pool", path="grid.solve", hint="change the params")))
    assert (err.message, err.path, err.hint) == ("no pool", "grid.solve", "change the params")
    assert str(err) == "grid.solve: no pool\n  hint: change the params"
    expr = pickle.loads(pickle.dumps(ExprError("bad name", source="x + y", col=4, path="step[0]")))
    assert type(expr) is ExprError and expr.col == 4 and expr.caret().endswith("    ^")
