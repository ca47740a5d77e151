"""Train a compiled spec with Ray RLlib PPO: one RLModule per role, on a local Ray or a cluster.

The compiled PettingZoo ParallelEnv reaches RLlib through its own PettingZoo wrapper
(`ray.rllib.env.wrappers.pettingzoo_env.ParallelPettingZooEnv`) after one small adapter,
`ActingAgentsEnv`, which makes turns and action masks explicit for RLlib's new API stack:

* **Turns.** An agent is asked to act only when it has a legal action: the adapter returns
  observations for those agents alone (in turn-based specs such as the cake negotiation, the
  one whose turn it is). Agents without an observation are not stepped; the rewards they earn
  meanwhile are still reported, and RLlib's `MultiAgentEpisode` adds them to the agent's next
  step. When the episode ends every agent gets a last observation, so each one's trajectory
  closes (and truncation can bootstrap).
* **Masks.** The legal-action mask (the env's `infos[agent]["action_mask"]`) is appended to
  the observation: `Box(obs ++ mask)`. `MaskedPPOTorchRLModule`, RLlib's default PPO module,
  splits its input: the networks read the observation (the mask is not a feature), and the
  logits of illegal actions are pushed to the float minimum, in sampling and in the loss alike,
  so an illegal action is never drawn and never trained on.

Public verb: `train_rllib(spec, params, steps=..., out=...)`. The env's source (generated from
the spec) travels in the env config, so remote env runners on a cluster build the very same
environment without reading the spec file.

**One run folder for both backends.** A run writes what a built-in run writes: `train.jsonl`
(one row per iteration, the built-in trainer's CleanRL-style names: `gymwright.train.rllib_log`),
TensorBoard events in `tb/` with `tensorboard=True`, the resolved settings in `config.yaml`
(TrainConfig's names, `CONFIG_FIELDS`), and `checkpoint.pt`: the RLlib modules' weights in the
built-in policy format (`gymwright.train.rllib_export`), which `gymwright evaluate`, `report`,
`play` and the next curriculum stage load unchanged; `rllib_checkpoint/` holds RLlib's own
checkpoint. `init_from=` starts the modules from such a checkpoint (or a built-in IPPO run's).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import yaml
from pettingzoo import ParallelEnv

from gymwright.atomic import write_atomic
from gymwright.errors import GymwrightError
from gymwright.train.rllib_log import ITER, log_row, role_of
from gymwright.train.rllib_ray import LOCAL, ray_session
from gymwright.train.rllib_settings import DEFAULT_PPO, Settings, resolved, settings_of, training_of

INSTALL_HINT = "pip install 'gymwright[rllib]'"


# ---------------------------------------------------------------- environment adapter


class ActingAgentsEnv(ParallelEnv):
    """A compiled ParallelEnv as RLlib wants it: observations for acting agents, masks inside.

    Observations become `obs ++ action_mask` (float32). Only agents with at least one legal
    action get an observation (and infos) on a step, except at the end of an episode, when all
    do. Rewards, terminations and truncations are passed on for every agent.
    """

    metadata = {"name": "gymwright_acting_agents", "is_parallelizable": True}

    def __init__(self, env: ParallelEnv, copy: int | None = None, agents: list[str] | None = None) -> None:
        self.env = env
        self.copy = copy  # the env copy of a mixture (`make_env`), told in the last infos
        # a mixture's copies declare the same agents (RLlib reads them off one copy): the union,
        # of which a copy with fewer agents never asks the extra ones to act
        self.possible_agents = list(agents or env.possible_agents)
        self.agents: list[str] = []
        self._obs_spaces: dict[str, gymnasium.spaces.Box] = {}
        self._act_spaces: dict[str, gymnasium.Space] = {}
        like = {role_of(a): a for a in env.possible_agents}
        for agent in self.possible_agents:
            base = env.observation_space(like[role_of(agent)])
            n = int(env.action_space(like[role_of(agent)]).n)
            low = np.concatenate([np.asarray(base.low, np.float32).ravel(), np.zeros(n, np.float32)])
            high = np.concatenate([np.asarray(base.high, np.float32).ravel(), np.ones(n, np.float32)])
            self._obs_spaces[agent] = gymnasium.spaces.Box(low, high, dtype=np.float32)
            self._act_spaces[agent] = env.action_space(like[role_of(agent)])

    def observation_space(self, agent: str) -> gymnasium.spaces.Box:
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.Space:
        return self._act_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self.agents = list(self.env.agents)
        self._terms: dict[str, dict[str, float]] = {}
        return self._acting(obs, infos, done=False)

    def step(self, actions: dict[str, Any]):
        obs, rewards, terms, truncs, infos = self.env.step(actions)
        self.agents = list(self.env.agents)
        done = not self.agents or all(terms[a] or truncs[a] for a in terms)
        self._add_terms(infos)
        obs, infos = self._acting(obs, infos, done)
        if done:  # the episode's reward-term sums (and copy), for the run's log (`gymwright.train.rllib_log`)
            for info in infos.values():
                info["episode_terms"] = {role: dict(t) for role, t in self._terms.items()}
                if self.copy is not None:
                    info["copy"] = self.copy
        return obs, rewards, terms, truncs, infos

    def _add_terms(self, infos: dict) -> None:
        """Add this step's reward terms, per role the mean over its agents (as the built-in log does)."""
        per_role: dict[str, dict[str, list[float]]] = {}
        for agent, info in infos.items():
            for name, x in (info.get("reward_terms") or {}).items():
                per_role.setdefault(role_of(agent), {}).setdefault(name, []).append(float(x))
        for role, named in per_role.items():
            sums = self._terms.setdefault(role, {})
            for name, xs in named.items():
                sums[name] = sums.get(name, 0.0) + sum(xs) / len(xs)

    def _acting(self, obs: dict, infos: dict, done: bool) -> tuple[dict, dict]:
        out_obs, out_infos = {}, {}
        for agent, o in obs.items():
            info = infos.get(agent, {})
            mask = info.get("action_mask")
            if mask is None:  # a spec without masks: every action is legal
                mask = np.ones(self.env.action_space(agent).n, np.int8)
            if not done and not mask.any():
                continue  # not this agent's turn
            out_obs[agent] = np.concatenate([np.asarray(o, np.float32).ravel(), mask.astype(np.float32)])
            out_infos[agent] = {k: v for k, v in info.items() if k != "action_mask"}
        return out_obs, out_infos

    def state(self):
        return self.env.state()

    def render(self):
        return self.env.render()

    def close(self) -> None:
        self.env.close()


