"""Checkpoints: everything a run needs to continue bit-for-bit, written atomically, loaded safely.

A checkpoint (`out/checkpoint.pt`) holds the networks, the optimizer, the value normalizers,
the RNG states (torch, numpy, Python), the whole batch env state (variables, per-copy seeds,
episode and step counters, running returns and metrics, the obs and mask buffers), the update
count and history, plus what the policy was trained on: the spec's sha256
(`gymwright.store.spec_hash` of its raw data), its name, the params and the layout of roles.

Format 2 holds nothing but torch tensors and plain data (dicts, lists, tuples, str, int, float,
bool, None): numpy arrays and scalars are stored as their dtype, shape and raw bytes (a uint8
tensor), so they come back bit-for-bit. It is read with `torch.load(weights_only=True)`, which
builds no other object and so cannot run code hidden in the file: a file that needs anything
else (a planted pickle, or a format-1 checkpoint, which was a full pickle with numpy objects
in it) is refused with a `CheckpointError`. A format-1 checkpoint that you wrote yourself can
be converted with `python -m gymwright.train.checkpoint --convert-trusted PATH`.
"""

from __future__ import annotations

import copy
import io
import os
import pickle
import random
import re
import sys
import warnings
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gymwright.atomic import write_atomic
from gymwright.codemode.source import code_identity, is_code_source
from gymwright.compile.mixed import MixedBatchEnv
from gymwright.errors import GymwrightError
from gymwright.spec.loader import read_data
from gymwright.store import spec_hash
from gymwright.train.padded import PaddedBatchEnv
from gymwright.train.policy import ActorCritic, Policy, Role

FORMAT = 2  # 1: a full pickle (refused, see convert_trusted); 2: tensors and plain data
KIND = "gymwright-checkpoint"
REQUIRED = ("spec_hash", "spec_name", "params", "roles", "n_agents", "state_dim", "algo", "hidden", "activation",
            "model", "update", "env_steps")  # what `policy_from` and `check_fits` read
CHECKPOINT = "checkpoint.pt"
METRIC_LAYOUT = "metrics-copies"  # a batch env's metric_acc is (metrics, copies); a state without this mark is (copies, metrics)
# rebuilt from the params, which the checkpoint pins (_powers: tables of them), or derived from
# the state (_pads: the tiles with a border, made again from the restored tiles)
ENV_SKIP = ("p", "_mask_at", "_powers", "_pads")


class CheckpointError(GymwrightError):
    """A checkpoint is missing, unreadable, or was trained on another spec or structure."""


def spec_identity(spec: Any) -> tuple[str, str]:
    """(sha256, name) of a spec given as a library name, a file, YAML text or a dict (or of a
    code-mode design, a .py file read as text)."""
    if is_code_source(spec):
        return code_identity(spec)
    data, _ = read_data(spec)
    return spec_hash(data), str(data.get("name", "?"))


# --------------------------------------------------------------------------- env state
def env_state(benv: Any) -> dict[str, Any]:
    """A deep copy of the batch env's state (arrays, and the attribute bags `v` and `r`).

    A `MixedBatchEnv` (configs with different structural params) and a `PaddedBatchEnv`
    (different agent counts) save each of their envs this way, plus their own obs and mask buffers.
    """
    if callable(getattr(benv, "checkpoint_state", None)):  # a SandboxedBatchEnv: its state is in its workers
        return {"sandboxed": ("sandboxed", benv.checkpoint_state())}
    if isinstance(benv, MixedBatchEnv | PaddedBatchEnv):
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
    if "metric_acc" in out:
        out["metric_layout"] = ("layout", METRIC_LAYOUT)
    return out


def restore_env_state(benv: Any, state: dict[str, Any]) -> None:
    """Put a state from `env_state` back into an env of the same spec, params and size."""
    legacy_metrics = "metric_acc" in state and "metric_layout" not in state
    for k, (kind, x) in state.items():
        if kind == "array" and k == "metric_acc" and legacy_metrics:
            x = x.T  # saved before the metrics were kept metric-major: (copies, metrics)
        RESTORERS.get(kind, _restore_value)(benv, k, x)


