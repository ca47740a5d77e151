"""The text layout of an env that has no spec: a gymwright module's own `TEXT_LAYOUT`, or a
code-mode module's `TEXT` hook laid over the generic fallback.

The hook (docs/text-games.md): a class attribute `TEXT` of the model's ParallelEnv, plain data,

    TEXT = {
        "description": "one line: the game",
        "doc": "the rules, as long as needed",
        "features": [["name", size, "what it means"], ...],   # in observation order
        "actions": ["name of action 0", "name of action 1", ...],
        "action_docs": {"name": "what it does"},
    }

where `features` and `actions` may instead map agent names to such lists. Anything left out
falls back to the generic form: the observation as one vector `x`, actions `action_0` .. `action_K`.
The hook is data from a model: every string is bounded and kept printable, and a feature list
whose sizes do not add up to the observation's is refused with the sizes it read.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from gymwright.errors import GymwrightError
from gymwright.runtime.textview import TV_INVALID_RULES

MAX_TEXT = 4000  # characters of one string of a hook
MAX_ITEMS = 512  # features or actions of one agent


def layout_of_env(env: Any, invalid: str) -> dict[str, Any]:
    """The layout of a PettingZoo ParallelEnv (see the module docstring)."""
    if invalid not in TV_INVALID_RULES:
        raise GymwrightError(f"invalid-reply rule {invalid!r}: use one of {', '.join(TV_INVALID_RULES)}", path="invalid")
    own = getattr(env, "TEXT_LAYOUT", None)  # a module gymwright generated from a spec
    if isinstance(own, dict):
        return {**copy.deepcopy(own), "invalid": invalid}
    hook = getattr(env, "text_hook", None) or getattr(type(env), "TEXT", None)
    layout = generic_layout(env, invalid)
    return with_hook(layout, hook, env) if isinstance(hook, dict) else layout


def generic_layout(env: Any, invalid: str) -> dict[str, Any]:
    """Every agent its own role; its observation one vector `x`; actions by number."""
    agents = [str(a) for a in env.possible_agents]
    meta = getattr(env, "metadata", {}) or {}
    return {"name": str(meta.get("name", type(env).__name__)), "description": "", "doc": "",
            "agents": agents, "role_of": agents, "invalid": invalid,
            "roles": {a: _generic_role(env, a) for a in agents}}


def _generic_role(env: Any, agent: str) -> dict[str, Any]:
    space, n = env.observation_space(agent), int(env.action_space(agent).n)
    dim = int(np.prod(space.shape)) if space.shape else 1
    feature = ("x", (dim,) if dim > 1 else (), "float", "the observation vector")
    names = [f"action_{k}" for k in range(n)]
    return {"doc": "", "count": 1, "features": [feature], "actions": names,
            "choices": [(name, "", {}) for name in names], "rewards": []}


def with_hook(layout: dict[str, Any], hook: dict[str, Any], env: Any) -> dict[str, Any]:
    """`layout` with what the hook says put in (strings bounded and printable)."""
    out = copy.deepcopy(layout)
    out["description"] = _text(hook.get("description", ""), "TEXT['description']")
    out["doc"] = _text(hook.get("doc", ""), "TEXT['doc']")
    given = hook.get("action_docs")
    docs: dict[str, Any] = given if isinstance(given, dict) else {}
    for agent, role in out["roles"].items():
        features = _for_agent(hook.get("features"), agent)
        if features is not None:
            role["features"] = _features(features, env, agent)
        actions = _for_agent(hook.get("actions"), agent)
        if actions is not None:
            role["actions"] = _actions(actions, env, agent)
            role["choices"] = [(a, _text(docs.get(a, ""), f"TEXT['action_docs'][{a!r}]"), {}) for a in role["actions"]]
    return out


def _for_agent(value: Any, agent: str) -> Any:
    return value.get(agent) if isinstance(value, dict) else value


def _features(items: Any, env: Any, agent: str) -> list[tuple[Any, ...]]:
    space = env.observation_space(agent)
    dim = int(np.prod(space.shape)) if space.shape else 1
    if not isinstance(items, list) or len(items) > MAX_ITEMS:
        raise _hook_error("features", f"must be a list of [name, size, doc] (at most {MAX_ITEMS})")
    out, total = [], 0
    for k, item in enumerate(items):
        if not (isinstance(item, list | tuple) and len(item) in (2, 3) and isinstance(item[1], int)
                and not isinstance(item[1], bool) and item[1] >= 1):
            raise _hook_error(f"features[{k}]", "must be [name, size, doc] with a whole size of at least 1")
        size = int(item[1])
        out.append((_text(item[0], f"TEXT['features'][{k}]", 80), (size,) if size > 1 else (), "float",
                    _text(item[2] if len(item) == 3 else "", f"TEXT['features'][{k}]")))
        total += size
    if total != dim:
        raise _hook_error("features", f"sizes add up to {total}, but {agent}'s observation has {dim} values")
    return out


def _actions(items: Any, env: Any, agent: str) -> list[str]:
    n = int(env.action_space(agent).n)
    if not isinstance(items, list) or len(items) != n:
        raise _hook_error("actions", f"must list one name per action: {agent} has {n}")
    names = [_text(x, f"TEXT['actions'][{k}]", 80) for k, x in enumerate(items)]
    if len(set(names)) != n or not all(names):
        raise _hook_error("actions", "names must be distinct and not empty")
    return names


def _text(value: Any, where: str, limit: int = MAX_TEXT) -> str:
    """A hook string, bounded, with every character that is not printable written as `?`."""
    if not isinstance(value, str):
        raise _hook_error(where.removeprefix("TEXT"), f"must be a string, got {type(value).__name__}")
    return "".join(c if c.isprintable() or c == "\n" else "?" for c in value[:limit])


def _hook_error(where: str, what: str) -> GymwrightError:
    return GymwrightError(f"the env's TEXT hook: {where.strip('[]')} {what}", path=f"TEXT{where if where.startswith('[') else '.' + where}",
                          hint="see docs/text-games.md, 'Code-mode environments': features [name, size, doc] "
                               "in observation order, one action name per action index")
