"""Partners: in a share of a training batch's copies, one agent is played by a fixed partner.

A designer lever (`gymwright.engineer.levers`, `partners`): the learners share the world with a
walker that does the right thing, so they meet, in training, the situations a good partner makes
(one walker letting the other pass, an order kept) without having to invent both sides of it at
once. `TrainConfig.partners` is the share of copies with a partner, `TrainConfig.partner` what
plays it:

- `planner`: for a grid spec with solved layouts (MAPF-FrozenLake's form), the partner follows its
  part of the optimal joint plan of the drawn layout (Conflict-Based Search, `gymwright.mapf`);
  when the learners push it off its plan (a blocked move), it goes on along a shortest route of
  its own around the holes and parked walkers;
- a scripted baseline of the spec, `random`, or a frozen run (as `--npc` takes them,
  `gymwright.train.npc`).

The partner is the last agent of the copy (of its own agent count in a padded batch). Its copies
are drawn once per run from the seed, so the same copies keep a partner across episodes. Its
steps stay out of the policy and value losses (`PARTNER` marks them in the rollout), and nothing
changes at evaluation: partners are training scaffolding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from gymwright.errors import GymwrightError
from gymwright.mapf.cbs import solve
from gymwright.mapf.errors import MapfError
from gymwright.mapf.spec_form import MOVES, blocked_tiles, is_mapf_form, layout_key, walker_actions

PARTNER = -2
"""the action recorded in the rollout where a partner acted (the losses leave it out; -1 is a learner
with no legal action)"""


def leaves(benv: Any) -> list[tuple[np.ndarray, Any]]:
    """The generated batch envs inside `benv` (a padded or mixed batch holds several) with the global
    copy indices of each."""
    if not hasattr(benv, "groups"):
        return [(np.arange(len(benv.masks)), benv)]
    out = []
    for copies, env in zip(benv.copies, benv.groups, strict=True):
        out += [(np.asarray(copies)[inner], leaf) for inner, leaf in leaves(env)]
    return out


class Partners:
    """The partners of one training run: which (copy, agent) slots they play, and their actions."""

    def __init__(self, benv: Any, share: float, player: str, spec: Any, roles: list[Any], seed: int) -> None:
        if not 0.0 < share <= 1.0:
            raise GymwrightError(f"partners is {share}; it is a share of the copies, above 0 and at most 1",
                                 path="partners", hint="use e.g. 0.25 (a partner in a quarter of the copies)")
        masks = np.asarray(benv.masks)
        size, n = masks.shape[:2]
        rng = np.random.default_rng([seed, 7])
        chosen = np.sort(rng.choice(size, max(1, round(share * size)), replace=False))
        counts = np.full(size, n)
        for copies, leaf in leaves(benv):
            counts[copies] = int(leaf.N_AGENTS)
        self.slots = np.zeros((size, n), dtype=bool)
        self.slots[chosen, counts[chosen] - 1] = True
        self.actor = (PlanFollower(benv, spec, self.slots) if player == "planner"
                      else _npc_actor(player, benv, roles, spec, seed))
        self._slots_t: torch.Tensor | None = None

    def act(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B, N) the partners' actions in their slots (an illegal choice becomes the first legal one)."""
        acts = self.actor.act(obs, masks)
        m = np.asarray(masks) != 0
        b, i = np.nonzero(self.slots)
        a = acts[b, i]
        ok = (a >= 0) & m[b, i, np.clip(a, 0, m.shape[2] - 1)]
        first = np.where(m[b, i].any(-1), m[b, i].argmax(-1), -1)
        out = np.full(self.slots.shape, -1, dtype=np.int64)
        out[b, i] = np.where(ok, a, first)
        return out

    def substitute(self, actions: torch.Tensor, obs: np.ndarray, masks: np.ndarray) -> None:
        """The partners' actions in place of the policy's in `actions` (B, N), before the env steps."""
        slots = self._slots(actions.device)
        actions[slots] = torch.from_numpy(self.act(obs, masks)[self.slots]).to(actions.device)

    def mark(self, actions: torch.Tensor) -> None:
        """After the step: the partners' places in the rollout marked `PARTNER` (out of the losses)."""
        actions[self._slots(actions.device)] = PARTNER

    def _slots(self, device: torch.device) -> torch.Tensor:
        if self._slots_t is None or self._slots_t.device != device:
            self._slots_t = torch.from_numpy(self.slots).to(device)
        return self._slots_t