def _restore_array(benv: Any, k: str, x: Any) -> None:
    cur = getattr(benv, k, None)
    if isinstance(cur, np.ndarray) and cur.shape == x.shape and cur.dtype == x.dtype:
        cur[...] = x  # in place: the env hands this buffer out
    else:
        setattr(benv, k, x.copy())


def _restore_groups(benv: Any, k: str, x: Any) -> None:
    if len(x) != len(benv.groups):
        raise CheckpointError(f"the saved env has {len(x)} groups of structural params, this one {len(benv.groups)}",
                              hint="restore into an env built with the same params")
    for g, saved in zip(benv.groups, x, strict=True):
        restore_env_state(g, saved)


def _restore_object(benv: Any, k: str, x: Any) -> None:
    obj = getattr(benv, k)
    obj.__dict__.clear()
    obj.__dict__.update(copy.deepcopy(x))


def _restore_value(benv: Any, k: str, x: Any) -> None:
    setattr(benv, k, copy.deepcopy(x))


RESTORERS: dict[str, Callable[[Any, str, Any], None]] = {
    "layout": lambda benv, k, x: None,  # how the arrays were laid out, read above
    "array": _restore_array,
    "groups": _restore_groups,  # a mixed batch: each group of structural params restored as an env
    "sandboxed": lambda benv, k, x: benv.restore_checkpoint_state(x),
    "object": _restore_object,
}
"""how each kind of saved value goes back into the env (any other kind: a deep copy set as the attribute)"""


# --------------------------------------------------------------------------- RNG
def rng_state() -> dict[str, Any]:
    return {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}


def restore_rng(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])


# --------------------------------------------------------------------------- safe encoding
ARRAY = "__gymwright_ndarray__"  # {ARRAY: [dtype.str, shape], "bytes": uint8 tensor}
SCALAR = "__gymwright_npscalar__"  # {SCALAR: dtype.str, "bytes": uint8 tensor}
PLAIN = (str, int, float, bool, complex, type(None))


def _raw(x: np.ndarray) -> torch.Tensor:
    blob = np.ascontiguousarray(x).tobytes()
    return torch.frombuffer(bytearray(blob), dtype=torch.uint8) if blob else torch.empty(0, dtype=torch.uint8)


def encode(x: Any, where: str = "checkpoint") -> Any:
    """`x` as tensors and plain containers only (what `torch.load(weights_only=True)` reads)."""
    if isinstance(x, (torch.Tensor, *PLAIN)):
        return x
    if isinstance(x, np.ndarray):
        if x.dtype.hasobject:
            raise CheckpointError(f"{where} is a numpy array of Python objects, which a checkpoint cannot hold safely",
                                  hint="this is a gymwright bug: please report it with the spec")
        return {ARRAY: [x.dtype.str, list(x.shape)], "bytes": _raw(x)}
    if isinstance(x, np.generic):
        return {SCALAR: x.dtype.str, "bytes": _raw(np.asarray(x))}
    if isinstance(x, dict):
        if ARRAY in x or SCALAR in x:
            raise CheckpointError(f"{where} has a key reserved by the checkpoint format")
        out = type(x)() if type(x) in (dict, OrderedDict) else {}
        for k, v in x.items():
            if not isinstance(k, PLAIN):
                raise CheckpointError(f"{where} has a key of type {type(k).__name__}, which a checkpoint cannot hold",
                                      hint="this is a gymwright bug: please report it with the spec")
            out[k] = encode(v, f"{where}.{k}")
        return out
    if isinstance(x, list | tuple):
        items = [encode(v, f"{where}[{i}]") for i, v in enumerate(x)]
        return items if isinstance(x, list) else tuple(items)
    raise CheckpointError(f"{where} is a {type(x).__module__}.{type(x).__qualname__}, which a checkpoint cannot hold "
                          "(only tensors, numpy arrays and plain data)",
                          hint="this is a gymwright bug: please report it with the spec")


