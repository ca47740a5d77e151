"""Multi-agent PPO on the batch backend: IPPO, or MAPPO with a centralized critic.

One actor-critic per role, shared by the role's agents (the agent's index within its role is a
one-hot input). Discrete actions with masks; agents with no legal action play -1 and leave the
policy loss. GAE runs on each agent's own timeline (acting steps only) and bootstraps truncated
episodes from their final observation (or final state).
Value targets are normalized by a running mean and std per role. Fixed-policy agents (`npc`,
`gymwright.train.npc`) act from their fixed policy and stay out of every loss. Read it top to bottom, like
CleanRL's `ppo.py`: setup, then per update: rollout, advantages, policy and value losses,
logging, checkpoint.
"""

from __future__ import annotations

import json
import numbers
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from gymwright.atomic import write_atomic
from gymwright.diagnostic import shown
from gymwright.errors import GymwrightError
from gymwright.train import checkpoint as ck
from gymwright.train.boundary import StepCheck
from gymwright.train.config import ALGOS, TrainConfig, check_device
from gymwright.train.logger import RunLog
from gymwright.train.normalize import ValueNorm
from gymwright.train.npc import FixedPlayers, players_for
from gymwright.train.policy import ACTIVATIONS, ActorCritic, roles_of, sample
from gymwright.train.rollout import Rollout, config_of_copy, gae, make_env, state_dim

NPC_FILE = "npc.json"  # the run's fixed-policy agents (FixedPlayers.describe), for people and the report
TIME_KEYS = ("time_s", "charts/sps", "charts/agent_sps", "time/env_s", "time/network_s")


