"""The plans of stages 1-3 against the spec language: a plan can say whatever the spec it is
carried into says (issue 42, point 2), and carrying it drops nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from gymwright.design import DesignOptions, design
from gymwright.design.plans import (
    SPEC_OF_PLAN,
    ActionPlan,
    BaselinePlan,
    ConstPlan,
    DynamicsPlan,
    MetricPlan,
    ParamPlan,
    RewardsPlan,
    RewardTermPlan,
    TurnsPlan,
    VarPlan,
    carried,
)
from gymwright.llm.scripted import ScriptedProvider
from gymwright.spec.loader import library_names, read_data
from gymwright.spec.model import EnvSpec
from gymwright.store import Store


def _default(field: Any) -> Any:
    if field.is_required():
        return PydanticUndefined
    return field.get_default(call_default_factory=True)


@pytest.mark.parametrize("plan", list(SPEC_OF_PLAN), ids=lambda p: p.__name__)
def test_each_plan_item_has_its_spec_sections_keys_defaults_and_required_keys(plan: type[BaseModel]) -> None:
    sections, placement = SPEC_OF_PLAN[plan]
    spec_fields = {(f.alias or k): f for s in sections for k, f in s.model_fields.items()}
    plan_fields = {k: f for k, f in plan.model_fields.items()}
    assert set(plan_fields) == set(spec_fields) | placement, (
        f"{plan.__name__} and {', '.join(s.__name__ for s in sections)} differ: the plan lacks "
        f"{sorted(set(spec_fields) - set(plan_fields))}, has extra {sorted(set(plan_fields) - set(spec_fields) - placement)}")
    for key, f in spec_fields.items():
        if len(sections) > 1:  # a const is one of two sections: every key is optional in the plan
            continue
        assert _default(plan_fields[key]) == _default(f), f"{plan.__name__}.{key}: default differs from the spec's"


def _library_items(name: str) -> list[tuple[type[BaseModel], dict[str, Any]]]:
    data, _ = read_data(name)
    items: list[tuple[type[BaseModel], dict[str, Any]]] = []
    items += [(ParamPlan, {"name": k, **v}) for k, v in (data.get("params") or {}).items()]
    for k, v in (data.get("consts") or {}).items():
        items.append((ConstPlan, {"name": k, **v} if isinstance(v, dict) else {"name": k, "value": v}))
    for section, per_agent in (("state", False), ("agent_state", True)):
        items += [(VarPlan, {"name": k, **({"per_agent": True} if per_agent else {}), **v})
                  for k, v in (data.get(section) or {}).items()]
    items += [(ActionPlan, {"role": r, **c}) for r, cs in data["actions"].items() for c in cs]
    items += [(RewardTermPlan, {"role": r, **t}) for r, ts in (data.get("rewards") or {}).items() for t in ts]
    items += [(MetricPlan, {"name": k, **v}) for k, v in (data.get("metrics") or {}).items()]
    items += [(BaselinePlan, {"name": b, "role": r, "rules": rules})
              for b, roles in (data.get("baselines") or {}).items() for r, rules in roles.items()]
    if isinstance(data.get("turns"), dict):
        items.append((TurnsPlan, data["turns"]))
    return items


def _short(item: dict[str, Any]) -> bool:
    """Within the plans' length limits (library docs may be longer than a plan's prose)."""
    return all(not isinstance(v, str) or len(v) <= 200 for v in item.values())


@pytest.mark.parametrize("name", library_names())
def test_every_library_section_fits_a_plan_item_and_is_carried_unchanged(name: str) -> None:
    for plan, item in _library_items(name):
        item = {k: v for k, v in item.items() if not (k == "doc" and len(str(v)) > 300)}
        if not _short(item):
            continue
        assert carried(plan.model_validate(item)) == item, (name, plan.__name__, item)


def test_what_a_spec_can_say_a_plan_can_say() -> None:
    const = ConstPlan.model_validate({"name": "payoff", "value": [[3, 0], [5, 1]]})
    assert carried(const)["value"] == [[3, 0], [5, 1]]  # a 2-D table
    assert carried(ConstPlan.model_validate({"name": "pie", "value": "2 * n_players"}))["value"] == "2 * n_players"
    assert carried(VarPlan.model_validate({"name": "card", "per_agent": True, "private": True}))["private"] is True
    assert carried(ParamPlan.model_validate({"name": "cost", "type": "float", "default": 0})) == {
        "name": "cost", "type": "float", "default": 0}
    assert "success_direction" not in RewardsPlan.model_fields  # the task metric is read higher = better
    assert {"terminate", "truncate", "turns"} <= set(DynamicsPlan.model_fields)
    # the spec's top-level keys that stage 2 plans: per-agent ends and constraints between params
    dynamics = {"state": [{"name": "pos"}], "actions": [{"role": "runner", "name": "run"}],
                "observations": [{"role": "runner", "sees": "its position"}]}
    planned = DynamicsPlan.model_validate({**dynamics, "terminate_agent": "pos[me] >= track",
                                           "constraints": ["voters % 2 == 1"]})
    assert carried(planned)["terminate_agent"] == "pos[me] >= track"
    assert carried(planned)["constraints"] == ["voters % 2 == 1"]
    assert {"terminate_agent", "constraints"} <= set(EnvSpec.model_fields)
    # an older plan's words are read as the spec's keys
    older = VarPlan.model_validate({"name": "grid", "shape": "[size, size]", "meaning": "the cells"})
    assert older.shape == ["size", "size"] and older.doc == "the cells"
    assert RewardTermPlan.model_validate({"role": "a", "name": "p", "expr": "-1", "kind": "penalty"}).kind == "shaping"
    assert ActionPlan.model_validate({"name": "offer", "args": "share in linspace(0, 1, 11)"}).args == {
        "share": "linspace(0, 1, 11)"}


BUTTON: dict[str, Any] = yaml.safe_load("""
gymwright: 1
name: button_coordination
params:
  horizon: {default: 5, min: 1, max: 20, type: int}