_BUILT = itertools.count()
"""envs this process built: an env runner builds its envs one after another, so in a mixture env
number i is copy i % copies"""


def make_env(config: dict[str, Any]) -> Any:
    """RLlib env creator: the spec's generated module → ActingAgentsEnv → ParallelPettingZooEnv.

    With `copies` in the config (a mixture of configs: per env copy, the index of its generated
    source in `sources` and its params) the envs a runner builds take the copies in turn."""
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

    from gymwright.compile.build import load_module

    copies = config.get("copies")
    if not copies:
        module = load_module(config["source"], config["name"])
        return ParallelPettingZooEnv(ActingAgentsEnv(module.parallel_env(**config["params"])))
    copy = next(_BUILT) % len(copies)
    source, params = copies[copy]
    module = load_module(config["sources"][source], config["name"])
    acting = ActingAgentsEnv(module.parallel_env(**params), copy=copy, agents=config["agents"])
    wrapped = ParallelPettingZooEnv(acting)
    # the wrapper takes its agents and spaces from the live agents after a reset: declare them all
    wrapped._agent_ids = set(acting.possible_agents)
    wrapped.agents, wrapped.possible_agents = list(acting.possible_agents), list(acting.possible_agents)
    wrapped.observation_space = gymnasium.spaces.Dict({a: acting.observation_space(a) for a in acting.possible_agents})
    wrapped.action_space = gymnasium.spaces.Dict({a: acting.action_space(a) for a in acting.possible_agents})
    return wrapped


def mixture_config(spec: Any, per_copy: list[dict[str, Any]]) -> dict[str, Any]:
    """The env config entries of a mixture: each distinct generated source once, per copy its
    source and params, and every agent id of any copy; `GymwrightError` unless every copy gives
    each role the same spaces."""
    from gymwright.compile import compile_spec

    sources: list[str] = []
    copies: list[tuple[int, dict[str, Any]]] = []
    spaces: dict[str, tuple[Any, int]] = {}
    built: dict[str, int] = {}
    agents: list[str] = []
    for params in per_copy:
        key = repr(sorted(params.items()))
        if key not in built:
            compiled = compile_spec(spec, params)
            if compiled.source not in sources:
                sources.append(compiled.source)
            built[key] = sources.index(compiled.source)
            env = compiled.parallel_env()
            agents += [a for a in env.possible_agents if a not in agents]
            for agent in env.possible_agents:
                shape = (env.observation_space(agent).shape, int(env.action_space(agent).n))
                if spaces.setdefault(role_of(agent), shape) != shape:
                    raise GymwrightError(f"params {params} give role {role_of(agent)} observations and actions "
                                         f"{shape}, other copies {spaces[role_of(agent)]}: one RLlib module per role "
                                         "needs the same spaces in every config", path="params",
                                         hint="mix configs whose observation sizes agree, or use the built-in trainer")
            env.close()
        copies.append((built[key], dict(params)))
    return {"sources": sources, "copies": copies, "agents": agents}


