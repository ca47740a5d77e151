"""The hand-worked scenarios (`benchmarks/behaviour/`) against a code-mode design: its module runs
in a sandbox worker (`gymwright.codemode.source.parallel_env_of`; nothing of it is imported here)
and is driven by action indices.

A module declares no action names, so a scenario's named actions (`mark(cell=0)`) reach it only
through the layout its scenario file gives (`code_actions:` per role: the actions in index order,
as the task text orders them). What a module exposes is its agents, rewards, ends and action
masks; so a scenario is checked only where it needs nothing else. It is **not checkable** (counted
apart, never as passed) when it sets spec state (`start`) or params, names a role the file gives no
layout for (or whose action count differs from the module's), or expects anything but
`reward.A`, `ret.A`, `terminated`, `truncated`, `mask.A[k]`, `mask.A.choice`, numbers, `abs`,
arithmetic, comparisons and `and`/`or`/`not` (a state variable, a metric, an observation). An agent
a step leaves out plays its one legal action; where it has several, the scenario is played twice,
with its lowest and its highest legal action, and is not checkable if the two disagree.

Otherwise the kinds are the spec runner's (`scenarios.py`): an agent the module lacks is
*unmatched*; an expectation that is false, an illegal action, an episode that ends early or an
error in the module is *wrong*.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import yaml
from scenarios import NO_SPEC, PASSED, SCENARIO_DIR, UNMATCHED, WRONG, ScenarioResult, scenario_file

NOT_CHECKABLE = "not checkable"
ACTION = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*$")
COMPARE = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
           ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}
ARITH = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
         ast.Div: lambda a, b: a / b}
PER_AGENT = ("reward", "ret", "mask")


class Unusable(Exception):
    """The scenario cannot be judged on this module: `kind` (not checkable, unmatched, wrong) and why."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind, self.reason = kind, reason


def parse_action(text: str) -> tuple[str, dict[str, float]]:
    """`mark(cell=0)` -> ("mark", {"cell": 0.0}); `check` -> ("check", {})."""
    m = ACTION.match(str(text))
    if m is None:
        raise ValueError(f"not an action: {text!r}")
    args = {}
    for part in filter(None, (p.strip() for p in (m.group(2) or "").split(","))):
        key, _, value = part.partition("=")
        args[key.strip()] = float(value)
    return m.group(1), args


def same_action(a: tuple[str, dict[str, float]], b: tuple[str, dict[str, float]]) -> bool:
    return a[0] == b[0] and a[1].keys() == b[1].keys() and all(math.isclose(a[1][k], b[1][k]) for k in a[1])


def load_code_actions(task_id: str, folder: Any = SCENARIO_DIR) -> dict[str, list[tuple[str, dict[str, float]]]]:
    """The file's `code_actions` (role -> actions in index order), parsed; {} when it gives none."""
    path = scenario_file(task_id, folder)
    data = (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}
    return {str(role): [parse_action(a) for a in actions] for role, actions in (data.get("code_actions") or {}).items()}


# ----------------------------------------------------------------------------- expectations
def check_expectation(node: ast.AST) -> None:
    """Unusable(not checkable) naming the part of an expectation a module does not expose."""
    if isinstance(node, ast.Expression):
        return check_expectation(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | bool):
        return None
    if isinstance(node, ast.Name) and node.id in ("terminated", "truncated"):
        return None
    if isinstance(node, ast.BoolOp | ast.Compare | ast.BinOp | ast.UnaryOp) and _supported_op(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                check_expectation(child)
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "abs" \
            and len(node.args) == 1 and not node.keywords:
        return check_expectation(node.args[0])
    if _agent_of(node) is not None:
        return None
    raise Unusable(NOT_CHECKABLE, f"`{ast.unparse(node)}` is not something a code module exposes "
                                  "(only rewards, returns, ends and action masks are)")


def _supported_op(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare):
        return all(type(op) in COMPARE for op in node.ops)
    if isinstance(node, ast.BinOp):
        return type(node.op) in ARITH
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not | ast.USub | ast.UAdd)
    return True


