"""Checkpoints: everything a run needs to continue bit-for-bit, written atomically.

A checkpoint (`out/checkpoint.pt`, a torch pickle) holds the networks, the optimizer, the value
normalizers, the RNG states (torch, numpy, Python), the whole batch env state (variables,
per-copy seeds, episode and step counters, running returns and metrics, the obs and mask
buffers), the update count and history, plus what the policy was trained on: the spec's
sha256 (`gymwright.store.spec_hash` of its raw data), its name, the params and the layout of
roles. Checkpoints are pickles: load only those you wrote.
"""

from __future__ import annotations

import copy
import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gymwright.compile.mixed import MixedBatchEnv
from gymwright.errors import GymwrightError
from gymwright.spec.loader import read_data
from gymwright.store import spec_hash
from gymwright.train.policy import ActorCritic, Policy, Role

FORMAT = 1
CHECKPOINT = "checkpoint.pt"
ENV_SKIP = ("p", "_mask_at")  # rebuilt from the params, which the checkpoint pins


class CheckpointError(GymwrightError):
    """A checkpoint is missing, unreadable, or was trained on another spec or structure."""


def spec_identity(spec: Any) -> tuple[str, str]:
    """(sha256, name) of a spec given as a library name, a file, YAML text or a dict."""
    data, _ = read_data(spec)
    return spec_hash(data), str(data.get("name", "?"))


# --------------------------------------------------------------------------- env state
def env_state(benv: Any) -> dict[str, Any]:
    """A deep copy of the batch env's state (arrays, and the attribute bags `v` and `r`).

    A `MixedBatchEnv` (configs with different structural params) saves each of its generated
    envs this way, plus its own obs and mask buffers.
    """
    if isinstance(benv, MixedBatchEnv):
        return {"groups": ("groups", [env_state(g) for g in benv.groups]),
                "obs_buf": ("array", benv.obs_buf.copy()), "masks": ("array", benv.masks.copy())}
    out: dict[str, Any] = {}
    for k, x in vars(benv).items():
        if k in ENV_SKIP or callable(x):
            continue
        if isinstance(x, np.ndarray):
            out[k] = ("array", x.copy())
        elif hasattr(x, "__dict__"):
            out[k] = ("object", copy.deepcopy(vars(x)))
        else:
            out[k] = ("value", copy.deepcopy(x))
    return out


def restore_env_state(benv: Any, state: dict[str, Any]) -> None:
    """Put a state from `env_state` back into an env of the same spec, params and size."""
    for k, (kind, x) in state.items():
        if kind == "array":
            cur = getattr(benv, k, None)
            if isinstance(cur, np.ndarray) and cur.shape == x.shape and cur.dtype == x.dtype:
                cur[...] = x  # in place: the env hands this buffer out
            else:
                setattr(benv, k, x.copy())
        elif kind == "groups":
            if len(x) != len(benv.groups):
                raise CheckpointError(f"the saved env has {len(x)} groups of structural params, this one {len(benv.groups)}",
                                      hint="restore into an env built with the same params")
            for g, saved in zip(benv.groups, x, strict=True):
                restore_env_state(g, saved)
        elif kind == "object":
            obj = getattr(benv, k)
            obj.__dict__.clear()
            obj.__dict__.update(copy.deepcopy(x))
        else:
            setattr(benv, k, copy.deepcopy(x))


# --------------------------------------------------------------------------- RNG
def rng_state() -> dict[str, Any]:
    return {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}


def restore_rng(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])


# --------------------------------------------------------------------------- files
def save(path: Path, data: dict[str, Any]) -> Path:
    """Write atomically: a temporary file in the same folder, fsync, then rename over `path`."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as f:
        torch.save({"format": FORMAT, **data}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def load(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT
    if not path.exists():
        raise CheckpointError(f"no checkpoint at {path}", hint="train first (`gymwright train SPEC --out DIR`), or pass the run folder or its checkpoint.pt")
    try:
        data = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as e:  # a truncated or foreign file
        raise CheckpointError(f"{path} is not a readable gymwright checkpoint ({e.__class__.__name__}: {e})") from e
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a gymwright checkpoint (format {FORMAT})")
    data["path"] = str(path)
    return data


def check_fits(ckpt: dict[str, Any], spec_sha: str, roles: list[Role] | None, params: list[dict[str, Any]] | None = None) -> None:
    """Raise `CheckpointError` unless the checkpoint was trained on this spec (and structure)."""
    where = ckpt.get("path", "checkpoint")
    if ckpt["spec_hash"] != spec_sha:
        raise CheckpointError(
            f"{where} was trained on spec {ckpt['spec_name']} (sha256 {ckpt['spec_hash'][:12]}), "
            f"not on this spec (sha256 {spec_sha[:12]})",
            hint=f"pass the spec it was trained on ({ckpt['spec_name']}), or train a policy on this one",
        )
    if roles is not None and [tuple(vars(r).values()) for r in roles] != [tuple(r) for r in ckpt["roles"]]:
        raise CheckpointError(
            f"{where} was trained on roles {ckpt['roles']} (name, first agent, count, obs dim, actions), "
            f"but these params give {[tuple(vars(r).values()) for r in roles]}",
            hint=f"use the params it was trained on: {ckpt['params']}",
        )
    if params is not None and params != ckpt["params"]:
        raise CheckpointError(
            f"{where} was trained with params {ckpt['params']}, not {params}",
            hint="resume with the same params, or train into another --out folder",
        )


def policy_from(ckpt: dict[str, Any]) -> Policy:
    roles = [Role(*r) for r in ckpt["roles"]]
    model = ActorCritic(roles, ckpt["state_dim"], tuple(ckpt["hidden"]), ckpt["algo"] == "mappo", ckpt["activation"],
                        ckpt.get("agent_index", True))  # checkpoints before the option had the index
    model.load_state_dict(ckpt["model"])
    model.eval()
    info = {k: ckpt[k] for k in ("spec_hash", "spec_name", "params", "algo", "update", "env_steps", "path")}
    return Policy(model, ckpt["n_agents"], info)


def load_policy(path: str | Path, spec: Any = None) -> Policy:
    """The policy of a checkpoint (a file, or a run folder holding checkpoint.pt).

    With `spec`, first check that the checkpoint was trained on that spec (same sha256).
    """
    ckpt = load(path)
    if spec is not None:
        check_fits(ckpt, spec_identity(spec)[0], None)
    return policy_from(ckpt)