@dataclass
class TrainResult:
    """What a run achieved: throughput, final returns and metrics, where the policy is."""

    agent_steps_per_second: float
    env_steps_per_second: float
    final_return: dict[str, float]
    metrics: dict[str, float]
    checkpoint: str
    updates: int
    env_steps: int
    history: list[dict[str, Any]] = field(default_factory=list)
    time: dict[str, float] = field(default_factory=dict)  # env_s, network_s, other_s, total_s
    npc: dict[str, str] = field(default_factory=dict)  # agent -> the fixed policy that played it (not trained)

    def to_dict(self, with_history: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_history:
            d.pop("history")
        return d


def check_config(cfg: TrainConfig) -> None:
    """What TrainConfig does not check when it is made: the names (algo, activation), demos with
    their weight, the copies of each config, the device. Its numbers (each count at least 1,
    imitation_coef at least 0, at most one minibatch per sample) TrainConfig refuses itself
    (`gymwright.train.config`: RANGES and combination_problems)."""
    if cfg.algo not in ALGOS:
        raise GymwrightError(f"unknown algo {shown(repr(cfg.algo))}", path="algo", hint=f"choose one of {', '.join(ALGOS)}")
    if cfg.activation not in ACTIVATIONS:
        raise GymwrightError(f"unknown activation {shown(repr(cfg.activation))}", path="activation",
                             hint=f"choose one of {', '.join(ACTIVATIONS)}")
    if (cfg.imitation_coef > 0) != (cfg.demos is not None):
        raise GymwrightError(f"imitation_coef {cfg.imitation_coef} with demos {cfg.demos}", path="imitation_coef",
                             hint="give both demos (a Demos .npz) and a positive imitation_coef, or neither")
    if cfg.copies is not None:
        counts, n = list(cfg.copies), len(cfg.param_list())
        if len(counts) != n or any(not isinstance(c, numbers.Integral) or c < 1 for c in counts) or sum(counts) != cfg.num_envs:
            raise GymwrightError(f"copies {counts} for {n} param configs and {cfg.num_envs} env copies", path="copies",
                                 hint=f"give {n} whole numbers of at least 1 (one per config) summing to num_envs, "
                                      "or leave copies out for equal blocks")
    check_device(cfg.device)


def train(config: TrainConfig, progress: Callable[[dict[str, Any]], None] | None = None) -> TrainResult:
    """Train on `config`; `progress(row)` is called after every update with its log row."""
    cfg = config
    check_config(cfg)
    torch.set_num_threads(cfg.threads)
    device = torch.device(cfg.device)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    sha, spec_name = ck.spec_identity(cfg.spec)
    params = cfg.param_list()
    T, B = cfg.rollout_len, cfg.num_envs

    # ---------------------------------------------------------------- setup
    torch.manual_seed(cfg.seed)
    copy_config = config_of_copy(len(params), B, cfg.copies)
    benv = make_env(cfg.spec, params if cfg.copies is None else [params[c] for c in copy_config], B)
    obs_np, masks_np = benv.reset(seed=cfg.seed * B)
    roles = roles_of(benv)
    N, D, A = masks_np.shape[1], obs_np.shape[2], masks_np.shape[2]
    centralized = cfg.algo == "mappo"
    S = state_dim(benv, centralized)
    model = ActorCritic(roles, S, tuple(cfg.hidden), centralized, cfg.activation, cfg.agent_index).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, eps=1e-5, fused=True)
    norms = [ValueNorm() for _ in roles]
    players = players_for(cfg.npc, benv, roles, cfg.spec, seed=cfg.seed) if cfg.npc else None
    fixed_np = players.fixed if players else np.zeros(N, dtype=bool)
    fixed = torch.from_numpy(fixed_np).to(device)  # (N,): agents a fixed policy plays (no gradient)
    own = [~fixed[r.agents] for r in roles]  # per role: its trained agents
    history: list[dict[str, Any]] = []
    start, env_steps, clock = 0, 0, {"env_s": 0.0, "network_s": 0.0, "total_s": 0.0}

    if cfg.resume and (out / ck.CHECKPOINT).exists():
        saved = ck.load(out / ck.CHECKPOINT)
        ck.check_fits(saved, sha, roles, params)
        mine = _config_dict(cfg)
        for key in ("algo", "num_envs", "activation", "agent_index", "npc", "copies"):
            if saved["config"].get(key, {"npc": {}, "copies": None}.get(key, True)) != mine[key]:
                raise ck.CheckpointError(f"{saved['path']} was trained with {key}={saved['config'].get(key)!r}, not {mine[key]!r}",
                                         hint="resume with the same settings, or train into another --out folder")
        if list(saved["hidden"]) != list(cfg.hidden):
            raise ck.CheckpointError(f"{saved['path']} has hidden layers {saved['hidden']}, not {list(cfg.hidden)}")
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        for norm, state in zip(norms, saved["value_norms"], strict=True):
            norm.load_state_dict(state)
        ck.restore_env_state(benv, saved["env"])
        ck.restore_rng(saved["rng"])
        start, env_steps, history = saved["update"], saved["env_steps"], saved["history"]
        clock = dict(saved["clock"])
    elif cfg.init_from is not None:
        warm_start(cfg, model, norms, sha, roles)
    demos = _load_demos(cfg, roles, D, A, device)
    check = StepCheck(cfg.spec, benv.possible_agents, B, step=env_steps // B)  # every step's values finite
    check.start(benv.obs_buf)
    log = RunLog(out, history, cfg.tensorboard)
    if players:
        write_atomic(out / NPC_FILE, json.dumps({"npc": players.describe()}, indent=2))

    buf = Rollout.allocate(T, B, N, D, A, S if centralized else None, device)
    ckpt_path = out / ck.CHECKPOINT

    def values_of(obs: torch.Tensor, state: torch.Tensor | None) -> list[torch.Tensor]:
        """Denormalized values per role."""
        return [norm.denormalize(v) for norm, v in zip(norms, model.values(obs, state), strict=True)]

    def checkpoint(update: int) -> None:
        ck.save(ckpt_path, {
            "spec_hash": sha, "spec_name": spec_name, "params": params,
            "roles": [tuple(vars(r).values()) for r in roles], "n_agents": N, "state_dim": S,
            "algo": cfg.algo, "hidden": list(cfg.hidden), "activation": cfg.activation,
            "agent_index": cfg.agent_index, "config": _config_dict(cfg),
            "update": update, "env_steps": env_steps, "model": model.state_dict(),
            "optimizer": optimizer.state_dict(), "value_norms": [n.state_dict() for n in norms],
            "env": ck.env_state(benv), "rng": ck.rng_state(), "history": history, "clock": clock,
            "npc": players.describe() if players else [],
        })

    try:
        for update in range(start + 1, cfg.updates + 1):
            t_update = time.perf_counter()
            t_env = t_net = 0.0
            lr = cfg.lr * (1.0 - (update - 1) / cfg.updates) if cfg.anneal_lr else cfg.lr
            for group in optimizer.param_groups:
                group["lr"] = lr

            # ---------------------------------------------------------------- rollout
            buf.boot.zero_()
            episodes: dict[str, list[np.ndarray]] = {"return": [], "length": [], "config": []}
            ep_metrics: dict[str, list[np.ndarray]] = {}
            term_sums: dict[str, dict[str, float]] = {}
            obs_np, masks_np = benv.obs_buf, benv.masks
            if players:
                players.reseed(cfg.seed, update)  # bit-for-bit on resume: seeded by the update
            for t in range(T):
                buf.obs[t] = torch.from_numpy(obs_np)
                buf.masks[t] = torch.from_numpy(masks_np) != 0
                if buf.state is not None:
                    buf.state[t] = torch.from_numpy(benv.state())
                t0 = time.perf_counter()
                with torch.no_grad():
                    for net, norm, mine in zip(model.nets, norms, own, strict=True):
                        r = net.role
                        if not mine.any():
                            continue  # every agent of the role is an NPC
                        m = model.role_masks(r, buf.masks[t])
                        logits = net.logits(model.role_obs(r, buf.obs[t]), m)
                        action = sample(logits)
                        buf.logp[t, :, r.agents] = F.log_softmax(logits, -1).gather(-1, action.unsqueeze(-1)).squeeze(-1)
                        buf.actions[t, :, r.agents] = torch.where(m.any(-1), action, -1)
                        critic_in = model.critic_input(r, buf.obs[t], buf.state[t] if buf.state is not None else None)
                        buf.values[t, :, r.agents] = norm.denormalize(net.value(critic_in))
                    if players:  # the NPCs' actions replace the policy's (their columns leave the loss)
                        buf.actions[t, :, fixed] = torch.from_numpy(players.act(obs_np, masks_np)[:, fixed_np]).to(device)
                t1 = time.perf_counter()
                obs_np, rewards, terminated, truncated, infos = benv.step(buf.actions[t].cpu().numpy())
                t_env += time.perf_counter() - t1
                t_net += t1 - t0
                check(obs_np, rewards, infos)
                masks_np = benv.masks
                buf.rewards[t] = torch.from_numpy(rewards)
                buf.dones[t] = torch.from_numpy(terminated | truncated)
                for role, terms in infos["reward_terms"].items():
                    sums = term_sums.setdefault(role, {})
                    for name, x in terms.items():
                        sums[name] = sums.get(name, 0.0) + float(np.mean(x))
                if "done_idx" in infos:
                    idx = infos["done_idx"]
                    cut = torch.from_numpy(truncated[idx] & ~terminated[idx]).to(device)
                    if cut.any():  # bootstrap truncated episodes from their final observation
                        with torch.no_grad():
                            final_obs = torch.from_numpy(infos["final_obs"]).to(device)
                            final_state = torch.from_numpy(infos["final_state"]).to(device) if centralized else None
                            boot = torch.cat([v for v in values_of(final_obs, final_state)], dim=-1)
                        buf.boot[t, torch.from_numpy(idx).to(device)] = torch.where(cut, boot, 0.0)
                    episodes["return"].append(infos["episode_return"])
                    episodes["length"].append(infos["episode_length"])
                    episodes["config"].append(copy_config[idx])
                    for name, x in infos["metrics"].items():
                        ep_metrics.setdefault(name, []).append(x)
            env_steps += B * T

            # ---------------------------------------------------------------- advantages
            t0 = time.perf_counter()
            with torch.no_grad():
                last_obs = torch.from_numpy(benv.obs_buf).to(device)
                last_state = torch.from_numpy(benv.state()).to(device) if centralized else None
                last_value = torch.cat(values_of(last_obs, last_state), dim=-1)
                advantages, returns = gae(buf.rewards, buf.values, last_value, buf.dones, buf.boot,
                                          cfg.gamma, cfg.gae_lambda, acted=buf.actions >= 0)

            # ---------------------------------------------------------------- policy and value losses
            flat = T * B
            b_obs = buf.obs.reshape(flat, N, D)
            b_masks = buf.masks.reshape(flat, N, A)
            b_state = buf.state.reshape(flat, S) if buf.state is not None else None
            b_actions, b_logp = buf.actions.reshape(flat, N), buf.logp.reshape(flat, N)
            b_adv, b_returns = advantages.reshape(flat, N), returns.reshape(flat, N)
            for norm, r, mine in zip(norms, roles, own, strict=True):
                if mine.any():
                    norm.update(b_returns[:, r.agents][:, mine])
            b_targets = torch.cat([norm.normalize(b_returns[:, r.agents]) for norm, r in zip(norms, roles, strict=True)], dim=-1)
            stats: dict[str, list[float]] = {"policy_loss": [], "value_loss": [], "entropy": [], "approx_kl": [], "clipfrac": []}
            mb_size = flat // cfg.minibatches
            for _epoch in range(cfg.epochs):
                perm = torch.randperm(flat, device=device)
                for k in range(cfg.minibatches):
                    mb = perm[k * mb_size:(k + 1) * mb_size]
                    obs_mb, masks_mb = b_obs[mb], b_masks[mb]  # gathered once for every role, actor and critic
                    loss = torch.zeros((), device=device)
                    for net, mine in zip(model.nets, own, strict=True):
                        r = net.role
                        if not mine.any():
                            continue  # an NPC role: no loss, no gradient
                        actions = b_actions[mb, r.agents]
                        valid = (actions >= 0) & mine  # trained agents that had a legal action (the others sent -1)
                        at = None if bool(valid.all()) else valid  # None: every place (no compaction to copy)
                        logits = net.logits_at(model.role_obs(r, obs_mb), model.role_masks(r, masks_mb), at)
                        logp_all = F.log_softmax(logits, -1)
                        new_logp = logp_all.gather(-1, _places(actions, at).unsqueeze(-1)).squeeze(-1)
                        entropy = -(logp_all.exp() * logp_all).sum(-1)
                        log_ratio = new_logp - _places(b_logp[mb, r.agents], at)
                        ratio = log_ratio.exp()
                        adv = _places(b_adv[mb, r.agents], at)
                        if adv.numel() > 1:
                            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                        pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip, 1 + cfg.clip))
                        pg_loss = pg.mean() if adv.numel() else torch.zeros((), device=device)
                        ent = entropy.mean() if adv.numel() else torch.zeros((), device=device)
                        critic_in = model.critic_input(r, obs_mb, b_state[mb] if b_state is not None else None)
                        v_loss = 0.5 * ((net.value(critic_in) - b_targets[mb, r.agents])[..., mine] ** 2).mean()
                        loss = loss + pg_loss - cfg.ent_coef * ent + cfg.vf_coef * v_loss
                        if demos is not None:
                            bc = _imitation_loss(net, demos, max(64, int(valid.sum())))
                            loss = loss + cfg.imitation_coef * bc
                            stats.setdefault("imitation", []).append(bc.item())
                        with torch.no_grad():
                            stats["policy_loss"].append(pg_loss.item())
                            stats["value_loss"].append(v_loss.item())
                            stats["entropy"].append(ent.item())
                            if adv.numel():
                                stats["approx_kl"].append(((ratio - 1) - log_ratio).mean().item())
                                stats["clipfrac"].append(((ratio - 1).abs() > cfg.clip).float().mean().item())
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                    optimizer.step()
            t_net += time.perf_counter() - t0

            # ---------------------------------------------------------------- logging
            elapsed = time.perf_counter() - t_update
            clock["env_s"] += t_env
            clock["network_s"] += t_net
            clock["total_s"] += elapsed
            row: dict[str, Any] = {"update": update, "updates_total": cfg.updates, "env_steps": env_steps,
                                   "time_s": clock["total_s"], "charts/sps": B * T / elapsed,
                                   "charts/agent_sps": B * T * N / elapsed, "charts/learning_rate": lr,
                                   "time/env_s": t_env, "time/network_s": t_net}
            row.update(_episode_stats(episodes, ep_metrics, roles, len(params), fixed_np if players else None))
            row.update(_positive_advantage(advantages, buf.actions >= 0, copy_config, len(params)))
            for role, sums in term_sums.items():
                for name, total in sums.items():
                    row[f"reward_terms/{role}/{name}"] = total / T
            for name, xs in stats.items():
                row[f"losses/{name}"] = float(np.mean(xs)) if xs else 0.0
            y, v = returns[..., ~fixed], buf.values[..., ~fixed]  # the trained agents'
            var_y = y.var()
            row["losses/explained_variance"] = float(1 - (y - v).var() / var_y) if var_y > 0 else 0.0
            history.append(row)
            log.write(row)

            # ---------------------------------------------------------------- checkpoint
            if update % cfg.checkpoint_every == 0 or update == cfg.updates:
                checkpoint(update)
            if progress is not None:
                progress(row)
        if not ckpt_path.exists():
            checkpoint(start)
    finally:
        log.close()
        if callable(getattr(benv, "close", None)):  # a sandboxed env's worker processes
            benv.close()
    return _result(cfg, history, clock, env_steps, N, ckpt_path, roles, players)


