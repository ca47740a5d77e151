"""Demonstrations of optimal joint plans on MAPF-FrozenLake, for behaviour cloning (PRIMAL-style).

For each episode: reset the generated PettingZoo env (the observation encoding the policy sees),
read the drawn layout (holes, starts, goals) from its state, solve it with Conflict-Based Search
(`gymwright.mapf.cbs.solve`: the same rules, parked at the goal, no vertex or swap conflict),
and replay the plan through the env, recording each walker's (observation, action mask, action)
while it still has a choice (a parked walker's only legal action is `wait`). Every env step of
the replays counts as one env step of the budget (`Demos.env_steps`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from gymwright.mapf.cbs import solve
from gymwright.mapf.errors import MapfError
from gymwright.mapf.spec_form import MOVES, is_mapf_form, layout_key, walker_actions
from gymwright.train.imitation import Demos


def plan_actions(positions: np.ndarray, action_names: list[str]) -> np.ndarray:
    """(T + 1, N, 2) plan positions -> (T, N) action indices (the spec's order of `action_names`)."""
    steps = positions[1:] - positions[:-1]
    index = {name: k for k, name in enumerate(action_names)}
    return np.array([[index[MOVES[(int(r), int(c))]] for r, c in row] for row in steps], dtype=np.int64)


def layout(env: Any, blocked: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The drawn instance of a reset env: holes (H, W) bool, starts (N, 2), goals (N, 2)."""
    v = env.v
    return blocked[np.asarray(v.tiles)], np.asarray(v.pos).copy(), np.asarray(v.goal).copy()


def demo_episode(env: Any, blocked: np.ndarray, action_names: list[str], seed: int,
                 into: list[tuple[np.ndarray, np.ndarray, int]], exclude: frozenset[bytes] = frozenset()) -> tuple[int, bool]:
    """Solve and replay one episode (reset with `seed`), appending the samples to `into`:
    (env steps taken, whether every walker ended on its goal with no conflict); a layout in
    `exclude` is skipped: (0, False), nothing stepped or recorded. On a slippery lake a slip takes
    a walker off the plan: the replay stops there (what follows would label states the plan never
    reached), and so it does when the step limit cuts the plan short: (steps, False) both."""
    obs, infos = env.reset(seed=seed)
    agents = list(env.possible_agents)
    holes, starts, goals = layout(env, blocked)
    if layout_key(holes, starts, goals) in exclude:
        return 0, False
    plan = solve(holes, starts, goals).positions()
    actions = plan_actions(plan, action_names)
    steps = 0
    for t, joint in enumerate(actions):
        if not env.agents:  # cut by the step limit
            return steps, False
        for i, a in enumerate(agents):
            mask = np.asarray(infos[a]["action_mask"], dtype=bool)
            if not mask[joint[i]]:
                raise RuntimeError(f"seed {seed}: the plan's {action_names[joint[i]]} for {a} is illegal in the env")
            if mask.sum() > 1:
                into.append((np.asarray(obs[a], dtype=np.float32), mask, int(joint[i])))
        obs, _, _, _, infos = env.step({a: int(joint[i]) for i, a in enumerate(agents)})
        steps += 1
        if not np.array_equal(np.asarray(env.v.pos), plan[t + 1]):  # a slip, or a plan the env does not follow
            return steps, False
    v = env.v
    return steps, bool(np.asarray(v.reached).all() and not np.asarray(v.clashed).any())


def make_demos(spec: Any, params: dict[str, Any] | list[dict[str, Any]], episodes: int, seed: int,
               exclude: frozenset[bytes] = frozenset()) -> Demos:
    """`episodes` solved-and-replayed episodes of `spec`, spread round-robin over `params` (one
    config or a list, as a training run's); reset k uses seed `seed + k`, and a reset that draws a
    layout in `exclude` (`layout_key`) is passed over for the next. Raises if a replay on a lake
    without slip and with steps enough for the plan does not end with every walker home and no
    conflict (the plan and env disagree); on a slippery lake, or with a step limit shorter than the
    plan, a replay ends where it leaves the plan, with what it recorded until then."""
    from gymwright.compile import compile_spec

    configs = params if isinstance(params, list) else [params]
    built = []
    for p in configs:
        compiled = compile_spec(spec, dict(p))
        env = compiled.parallel_env()
        values = compiled.checked.params
        exact = not values.get("slip") and "max_steps" in values  # a replay must end as its plan does
        built.append((env, np.asarray(compiled.module.GRID_BLOCKED, dtype=bool), exact, values.get("max_steps", 0)))
    names = action_names(spec)
    samples: list[tuple[np.ndarray, np.ndarray, int]] = []
    env_steps, done, k = 0, 0, 0
    while done < episodes:
        env, blocked, exact, limit = built[done % len(built)]
        steps, ok = demo_episode(env, blocked, names, seed + k, samples, exclude)
        k += 1
        if steps == 0:  # an excluded layout
            continue
        if not ok and exact and steps < limit:
            raise RuntimeError(f"episode seed {seed + k - 1}: the CBS plan replayed without every walker home")
        env_steps, done = env_steps + steps, done + 1
    obs, masks, acts = zip(*samples, strict=True)
    return Demos(np.stack(obs), np.stack(masks), np.array(acts, dtype=np.int64), env_steps, episodes)


RELABEL_NODE_LIMIT = 2000
"""CBS constraint-tree nodes per relabelled state (past it the state gets no label)"""


def expert_plan(holes: np.ndarray, pos: np.ndarray, goals: np.ndarray, parked: np.ndarray) -> np.ndarray | None:
    """(T + 1, N, 2) optimal positions from `pos` on (parked walkers stay, as obstacles), or None
    when no plan is left or the search hits its limit."""
    moving = ~parked
    if not moving.any():
        return None
    walls = holes.copy()
    walls[pos[parked, 0], pos[parked, 1]] = True
    try:
        sub = solve(walls, pos[moving], goals[moving], node_limit=RELABEL_NODE_LIMIT).positions()
    except MapfError:  # unsolvable from here, or past the node limit
        return None
    plan = np.repeat(pos[None], len(sub), axis=0)
    plan[:, moving] = sub
    return plan


def relabel_episode(env: Any, blocked: np.ndarray, action_names: list[str], policy: Any, seed: int,
                    into: list[tuple[np.ndarray, np.ndarray, int]]) -> int:
    """`policy` plays one episode (reset with `seed`, actions sampled); every walker that still has
    a choice in a state with a plan left is labelled with the plan's action (appended to `into`).
    The plan is kept while the walkers follow it and searched again when they leave it. Returns
    the env steps taken."""
    obs, infos = env.reset(seed=seed)
    agents = list(env.possible_agents)
    holes, _, goals = layout(env, blocked)
    index = {name: k for k, name in enumerate(action_names)}
    plan, at, steps = None, 0, 0
    while env.agents:
        v = env.v
        pos = np.asarray(v.pos).copy()
        if plan is None or at + 1 >= len(plan) or not np.array_equal(plan[at], pos):
            plan, at = expert_plan(holes, pos, goals, np.asarray(v.reached) | np.asarray(v.fell)), 0
        o = np.stack([np.asarray(obs[a], dtype=np.float32) for a in agents])
        m = np.stack([np.asarray(infos[a]["action_mask"], dtype=bool) for a in agents])
        if plan is not None:
            for i in range(len(agents)):
                label = index[MOVES[tuple(int(x) for x in plan[at + 1, i] - plan[at, i])]]
                if m[i].sum() > 1 and m[i, label]:
                    into.append((o[i], m[i], label))
        acts = policy.act(o[None], m[None])[0]
        obs, _, _, _, infos = env.step({a: int(acts[i]) for i, a in enumerate(agents)})
        at, steps = at + 1, steps + 1
    return steps


def relabel_demos(spec: Any, params: dict[str, Any], episodes: int, seed: int, checkpoint: str) -> Demos:
    """`episodes` episodes of `params` played by the policy of `checkpoint`, labelled by CBS
    (`relabel_episode`; reset k uses seed `seed + k`, the policy's draws are seeded by `seed`)."""
    import torch

    from gymwright.compile import compile_spec

    compiled = compile_spec(spec, dict(params))
    env, blocked = compiled.parallel_env(), np.asarray(compiled.module.GRID_BLOCKED, dtype=bool)
    policy, names = _policy(checkpoint), action_names(spec)
    samples: list[tuple[np.ndarray, np.ndarray, int]] = []
    torch.manual_seed(seed)
    env_steps = sum(relabel_episode(env, blocked, names, policy, seed + k, samples) for k in range(episodes))
    if not samples:
        raise RuntimeError(f"{episodes} relabelled episodes of {params} gave no labelled state")
    obs, masks, acts = zip(*samples, strict=True)
    return Demos(np.stack(obs), np.stack(masks), np.array(acts, dtype=np.int64), env_steps, episodes)


@functools.lru_cache(maxsize=2)
def _policy(checkpoint: str) -> Any:
    """The policy of a checkpoint, loaded once for every bucket of a stage's mixture."""
    from gymwright.train import load_policy

    return load_policy(checkpoint)


def action_names(spec: Any) -> list[str]:
    """The walker's action names in the order of its action indices."""
    from gymwright.spec.loader import read_data

    data = read_data(spec)[0] if not isinstance(spec, dict) else spec
    return walker_actions(data)


def planner_for(data: dict[str, Any]) -> Any:
    """The built-in demonstrator (`make_demos`: CBS plans replayed through the env) for a spec of
    MAPF-FrozenLake's form (a `walker` role on a grid with solved layouts, `reached` and `clashed`
    walker state), or None for another spec."""
    return make_demos if is_mapf_form(data) else None