# ---------------------------------------------------------------- RLlib pieces (need Ray)


def _ray_classes() -> dict[str, Any]:
    """Import RLlib lazily and define the classes that subclass it."""
    try:
        import ray
        from ray.rllib.algorithms.ppo import PPOConfig
        from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
            DefaultPPOTorchRLModule,
        )
        from ray.rllib.callbacks.callbacks import RLlibCallback
        from ray.rllib.core.columns import Columns
        from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec
        from ray.rllib.utils.torch_utils import FLOAT_MIN
        from ray.tune.registry import register_env
    except ImportError as e:
        raise GymwrightError(
            f"Ray RLlib is not installed ({e.name or e})", hint=INSTALL_HINT
        ) from e

    class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
        """RLlib's default PPO module on `obs ++ mask` inputs: its networks read the observation
        (built for the space without the mask), and the mask (the last n inputs) masks the logits."""

        def __init__(self, *args: Any, observation_space: Any = None, action_space: Any = None, **kwargs: Any) -> None:
            inner = _without_mask(observation_space, action_space)
            super().__init__(*args, observation_space=inner, action_space=action_space, **kwargs)
            self.observation_space = observation_space  # what the env hands in

        def _split(self, batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
            """(legal actions, the batch with the observation alone)."""
            n = self.action_space.n
            obs = batch[Columns.OBS]
            return obs[..., -n:] > 0.5, {**batch, Columns.OBS: obs[..., :-n]}

        def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            legal, inner = self._split(batch)
            return self._masked(legal, super()._forward(inner, **kwargs))

        def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            legal, inner = self._split(batch)
            return self._masked(legal, super()._forward_train(inner, **kwargs))

        def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
            inner = batch if embeddings is not None else self._split(batch)[1]  # embeddings: already split
            return super().compute_values(inner, embeddings)

        def _masked(self, legal: Any, out: dict[str, Any]) -> dict[str, Any]:
            logits = out[Columns.ACTION_DIST_INPUTS]
            out[Columns.ACTION_DIST_INPUTS] = logits.masked_fill(~legal, FLOAT_MIN)
            return out

    class EpisodeMetrics(RLlibCallback):
        """Logs the spec's episode metrics (from the last infos) as `gymwright/<metric>` means over
        the last 100 episodes, and per iteration the sums `gymwright.train.rllib_log` reads."""

        def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
            if metrics_logger is not None:
                _log_episode(metrics_logger.log_value, episode.get_infos(-1))

    return {
        "ray": ray,
        "PPOConfig": PPOConfig,
        "MultiRLModuleSpec": MultiRLModuleSpec,
        "RLModuleSpec": RLModuleSpec,
        "register_env": register_env,
        "MaskedPPOTorchRLModule": MaskedPPOTorchRLModule,
        "EpisodeMetrics": EpisodeMetrics,
    }


def _without_mask(observation_space: Any, action_space: Any) -> Any:
    """The observation part of an `obs ++ mask` Box (the mask: the last `action_space.n` inputs)."""
    if observation_space is None or action_space is None:
        return observation_space
    n = int(action_space.n)
    return gymnasium.spaces.Box(observation_space.low[:-n], observation_space.high[:-n], dtype=np.float32)


def _log_episode(log: Callable[..., None], infos: dict[Any, Any]) -> None:
    """An ended episode's figures (`infos`: its agents' last infos): the spec's metrics as means
    over the last 100 episodes, and the sums per iteration (and per env copy) that
    `gymwright.train.rllib_log` reads."""
    # the env's own episode totals (`infos[agent]["episode"]`): the episode RLlib passes is
    # only its last chunk when it spanned several rollout fragments
    ends = {a: i for a, i in infos.items() if isinstance(i, dict) and "episode" in i}
    last = [info for info in infos.values() if isinstance(info, dict)]
    metrics = next((i["metrics"] for i in last if i.get("metrics")), {})
    for name, value in metrics.items():
        log(("gymwright", name), float(value), reduce="mean", window=100)
    copy = next((i["copy"] for i in last if "copy" in i), None)
    for at in ((ITER,), *(((ITER, "config", str(copy)),) if copy is not None else ())):
        _log_sums(log, at, ends, metrics)
    terms = next((i["episode_terms"] for i in last if i.get("episode_terms")), {})
    for role, named in terms.items():
        for name, total in named.items():
            log((ITER, "terms", role, name), float(total), reduce="sum")


def _log_sums(log: Callable[..., None], at: tuple[str, ...], ends: dict[Any, Any], metrics: dict[str, Any]) -> None:
    """The episode's count, length, return per agent and metrics, summed under `at`."""
    if ends:
        log((*at, "episodes"), 1, reduce="sum")
        log((*at, "length"), int(next(iter(ends.values()))["episode"]["l"]), reduce="sum")
    for agent, info in ends.items():
        log((*at, "return", str(agent)), float(info["episode"]["r"]), reduce="sum")
        log((*at, "agent_episodes", str(agent)), 1, reduce="sum")
    for name, value in metrics.items():
        log((*at, "metrics", name), float(value), reduce="sum")


# ---------------------------------------------------------------- config and training


def build_config(source: str, name: str, params: dict[str, Any], roles: list[str], *,
                 seed: int, num_env_runners: int, ppo: dict[str, Any] | None = None,
                 steps: int | None = None, settings: Settings | None = None,
                 mixture: dict[str, Any] | None = None) -> Any:
    """The PPOConfig: the registered env, one masked module per role, small-problem settings.

    `settings` (`gymwright.train.rllib_settings.settings_of`) are the run's TrainConfig-named
    settings; `ppo` overrides `PPOConfig.training` keys over them; `mixture` (`mixture_config`)
    gives each env copy its own config."""
    rl = _ray_classes()
    settings = settings or settings_of(None)
    env_name = f"gymwright_{name}"
    rl["register_env"](env_name, make_env)
    training = training_of(Settings(**{**vars(settings), "ppo": {**settings.ppo, **(ppo or {})}}), steps,
                           num_env_runners)
    module = rl["RLModuleSpec"](
        module_class=rl["MaskedPPOTorchRLModule"],
        model_config={"fcnet_hiddens": list(settings.hidden), "fcnet_activation": settings.activation,
                      "vf_share_layers": False},
    )
    return (
        rl["PPOConfig"]()
        .framework("torch")
        .environment(env_name, env_config={"source": source, "name": name, "params": dict(params), **(mixture or {})},
                     disable_env_checking=True)
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=settings.num_envs,
            rollout_fragment_length=settings.rollout_len,
            num_cpus_per_env_runner=1,
        )
        .learners(num_learners=0)
        .multi_agent(policies=set(roles), policy_mapping_fn=role_of)
        .rl_module(rl_module_spec=rl["MultiRLModuleSpec"](rl_module_specs={r: module for r in roles}))
        .training(**training)
        .callbacks(rl["EpisodeMetrics"])
        .debugging(seed=seed, log_level="ERROR")
    )


