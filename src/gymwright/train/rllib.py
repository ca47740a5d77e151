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
  reads the last `n_actions` entries of its input and pushes the logits of illegal actions to
  the float minimum, in sampling and in the loss alike, so an illegal action is never drawn
  and never trained on. The network also sees the mask as features.

Public verb: `train_rllib(spec, params, steps=..., out=...)`. The env's source (generated from
the spec) travels in the env config, so remote env runners on a cluster build the very same
environment without reading the spec file.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import ParallelEnv

from gymwright.errors import GymwrightError

INSTALL_HINT = "pip install 'gymwright[rllib]'"

# PPO settings for small discrete problems (short episodes, few actions), as used by the
# benchmark. `ppo=` overrides any of them (keys of `PPOConfig.training`).
DEFAULT_PPO: dict[str, Any] = {
    "lr": 3e-4,
    "gamma": 0.99,
    "lambda_": 0.95,
    "clip_param": 0.2,
    "entropy_coeff": 0.01,
    "vf_loss_coeff": 0.5,
    "num_epochs": 4,
    "train_batch_size_per_learner": 2048,
    "minibatch_size": 256,
}
# Measured here: RLlib 2.60 re-converts the finished episodes of a sample call on every step,
# so short episodes need many envs per runner and short fragments (about 1,500 env-steps/s
# with these against under 100 with the defaults).
NUM_ENVS_PER_RUNNER = 32
ROLLOUT_FRAGMENT_LENGTH = 8
HIDDEN = [64, 64]


# ---------------------------------------------------------------- environment adapter


