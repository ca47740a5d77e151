"""Scenario checks of a code-mode module: worked cases the model writes beside its code.

A module declares no action names, so a scenario drives it by action index, as a trained policy
does: from `reset(seed)`, each step gives some agents an action index; an agent alive but left
out plays its lowest legal action. After the last step the expectations are compared with what
the module showed (`expect`):

    rewards: {agent: number}    the last step's rewards (an agent not named is not checked)
    returns: {agent: number}    the sums over the scenario's steps
    terminated / truncated: bool  whether any agent terminated / was truncated at the last step
    done: bool                  whether the episode is over (no agent alive)
    legal: {agent: [index]}     the actions legal after the last step (its action_mask)

Numbers compare with a tolerance of 1e-6 (absolute and relative). A scenario's action that the
module's mask refuses, an episode that ends before the scenario's last step, an error in the
module and an expectation that does not hold are each a finding (`scenarios[i]`), with what was
seen, so the model can tell a wrong rule from a wrong scenario. This is the code-mode
counterpart of a spec's probes (`verify/probes.py`); `benchmarks/code_scenarios.py` plays the
design-quality benchmark's hand-worked scenarios on a module the same way.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gymwright.codemode.proxy import SandboxedParallelEnv
from gymwright.codemode.sandbox import Sandbox, SandboxError
from gymwright.diagnostic import Diagnostic, error

MAX_SCENARIOS = 8
MAX_STEPS = 200
TOLERANCE = 1e-6
EXPECT_KEYS = ("rewards", "returns", "terminated", "truncated", "done", "legal")

# The JSON Schema of `scenarios` in the stage-4 reply (design/coded.py's CODE_SCHEMA).
SCENARIOS_SCHEMA: dict[str, Any] = {
    "type": "array", "maxItems": MAX_SCENARIOS,
    "items": {"type": "object", "required": ["name", "steps", "expect"],
              "properties": {
                  "name": {"type": "string", "maxLength": 80},
                  "seed": {"type": "integer"},
                  "steps": {"type": "array", "maxItems": MAX_STEPS,
                            "items": {"type": "object", "additionalProperties": {"type": "integer"}}},
                  "expect": {"type": "object", "properties": {
                      "rewards": {"type": "object", "additionalProperties": {"type": "number"}},
                      "returns": {"type": "object", "additionalProperties": {"type": "number"}},
                      "terminated": {"type": "boolean"}, "truncated": {"type": "boolean"},
                      "done": {"type": "boolean"},
                      "legal": {"type": "object", "additionalProperties": {
                          "type": "array", "items": {"type": "integer"}}}}}}}}


class ScenarioError(ValueError):
    """A scenario that is not well formed (said before anything runs)."""


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _check_steps(where: str, steps: Any) -> None:
    """Raise unless `steps` is a bounded list of {agent: action index}."""
    if not isinstance(steps, list) or len(steps) > MAX_STEPS or not all(
            isinstance(st, dict) and all(isinstance(a, str) and _is_int(x) for a, x in st.items())
            for st in steps):
        raise ScenarioError(f'{where}.steps must be a list (at most {MAX_STEPS}) of {{agent: action index}}')


def _check_expect_values(where: str, expect: dict[str, Any]) -> None:
    """Raise unless each known `expect` entry has the right shape."""
    for key in ("rewards", "returns"):
        if key in expect and not (isinstance(expect[key], dict)
                                  and all(isinstance(a, str) and _is_number(x) for a, x in expect[key].items())):
            raise ScenarioError(f"{where}.expect.{key} must be {{agent: number}}")
    for key in ("terminated", "truncated", "done"):
        if key in expect and not isinstance(expect[key], bool):
            raise ScenarioError(f"{where}.expect.{key} must be true or false")
    if "legal" in expect and not (isinstance(expect["legal"], dict) and all(
            isinstance(a, str) and isinstance(v, list) and all(_is_int(k) for k in v)
            for a, v in expect["legal"].items())):
        raise ScenarioError(f"{where}.expect.legal must be {{agent: [action index, ...]}}")


def _check_expect(where: str, expect: Any) -> None:
    """Raise unless `expect` is a non-empty object of known, well-shaped keys."""
    if not isinstance(expect, dict) or not expect:
        raise ScenarioError(f"{where}.expect must be a non-empty object with some of {', '.join(EXPECT_KEYS)}")
    bad = set(expect) - set(EXPECT_KEYS)
    if bad:
        raise ScenarioError(f"{where}.expect has unknown keys {sorted(bad)}; known: {', '.join(EXPECT_KEYS)}")
    _check_expect_values(where, expect)


def _validate_scenario(i: int, s: Any) -> dict[str, Any]:
    """Scenario `i` as a plain dict; ScenarioError when it is malformed."""
    where = f"scenarios[{i}]"
    if not isinstance(s, dict):
        raise ScenarioError(f"{where} must be an object {{name, seed, steps, expect}}")
    unknown = set(s) - {"name", "seed", "steps", "expect"}
    if unknown:
        raise ScenarioError(f"{where} has unknown keys {sorted(unknown)}; a scenario has name, seed, steps, expect")
    steps, expect = s.get("steps", []), s.get("expect")
    _check_steps(where, steps)
    _check_expect(where, expect)
    seed = s.get("seed", 0)
    if not _is_int(seed):
        raise ScenarioError(f"{where}.seed must be an integer")
    return {"name": str(s.get("name", f"scenario {i}"))[:80], "seed": seed, "steps": steps, "expect": expect}


def validate_scenarios(value: Any) -> list[dict[str, Any]]:
    """The scenarios as plain dicts; ScenarioError says which one is malformed and how."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ScenarioError(f'"scenarios" must be a list, got {type(value).__name__}')
    if len(value) > MAX_SCENARIOS:
        raise ScenarioError(f'"scenarios" holds {len(value)}; at most {MAX_SCENARIOS}')
    return [_validate_scenario(i, s) for i, s in enumerate(value)]


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _legal(info: Any, n: int) -> list[int]:
    mask = info.get("action_mask") if isinstance(info, dict) else None
    return list(range(n)) if mask is None else [int(k) for k in np.flatnonzero(np.asarray(mask))]


