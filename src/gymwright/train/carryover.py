"""Carry a trained policy over to an edited spec: what persists keeps its weights.

When the engineer edits a spec (a new rule, action, feature or role), the next stage need not
start from scratch. `carry_over` matches the parent's and the child's networks by name:

- roles by name; a role only the child has starts fresh;
- observation inputs by feature name and size (a feature whose size changed is a new input):
  a kept input keeps its first-layer weights, a new one starts with zero weights (so the
  network computes what it did until training gives the input a use), a removed one is dropped;
- the agent-index one-hot (when the networks read it) by index within the role;
- actions by choice name and argument values: a kept action keeps its output row, a new one
  starts with zero weights and a logit `NEW_ACTION_LOGIT` below the parent's lowest output bias
  (rarely drawn at first), a removed one is dropped;
- a choice that gained an argument (a split that now divides two flavours): each of its actions
  starts from the parent's action with the same values of the arguments both have, its logit
  lowered by log(k) for the k actions that share that parent, so the choice is drawn as often as
  before and the new argument uniformly;
- hidden layers as they are (same sizes); value normalizers by role.

A centralized (MAPPO) critic reads the global state, whose layout an edit changes with no names
to match, so it restarts (the actors carry over). Where nothing carries over (no role or no
input in common, other hidden sizes) there is no warm start, and `CarryOver.restart` says why.
The result is written as a checkpoint of the child spec, for `TrainConfig.init_from`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from gymwright.compile.batch import compile_batch
from gymwright.compile.build import check
from gymwright.spec.checked import CRole
from gymwright.train import checkpoint as ck
from gymwright.train.normalize import ValueNorm
from gymwright.train.policy import ActorCritic, Role, roles_of
from gymwright.train.rollout import state_dim

NEW_ACTION_LOGIT = 3.0
"""A new action's output bias sits this far below the parent's lowest one (e^-3: about 5% odds)."""


@dataclass
class RoleCarry:
    """What carried over for one role."""

    role: str
    kept_inputs: list[str] = field(default_factory=list)
    new_inputs: list[str] = field(default_factory=list)
    dropped_inputs: list[str] = field(default_factory=list)
    kept_actions: list[str] = field(default_factory=list)
    extended_actions: list[str] = field(default_factory=list)
    """actions of a choice that gained an argument, each started from the parent's action it extends"""
    new_actions: list[str] = field(default_factory=list)
    dropped_actions: list[str] = field(default_factory=list)
    critic: str = "kept"  # "kept", or why it restarted


@dataclass
class CarryOver:
    """The outcome: per role what was kept, or `restart` (why nothing could carry over)."""

    roles: list[RoleCarry]
    new_roles: list[str]
    dropped_roles: list[str]
    restart: str | None = None
    checkpoint: str | None = None

    def summary(self) -> str:
        if self.restart:
            return f"policy restarts from scratch: {self.restart}"
        parts = [f"{r.role}: kept {len(r.kept_inputs)} inputs and {len(r.kept_actions)} actions"
                 + (f", new inputs {r.new_inputs}" if r.new_inputs else "")
                 + (f", dropped inputs {r.dropped_inputs}" if r.dropped_inputs else "")
                 + (f", {len(r.extended_actions)} actions extend the parent's by a new argument"
                    if r.extended_actions else "")
                 + (f", new actions {r.new_actions}" if r.new_actions else "")
                 + (f", dropped actions {r.dropped_actions}" if r.dropped_actions else "")
                 + ("" if r.critic == "kept" else f", critic restarts ({r.critic})") for r in self.roles]
        parts += [f"{n}: new role, starts fresh" for n in self.new_roles]
        parts += [f"{n}: role removed" for n in self.dropped_roles]
        return "policy carried over; " + "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {"restart": self.restart, "new_roles": self.new_roles, "dropped_roles": self.dropped_roles,
                "checkpoint": self.checkpoint, "roles": [vars(r) for r in self.roles]}


def input_names(role: CRole) -> list[str]:
    """One name per observation input: the feature name, with `[i]` for features of several values
    (`name#size` keys the feature, so a feature whose size changed matches nothing)."""
    return [f"{f.name}#{f.size}" + (f"[{i}]" if f.size > 1 else "") for f in role.features for i in range(f.size)]


