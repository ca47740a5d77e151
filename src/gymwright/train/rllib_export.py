"""RLlib's PPO modules and the built-in policy format: weights both ways, and the run's checkpoint.pt.

An RLlib run (`gymwright.train.rllib`) trains one `MaskedPPOTorchRLModule` per role. Each has an
actor encoder (a Linear and an activation per hidden layer) and a `pi` head (one Linear), a critic
encoder and a `vf` head (one Linear), all reading the agent's observation (the mask appended to
it only masks the logits). The built-in `RoleNet` of a role without `agent_index` is the same
stack: `actor` is the actor encoder's layers then `pi`, `critic` the critic encoder's then `vf`.
So the weights copy over one to one, and the exported policy gives RLlib's action probabilities.

The built-in critic predicts values normalized by a `ValueNorm`: exported, the norm is the
identity (mean 0, variance 1), so the values are RLlib's; imported (an RLlib run warm-started
from a built-in checkpoint, or from the previous stage of a curriculum), the norm is folded into
the `vf` head (`w * std`, `b * std + mean`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from gymwright.train import checkpoint as ck
from gymwright.train.normalize import ValueNorm
from gymwright.train.policy import ActorCritic, Role, roles_of
from gymwright.train.rollout import make_env, state_dim

PARTS = {"actor": ("encoder.actor_encoder.net.mlp", "pi.net.mlp"),
         "critic": ("encoder.critic_encoder.net.mlp", "vf.net.mlp")}
"""per built-in net: the RLlib key prefixes of its encoder layers and of its head"""


def layer_pairs(n_hidden: int) -> list[tuple[str, str]]:
    """(built-in `RoleNet` prefix, RLlib module prefix) of every Linear layer, actor then critic."""
    pairs = []
    for part, (encoder, head) in PARTS.items():
        pairs += [(f"{part}.{2 * k}", f"{encoder}.{2 * k}") for k in range(n_hidden)]
        pairs.append((f"{part}.{2 * n_hidden}", f"{head}.0"))
    return pairs


def to_builtin(modules: Mapping[str, Mapping[str, Any]], roles: list[Role], n_hidden: int) -> dict[str, torch.Tensor]:
    """The `ActorCritic` state dict of the RLlib modules' weights (module id = role name)."""
    state = {}
    for i, role in enumerate(roles):
        if role.name not in modules:
            raise ck.CheckpointError(f"the RLlib run has no module for role {role.name!r} (it has {sorted(modules)})",
                                     hint="export from a run of this spec: one module per role")
        weights = modules[role.name]
        for ours, theirs in layer_pairs(n_hidden):
            for p in ("weight", "bias"):
                state[f"nets.{i}.{ours}.{p}"] = torch.as_tensor(weights[f"{theirs}.{p}"]).detach().float().clone()
    return state


def from_builtin(model: Mapping[str, torch.Tensor], norms: list[Mapping[str, torch.Tensor]], roles: list[Role],
                 n_hidden: int) -> dict[str, dict[str, torch.Tensor]]:
    """Per role, the RLlib module weights of a built-in `ActorCritic` state dict, its value norm
    folded into the `vf` head."""
    modules: dict[str, dict[str, torch.Tensor]] = {}
    for i, role in enumerate(roles):
        weights = {f"{theirs}.{p}": model[f"nets.{i}.{ours}.{p}"].detach().float().clone()
                   for ours, theirs in layer_pairs(n_hidden) for p in ("weight", "bias")}
        norm = ValueNorm()
        norm.load_state_dict(dict(norms[i]))
        std, mean = float(norm.std), float(norm.mean)
        weights["vf.net.mlp.0.weight"] = weights["vf.net.mlp.0.weight"] * std
        weights["vf.net.mlp.0.bias"] = weights["vf.net.mlp.0.bias"] * std + mean
        modules[role.name] = weights
    return modules


def policy_layout(spec: Any, params: dict[str, Any]) -> tuple[list[Role], int, int]:
    """(roles, agents, state width) of the built-in policy for `spec` with `params` (the batch
    env's layout, which `play` and `evaluate` check a checkpoint against)."""
    benv = make_env(spec, [params], 1)
    benv.reset(seed=0)  # state() reads the variables a reset sets
    return roles_of(benv), int(benv.masks.shape[1]), state_dim(benv, False)