def _summary(result: dict[str, Any], roles: list[str]) -> dict[str, Any]:
    """Per-role returns and metric means out of one RLlib result dict (the last 100 episodes)."""
    runners = result.get("env_runners", {})
    agent_returns = {a: float(v) for a, v in (runners.get("agent_episode_returns_mean") or {}).items()}
    returns = {}  # per role: the mean over its agents (RLlib's module return sums them)
    for role in roles:
        values = [v for a, v in agent_returns.items() if role_of(a) == role]
        if values:
            returns[role] = sum(values) / len(values)
    metrics = {k: float(v) for k, v in (runners.get("gymwright") or {}).items()
               if isinstance(v, (int, float))}
    return {"returns": returns, "agent_returns": agent_returns, "metrics": metrics}


def _lifetime(result: dict[str, Any], key: str) -> int:
    value = result.get("env_runners", {}).get(key, 0) or 0
    if isinstance(value, dict):  # per agent / per module
        value = sum(v for v in value.values() if isinstance(v, (int, float)))
    return int(value)


def warm_start(algo: Any, modules: dict[str, dict[str, Any]]) -> None:
    """Put per-role module weights (`gymwright.train.rllib_export.warm_weights`) into the
    learner's modules and send them to the env runners."""
    current = algo.learner_group.get_weights()
    merged = {}
    for role, state in current.items():
        merged[role] = dict(state)
        for key, value in modules.get(role, {}).items():
            like = state[key]
            merged[role][key] = value.numpy() if isinstance(like, np.ndarray) else value.to(like.dtype)
    algo.learner_group.set_weights(merged)
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)