def action_names(role: CRole) -> list[str]:
    """One name per flat action: the choice, with its argument values."""
    return [_action_name(c.name, combo) for c in role.choices for combo in c.combos()]


def _action_name(choice: str, combo: dict[str, Any]) -> str:
    """`choice(arg=value, ...)`, or the choice alone when it takes no arguments."""
    args = ", ".join(f"{k}={v!r}" for k, v in combo.items())
    return f"{choice}({args})" if combo else choice


def _extensions(old: CRole, new: CRole, taken: set[int]) -> list[tuple[int, int, float]]:
    """(new index, old index, logit offset) of each new action (not in `taken`) whose choice gained
    arguments: it extends the parent's action with the same values of the parent's arguments."""
    at = {name: i for i, name in enumerate(action_names(old))}
    parents: dict[int, int] = {}
    for c in new.choices:
        before = next((o for o in old.choices if o.name == c.name), None)
        if before is None or not before.args or not {a.name for a in before.args} < {a.name for a in c.args}:
            continue
        for j, combo in enumerate(c.combos()):
            name = _action_name(c.name, {a.name: combo[a.name] for a in before.args})
            if c.offset + j not in taken and name in at:
                parents[c.offset + j] = at[name]
    shares = Counter(parents.values())
    return [(j, i, -math.log(shares[i])) for j, i in parents.items()]


def _first_config(params: Any) -> dict[str, Any]:
    return dict(params[0]) if isinstance(params, list) and params else dict(params or {})


def _columns(old: list[str], new: list[str]) -> list[tuple[int, int]]:
    """(new index, old index) of every name in both lists."""
    at = {name: i for i, name in enumerate(old)}
    return [(j, at[name]) for j, name in enumerate(new) if name in at]


def _index_names(role: Role, reads_index: bool) -> list[str]:
    return [f"agent_index[{i}]" for i in range(role.count)] if reads_index else []


def _take_columns(w: torch.Tensor, cols: list[tuple[int, int]], width: int) -> torch.Tensor:
    out = torch.zeros(w.shape[0], width, dtype=w.dtype)
    for j, i in cols:
        out[:, j] = w[:, i]
    return out