def play_scenario(env: Any, scenario: dict[str, Any]) -> list[str]:
    """What does not hold in one scenario on `env` (a ParallelEnv driven by index), in words;
    [] when it passes. A SandboxError from the module propagates."""
    _, infos = env.reset(seed=scenario["seed"])
    returns = {a: 0.0 for a in env.possible_agents}
    rewards: dict[str, float] = {}
    terminated = truncated = False
    for k, step in enumerate(scenario["steps"], 1):
        if not env.agents:
            return [f"the episode ended before step {k} (after {k - 1} steps)"]
        actions = {}
        for agent, action in step.items():
            if agent not in env.possible_agents:
                return [f"step {k}: the module has no agent `{agent}` (its agents: {', '.join(env.possible_agents)})"]
            if agent not in env.agents:
                return [f"step {k}: `{agent}` is no longer alive (alive: {', '.join(env.agents)})"]
            legal = _legal(infos.get(agent), int(env.action_space(agent).n))
            if action not in legal:
                return [f"step {k}: action {action} is not legal for {agent} (legal: {legal})"]
            actions[agent] = action
        for agent in env.agents:
            if agent not in actions:
                legal = _legal(infos.get(agent), int(env.action_space(agent).n))
                actions[agent] = legal[0] if legal else 0
        _, rew, terms, truncs, infos = env.step(actions)
        rewards = {a: float(r) for a, r in rew.items()}
        for a, r in rewards.items():
            returns[a] = returns.get(a, 0.0) + r
        terminated, truncated = any(terms.values()), any(truncs.values())
    return _compare(env, scenario["expect"], rewards, returns, terminated, truncated, infos)


def _compare(env: Any, expect: dict[str, Any], rewards: dict[str, float], returns: dict[str, float],
             terminated: bool, truncated: bool, infos: dict[str, Any]) -> list[str]:
    wrong = []
    for key, seen in (("rewards", rewards), ("returns", returns)):
        for agent, want in (expect.get(key) or {}).items():
            if agent not in env.possible_agents:
                wrong.append(f"expect.{key} names `{agent}`, which the module does not have")
            elif not _close(seen.get(agent, 0.0), float(want)):
                what = "reward at the last step" if key == "rewards" else "return"
                wrong.append(f"the {what} of {agent} is {seen.get(agent, 0.0):.6g}, expected {float(want):.6g}")
    for key, seen_flag in (("terminated", terminated), ("truncated", truncated), ("done", not env.agents)):
        if key in expect and bool(expect[key]) != seen_flag:
            wrong.append(f"{key} is {str(seen_flag).lower()}, expected {str(expect[key]).lower()}")
    for agent, want in (expect.get("legal") or {}).items():
        if agent not in env.agents:
            wrong.append(f"expect.legal names `{agent}`, which is not alive after the last step")
            continue
        legal = _legal(infos.get(agent), int(env.action_space(agent).n))
        if sorted(set(want)) != legal:
            wrong.append(f"the legal actions of {agent} are {legal}, expected {sorted(set(want))}")
    return wrong


def scenario_findings(sandbox: Sandbox, scenarios: list[dict[str, Any]], stage: str = "scenarios",
                      ) -> list[Diagnostic]:
    """Each failed scenario as an error at `scenarios[i]`, run on a fresh instance in `sandbox`."""
    from gymwright.codemode.checks import sandbox_finding

    found: list[Diagnostic] = []
    for i, scenario in enumerate(scenarios):
        where = f"scenarios[{i}]"
        try:
            env = SandboxedParallelEnv(sandbox)
            try:
                wrong = play_scenario(env, scenario)
            finally:
                env.close()
        except SandboxError as e:
            d = sandbox_finding(e, stage)
            d.message = f"scenario `{scenario['name']}`: {d.message}"
            found.append(d)
            if not sandbox.alive:
                break
            continue
        except (TypeError, ValueError, KeyError) as e:  # a reply the proxy decoded but cannot use
            wrong = [f"the module's reply cannot be used ({type(e).__name__}: {e})"]
        if wrong:
            found.append(error(stage, where, f"scenario `{scenario['name']}` fails: " + "; ".join(wrong[:4]),
                               "fix the module's rule if the scenario is right, else fix the scenario "
                               "(its actions are indices, an agent left out plays its lowest legal action)"))
    return found


__all__ = ["SCENARIOS_SCHEMA", "ScenarioError", "play_scenario", "scenario_findings", "validate_scenarios"]
