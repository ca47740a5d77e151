"""Where a PPO run starts: from scratch, from its own checkpoint (`resume`: bit-for-bit, as if
never stopped, refused unless the run's settings match the saved ones), or from another run's
policy (`init_from`: a warm start, e.g. a curriculum's previous stage)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from gymwright.train import checkpoint as ck
from gymwright.train.config import TrainConfig
from gymwright.train.normalize import ValueNorm
from gymwright.train.policy import ActorCritic

SAME_ON_RESUME = ("algo", "num_envs", "activation", "agent_index", "npc", "copies")
"""the settings a resumed run must share with its checkpoint (beyond the spec, roles, params and layers)"""
OLD_DEFAULTS: dict[str, Any] = {"npc": {}, "copies": None}
"""what a checkpoint written before a setting existed trained with"""


@dataclass
class Start:
    """Where the run's updates start: the last update done, env steps, log rows and clock so far."""

    update: int = 0
    env_steps: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    clock: dict[str, float] | None = None  # None: a fresh clock


def start_of(cfg: TrainConfig, out: Path, sha: str, roles: list[Any], params: list[dict[str, Any]],
             model: ActorCritic, optimizer: torch.optim.Optimizer, norms: list[ValueNorm], benv: Any) -> Start:
    """Resume from `out`'s checkpoint (`cfg.resume`), warm-start from `cfg.init_from`, or start fresh."""
    if cfg.resume and (out / ck.CHECKPOINT).exists():
        saved = ck.load(out / ck.CHECKPOINT)
        check_resume(saved, cfg, sha, roles, params)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        for norm, state in zip(norms, saved["value_norms"], strict=True):
            norm.load_state_dict(state)
        ck.restore_env_state(benv, saved["env"])
        ck.restore_rng(saved["rng"])
        return Start(saved["update"], saved["env_steps"], saved["history"], dict(saved["clock"]))
    if cfg.init_from is not None:
        warm_start(cfg.init_from, cfg, model, norms, sha, roles)
    return Start()


def check_resume(saved: dict[str, Any], cfg: TrainConfig, sha: str, roles: list[Any], params: list[dict[str, Any]]) -> None:
    """`CheckpointError` unless `saved` is this run's: the same spec, roles, params, settings and layers."""
    ck.check_fits(saved, sha, roles, params)
    mine = config_dict(cfg)
    for key in SAME_ON_RESUME:
        if saved["config"].get(key, OLD_DEFAULTS.get(key, True)) != mine[key]:
            raise ck.CheckpointError(f"{saved['path']} was trained with {key}={saved['config'].get(key)!r}, not {mine[key]!r}",
                                     hint="resume with the same settings, or train into another --out folder")
    if list(saved["hidden"]) != list(cfg.hidden):
        raise ck.CheckpointError(f"{saved['path']} has hidden layers {saved['hidden']}, not {list(cfg.hidden)}")


def warm_start(source: str | Path, cfg: TrainConfig, model: ActorCritic, norms: list[ValueNorm], sha: str,
               roles: list[Any]) -> None:
    """Load a previous stage's policy and value normalizers from `source` (a checkpoint or run
    folder of the same spec and roles; any params)."""
    saved = ck.load(source)
    # another agent count is fine where no network reads the agent's index (IPPO, agent_index off)
    ck.check_fits(saved, sha, roles, any_count=not (cfg.agent_index or cfg.algo == "mappo" or saved.get("agent_index", True)))
    if list(saved["hidden"]) != list(cfg.hidden) or saved["algo"] != cfg.algo:
        raise ck.CheckpointError(f"{saved['path']} is a {saved['algo']} policy with hidden layers {saved['hidden']}; "
                                 f"this run is {cfg.algo} with {list(cfg.hidden)}", hint="warm-start with the same settings")
    model.load_state_dict(saved["model"])
    for norm, state in zip(norms, saved["value_norms"], strict=True):
        norm.load_state_dict(state)


def config_dict(cfg: TrainConfig) -> dict[str, Any]:
    """The config as the checkpoint keeps it: plain data (paths as text, layers and copies as lists)."""
    d = asdict(cfg)
    d["spec"] = d["spec"] if isinstance(d["spec"], dict) else str(d["spec"])
    d["out"] = str(d["out"])
    d["init_from"] = str(d["init_from"]) if d.get("init_from") else None
    d["demos"] = str(d["demos"]) if d.get("demos") else None
    d["hidden"] = list(d["hidden"])
    d["copies"] = [int(c) for c in d["copies"]] if d.get("copies") is not None else None
    return d