def _take_rows(w: torch.Tensor, b: torch.Tensor, rows: list[tuple[int, int, float]], height: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Kept (and extended) rows as they were, their bias moved by the row's offset; new rows with
    zero weights and a low bias."""
    out_w = torch.zeros(height, w.shape[1], dtype=w.dtype)
    out_b = torch.full((height,), float(b.min()) - NEW_ACTION_LOGIT, dtype=b.dtype)
    for j, i, offset in rows:
        out_w[j], out_b[j] = w[i], b[i] + offset
    return out_w, out_b


def _map_mlp(new: torch.nn.Sequential, old: dict[str, torch.Tensor], prefix: str, cols: list[tuple[int, int]],
             rows: list[tuple[int, int, float]] | None) -> None:
    """Copy an MLP: the first layer's input columns by `cols`, the hidden layers as they are, the
    last layer's output rows by `rows` (None: all of them)."""
    linears = [(k, m) for k, m in new.named_children() if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for n, (k, lin) in enumerate(linears):
            w, b = old[f"{prefix}.{k}.weight"], old[f"{prefix}.{k}.bias"]
            if n == 0:
                w = _take_columns(w, cols, lin.in_features)
            if n == len(linears) - 1 and rows is not None:
                w, b = _take_rows(w, b, rows, lin.out_features)
            lin.weight.copy_(w)
            lin.bias.copy_(b)


def _carry_role(net: Any, old_state: dict[str, torch.Tensor], k: int, old_role: Role, old_cr: CRole, new_cr: CRole,
                reads_index: bool, centralized: bool) -> RoleCarry:
    role = net.role
    old_in = input_names(old_cr) + _index_names(old_role, reads_index)
    new_in = input_names(new_cr) + _index_names(role, reads_index)
    old_act, new_act = action_names(old_cr), action_names(new_cr)
    cols, kept = _columns(old_in, new_in), _columns(old_act, new_act)
    extended = _extensions(old_cr, new_cr, {j for j, _ in kept})
    _map_mlp(net.actor, old_state, f"nets.{k}.actor", cols, [(j, i, 0.0) for j, i in kept] + extended)
    ext = {j for j, _, _ in extended}
    used = {i for _, i in kept} | {i for _, i, _ in extended}
    rc = RoleCarry(role.name, [n for n in new_in if n in old_in], [n for n in new_in if n not in old_in],
                   [n for n in old_in if n not in new_in], [a for a in new_act if a in old_act],
                   [new_act[j] for j in sorted(ext)],
                   [a for j, a in enumerate(new_act) if a not in old_act and j not in ext],
                   [a for i, a in enumerate(old_act) if i not in used])
    if centralized:
        rc.critic = "a centralized critic reads the global state, whose layout changed"
    else:
        _map_mlp(net.critic, old_state, f"nets.{k}.critic", cols, None)
    return rc


def _child_roles(spec: Any, params: dict[str, Any], centralized: bool) -> tuple[list[Role], int, int]:
    benv = compile_batch(spec, dict(params), batch_size=1)
    benv.reset(seed=0)
    return roles_of(benv), int(benv.N_AGENTS), state_dim(benv, centralized)


def carry_over(parent_checkpoint: str | Path, parent_spec: Any, child_spec: Any, child_params: dict[str, Any],
               out: str | Path) -> CarryOver:
    """Translate the parent's policy onto `child_spec` (with `child_params`) and write it to `out`
    (a checkpoint for `TrainConfig.init_from`); or say why it must restart (nothing written)."""
    saved = ck.load(parent_checkpoint)
    sha, name = ck.spec_identity(child_spec)
    if saved["spec_hash"] != ck.spec_identity(parent_spec)[0]:
        raise ck.CheckpointError(f"{saved['path']} was not trained on the parent spec given ({saved['spec_name']})",
                                 hint="pass the spec the checkpoint was trained on as the parent")
    old_cs, new_cs = check(parent_spec, _first_config(saved["params"])), check(child_spec, child_params)
    centralized = saved["algo"] == "mappo"
    roles, n_agents, s_dim = _child_roles(child_spec, child_params, centralized)
    reads_index = bool(saved.get("agent_index", True))
    old_roles = [Role(*r) for r in saved["roles"]]
    model = ActorCritic(roles, s_dim, tuple(saved["hidden"]), centralized, saved["activation"], reads_index)
    old_by_name = {r.name: (k, r) for k, r in enumerate(old_roles)}
    old_cr = {r.name: r for r in old_cs.roles}
    new_cr = {r.name: r for r in new_cs.roles}
    carried, norms = [], []
    for net in model.nets:
        if net.role.name not in old_by_name:
            norms.append(ValueNorm().state_dict())
            continue
        k, old_role = old_by_name[net.role.name]
        carried.append(_carry_role(net, saved["model"], k, old_role, old_cr[net.role.name], new_cr[net.role.name],
                                   reads_index, centralized))
        norms.append(saved["value_norms"][k])
    result = CarryOver(carried, [r.name for r in roles if r.name not in old_by_name],
                       [r.name for r in old_roles if r.name not in {x.name for x in roles}])
    result.restart = _restart_reason(result)
    if result.restart is None:
        result.checkpoint = str(ck.save(Path(out), {
            "spec_hash": sha, "spec_name": name, "params": [dict(child_params)],
            "roles": [tuple(vars(r).values()) for r in roles], "n_agents": n_agents, "state_dim": s_dim,
            "algo": saved["algo"], "hidden": list(saved["hidden"]), "activation": saved["activation"],
            "agent_index": reads_index, "config": dict(saved.get("config", {})), "update": 0, "env_steps": 0,
            "model": model.state_dict(), "value_norms": norms, "carried_from": str(saved["path"]),
            "carry_over": result.as_dict()}))
    return result


def _restart_reason(result: CarryOver) -> str | None:
    if not result.roles:
        return "no role of the parent spec is in the edited spec"
    if not any(r.kept_inputs for r in result.roles):
        return "no observation input of the parent spec persists in the edited spec"
    if not any(r.kept_actions or r.extended_actions for r in result.roles):
        return "no action of the parent spec persists in the edited spec"
    return None