def decode(x: Any) -> Any:
    """The inverse of `encode`: numpy arrays (writable copies) and scalars back from their bytes."""
    if isinstance(x, dict):
        if ARRAY in x:
            dtype, shape = x[ARRAY]
            return np.frombuffer(x["bytes"].numpy().tobytes(), dtype=np.dtype(dtype)).reshape(shape).copy()
        if SCALAR in x:
            return np.frombuffer(x["bytes"].numpy().tobytes(), dtype=np.dtype(x[SCALAR]))[0]
        out = type(x)()
        for k, v in x.items():
            out[k] = decode(v)
        return out
    if isinstance(x, list):
        return [decode(v) for v in x]
    if isinstance(x, tuple):
        return tuple(decode(v) for v in x)
    return x


# --------------------------------------------------------------------------- files
NOT_FINITE_HINT = ("the networks diverged: rewards or observations of a huge magnitude (scale them down) or a learning "
                   "rate too high (lower --lr); an earlier checkpoint, if one was written, is kept")
RETRAIN = ("retrain it (`gymwright train SPEC --out DIR`); if you wrote this file yourself with an earlier "
           "gymwright and trust it, convert it once with `python -m gymwright.train.checkpoint --convert-trusted {path}`")


def nonfinite_tensors(data: dict[str, Any]) -> tuple[list[str], int]:
    """The names of the policy's tensors (`model`, `value_norms`) holding NaN or an infinity, and how many it has."""
    named = [*(data.get("model") or {}).items(),
             *((f"value_norms[{i}].{k}", v) for i, norm in enumerate(data.get("value_norms") or []) for k, v in norm.items())]
    tensors = [(k, v) for k, v in named if isinstance(v, torch.Tensor) and v.is_floating_point()]
    return [k for k, v in tensors if not bool(torch.isfinite(v).all())], len(tensors)


def check_finite(data: dict[str, Any], where: str, fix: str) -> None:
    """Refuse a policy whose weights hold NaN or infinities (a network diverged, or an env's NaN reached it)."""
    bad, total = nonfinite_tensors(data)
    if bad:
        shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        raise CheckpointError(f"{where}: the policy of {data.get('spec_name', '?')} after update {data.get('update', '?')} "
                              f"holds NaN or infinities in {len(bad)} of its {total} tensors ({shown})", hint=fix)


def save(path: Path, data: dict[str, Any]) -> Path:
    """Write atomically (`gymwright.atomic`): tensors and plain data only, loadable with weights_only.
    A policy whose weights hold NaN or infinities is refused (`check_finite`): nothing is written."""
    check_finite(data, f"{path} was not written", NOT_FINITE_HINT)
    buf = io.BytesIO()
    torch.save({"format": FORMAT, "kind": KIND, **encode(data)}, buf)
    return write_atomic(path, buf.getvalue())


def _refusal(path: Path, e: Exception) -> CheckpointError:
    """Why a file that `torch.load(weights_only=True)` would not read is refused (never loading it)."""
    try:
        names = set(torch.serialization.get_unsafe_globals_in_checkpoint(path))
    except Exception:  # not a zip checkpoint (a bare pickle): the loader's message says what it met
        names = set()
    if names:
        shown = ", ".join(sorted(names))
    else:
        found = re.search(r"WeightsUnpickler error:\s*(.+?)(?:\n\n|$)", str(e), re.S)
        shown = (found.group(1) if found else str(e)).strip().splitlines()[0][:200]
    if names and all(n.startswith(("numpy.", "_codecs.")) for n in names):
        return CheckpointError(f"{path} is an old-format (format 1) checkpoint: a full pickle ({shown}), which "
                               "gymwright no longer loads because a pickle can run code when it is read",
                               hint=RETRAIN.format(path=path))
    return CheckpointError(f"{path} is not a safe gymwright checkpoint: loading it would need more than tensors and "
                           f"plain data ({shown}), so it was not loaded (a pickle like this can run code)",
                           hint="delete it unless you know where it came from, and use a checkpoint that `gymwright train` "
                                "wrote; for a format-1 checkpoint you wrote yourself: " + RETRAIN.format(path=path))