CONFIG_FILE = "config.yaml"


def _write_config(out: Path, config: dict[str, Any]) -> Path:
    head = ("# the resolved settings of this RLlib run (gymwright train --backend rllib), in TrainConfig's names;\n"
            "# `gymwright.train.rllib.train_rllib(..., config=...)` takes them (gymwright.train.rllib_settings)\n")
    return write_atomic(out / CONFIG_FILE, head + yaml.safe_dump(config, sort_keys=False))


@dataclass
class _Loop:
    """What the training loop counts."""

    iterations: int = 0
    env_steps: int = 0
    agent_steps: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)


def train_rllib(spec: Any, params: dict[str, Any] | list[dict[str, Any]] | None = None, *, steps: int, out: Path,
                seed: int = 0, ray_address: str | None = None,
                progress: Callable[[dict[str, Any]], None] | None = None,
                num_env_runners: int | None = None, ppo: dict[str, Any] | None = None,
                stop: Callable[[dict[str, Any]], bool] | None = None, config: dict[str, Any] | None = None,
                tensorboard: bool = False, init_from: str | Path | None = None) -> dict[str, Any]:
    """Train PPO with RLlib on `spec` (a library name or a spec file) for about `steps` env steps.

    One RLModule (policy) per role; agents are mapped to the module of their role. `params` is
    one config, or a list spread over the env copies (mixed configs, as `TrainConfig.params`:
    the log then has `config{c}/...` per copy; every config must give a role the same spaces).
    `ray_address=None` (or `local`) starts a local Ray that listens on 127.0.0.1 only and shuts it
    down afterwards (unless Ray is running already: `ray_session`); an address (`host:port`, `auto`,
    `ray://…`) joins that cluster, a head on 127.0.0.1 included (`gymwright.train.rllib_ray`).
    `num_env_runners` defaults to 0 locally (sampling in the driver, cheapest on a small
    machine) and to the cluster's CPUs minus one (at most 16) on a cluster. `config` holds
    TrainConfig-named settings (`gymwright.train.rllib_settings.CONFIG_FIELDS`); `ppo` overrides
    `PPOConfig.training` keys over them. `init_from` is a checkpoint (or run folder) to start the
    modules from: an RLlib run's export or a built-in IPPO run without agent_index, same spec,
    same shapes. `tensorboard=True` also writes TensorBoard events to `out/tb`.
    `progress(info)` is called after every iteration with `iteration`, `env_steps`, `steps`,
    `env_steps_per_second`, `returns` (per role) and `metrics` (means over the last 100
    episodes) and `row` (the train.jsonl row); `stop(info)` returning true ends training early.

    Writes the run folder (see the module docstring) and returns `checkpoint` (`out/checkpoint.pt`,
    the policy in the built-in format), `rllib_checkpoint` (loadable with
    `Algorithm.from_checkpoint`), `log`, `config`, `agent_steps_per_second` (agent steps = steps
    in which an agent acted), `env_steps_per_second`, `final_return` (mean episode return per
    role over the last episodes, averaged over the role's agents), `agent_returns` (per agent),
    `metrics`, `iterations`, `env_steps`, `agent_steps`, `seconds` and `history` (the log rows).
    """
    from gymwright.compile import compile_spec
    from gymwright.train.logger import LOG, RunLog
    from gymwright.train.rllib_export import export_policy, policy_layout, warm_weights

    rl = _ray_classes()
    ray = rl["ray"]
    settings = settings_of({**(config or {}), "total_steps": steps, "seed": seed})  # the arguments win over config
    tensorboard = tensorboard or bool((config or {}).get("tensorboard", False))
    per_copy = [dict(p) for p in params] if isinstance(params, list) else [dict(params or {})]
    if len(per_copy) > 1:
        from gymwright.train.rollout import spread

        per_copy = spread(per_copy, settings.num_envs)  # type: ignore[assignment]  # spread returns a list when given more than one config, as here
    first = per_copy[0]
    compiled = compile_spec(spec, first)
    mixture = mixture_config(spec, per_copy) if len(per_copy) > 1 else None
    name = compiled.checked.spec.name
    layout, n_agents, _ = policy_layout(spec, first)
    roles = [r.name for r in layout]
    start = warm_weights(init_from, spec, layout, hidden=settings.hidden, activation=settings.activation) \
        if init_from is not None else None
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)

    with ray_session(ray_address):
        if num_env_runners is None:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            num_env_runners = 0 if ray_address in LOCAL else max(1, min(16, cpus - 1))
        rllib_config = build_config(compiled.source, name, compiled.params, roles, seed=seed,
                                    num_env_runners=num_env_runners, ppo=ppo, steps=steps, settings=settings,
                                    mixture=mixture)
        training = {key: getattr(rllib_config, key) for key in (*DEFAULT_PPO, "grad_clip")}  # as RLlib resolved them
        run = {"spec": spec if isinstance(spec, dict) else str(spec), "params": per_copy if mixture else first,
               "total_steps": steps,
               "seed": seed, "out": str(out), "tensorboard": tensorboard,
               **({"init_from": str(init_from)} if init_from is not None else {})}
        resolved_config = resolved(settings, training, run)
        algo = rllib_config.build_algo()
        try:
            if start is not None:
                warm_start(algo, start)
            log = RunLog(out, [], tensorboard)
            try:
                loop = _train_loop(algo, roles, n_agents, steps, training, log, progress, stop)
            finally:
                log.close()
            rllib_checkpoint = algo.save_to_path(str((out / "rllib_checkpoint").resolve()))
            modules = algo.learner_group.get_weights()
        finally:
            algo.stop()

    policy = export_policy(out, spec, per_copy, modules, hidden=settings.hidden, activation=settings.activation,
                           history=loop.rows, env_steps=loop.env_steps, iterations=loop.iterations,
                           config={**resolved_config, "backend": "rllib"})
    saved = _write_config(out, resolved_config)
    seconds = loop.rows[-1]["time_s"] if loop.rows else 0.0
    last = _summary(loop.result, roles)
    return {
        "backend": "rllib",
        "spec": name,
        "params": compiled.params,
        "seed": seed,
        "agent_steps_per_second": loop.agent_steps / max(seconds, 1e-9),
        "env_steps_per_second": loop.env_steps / max(seconds, 1e-9),
        "final_return": last["returns"],
        "agent_returns": last["agent_returns"],
        "metrics": last["metrics"],
        "checkpoint": str(policy),
        "rllib_checkpoint": str(rllib_checkpoint),
        "log": str(out / LOG),
        "config": str(saved),
        "iterations": loop.iterations,
        "env_steps": loop.env_steps,
        "agent_steps": loop.agent_steps,
        "seconds": seconds,
        "history": loop.rows,
    }