# -------------------------------------------------------------------- helpers
def _places(x: torch.Tensor, at: torch.Tensor | None) -> torch.Tensor:
    """x (..., count[, F]) at the places `at` marks, flattened in row-major order (all of them: None)."""
    return x.reshape(-1, *x.shape[2:]) if at is None else x[at]


def _load_demos(cfg: TrainConfig, roles: list[Any], obs_dim: int, n_actions: int,
                device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """`cfg.demos` as tensors (obs, masks, actions), checked against the spec's one role."""
    if cfg.demos is None:
        return None
    from gymwright.train.imitation import Demos

    demos = Demos.load(cfg.demos)
    if len(roles) != 1:
        raise GymwrightError(f"demos: an imitation loss needs a spec with one role; this one has {[r.name for r in roles]}",
                             path="demos", hint="train a one-role spec with demos, or drop demos")
    if demos.obs.shape[1:] != (obs_dim,) or demos.masks.shape[1:] != (n_actions,) or not len(demos.actions):
        raise GymwrightError(f"demos {cfg.demos}: {len(demos.actions)} samples of {demos.obs.shape[1:]} observations and "
                             f"{demos.masks.shape[1:]} masks; this spec's are ({obs_dim},) and ({n_actions},)",
                             path="demos", hint="record the demonstrations with the same spec and params (the view radius "
                                                "sets the observation width)")
    return (torch.from_numpy(demos.obs).to(device), torch.from_numpy(demos.masks).to(device),
            torch.from_numpy(demos.actions).to(device))


def _imitation_loss(net: Any, demos: tuple[torch.Tensor, torch.Tensor, torch.Tensor], size: int) -> torch.Tensor:
    """Cross-entropy of the actor's masked logits on a random minibatch of `size` demonstrated samples."""
    obs, masks, actions = demos
    idx = torch.randint(len(actions), (min(size, len(actions)),), device=actions.device)
    return F.cross_entropy(net.logits(obs[idx], masks[idx]), actions[idx])


def _config_dict(cfg: TrainConfig) -> dict[str, Any]:
    d = asdict(cfg)
    d["spec"] = d["spec"] if isinstance(d["spec"], dict) else str(d["spec"])
    d["out"] = str(d["out"])
    d["init_from"] = str(d["init_from"]) if d.get("init_from") else None
    d["demos"] = str(d["demos"]) if d.get("demos") else None
    d["hidden"] = list(d["hidden"])
    d["copies"] = [int(c) for c in d["copies"]] if d.get("copies") is not None else None
    return d


def _episode_stats(episodes: dict[str, list[np.ndarray]], metrics: dict[str, list[np.ndarray]],
                   roles: list[Any], n_configs: int, fixed: np.ndarray | None = None) -> dict[str, float]:
    """Means over the episodes that ended in this rollout (nothing if none did). With NPCs
    (`fixed`: bool per agent) also `trained/return/{role}` and `npc/return/{role}`, the means over
    the role's trained and fixed agents (`charts/return/{role}` stays the mean over all of them)."""
    if not episodes["return"]:
        return {"charts/episodes": 0}
    ret = np.concatenate(episodes["return"])  # (E, N)
    cfg = np.concatenate(episodes["config"])
    row: dict[str, float] = {"charts/episodes": int(len(ret)),
                             "charts/episode_length": float(np.concatenate(episodes["length"]).mean())}
    for r in roles:
        row[f"charts/return/{r.name}"] = float(ret[:, r.agents].mean())
        if fixed is not None:
            for side, cols in (("trained", ~fixed[r.agents]), ("npc", fixed[r.agents])):
                if cols.any():
                    row[f"{side}/return/{r.name}"] = float(ret[:, r.agents][:, cols].mean())
    per_episode = {name: np.concatenate(xs) for name, xs in metrics.items()}
    for name, x in per_episode.items():
        row[f"metrics/{name}"] = float(x.mean())
    if n_configs > 1:  # per config of the list (`cfg` holds each episode's config index, by global copy)
        for c in range(n_configs):
            mine = cfg == c
            if mine.any():
                for r in roles:
                    row[f"config{c}/return/{r.name}"] = float(ret[mine][:, r.agents].mean())
                for name, x in per_episode.items():
                    row[f"config{c}/metrics/{name}"] = float(x[mine].mean())
    return row


def _positive_advantage(advantages: torch.Tensor, acted: torch.Tensor, copy_config: np.ndarray,
                        n_configs: int) -> dict[str, float]:
    """Per config of a list, the mean positive advantage over its acting steps: the *positive
    value loss* that Prioritized Level Replay (Jiang et al. 2021) scores a level by."""
    if n_configs <= 1:
        return {}
    pos = (advantages.clamp(min=0.0) * acted).sum(dim=(0, 2)).cpu().numpy()  # per copy
    n = acted.sum(dim=(0, 2)).cpu().numpy()
    sums, counts = np.bincount(copy_config, pos, n_configs), np.bincount(copy_config, n, n_configs)
    return {f"config{c}/positive_advantage": float(sums[c] / counts[c]) for c in range(n_configs) if counts[c] > 0}


def warm_start(cfg: TrainConfig, model: ActorCritic, norms: list[ValueNorm], sha: str, roles: list[Any]) -> None:
    """Load a previous stage's policy and value normalizers (same spec and roles; any params)."""
    saved = ck.load(cfg.init_from)  # type: ignore[arg-type]
    # another agent count is fine where no network reads the agent's index (IPPO, agent_index off)
    ck.check_fits(saved, sha, roles, any_count=not (cfg.agent_index or cfg.algo == "mappo" or saved.get("agent_index", True)))
    if list(saved["hidden"]) != list(cfg.hidden) or saved["algo"] != cfg.algo:
        raise ck.CheckpointError(f"{saved['path']} is a {saved['algo']} policy with hidden layers {saved['hidden']}; "
                                 f"this run is {cfg.algo} with {list(cfg.hidden)}", hint="warm-start with the same settings")
    model.load_state_dict(saved["model"])
    for norm, state in zip(norms, saved["value_norms"], strict=True):
        norm.load_state_dict(state)


def _result(cfg: TrainConfig, history: list[dict[str, Any]], clock: dict[str, float], env_steps: int,
            n_agents: int, ckpt_path: Path, roles: list[Any], players: FixedPlayers | None = None) -> TrainResult:
    last = next((row for row in reversed(history) if row.get("charts/episodes")), {})
    total = clock["total_s"] or float("nan")
    return TrainResult(
        agent_steps_per_second=env_steps * n_agents / total if history else 0.0,
        env_steps_per_second=env_steps / total if history else 0.0,
        final_return={r.name: last.get(f"charts/return/{r.name}", float("nan")) for r in roles},
        metrics={k.removeprefix("metrics/"): v for k, v in last.items() if k.startswith("metrics/")},
        checkpoint=str(ckpt_path),
        updates=history[-1]["update"] if history else 0,
        env_steps=env_steps,
        history=history,
        time={**clock, "other_s": clock["total_s"] - clock["env_s"] - clock["network_s"]},
        npc=players.by_agent() if players else {},
    )