def load(path: str | Path) -> dict[str, Any]:
    """The checkpoint at `path` (a file, or a run folder holding checkpoint.pt), read safely."""
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT
    if not path.exists():
        raise CheckpointError(f"no checkpoint at {path}", hint="train first (`gymwright train SPEC --out DIR`), or pass the run folder or its checkpoint.pt")
    try:
        with warnings.catch_warnings():  # torch warns about pickle protocols before refusing
            warnings.simplefilter("ignore")
            data = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:  # weights_only refused a global: a planted pickle or format 1
        raise _refusal(path, e) from None
    except Exception as e:  # a truncated or foreign file
        raise CheckpointError(f"{path} is not a readable gymwright checkpoint ({e.__class__.__name__}: {str(e)[:300]})",
                              hint="pass a checkpoint that `gymwright train` wrote, or train again") from None
    if isinstance(data, dict) and data.get("format") == 1:
        raise CheckpointError(f"{path} is an old-format (format 1) checkpoint", hint=RETRAIN.format(path=path))
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("kind") != KIND:
        raise CheckpointError(f"{path} is not a gymwright checkpoint (format {FORMAT})",
                              hint="pass a checkpoint that `gymwright train` wrote")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise CheckpointError(f"{path} is a gymwright checkpoint without {', '.join(missing)}",
                              hint="pass a checkpoint that `gymwright train` wrote, or train again")
    try:
        data = decode(data)
    except (ValueError, TypeError, KeyError, AttributeError) as e:  # a tag that is not what save() writes
        raise CheckpointError(f"{path} holds a malformed array ({e.__class__.__name__}: {str(e)[:200]})",
                              hint="pass a checkpoint that `gymwright train` wrote, or train again") from None
    data["path"] = str(path)
    return data


def convert_trusted(path: str | Path) -> Path:
    """Rewrite a format-1 checkpoint in format 2. This unpickles it: only for files you wrote.

    The old file is kept beside it as `NAME.format1`.
    """
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT
    data = torch.load(path, map_location="cpu", weights_only=False)  # the caller vouches for the file
    if not isinstance(data, dict) or data.get("format") != 1:
        raise CheckpointError(f"{path} is not a format-1 gymwright checkpoint", hint="only format-1 checkpoints need converting")
    data.pop("format")
    backup = path.with_name(path.name + ".format1")
    os.replace(path, backup)
    save(path, data)
    return path


def check_fits(ckpt: dict[str, Any], spec_sha: str, roles: list[Role] | None, params: list[dict[str, Any]] | None = None,
               *, any_count: bool = False) -> None:
    """Raise `CheckpointError` unless the checkpoint was trained on this spec (and structure).

    With `any_count` the roles' agent counts may differ (a warm start onto another number of
    agents: one role whose networks read no agent index have the same shapes at any count)."""
    where = ckpt.get("path", "checkpoint")
    if any_count and roles is not None and len(roles) == 1 and len(ckpt["roles"]) == 1:
        (name, _, _, dim, acts), r = ckpt["roles"][0], roles[0]
        if (name, dim, acts) == (r.name, r.obs_dim, r.n_actions):
            roles = [Role(r.name, int(ckpt["roles"][0][1]), int(ckpt["roles"][0][2]), r.obs_dim, r.n_actions)]
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
    check_finite(ckpt, ckpt.get("path", "checkpoint"), "it was written before gymwright refused such policies: "
                 "train it again (`gymwright train SPEC --out DIR`)")
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


def main(argv: list[str] | None = None) -> int:
    """`python -m gymwright.train.checkpoint --convert-trusted PATH...`"""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2 or args[0] != "--convert-trusted":
        print("usage: python -m gymwright.train.checkpoint --convert-trusted PATH [PATH...]\n"
              "  rewrites format-1 checkpoints (pickles) in the safe format 2; this unpickles them, which can run\n"
              "  code: only for files you wrote yourself", file=sys.stderr)
        return 2
    for arg in args[1:]:
        try:
            done = convert_trusted(arg)
            print(f"converted {done} (the old file is kept as {done.name}.format1)")
        except GymwrightError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