def _npc_actor(player: str, benv: Any, roles: list[Any], spec: Any, seed: int) -> Any:
    """A scripted baseline, `random` or a frozen run acting for every walker (only the partner slots are used)."""
    from gymwright.train.npc import FixedPlayers, baselines_of, player_of

    if len(roles) != 1:
        raise GymwrightError(f"partners play the one role of a shared-role spec; this one has {len(roles)} roles",
                             path="partners", hint="use --npc to have a fixed policy play some agents of a role")
    role = roles[0]
    npc = player_of(role.name, player, role, tuple(range(role.start, role.start + role.count)), baselines_of(benv, spec),
                    "partner")
    players = FixedPlayers([npc], len(benv.possible_agents), list(benv.possible_agents), seed)
    players.bind(benv)
    return players


class PlanFollower:
    """The `planner` partner: its part of the optimal joint plan of each copy's layout, then a
    shortest route of its own once it is pushed off that plan (see the module)."""

    def __init__(self, benv: Any, spec: Any, slots: np.ndarray) -> None:
        from gymwright.spec.loader import read_data

        data = spec if isinstance(spec, dict) else read_data(spec)[0]
        if not is_mapf_form(data):
            raise GymwrightError(f"the planner partner needs a grid spec with solved layouts (MAPF-FrozenLake's form); "
                                 f"{data.get('name', '?')!r} is not one", path="partner",
                                 hint="give a scripted baseline of the spec, `random` or a run folder instead")
        index = {name: k for k, name in enumerate(walker_actions(data))}
        self.action = {step: index[name] for step, name in MOVES.items()}
        self.blocked = blocked_tiles(data)
        self.leaves = leaves(benv)
        self.slots = slots
        self.routes: dict[int, list[tuple[int, int]]] = {}  # copy -> its partner's cells from here on
        self._plans: dict[bytes, np.ndarray] = {}  # layout -> the optimal joint plan's positions

    def act(self, obs: Any, masks: Any) -> np.ndarray:
        out = np.full(self.slots.shape, -1, dtype=np.int64)
        for copies, leaf in self.leaves:
            v = leaf.v
            mine = self.slots[copies]
            for local in np.nonzero(mine.any(1))[0]:
                b, i = int(copies[local]), int(np.nonzero(mine[local])[0][0])
                out[b, i] = self._step(b, i, int(local), v)
        return out

    def _step(self, b: int, i: int, k: int, v: Any) -> int:
        pos = np.asarray(v.pos[k])
        here = (int(pos[i, 0]), int(pos[i, 1]))
        if bool(v.reached[k, i]) or bool(v.fell[k, i]):
            return self.action[(0, 0)]
        if int(v.t[k]) == 0:
            plan = self._plan(self.blocked[np.asarray(v.tiles[k])], pos, np.asarray(v.goal[k]))
            self.routes[b] = [(int(r), int(c)) for r, c in plan[:, i]] if plan is not None else [here]
        route = self.routes.get(b)
        if not route or route[0] != here:  # pushed off its plan: a route of its own from here
            holes = self.blocked[np.asarray(v.tiles[k])]
            route = self.routes[b] = self._alone(holes, pos, np.asarray(v.goal[k]), np.asarray(v.reached[k]), i)
        nxt = route[1] if len(route) > 1 else here
        self.routes[b] = route[1:] if len(route) > 1 else route
        return self.action[(nxt[0] - here[0], nxt[1] - here[1])]

    def _plan(self, holes: np.ndarray, pos: np.ndarray, goals: np.ndarray) -> np.ndarray | None:
        key = layout_key(holes, pos, goals)
        if key not in self._plans:
            try:
                self._plans[key] = solve(holes, pos, goals).positions()
            except MapfError:
                return None
        return self._plans[key]

    def _alone(self, holes: np.ndarray, pos: np.ndarray, goals: np.ndarray, parked: np.ndarray,
               i: int) -> list[tuple[int, int]]:
        """A shortest route of walker `i` to its goal around the holes and the parked walkers (its cells, here first)."""
        walls = holes.copy()
        others = parked.copy()
        others[i] = False
        walls[pos[others, 0], pos[others, 1]] = True
        here = (int(pos[i, 0]), int(pos[i, 1]))
        try:
            cells = solve(walls, pos[i:i + 1], goals[i:i + 1]).positions()[:, 0]
        except MapfError:  # no way left: it waits
            return [here]
        return [(int(r), int(c)) for r, c in cells]