def export_policy(out: Path, spec: Any, params: dict[str, Any] | list[dict[str, Any]],
                  modules: Mapping[str, Mapping[str, Any]], *,
                  hidden: tuple[int, ...], activation: str, history: list[dict[str, Any]], env_steps: int,
                  iterations: int, config: dict[str, Any]) -> Path:
    """Write OUT/checkpoint.pt in the built-in format (`gymwright.train.checkpoint`) from the RLlib
    modules' weights: `evaluate`, `report`, `play` and a warm start read it as any built-in run's.
    `params` is the run's config, or its configs per env copy (the layout is the first one's).

    The weights are loaded into an `ActorCritic` first (strictly), so a module whose shapes are
    not the policy's is refused here, not when the file is read."""
    sha, name = ck.spec_identity(spec)
    configs = [dict(p) for p in params] if isinstance(params, list) else [dict(params)]
    roles, n_agents, width = policy_layout(spec, configs[0])
    model = ActorCritic(roles, width, tuple(hidden), False, activation, agent_index=False)
    try:
        model.load_state_dict(to_builtin(modules, roles, len(hidden)))
    except RuntimeError as e:  # shapes: another spec, obs layout or hidden sizes
        raise ck.CheckpointError(f"the RLlib modules do not fit the built-in policy of {name}: {str(e)[:300]}",
                                 hint="export from a run of this spec and params, with the run's hidden sizes") from None
    return ck.save(Path(out) / ck.CHECKPOINT, {
        "spec_hash": sha, "spec_name": name, "params": configs,
        "roles": [tuple(vars(r).values()) for r in roles], "n_agents": n_agents, "state_dim": width,
        "algo": "ippo", "hidden": list(hidden), "activation": activation, "agent_index": False,
        "backend": "rllib", "config": config, "update": iterations, "env_steps": env_steps,
        "model": model.state_dict(), "value_norms": [ValueNorm().state_dict() for _ in roles],
        "history": history,
    })


def warm_weights(path: str | Path, spec: Any, roles: list[Role], *, hidden: tuple[int, ...],
                 activation: str) -> dict[str, dict[str, torch.Tensor]]:
    """Per role, RLlib module weights from a built-in checkpoint (or run folder) to start from:
    same spec, and per role the same observation and action sizes (agent counts may differ: a
    role's agents share one module, which reads no agent index)."""
    saved = ck.load(path)
    sha, _ = ck.spec_identity(spec)
    ck.check_fits(saved, sha, None)
    where = saved["path"]
    if saved["algo"] != "ippo" or saved.get("agent_index", True):
        raise ck.CheckpointError(f"{where} is a {saved['algo']} policy{' with agent_index' if saved.get('agent_index', True) else ''}; "
                                 "an RLlib run (one module per role, on each agent's observation) starts only from an IPPO "
                                 "policy without agent_index", hint="warm-start from an RLlib run, or a built-in run with "
                                 "--algo ippo --no-agent-index")
    if list(saved["hidden"]) != list(hidden) or saved["activation"] != activation:
        raise ck.CheckpointError(f"{where} has hidden layers {saved['hidden']} ({saved['activation']}); this RLlib run "
                                 f"has {list(hidden)} ({activation})", hint="warm-start with the same hidden sizes and activation")
    have = {r[0]: (r[3], r[4]) for r in saved["roles"]}
    want = {r.name: (r.obs_dim, r.n_actions) for r in roles}
    if have != want:
        raise ck.CheckpointError(f"{where} has roles (obs dim, actions) {have}, these params give {want}",
                                 hint=f"warm-start on params whose shapes match; it was trained with {saved['params']}")
    order = [Role(*r) for r in saved["roles"]]
    return from_builtin(saved["model"], saved["value_norms"], order, len(hidden))


__all__ = ["export_policy", "from_builtin", "layer_pairs", "policy_layout", "to_builtin", "warm_weights"]