def _agent_of(node: ast.AST) -> tuple[str, str, Any] | None:
    """`reward.A` / `ret.A` / `mask.A` -> (what, A, None); `mask.A[k]` -> ("mask", A, k);
    `mask.A.choice` -> ("mask", A, "choice"); else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in PER_AGENT:
        return node.value.id, node.attr, None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
        inner = _agent_of(node.value)
        return ("mask", inner[1], node.slice.value) if inner and inner[0] == "mask" and inner[2] is None else None
    if isinstance(node, ast.Attribute):
        inner = _agent_of(node.value)
        return ("mask", inner[1], node.attr) if inner and inner[0] == "mask" and inner[2] is None else None
    return None


@dataclass
class Seen:
    """What the module showed after a scenario's steps."""

    reward: dict[str, float]
    ret: dict[str, float]
    terminated: bool
    truncated: bool
    masks: dict[str, np.ndarray]
    sizes: dict[str, int]  # each agent's number of actions


def evaluate(node: ast.AST, seen: Seen, agents: list[str], layout: dict[str, list[Any]]) -> Any:
    """The value of a checked expectation (`check_expectation`) on what the module showed."""
    def ev(n: ast.AST) -> Any:
        return evaluate(n, seen, agents, layout)

    if isinstance(node, ast.Expression):
        return ev(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return seen.terminated if node.id == "terminated" else seen.truncated
    if isinstance(node, ast.BoolOp):
        values = (ev(v) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp):
        x = ev(node.operand)
        return (not x) if isinstance(node.op, ast.Not) else (-x if isinstance(node.op, ast.USub) else x)
    if isinstance(node, ast.BinOp):
        return ARITH[type(node.op)](ev(node.left), ev(node.right))
    if isinstance(node, ast.Compare):
        left = ev(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = ev(right_node)
            if not COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Call):
        return abs(ev(node.args[0]))
    what, agent, index = _agent_of(node)  # type: ignore[misc]
    if agent not in agents:
        raise Unusable(UNMATCHED, f"the module has no agent `{agent}` (its agents: {', '.join(agents)})")
    if what != "mask":
        return getattr(seen, what).get(agent, 0.0)
    names = laid_out(agent, seen.sizes[agent], layout)
    mask = seen.masks.get(agent, np.zeros(len(names), dtype=bool))
    if isinstance(index, int):
        return bool(index < mask.size and mask[index])
    if index not in {n for n, _ in names}:
        raise Unusable(NOT_CHECKABLE, f"`mask.{agent}.{index}`: the file's layout for {role_of(agent)} has no "
                                      f"choice `{index}`")
    return any(bool(mask[k]) for k, (n, _) in enumerate(names) if n == index and k < mask.size)


# ----------------------------------------------------------------------------- playing
def role_of(agent: str) -> str:
    return agent.rpartition("_")[0] or agent


def laid_out(agent: str, size: int, layout: dict[str, list[Any]]) -> list[Any]:
    """The file's layout for `agent`'s role, if it has one of the module's `size` actions (a mask
    index or a named action means something only through it)."""
    role = role_of(agent)
    if role not in layout:
        raise Unusable(NOT_CHECKABLE, f"the scenario file gives no code layout (`code_actions`) for role `{role}`: "
                                      "which index is which action is not known")
    if size != len(layout[role]):
        raise Unusable(NOT_CHECKABLE, f"the module has {size} actions for {agent}, the file's layout for `{role}` "
                                      f"{len(layout[role])}: its actions are laid out otherwise")
    return layout[role]


def index_of(env: Any, agent: str, action: str, layout: dict[str, list[Any]]) -> int:
    """The index of a scenario's named action for `agent`, by the file's layout."""
    if agent not in env.possible_agents:
        raise Unusable(UNMATCHED, f"the module has no agent `{agent}` (its agents: {', '.join(env.possible_agents)})")
    names = laid_out(agent, env.action_space(agent).n, layout)
    wanted = parse_action(action)
    for k, known in enumerate(names):
        if same_action(known, wanted):
            return k
    raise ValueError(f"the scenario file's code_actions for {role_of(agent)} lack `{action}`")


def mask_of(info: Any, size: int) -> np.ndarray:
    mask = info.get("action_mask") if isinstance(info, dict) else None
    return np.ones(size, dtype=bool) if mask is None else np.asarray(mask).astype(bool)


def play(env: Any, scenario: dict[str, Any], layout: dict[str, list[Any]], highest: bool) -> tuple[Seen, bool]:
    """(what the module showed after the scenario's steps, whether a left-out agent had a choice)."""
    from gymwright.errors import GymwrightError

    try:
        _, infos = env.reset(seed=int(scenario.get("seed", 0)))
        ret = {a: 0.0 for a in env.possible_agents}
        reward, terminated, truncated, chose = dict(ret), False, False, False
        masks = {a: mask_of(infos.get(a), env.action_space(a).n) for a in env.agents}
        for k, step in enumerate(scenario.get("actions") or []):
            if not env.agents:
                raise Unusable(WRONG, f"the episode ended before step {k}")
            actions = {}
            for agent, action in step.items():
                actions[agent] = index_of(env, agent, action, layout)
                if agent not in env.agents:
                    raise Unusable(WRONG, f"{agent} is not alive at step {k}")
                if not scenario.get("illegal") and not masks[agent][actions[agent]]:
                    raise Unusable(WRONG, f"`{action}` is not legal for {agent} at step {k}")
            for agent in env.agents:
                if agent not in actions:
                    legal = np.flatnonzero(masks[agent])
                    chose = chose or legal.size > 1
                    actions[agent] = int(legal[-1] if highest else legal[0]) if legal.size else 0
            _, rewards, terms, truncs, infos = env.step(actions)
            reward = {a: float(rewards.get(a, 0.0)) for a in env.possible_agents}
            ret = {a: ret[a] + reward[a] for a in ret}
            terminated, truncated = any(terms.values()), any(truncs.values())
            masks = {a: mask_of(infos.get(a), env.action_space(a).n) for a in infos}
    except (GymwrightError, ValueError, TypeError, KeyError) as e:  # the module raised, or replied badly
        raise Unusable(WRONG, f"the module failed: {getattr(e, 'message', None) or f'{type(e).__name__}: {e}'}") from None
    sizes = {a: int(env.action_space(a).n) for a in env.possible_agents}
    return Seen(reward, ret, terminated, truncated, masks, sizes), chose


def judge(env: Any, scenario: dict[str, Any], layout: dict[str, list[Any]]) -> tuple[str, str]:
    """(kind, reason) of one scenario on the module."""
    for key in ("start", "params"):
        if scenario.get(key):
            return NOT_CHECKABLE, f"the scenario sets `{key}`, spec state or params a code module does not expose"
    sources = [str(e) for e in scenario.get("expect") or []]
    trees = [ast.parse(s, mode="eval") for s in sources]
    try:
        for tree in trees:
            check_expectation(tree)
        results = []
        for highest in (False, True):
            seen, chose = play(env, scenario, layout, highest)
            results.append([bool(evaluate(t, seen, list(env.possible_agents), layout)) for t in trees])
            if not chose:
                break
    except Unusable as e:
        return e.kind, e.reason
    if len(results) == 2 and results[0] != results[1]:
        return NOT_CHECKABLE, ("an agent the scenario leaves out has several legal actions, and which it plays "
                               "changes the outcome: the scenario does not say")
    false = [s for s, ok in zip(sources, results[0], strict=True) if not ok]
    if false:
        return WRONG, f"failed after {len(scenario.get('actions') or [])} steps: `{false[0]}` is false"
    return PASSED, ""


def run_code_scenarios(code: str | None, scenarios: list[dict[str, Any]],
                       layout: dict[str, list[Any]]) -> list[ScenarioResult]:
    """Every scenario's result against the module `code` (None: no verified module, all fail)."""
    from gymwright.codemode.source import parallel_env_of
    from gymwright.errors import GymwrightError

    names = [str(s.get("name", f"scenario {i}")) for i, s in enumerate(scenarios)]
    if code is None:
        return [ScenarioResult(n, NO_SPEC, "the design produced no verified module") for n in names]
    if not scenarios:
        return []
    try:
        env = parallel_env_of(code, "the designed module")
    except GymwrightError as e:
        return [ScenarioResult(n, WRONG, f"the module did not start: {e.message}") for n in names]
    try:
        return [ScenarioResult(n, *judge(env, s, layout)) for n, s in zip(names, scenarios, strict=True)]
    finally:
        env.close()