class ActingAgentsEnv(ParallelEnv):
    """A compiled ParallelEnv as RLlib wants it: observations for acting agents, masks inside.

    Observations become `obs ++ action_mask` (float32). Only agents with at least one legal
    action get an observation (and infos) on a step, except at the end of an episode, when all
    do. Rewards, terminations and truncations are passed on for every agent.
    """

    metadata = {"name": "gymwright_acting_agents", "is_parallelizable": True}

    def __init__(self, env: ParallelEnv) -> None:
        self.env = env
        self.possible_agents = list(env.possible_agents)
        self.agents: list[str] = []
        self._obs_spaces: dict[str, gymnasium.spaces.Box] = {}
        for agent in self.possible_agents:
            base = env.observation_space(agent)
            n = int(env.action_space(agent).n)
            low = np.concatenate([np.asarray(base.low, np.float32).ravel(), np.zeros(n, np.float32)])
            high = np.concatenate([np.asarray(base.high, np.float32).ravel(), np.ones(n, np.float32)])
            self._obs_spaces[agent] = gymnasium.spaces.Box(low, high, dtype=np.float32)

    def observation_space(self, agent: str) -> gymnasium.spaces.Box:
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.Space:
        return self.env.action_space(agent)

    def reset(self, seed: int | None = None, options: dict | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self.agents = list(self.env.agents)
        return self._acting(obs, infos, done=False)

    def step(self, actions: dict[str, Any]):
        obs, rewards, terms, truncs, infos = self.env.step(actions)
        self.agents = list(self.env.agents)
        done = not self.agents or all(terms[a] or truncs[a] for a in terms)
        obs, infos = self._acting(obs, infos, done)
        return obs, rewards, terms, truncs, infos

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


def role_of(agent_id: str, *args: Any, **kwargs: Any) -> str:
    """The role (policy / module id) of an agent id `role_i`."""
    return agent_id.rsplit("_", 1)[0]


def make_env(config: dict[str, Any]) -> Any:
    """RLlib env creator: the spec's generated module → ActingAgentsEnv → ParallelPettingZooEnv."""
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

    from gymwright.compile.build import load_module

    module = load_module(config["source"], config["name"])
    return ParallelPettingZooEnv(ActingAgentsEnv(module.parallel_env(**config["params"])))


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
        """RLlib's default PPO module with the action mask (the last n inputs) applied to the logits."""

        def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            return self._masked(batch, super()._forward(batch, **kwargs))

        def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            return self._masked(batch, super()._forward_train(batch, **kwargs))

        def _masked(self, batch: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
            n = self.action_space.n
            legal = batch[Columns.OBS][..., -n:] > 0.5
            logits = out[Columns.ACTION_DIST_INPUTS]
            out[Columns.ACTION_DIST_INPUTS] = logits.masked_fill(~legal, FLOAT_MIN)
            return out

    class EpisodeMetrics(RLlibCallback):
        """Logs the spec's episode metrics (from the last infos) as `gymwright/<metric>` means."""

        def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
            if metrics_logger is None:
                return
            for info in episode.get_infos(-1).values():
                metrics = info.get("metrics") if isinstance(info, dict) else None
                if metrics:
                    for name, value in metrics.items():
                        metrics_logger.log_value(("gymwright", name), float(value), reduce="mean", window=100)
                    return

    return {
        "ray": ray,
        "PPOConfig": PPOConfig,
        "MultiRLModuleSpec": MultiRLModuleSpec,
        "RLModuleSpec": RLModuleSpec,
        "register_env": register_env,
        "MaskedPPOTorchRLModule": MaskedPPOTorchRLModule,
        "EpisodeMetrics": EpisodeMetrics,
    }


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast (instead of Ray's long retry loop) when `host:port` does not answer."""
    if address in ("auto", "local") or "://" in address or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except (OSError, ValueError) as e:
        raise GymwrightError(
            f"cannot reach the Ray cluster at {address!r} ({e})",
            path="--ray-address",
            value=address,
            hint="check the head node's address and port (`ray start --head` prints it), or omit "
            "--ray-address to train on a local Ray",
        ) from e


def _start_ray(ray: Any, address: str | None, num_cpus: int) -> bool:
    """Start or join Ray; return whether this call did it (and so must shut it down)."""
    if ray.is_initialized():
        return False
    if address is None:
        ray.init(
            address="local",
            num_cpus=num_cpus,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            log_to_driver=False,
            configure_logging=False,
        )
        return True
    _check_reachable(address)
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    except Exception as e:  # Ray raises ConnectionError, RuntimeError, ... depending on the path
        raise GymwrightError(
            f"cannot connect to the Ray cluster at {address!r}: {e}",
            path="--ray-address",
            value=address,
            hint="check that the cluster runs the same Ray and Python versions, or omit "
            "--ray-address to train on a local Ray",
        ) from e
    return True


# ---------------------------------------------------------------- config and training


def build_config(source: str, name: str, params: dict[str, Any], roles: list[str], *,
                 seed: int, num_env_runners: int, ppo: dict[str, Any] | None = None,
                 steps: int | None = None) -> Any:
    """The PPOConfig: the registered env, one masked module per role, small-problem settings."""
    rl = _ray_classes()
    env_name = f"gymwright_{name}"
    rl["register_env"](env_name, make_env)
    training = {**DEFAULT_PPO, **(ppo or {})}
    if steps is not None:  # a budget smaller than one batch still trains once
        training["train_batch_size_per_learner"] = max(64, min(training["train_batch_size_per_learner"], steps))
        training["minibatch_size"] = min(training["minibatch_size"], training["train_batch_size_per_learner"])
    module = rl["RLModuleSpec"](
        module_class=rl["MaskedPPOTorchRLModule"],
        model_config={"fcnet_hiddens": HIDDEN, "fcnet_activation": "tanh", "vf_share_layers": False},
    )
    return (
        rl["PPOConfig"]()
        .framework("torch")
        .environment(env_name, env_config={"source": source, "name": name, "params": dict(params)},
                     disable_env_checking=True)
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=NUM_ENVS_PER_RUNNER,
            rollout_fragment_length=ROLLOUT_FRAGMENT_LENGTH,
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
    """Per-role returns and metric means out of one RLlib result dict."""
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


def train_rllib(spec: str, params: dict[str, Any] | None = None, *, steps: int, out: Path,
                seed: int = 0, ray_address: str | None = None,
                progress: Callable[[dict[str, Any]], None] | None = None,
                num_env_runners: int | None = None, ppo: dict[str, Any] | None = None,
                stop: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
    """Train PPO with RLlib on `spec` (a library name or a spec file) for about `steps` env steps.

    One RLModule (policy) per role; agents are mapped to the module of their role.
    `ray_address=None` starts a local Ray on 127.0.0.1 and shuts it down afterwards; an address
    (`host:port`, `auto`, `ray://…`) joins that cluster. `num_env_runners` defaults to 0 locally
    (sampling in the driver, cheapest on a small machine) and to the cluster's CPUs minus one
    (at most 16) on a cluster. `ppo` overrides `PPOConfig.training` settings.
    `progress(info)` is called after every iteration with `iteration`, `env_steps`, `steps`,
    `env_steps_per_second`, `returns` (per role) and `metrics`; `stop(info)` returning true
    ends training early (the benchmark uses it).

    Returns `agent_steps_per_second` (agent steps = steps in which an agent acted),
    `env_steps_per_second`, `final_return` (mean episode return per role over the last
    episodes, averaged over the role's agents), `agent_returns` (per agent), `metrics` (means of the spec's episode metrics), `checkpoint` (an RLlib
    checkpoint directory in `out`, loadable with `Algorithm.from_checkpoint`), `iterations`,
    `env_steps`, `agent_steps`, `seconds` and `history` (one summary per iteration).
    """
    from gymwright.compile import compile_spec

    rl = _ray_classes()
    ray = rl["ray"]
    params = dict(params or {})
    compiled = compile_spec(spec, params)
    name = compiled.checked.spec.name
    probe = compiled.parallel_env()
    roles = list(dict.fromkeys(role_of(a) for a in probe.possible_agents))
    probe.close()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)

    started = _start_ray(ray, ray_address, num_cpus=2)
    try:
        if num_env_runners is None:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            num_env_runners = 0 if ray_address is None else max(1, min(16, cpus - 1))
        config = build_config(compiled.source, name, compiled.params, roles, seed=seed,
                              num_env_runners=num_env_runners, ppo=ppo, steps=steps)
        algo = config.build_algo()
        try:
            history: list[dict[str, Any]] = []
            env_steps = agent_steps = iterations = 0
            t0 = time.perf_counter()
            result: dict[str, Any] = {}
            while env_steps < steps:
                result = algo.train()
                iterations += 1
                env_steps = _lifetime(result, "num_env_steps_sampled_lifetime")
                agent_steps = _lifetime(result, "num_agent_steps_sampled_lifetime")
                elapsed = time.perf_counter() - t0
                info = {"iteration": iterations, "env_steps": env_steps, "steps": steps,
                        "seconds": elapsed, "env_steps_per_second": env_steps / max(elapsed, 1e-9),
                        **_summary(result, roles)}
                history.append(info)
                if progress is not None:
                    progress(info)
                if stop is not None and stop(info):
                    break
            seconds = time.perf_counter() - t0
            checkpoint = algo.save_to_path(str((out / "rllib_checkpoint").resolve()))
        finally:
            algo.stop()
    finally:
        if started:
            ray.shutdown()

    last = _summary(result, roles)
    return {
        "backend": "rllib",
        "spec": name,
        "params": compiled.params,
        "seed": seed,
        "agent_steps_per_second": agent_steps / max(seconds, 1e-9),
        "env_steps_per_second": env_steps / max(seconds, 1e-9),
        "final_return": last["returns"],
        "agent_returns": last["agent_returns"],
        "metrics": last["metrics"],
        "checkpoint": str(checkpoint),
        "iterations": iterations,
        "env_steps": env_steps,
        "agent_steps": agent_steps,
        "seconds": seconds,
        "history": history,
    }


__all__ = ["ActingAgentsEnv", "DEFAULT_PPO", "build_config", "make_env", "role_of", "train_rllib"]