def _train_loop(algo: Any, roles: list[str], n_agents: int, steps: int, training: dict[str, Any], log: Any,
                progress: Callable[[dict[str, Any]], None] | None,
                stop: Callable[[dict[str, Any]], bool] | None) -> _Loop:
    """`algo.train()` until `steps` env steps (or `stop`), one log row per iteration."""
    loop = _Loop()
    total = max(1, -(-steps // int(training["train_batch_size_per_learner"])))
    t0 = time.perf_counter()
    while loop.env_steps < steps:
        loop.result = algo.train()
        loop.iterations += 1
        before, loop.env_steps = loop.env_steps, _lifetime(loop.result, "num_env_steps_sampled_lifetime")
        loop.agent_steps = _lifetime(loop.result, "num_agent_steps_sampled_lifetime")
        elapsed = time.perf_counter() - t0
        row = log_row(loop.result, roles, iteration=loop.iterations, iterations_total=total,
                      env_steps=loop.env_steps, new_steps=loop.env_steps - before, seconds=elapsed, n_agents=n_agents)
        loop.rows.append(row)
        log.write(row)
        info = {"iteration": loop.iterations, "env_steps": loop.env_steps, "steps": steps, "seconds": elapsed,
                "env_steps_per_second": loop.env_steps / max(elapsed, 1e-9), **_summary(loop.result, roles),
                "row": row}
        if progress is not None:
            progress(info)
        if stop is not None and stop(info):
            break
    return loop


__all__ = ["ActingAgentsEnv", "CONFIG_FILE", "DEFAULT_PPO", "build_config", "make_env", "ray_session", "role_of",
           "train_rllib", "warm_start"]
