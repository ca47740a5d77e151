"""Designer levers (`gymwright.engineer.levers`): which levers a spec supports, what each does to
the game a stage trains on (and nothing else), the heuristic's rule for them, and a model's reply
that sets them (a scripted model)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gymwright.compile import compile_spec
from gymwright.curriculum.training import partnered
from gymwright.engineer import HeuristicEngineer, LLMEngineer
from gymwright.engineer.evidence import Evidence, StageEvidence
from gymwright.engineer.lever_rules import propose_levers
from gymwright.engineer.levers import levers_for, scaffolded
from gymwright.engineer.mixture import Bucket, Mixture
from gymwright.errors import GymwrightError
from gymwright.evaluate.failures import FailureEvidence
from gymwright.llm.client import LLM
from gymwright.llm.scripted import ScriptedProvider
from gymwright.spec.loader import read_data

MAPF = read_data("mapf_frozenlake")[0]
MOVES = {"left": (0, -1), "down": (1, 0), "right": (0, 1), "up": (-1, 0)}


def test_a_spec_supports_the_levers_it_has_something_for() -> None:
    menu = levers_for(MAPF, ("park_cost", "weight", "imitation", "end_on", "partners"))
    assert {"park_cost", "imitation", "weight:goal", "weight:team", "weight:time", "end_on:conflicts",
            "partners"} <= set(menu)
    # holes and suboptimal reduce `last`: their value on one step is not the episode's, so no rule ends on them
    assert not {"end_on:holes", "end_on:suboptimal"} & set(menu)
    assert levers_for(MAPF, ("weight:team",)).keys() == {"weight:team"}
    pie = {"name": "matrix", "rewards": {"p": [{"name": "pay", "expr": "1"}]}}
    with pytest.raises(GymwrightError, match="lever 'park_cost' is not available for spec 'matrix'") as e:
        levers_for(pie, ("park_cost",))
    assert "weight:pay" in (e.value.hint or "")
    with pytest.raises(GymwrightError, match="lever 'partners' is not available"):  # no solved layouts to plan on
        levers_for(pie, ("partners",))


def _in_way(pos: np.ndarray, goal: np.ndarray, me: int) -> bool:
    g = goal[me]
    return any(min(pos[j, 0], goal[j, 0]) <= g[0] <= max(pos[j, 0], goal[j, 0])
               and min(pos[j, 1], goal[j, 1]) <= g[1] <= max(pos[j, 1], goal[j, 1])
               for j in range(len(pos)) if j != me)


def test_the_parking_cost_charges_a_walker_that_parks_on_another_s_way_and_nothing_else_changes() -> None:
    menu = levers_for(MAPF, ("park_cost",))
    params = {"hole_density": 0.0, "n_agents": 2, "size": 3}
    plain = compile_spec(MAPF, params).parallel_env()
    charged = compile_spec(scaffolded(MAPF, {"park_cost": 0.5}, menu), params).parallel_env()
    cases = set()
    for seed in range(60):
        o_plain, _ = plain.reset(seed=seed)
        o_charged, _ = charged.reset(seed=seed)
        assert all(np.array_equal(o_plain[a], o_charged[a]) for a in plain.agents)  # what a walker sees is unchanged
        pos, goal = np.asarray(plain.v.pos), np.asarray(plain.v.goal)
        step = goal[0] - pos[0]
        if abs(step).sum() != 1 or (goal[0] == pos[1]).all():  # walker 0 one move from its goal
            continue
        move = next(i for i, (name, d) in enumerate(MOVES.items()) if d == tuple(int(x) for x in step))
        _, r_plain, *_ = plain.step({"walker_0": move, "walker_1": 4})
        _, r_charged, *_ = charged.step({"walker_0": move, "walker_1": 4})
        in_way = _in_way(pos, goal, 0)
        assert r_charged["walker_0"] - r_plain["walker_0"] == pytest.approx(-0.5 if in_way else 0.0), seed
        assert r_charged["walker_1"] == r_plain["walker_1"]
        cases.add(in_way)
    assert cases == {True, False}
    assert scaffolded(MAPF, {"park_cost": 0.0}, menu) == MAPF  # off: the game as designed


def test_a_reward_weight_lever_multiplies_that_term_only() -> None:
    menu = levers_for(MAPF, ("weight",))
    out = scaffolded(MAPF, {"weight:team": 4.0, "weight:goal": 1.0}, menu)
    terms = {t["name"]: t for t in out["rewards"]["walker"]}
    assert terms["team"]["weight"] == 2.0 and terms["goal"]["weight"] == 1.0
    assert {t["name"]: t.get("weight") for t in MAPF["rewards"]["walker"]}["team"] == 0.5  # the original untouched
    with pytest.raises(GymwrightError, match="lever 'imitation' is not one this curriculum may use"):
        scaffolded(MAPF, {"imitation": 0.1}, menu)


def test_the_end_on_rule_ends_a_training_episode_at_its_first_conflict_and_nothing_else_changes() -> None:
    menu = levers_for(MAPF, ("end_on:conflicts",))
    assert menu["end_on:conflicts"].signal == "conflicts" and menu["end_on:conflicts"].values == (0.0, 1.0)
    params = {"hole_density": 0.0, "n_agents": 2, "size": 3}
    plain = compile_spec(MAPF, params).parallel_env()
    ruled = compile_spec(scaffolded(MAPF, {"end_on:conflicts": 1.0}, menu), params).parallel_env()
    rng = np.random.default_rng(0)
    seen = Counter()
    for seed in range(80):
        plain.reset(seed=seed)
        ruled.reset(seed=seed)
        while plain.agents:
            joint = {a: int(rng.integers(5)) for a in plain.agents}
            _, r_plain, te_plain, tr_plain, info = plain.step(joint)
            _, r_ruled, te_ruled, tr_ruled, _ = ruled.step(joint)
            assert r_ruled == r_plain  # the rewards of the step are the game's own
            conflict = any(i["reward_terms"]["conflict"] < 0 for i in info.values())
            if conflict:
                assert all(te_ruled.values()), seed  # the first conflict ends the training episode
                seen["conflict"] += 1
                break
            assert te_ruled == te_plain and tr_ruled == tr_plain
            seen["step"] += 1
    assert seen["conflict"] > 5 and seen["step"] > 50
    assert scaffolded(MAPF, {"end_on:conflicts": 0.0}, menu) == MAPF


def test_the_partners_lever_reaches_the_trainer_and_not_the_game() -> None:
    menu = levers_for(MAPF, ("partners",))
    on = Mixture([Bucket({"size": 4, "n_agents": 3}, 1.0, "size=4")], {"partners": 0.25})
    assert partnered(on, menu) == {"partners": 0.25, "partner": "planner"}
    assert partnered(on.with_levers({"partners": 0.0}), menu) == {} and partnered(on, {}) == {}
    assert scaffolded(MAPF, {"partners": 0.25}, menu) == MAPF  # the game as designed: a partner is not a rule


def _evidence(kinds: Counter[str], episodes: int, levers: dict[str, float],
              menu: tuple[str, ...] = ("park_cost", "imitation", "weight:team"), **kw: Any) -> StageEvidence:
    fails = FailureEvidence("valid")
    fails.buckets["size=4"] = {"episodes": episodes, "successes": episodes - sum(kinds.values()), "kinds": kinds}
    b = Bucket({"size": 4, "n_agents": 3}, 1.0, "size=4")
    ev = Evidence("mapf_frozenlake", b.params, "valid", 1 - sum(kinds.values()) / episodes, (0.3, 0.6), fails)
    return StageEvidence("mapf_frozenlake", "valid", (0.3, 0.6), [(b, ev)], levers=levers,
                         lever_menu=levers_for(MAPF, menu), **kw)


def test_the_heuristic_turns_a_lever_on_where_its_failures_dominate_and_anneals_it_when_they_do_not() -> None:
    off = {"park_cost": 0.0, "imitation": 0.0, "weight:team": 1.0}
    settings, why = propose_levers(_evidence(Counter(timeout=12, holes=2), 20, off))
    assert settings == {"park_cost": 0.5, "imitation": 0.1, "weight:team": 1.0}  # no rule moves a reward weight
    assert "park_cost 0 -> 0.5: on" in why[0] and "timeout in 0.60" in why[0]
    on = {"park_cost": 0.5, "imitation": 0.1, "weight:team": 1.0}
    assert propose_levers(_evidence(Counter(timeout=12), 20, on))[0] == on  # still called for: kept
    settings, _ = propose_levers(_evidence(Counter(timeout=1, conflicts=5), 20, on))
    assert settings == {"park_cost": 0.25, "imitation": 0.05, "weight:team": 1.0}  # one step toward off
    settings, _ = propose_levers(_evidence(Counter(timeout=2), 20, on))  # few failures: nothing to answer
    assert settings["park_cost"] == 0.25
    assert propose_levers(_evidence(Counter(timeout=2), 20, {**on, "park_cost": 0.25}))[0]["park_cost"] == 0.0
    ruled = _evidence(Counter(conflicts=8, timeout=3), 20, {"end_on:conflicts": 0.0}, menu=("end_on",))
    assert propose_levers(ruled)[0] == {"end_on:conflicts": 1.0}  # conflicts call for the rule that ends on them
    on = {"end_on:conflicts": 1.0}  # kept while conflicts are seen in 5% of the episodes, though timeouts dominate
    assert propose_levers(_evidence(Counter(timeout=8, conflicts=1), 20, on, menu=("end_on",)))[0] == on
    assert propose_levers(_evidence(Counter(timeout=8), 20, on, menu=("end_on",)))[0] == {"end_on:conflicts": 0.0}


def test_the_heuristic_engineer_proposes_levers_with_its_levels_and_not_a_setting_the_guard_undid() -> None:
    off = {"park_cost": 0.0, "imitation": 0.0, "weight:team": 1.0}
    p = HeuristicEngineer().propose_stage(_evidence(Counter(timeout=12), 20, off))
    assert p.mixture.levers["park_cost"] == 0.5 and "levers: park_cost 0 -> 0.5" in p.rationale
    undone = Mixture([Bucket({"size": 4, "n_agents": 3}, 1.0, "size=4")], {**off, "park_cost": 0.5, "imitation": 0.1})
    p = HeuristicEngineer().propose_stage(_evidence(Counter(timeout=12), 20, off, rejected=[undone]))
    assert p.mixture.levers == off and "the guardrail undid this lever setting before" in p.rationale


def test_a_model_sets_levers_by_name_within_their_allowed_values(tmp_path: Path) -> None:
    reply = {"buckets": {"size=4": {"params": {}, "share": 1.0}}, "rationale": "timeouts: charge parking",
             "levers": {"park_cost": 0.4, "weight:team": 2.0, "slip": 0.3}}
    script = tmp_path / "engineer.yaml"
    script.write_text(yaml.safe_dump([{"json": reply}]))
    provider = ScriptedProvider(script)
    off = {"park_cost": 0.0, "imitation": 0.0, "weight:team": 1.0}
    ev = _evidence(Counter(timeout=12), 20, off)
    ev.buckets.append((Bucket({"size": 5, "n_agents": 3}, 0.0, "size=5"), ev.buckets[0][1]))
    p = LLMEngineer(LLM(provider, retries=0)).propose_stage(ev)
    assert p.mixture.levers == {"park_cost": 0.5, "imitation": 0.0, "weight:team": 2.0}
    assert "lever park_cost 0.4 moved to the nearest allowed 0.5" in p.rationale
    assert "ignored lever 'slip'" in p.rationale
    prompt = provider.requests[0].messages[0].content
    assert "Designer levers (training scaffolding)" in prompt and "park_cost = 0 (off" in prompt
    assert "never the one it is judged on" in prompt and "timeout 0.60" in prompt
    schema = provider.requests[0].schema
    assert schema["properties"]["levers"]["properties"]["park_cost"]["enum"] == [0.0, 0.25, 0.5, 1.0]


def test_a_model_reply_without_levers_keeps_them(tmp_path: Path) -> None:
    script = tmp_path / "engineer.yaml"
    script.write_text(yaml.safe_dump([{"json": {"buckets": {"size=4": {"params": {}, "share": 1.0}},
                                                "rationale": "keep"}}]))
    on = {"park_cost": 0.5, "imitation": 0.1, "weight:team": 1.0}
    ev = _evidence(Counter(timeout=12), 20, on)
    ev.buckets.append((Bucket({"size": 5, "n_agents": 3}, 0.0, "size=5"), ev.buckets[0][1]))
    p = LLMEngineer(LLM(ScriptedProvider(script), retries=0)).propose_stage(ev)
    assert p.mixture.levers == on