agents: {presser: {count: 2}}
state:
  together: {type: int, init: 0, min: 0, max: horizon}
actions:
  presser: [{name: press}, {name: wait}]
step:
  - {when: "sum(press) == 2", set: {together: "together + 1"}}
truncate: "t >= horizon"
rewards:
  presser: [{name: together, expr: "1.0 * (sum(press) == 2)"}]
metrics:
  together: {expr: together, reduce: last, kind: task}
observe:
  presser: [together, "t / horizon"]
""")
ROLES = {"roles": [{"name": "presser", "count": 2, "goal": "press together"}]}
DYNAMICS = {"params": [{"name": "horizon", "type": "int", "default": 5, "min": 1, "max": 20},
                       {"name": "press_cost", "type": "float", "default": 0, "min": 0, "max": 1}],
            "consts": [{"name": "pay", "value": [[1, 0], [0, 0]]}, {"name": "cap", "value": "2 * horizon"}],
            "state": [{"name": "together", "type": "int", "init": 0, "min": 0, "max": "cap"},
                      {"name": "patience", "per_agent": True, "private": True}],
            "actions": [{"role": "presser", "name": "press"}, {"role": "presser", "name": "wait"}],
            "observations": [{"role": "presser", "sees": "how often both pressed"}],
            "truncate": "t >= horizon"}
REWARDS = {"terms": [{"role": "presser", "name": "together", "expr": "pay[0][0] * (sum(press) == 2)",
                      "kind": "task", "weight": 1.0}],
           "metrics": [{"name": "together", "expr": "together", "reduce": "last", "kind": "task"}],
           "success_metric": "together",
           "baselines": [{"name": "always_press", "role": "presser", "rules": [{"action": "press"}]}]}


def designed_requests(tmp_path: Path) -> list[Any]:
    """The requests of a scripted spec-mode design of the button task (the plans above, no review)."""
    script = tmp_path / "model.yaml"
    script.write_text(yaml.safe_dump([{"json": ROLES}, {"json": DYNAMICS}, {"json": REWARDS},
                                      {"json": BUTTON}], sort_keys=False))
    provider = ScriptedProvider(script)
    with Store.open(tmp_path / "store") as store:
        design("Two agents are paid only when both press a button at the same time.",
               DesignOptions(retry_backoff=0.0, review=False), store=store, provider=provider)
    return list(provider.requests)


def test_the_spec_prompt_carries_every_value_the_plans_set(tmp_path: Path) -> None:
    requests = designed_requests(tmp_path)
    stages = [r.schema_name for r in requests]
    assert stages[:4] == ["roles", "dynamics", "rewards", "spec"], stages
    spec_prompt = requests[3].messages[-1].content
    for carried_text in ('"name":"press_cost","type":"float","default":0',  # equal to the old defaults
                         '"value":[[1,0],[0,0]]', '"value":"2 * horizon"',  # a table and a formula
                         '"private":true', '"weight":1.0,"kind":"task"', '"reduce":"last","kind":"task"',
                         '"rules":[{"action":"press"}]'):
        assert carried_text in spec_prompt, carried_text
