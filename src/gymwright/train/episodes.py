"""Rollouts of policies: `play_episodes` plays a policy (trained, random or a scripted baseline) for
whole episodes on the batch backend and returns their returns and metrics (`EvalResult`).

The evaluator (`gymwright.evaluate`) and the engineer judge an environment from these figures;
this module only plays."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import torch

from gymwright.errors import GymwrightError
from gymwright.train.boundary import StepCheck
from gymwright.train.npc import Team, players_for
from gymwright.train.policy import roles_of
from gymwright.train.rollout import make_env

Z95 = 1.959963984540054


class Actor(Protocol):
    """A policy: actions (B, N) from observations and masks (-1 = no action).

    A policy that also has `bind(benv)` is handed the batch env before play: a scripted
    baseline reads the env's state through it (see `gymwright.train.baselines`).
    """

    def act(self, obs: Any, masks: Any, deterministic: bool = False) -> np.ndarray: ...


@dataclass
class EvalResult:
    """Mean return per role with a 95% confidence half-width over episodes, metric means."""

    episodes: int
    returns: dict[str, float]
    ci95: dict[str, float]
    metrics: dict[str, float]
    length: float
    agents: list[str] = field(default_factory=list)
    episode_returns: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (episodes, agents)
    episode_metrics: dict[str, np.ndarray] = field(default_factory=dict)  # name -> (episodes,)
    npc: dict[str, str] = field(default_factory=dict)  # agent -> the fixed policy that played it
    sides: dict[str, dict[str, float]] = field(default_factory=dict)  # trained / npc -> role -> mean return

    def to_dict(self) -> dict[str, Any]:
        d = {"episodes": self.episodes, "returns": self.returns, "ci95": self.ci95,
             "metrics": self.metrics, "length": self.length}
        return {**d, "npc": self.npc, "sides": self.sides} if self.npc else d


def play_episodes(spec: Any, params: dict[str, Any] | list[dict[str, Any]] | None, policy: Actor,
                  episodes: int = 100, seed: int = 0, deterministic: bool = False,
                  max_steps: int = 100_000, npc: dict[str, str] | None = None) -> EvalResult:
    """Play `episodes` episodes (copy i of a batch plays the episode of seed `seed + i`).

    The role return of an episode is the mean over the role's agents; `ci95` is 1.96 standard
    errors over episodes. `params` may be a list of dicts (spread over the episodes). A policy
    with a `bind(benv)` method (a scripted baseline) is bound to the batch env before play.
    `npc` (as `TrainConfig.npc`) has fixed policies play some agents instead of `policy`; a
    `Team` (a run trained with NPCs, from `load_policy`) brings its own. Where agents are NPCs,
    `npc` names them and `sides` splits each role's mean return into its trained and NPC agents.
    """
    if episodes < 1:
        raise GymwrightError(f"episodes must be at least 1, got {episodes}", path="episodes")
    plist = [dict(p) for p in params] if isinstance(params, list) else [dict(params or {})]
    benv = make_env(spec, plist, episodes)
    roles = roles_of(benv)
    if npc:
        policy = Team(policy, players_for(npc, benv, roles, spec, seed=seed))
    if callable(getattr(policy, "bind", None)):
        policy.bind(benv)  # type: ignore[attr-defined]  # a policy with a callable bind (checked on the line above)
    one_episode_per_copy(benv)
    obs, masks = benv.reset(seed=seed)
    check = StepCheck(spec, benv.possible_agents, episodes)  # every step's values finite
    check.start(obs)
    done = np.zeros(episodes, dtype=bool)
    returns = np.zeros((episodes, masks.shape[1]))
    lengths = np.zeros(episodes)
    metrics: dict[str, np.ndarray] = {}
    with seeded_sampling(seed):
        for _ in range(max_steps):
            obs, rewards, _, _, infos = benv.step(policy.act(obs, masks, deterministic))
            check(obs, rewards, infos)
            masks = benv.masks
            if "done_idx" in infos:
                idx = infos["done_idx"]
                first = ~done[idx]
                i = idx[first]
                returns[i] = infos["episode_return"][first]
                lengths[i] = infos["episode_length"][first]
                for name, x in infos["metrics"].items():
                    metrics.setdefault(name, np.zeros(episodes))[i] = x[first]
                done[i] = True
                if done.all():
                    break
        else:
            raise GymwrightError(f"{int((~done).sum())} of {episodes} episodes did not end within {max_steps} steps",
                                 hint="the spec may need a `truncate` (e.g. `t >= max_steps`)")
    by_role = {r.name: returns[:, r.agents].mean(axis=1) for r in roles}
    se = {k: float(x.std(ddof=1) / np.sqrt(episodes)) if episodes > 1 else float("nan") for k, x in by_role.items()}
    fixed = getattr(policy, "npc_agents", None)
    return EvalResult(
        **_sides(returns, roles, fixed, policy) if fixed is not None and fixed.any() else {},
        episodes=episodes,
        returns={k: float(x.mean()) for k, x in by_role.items()},
        ci95={k: Z95 * s for k, s in se.items()},
        metrics={k: float(x.mean()) for k, x in metrics.items()},
        length=float(lengths.mean()),
        agents=list(benv.possible_agents),
        episode_returns=returns,
        episode_metrics=metrics,
    )


@contextmanager
def seeded_sampling(seed: int) -> Iterator[None]:
    """Torch's random stream seeded by `seed` for the block, and put back as it was after it.

    A trained policy samples its actions from torch's global stream. Seeded by the episode seed,
    an evaluation's result depends on the policy, the configs and the seed alone, not on what the
    process drew before; two policies judged on the same episodes draw the same numbers (common
    random numbers, so paired differences carry less sampling noise); and the draws leave the
    caller's stream (a training run's) where it was. Only the CPU stream: policies act on the CPU,
    and touching a GPU's stream would start CUDA in every process that evaluates."""
    with torch.random.fork_rng(devices=[]):
        torch.random.default_generator.manual_seed(seed)
        yield


def one_episode_per_copy(benv: Any) -> None:
    """Have the copies of `benv` (and of the batches it is made of) stay as they ended instead of
    starting another episode: `play_episodes` keeps each copy's first, and a restart would only
    draw layouts nobody plays (for solved pools: solve them). A batch without the switch (a
    code-mode module's) restarts its copies as before; the episodes played are the same."""
    groups = getattr(benv, "groups", None)  # a MixedBatchEnv's or a PaddedBatchEnv's batches
    if groups:
        for env in groups:
            one_episode_per_copy(env)
    elif hasattr(benv, "restart"):
        benv.restart = False


def _sides(returns: np.ndarray, roles: list[Any], fixed: np.ndarray, team: Any) -> dict[str, Any]:
    """`npc` and `sides` of an `EvalResult`: per role, the mean return of its trained and its NPC agents."""
    sides: dict[str, dict[str, float]] = {"trained": {}, "npc": {}}
    for r in roles:
        for side, cols in (("trained", ~fixed[r.agents]), ("npc", fixed[r.agents])):
            if cols.any():
                sides[side][r.name] = float(returns[:, r.agents][:, cols].mean())
    return {"npc": team.players.by_agent(), "sides": sides}
