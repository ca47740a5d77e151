"""A curriculum with designer levers: a stage trains on the game with its levers applied, while its
spec in the lineage, its evidence and its validation are the game as designed; the imitation lever
uses the built-in planner (CBS) for a MAPF spec, its env steps charged to the stage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gymwright.curriculum import CurriculumOptions, evolve
from gymwright.design.session import with_defaults
from gymwright.engineer import FixedEngineer
from gymwright.engineer.engineers import StageProposal, current_mixture
from gymwright.errors import GymwrightError
from gymwright.spec.loader import read_data
from gymwright.store import spec_hash
from gymwright.train.checkpoint import load

SPEC = "mapf_frozenlake"
SMALL = {"size": 3, "n_agents": 2, "max_steps": 10, "hole_density": 0.1}


def options(levers: dict[str, float], **kw: object) -> CurriculumOptions:
    return CurriculumOptions(stages=2, steps_per_stage=2048, num_envs=16, eval_episodes=8, record_episodes=2, knobs=(),
                             train={"rollout_len": 8}, levers=levers, **kw)  # type: ignore[arg-type]


@pytest.mark.slow  # two stages of training with evaluation (CI runs it with -m slow)
def test_a_stage_trains_on_its_levers_and_is_judged_on_the_game_as_designed(tmp_path: Path) -> None:
    records = evolve(SPEC, SMALL, FixedEngineer(), tmp_path / "run",
                     options({"park_cost": 0.5, "weight": 1.0}, validation={"cell": {**SMALL, "size": 4}}))
    raw = read_data(SPEC)[0]
    for r in records:
        assert r.levers["park_cost"] == 0.5 and r.levers["weight:team"] == 1.0
        trained = load(r.checkpoint)["config"]["spec"]
        terms = {t["name"]: t for t in trained["rewards"]["walker"]}
        assert "park_in_way" in terms and "-0.5 * (arrived[me]" in terms["park_in_way"]["expr"]
        assert r.spec_sha == spec_hash(with_defaults(raw, SMALL))  # the lineage keeps the game as designed
        assert r.validation is not None
    assert records[0].proposed_levers == records[0].levers  # the fixed engineer keeps them


@pytest.mark.slow
def test_the_imitation_lever_uses_the_built_in_planner_within_the_stage_s_budget(tmp_path: Path) -> None:
    records = evolve(SPEC, SMALL, FixedEngineer(), tmp_path / "run", options({"imitation": 0.1}, demo_episodes=6))
    first = load(records[0].checkpoint)["config"]
    assert first["imitation_coef"] == 0.1 and first["init_from"].endswith("bc.pt")
    assert all(r.demo_env_steps > 0 and r.env_steps + r.demo_env_steps <= 2048 + 16 * 8 for r in records)


def test_levers_the_spec_cannot_have_or_strengths_it_does_not_allow_are_refused(tmp_path: Path) -> None:
    with pytest.raises(GymwrightError, match="lever 'park_cost' cannot start at 0.3") as e:
        evolve(SPEC, SMALL, FixedEngineer(), tmp_path / "a", options({"park_cost": 0.3}))
    assert "0, 0.25, 0.5, 1" in (e.value.hint or "")
    with pytest.raises(GymwrightError, match="lever 'swim' is not available"):
        evolve(SPEC, SMALL, FixedEngineer(), tmp_path / "b", options({"swim": 1.0}))
    with pytest.raises(GymwrightError, match="the imitation lever needs a demonstrator"):
        evolve("stag_hunt", {}, FixedEngineer(), tmp_path / "c", options({"imitation": 0.1}))


class Toggle:
    """An engineer that switches the parking cost every stage (and changes nothing else)."""

    name = "toggle"

    def propose_stage(self, evidence: Any) -> StageProposal:
        now = evidence.levers.get("park_cost", 0.0)
        mixture = current_mixture(evidence).with_levers({**evidence.levers, "park_cost": 0.0 if now else 0.5})
        return StageProposal(mixture, f"park_cost {now:g} switched", self.name)


@pytest.mark.slow  # three stages of training (CI runs it with -m slow)
def test_the_policy_carries_over_whenever_the_levers_change_the_game_it_trains_on(tmp_path: Path) -> None:
    opts = options({"park_cost": None, "imitation": 0.1}, demo_episodes=6)
    opts.stages = 3
    records = evolve(SPEC, SMALL, Toggle(), tmp_path / "run", opts)
    assert [r.levers["park_cost"] for r in records] == [0.0, 0.5, 0.0]
    inits = [load(r.checkpoint)["config"]["init_from"] for r in records]
    assert inits[0].endswith("bc.pt")  # a clone of the plans, on the game as designed
    assert inits[1] == str(tmp_path / "run" / "stage1" / "levers-carried.pt")  # onto the game with the cost
    assert inits[2] == str(tmp_path / "run" / "stage2" / "levers-carried.pt")  # and back
    assert load(inits[1])["carried_from"] == records[0].policy
