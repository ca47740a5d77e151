"""Multi-agent PPO on the batch backend: IPPO, or MAPPO with a centralized critic.

One actor-critic per role, shared by the role's agents (the agent's index within its role is a
one-hot input). Discrete actions with masks; agents with no legal action play -1 and leave the
policy loss. GAE runs on each agent's own timeline (acting steps only) and bootstraps truncated
episodes from their final observation (or final state).
Value targets are normalized by a running mean and std per role. Fixed-policy agents (`npc`,
`gymwright.train.npc`) act from their fixed policy and stay out of every loss. Read `train` top
to bottom, like CleanRL's `ppo.py`: setup, then per update: rollout, advantages, policy and
value losses (`gymwright.train.ppo_update`), logging, checkpoint. A feature of the trainer is a
function or small object the loop calls, not an `if` inside it: the fixed agents
(`npc.FixedAgents`), the imitation loss (`imitation.ImitationLoss`), the per-config figures of a
mixed batch (`figures.Copies`), the clock (`logger.Clock`), the resume checks (`resume`).
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
import torch.nn.functional as F

from gymwright.atomic import write_atomic
from gymwright.diagnostic import shown
from gymwright.errors import GymwrightError
from gymwright.train import checkpoint as ck
from gymwright.train.boundary import StepCheck
from gymwright.train.config import ALGOS, TrainConfig, check_device
from gymwright.train.figures import Copies, Episodes, explained_variance, loss_means
from gymwright.train.imitation import ImitationLoss, NoImitation
from gymwright.train.logger import Clock, RunLog
from gymwright.train.normalize import ValueNorm
from gymwright.train.npc import FixedAgents, players_for
from gymwright.train.partners import Partners
from gymwright.train.policy import ACTIVATIONS, ActorCritic, RoleNet, roles_of, sample
from gymwright.train.ppo_update import update as ppo_update
from gymwright.train.result import TrainResult
from gymwright.train.resume import config_dict, start_of
from gymwright.train.rollout import Rollout, gae, make_env, state_dim

NPC_FILE = "npc.json"  # the run's fixed-policy agents (FixedPlayers.describe), for people and the report
TIME_KEYS = ("time_s", "charts/sps", "charts/agent_sps", "time/env_s", "time/network_s")

__all__ = ["NPC_FILE", "TIME_KEYS", "TrainResult", "check_config", "train"]


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

    # ---------------------------------------------------------------- setup (a fresh run, a resumed one or a warm start)
    run = _setup(cfg)
    try:
        for update in range(run.start + 1, cfg.updates + 1):
            run.clock.begin()
            lr = _set_lr(run, update)

            # ---------------------------------------------------------------- rollout
            episodes = _rollout(run, update)
            run.env_steps += cfg.num_envs * cfg.rollout_len

            # ---------------------------------------------------------------- advantages
            with run.clock.network():
                advantages, returns = _advantages(run)

                # ------------------------------------------------------------ policy and value losses
                stats = ppo_update(run.model, run.optimizer, run.norms, run.trained, run.buf, advantages, returns, cfg,
                                   run.imitation)

            # ---------------------------------------------------------------- logging
            row = _row(run, update, lr, episodes, advantages, returns, stats)
            run.history.append(row)
            run.log.write(row)

            # ---------------------------------------------------------------- checkpoint
            if update % cfg.checkpoint_every == 0 or update == cfg.updates:
                _checkpoint(run, update)
            if progress is not None:
                progress(row)
        if not run.checkpoint_path.exists():
            _checkpoint(run, run.start)
    finally:
        run.log.close()
        if callable(getattr(run.benv, "close", None)):  # a sandboxed env's worker processes
            run.benv.close()
    return _result(run)


# -------------------------------------------------------------------- the run's parts
@dataclass
class _Run:
    """Everything a run holds from one phase of the loop to the next."""

    cfg: TrainConfig
    out: Path
    sha: str
    spec_name: str
    params: list[dict[str, Any]]
    benv: Any  # the batch env
    roles: list[Any]
    n_agents: int
    state_dim: int
    model: ActorCritic
    optimizer: torch.optim.Optimizer
    norms: list[ValueNorm]
    npcs: FixedAgents
    partners: Partners | None
    trained: list[torch.Tensor]  # per role: bool over its agents, those the run trains (not NPCs)
    copies: Copies
    imitation: ImitationLoss | NoImitation
    check: StepCheck  # every step's values finite
    log: RunLog
    buf: Rollout
    clock: Clock
    start: int = 0  # the last update done before this call (a resumed run's)
    env_steps: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def device(self) -> torch.device:
        return self.buf.obs.device

    @property
    def checkpoint_path(self) -> Path:
        return self.out / ck.CHECKPOINT

    def values_of(self, obs: torch.Tensor, state: torch.Tensor | None) -> list[torch.Tensor]:
        """Denormalized values per role."""
        return [norm.denormalize(v) for norm, v in zip(self.norms, self.model.values(obs, state), strict=True)]


def _setup(cfg: TrainConfig) -> _Run:
    """The env, the networks and their optimizer, the fixed agents, the rollout buffers; resumed
    from the run's checkpoint or warm-started where the config says so."""
    device = torch.device(cfg.device)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    sha, spec_name = ck.spec_identity(cfg.spec)
    params = cfg.param_list()
    B = cfg.num_envs
    torch.manual_seed(cfg.seed)
    copies = Copies.of(params, B, cfg.copies)
    benv = make_env(cfg.spec, params if cfg.copies is None else [params[c] for c in copies.of_copy], B)
    obs_np, masks_np = benv.reset(seed=cfg.seed * B)
    roles = roles_of(benv)
    N, D, A = masks_np.shape[1], obs_np.shape[2], masks_np.shape[2]
    centralized = cfg.algo == "mappo"
    S = state_dim(benv, centralized)
    model = ActorCritic(roles, S, tuple(cfg.hidden), centralized, cfg.activation, cfg.agent_index).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, eps=1e-5, fused=True)
    norms = [ValueNorm() for _ in roles]
    npcs = FixedAgents(players_for(cfg.npc, benv, roles, cfg.spec, seed=cfg.seed) if cfg.npc else None, N, device)
    start = start_of(cfg, out, sha, roles, params, model, optimizer, norms, benv)
    imitation = ImitationLoss.of(cfg, roles, D, A, device)
    check = StepCheck(cfg.spec, benv.possible_agents, B, step=start.env_steps // B)
    check.start(benv.obs_buf)
    log = RunLog(out, start.history, cfg.tensorboard)
    if npcs.players:
        write_atomic(out / NPC_FILE, json.dumps({"npc": npcs.describe()}, indent=2))
    buf = Rollout.allocate(cfg.rollout_len, B, N, D, A, S if centralized else None, device)
    partners = Partners(benv, cfg.partners, cfg.partner, cfg.spec, roles, cfg.seed) if cfg.partners else None
    return _Run(cfg, out, sha, spec_name, params, benv, roles, N, S, model, optimizer, norms, npcs, partners,
                npcs.trained(roles),
                copies, imitation,
                check, log, buf, Clock(start.clock), start.update, start.env_steps, start.history)


def _set_lr(run: _Run, update: int) -> float:
    """The update's learning rate (annealed linearly to 0 over the run, if `anneal_lr`)."""
    cfg = run.cfg
    lr = cfg.lr * (1.0 - (update - 1) / cfg.updates) if cfg.anneal_lr else cfg.lr
    for group in run.optimizer.param_groups:
        group["lr"] = lr
    return lr


def _rollout(run: _Run, update: int) -> Episodes:
    """`rollout_len` steps of every copy into `run.buf`; what the steps reported."""
    buf, benv = run.buf, run.benv
    buf.boot.zero_()
    episodes = Episodes()
    obs_np, masks_np = benv.obs_buf, benv.masks
    run.npcs.reseed(run.cfg.seed, update)
    for t in range(run.cfg.rollout_len):
        buf.obs[t] = torch.from_numpy(obs_np)
        buf.masks[t] = torch.from_numpy(masks_np) != 0
        if buf.state is not None:
            buf.state[t] = torch.from_numpy(benv.state())
        with run.clock.network(), torch.no_grad():
            _act(run, t)
            run.npcs.substitute(buf.actions[t], obs_np, masks_np)
            if run.partners is not None:
                run.partners.substitute(buf.actions[t], obs_np, masks_np)
        with run.clock.env():
            obs_np, rewards, terminated, truncated, infos = benv.step(buf.actions[t].cpu().numpy())
        if run.partners is not None:
            run.partners.mark(buf.actions[t])
        run.check(obs_np, rewards, infos)
        masks_np = benv.masks
        buf.rewards[t] = torch.from_numpy(rewards)
        buf.dones[t] = torch.from_numpy(terminated | truncated)
        if "done_idx" in infos:
            _bootstrap(run, t, infos, terminated, truncated)
        episodes.add(infos, run.copies)
    return episodes


def _act(run: _Run, t: int) -> None:
    """The policy's actions, their log-probabilities and the values at step `t` (roles whose
    every agent is an NPC are left to `FixedAgents.substitute`)."""
    buf, model = run.buf, run.model
    nets = cast(list[RoleNet], list(model.nets))
    for net, norm, mine in zip(nets, run.norms, run.trained, strict=True):
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


def _bootstrap(run: _Run, t: int, infos: dict[str, Any], terminated: np.ndarray, truncated: np.ndarray) -> None:
    """Bootstrap the episodes truncated at step `t` from their final observation (or state)."""
    idx, device = infos["done_idx"], run.device
    cut = torch.from_numpy(truncated[idx] & ~terminated[idx]).to(device)
    if cut.any():
        with torch.no_grad():
            final_obs = torch.from_numpy(infos["final_obs"]).to(device)
            final_state = torch.from_numpy(infos["final_state"]).to(device) if run.model.centralized else None
            boot = torch.cat([v for v in run.values_of(final_obs, final_state)], dim=-1)
        run.buf.boot[t, torch.from_numpy(idx).to(device)] = torch.where(cut, boot, 0.0)


def _advantages(run: _Run) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE advantages and returns of the rollout, bootstrapped from the values after its last step."""
    buf, benv, cfg = run.buf, run.benv, run.cfg
    with torch.no_grad():
        last_obs = torch.from_numpy(benv.obs_buf).to(run.device)
        last_state = torch.from_numpy(benv.state()).to(run.device) if run.model.centralized else None
        last_value = torch.cat(run.values_of(last_obs, last_state), dim=-1)
        return gae(buf.rewards, buf.values, last_value, buf.dones, buf.boot, cfg.gamma, cfg.gae_lambda,
                   acted=buf.actions >= 0)


def _row(run: _Run, update: int, lr: float, episodes: Episodes, advantages: torch.Tensor, returns: torch.Tensor,
         stats: dict[str, list[float]]) -> dict[str, Any]:
    """The update's line of train.jsonl (`gymwright.train.figures`)."""
    cfg, clock = run.cfg, run.clock
    steps = cfg.num_envs * cfg.rollout_len
    elapsed = clock.end()
    row: dict[str, Any] = {"update": update, "updates_total": cfg.updates, "env_steps": run.env_steps,
                           "time_s": clock.totals["total_s"], "charts/sps": steps / elapsed,
                           "charts/agent_sps": steps * run.n_agents / elapsed, "charts/learning_rate": lr,
                           "time/env_s": clock.env_s, "time/network_s": clock.network_s}
    row.update(episodes.stats(run.roles, run.copies.n_configs, run.npcs.marked()))
    row.update(run.copies.positive_advantage(advantages, run.buf.actions >= 0))
    row.update(episodes.term_means(cfg.rollout_len))
    row.update(loss_means(stats))
    row["losses/explained_variance"] = explained_variance(returns, run.buf.values, run.npcs.fixed)
    return row


def _checkpoint(run: _Run, update: int) -> None:
    cfg = run.cfg
    ck.save(run.checkpoint_path, {
        "spec_hash": run.sha, "spec_name": run.spec_name, "params": run.params,
        "roles": [tuple(vars(r).values()) for r in run.roles], "n_agents": run.n_agents, "state_dim": run.state_dim,
        "algo": cfg.algo, "hidden": list(cfg.hidden), "activation": cfg.activation,
        "agent_index": cfg.agent_index, "config": config_dict(cfg),
        "update": update, "env_steps": run.env_steps, "model": run.model.state_dict(),
        "optimizer": run.optimizer.state_dict(), "value_norms": [n.state_dict() for n in run.norms],
        "env": ck.env_state(run.benv), "rng": ck.rng_state(), "history": run.history, "clock": run.clock.totals,
        "npc": run.npcs.describe(),
    })


def _result(run: _Run) -> TrainResult:
    history, clock = run.history, run.clock.totals
    last: dict[str, Any] = next((row for row in reversed(history) if row.get("charts/episodes")), {})
    total = clock["total_s"] or float("nan")
    return TrainResult(
        agent_steps_per_second=run.env_steps * run.n_agents / total if history else 0.0,
        env_steps_per_second=run.env_steps / total if history else 0.0,
        final_return={r.name: last.get(f"charts/return/{r.name}", float("nan")) for r in run.roles},
        metrics={k.removeprefix("metrics/"): v for k, v in last.items() if k.startswith("metrics/")},
        checkpoint=str(run.checkpoint_path),
        updates=history[-1]["update"] if history else 0,
        env_steps=run.env_steps,
        history=history,
        time={**clock, "other_s": clock["total_s"] - clock["env_s"] - clock["network_s"]},
        npc=run.npcs.by_agent(),
    )
