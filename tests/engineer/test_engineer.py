"""Failure evidence and the engineers: the heuristic steers into the band by the knob the
evidence points at, the fixed one never moves, the LLM one is bounded by the spec."""

from __future__ import annotations

from pathlib import Path

import yaml

from gymwright.compile import compile_spec
from gymwright.engineer import (
    Evidence,
    FixedEngineer,
    HeuristicEngineer,
    Knob,
    LLMEngineer,
    knobs_of,
    measure_sensitivity,
)
from gymwright.evaluate.failures import gather
from gymwright.evaluate.trajectories import Step, Trajectory
from gymwright.llm.client import LLM
from gymwright.llm.scripted import ScriptedProvider
from gymwright.train import random_legal_policy

MAPF = {"size": 3, "n_agents": 2, "max_steps": 12}


def evidence(success: float, knobs: list[Knob]) -> Evidence:
    return Evidence("mapf_frozenlake", dict(MAPF), "all_reached", success, (0.4, 0.8), knobs=knobs)


def knob(name: str, value: float, effect: float, ci: float = 0.01, integer: bool = False) -> Knob:
    return Knob(name, value, 0.0, 1.0 if not integer else 100.0, integer, effect, ci)


def test_heuristic_makes_a_too_easy_task_harder_with_the_most_effective_knob() -> None:
    knobs = [knob("hole_density", 0.2, -0.10), knob("slip", 0.0, -0.02)]
    p = HeuristicEngineer().propose(evidence(0.95, knobs))
    assert p.params["hole_density"] == 0.3 and p.params["size"] == 3
    assert "hole_density 0.2 -> 0.3" in p.rationale and "harder" in p.rationale


def test_heuristic_makes_a_too_hard_task_easier_and_respects_the_direction_of_effect() -> None:
    knobs = [knob("max_steps", 12, 1.5, 0.3, integer=True), knob("hole_density", 0.2, -0.01, 0.05)]
    p = HeuristicEngineer().propose(evidence(0.1, knobs))
    assert p.params["max_steps"] == 22 and "easier" in p.rationale  # +1 step of 10 (10% of range)


def test_heuristic_keeps_a_config_inside_the_band_or_without_evidence() -> None:
    assert HeuristicEngineer().propose(evidence(0.6, [knob("slip", 0.1, -0.5)])).params == MAPF
    noisy = HeuristicEngineer().propose(evidence(0.95, [knob("slip", 0.1, -0.01, ci=0.05)]))
    assert noisy.params == MAPF and "no knob had a measurable effect" in noisy.rationale
    at_edge = HeuristicEngineer().propose(evidence(0.95, [knob("hole_density", 1.0, -0.3)]))
    assert at_edge.params == MAPF  # already at its hardest


def test_the_fixed_engineer_never_moves() -> None:
    p = FixedEngineer().propose(evidence(0.99, [knob("hole_density", 0.2, -0.3)]))
    assert p.params == MAPF and "baseline" in p.rationale


def test_sensitivity_is_measured_with_the_policy_on_the_real_env() -> None:
    structural = set(compile_spec("mapf_frozenlake", MAPF).checked.structural)
    knobs = {k.name: k for k in knobs_of("mapf_frozenlake", MAPF, structural)}
    assert "size" not in knobs and "n_agents" not in knobs  # structural: the policy's shapes
    measured = measure_sensitivity("mapf_frozenlake", MAPF, random_legal_policy(0), [knobs["max_steps"]],
                                   "all_reached", episodes=300)
    assert measured[0].effect > measured[0].ci95 > 0  # more time, more random successes


def test_failures_are_grouped_by_kind_per_config() -> None:
    def tr(metrics: dict[str, float], n: int = 3) -> Trajectory:
        return Trajectory(0, [Step(i, {"walker_0": "up"}, {}, {}, "") for i in range(n)], {}, metrics)

    ev = gather({"size=3": [tr({"all_reached": 1, "holes": 0}), tr({"all_reached": 0, "holes": 1}),
                            tr({"all_reached": 0, "holes": 0, "conflicts": 1})],
                 "size=5": [tr({"all_reached": 0, "holes": 0}, n=12)]}, "all_reached", max_steps=12)
    assert ev.buckets["size=3"]["successes"] == 1
    assert dict(ev.buckets["size=3"]["kinds"]) == {"holes": 1, "conflicts": 1}
    assert dict(ev.buckets["size=5"]["kinds"]) == {"timeout": 1}
    assert "size=5: 0/1 succeeded; failures: timeout 1" in ev.to_prompt()


def test_the_llm_engineer_is_bounded_by_the_spec(tmp_path: Path) -> None:
    reply = {"params": {"hole_density": 0.9, "slip": 0.1, "bogus": 3}, "rationale": "harder: more holes"}
    script = tmp_path / "engineer.yaml"
    script.write_text(yaml.safe_dump([{"json": reply}, {"json": reply}]))
    provider = ScriptedProvider(script)
    eng = LLMEngineer(LLM(provider, retries=0))
    ev = evidence(0.95, [knob("hole_density", 0.2, -0.1), knob("slip", 0.0, -0.02)])
    ev.history = [{"params": MAPF, "success": 0.97, "kinds": {"timeout": 1}}]
    p = eng.propose(ev)
    assert p.params["hole_density"] == 0.6 and p.params["slip"] == 0.1 and "bogus" not in p.params
    assert "clamped hole_density 0.9 to 0.6" in p.rationale and "ignored bogus" in p.rationale
    request = provider.requests[0]
    assert "Earlier stages" in request.messages[0].content and "hole_density" in str(request.schema)
    LLMEngineer(LLM(provider, retries=0), with_history=False).propose(ev)
    assert "Earlier stages" not in provider.requests[1].messages[0].content
