"""Time to equilibrium on the cake negotiation: built-in PPO vs RLlib PPO vs SB3 + SuperSuit PPO.

Game: cake_negotiation with discount 0.5, 10 rounds and a 0.05 offer grid (offer_levels 21).
Its subgame-perfect first-proposer share, computed here by backward induction over the spec's own
discrete, finite game, is 0.65 (Rubinstein's unbounded-horizon 2/3 moved by the grid); the focal
50/50 split is 0.15 away.

Threshold: a run has reached equilibrium when, at two consecutive reports (an update of the
built-in PPO or of SB3, an iteration of RLlib), the recent episodes' mean `first_share` (the
share the first proposer asked for, a spec metric) is within 0.05 of the equilibrium share and
their mean `rounds` is at most 0.2 (the first offer is accepted in about 80% or more of them).
"Recent episodes": those that ended in the last update (built-in, SB3) or the last 100 (RLlib).

Time to threshold is wall-clock seconds from the call that starts training (setup, and for RLlib
starting a local Ray, included) to the report that met it; the median is over 3 seeds, and a run
that does not meet it within the step cap counts as not reached (the median is then "not
reached" when two of three fail). env-steps/s is env steps (one step() of one copy) per second of
the training loop.

Settings, shared where the libraries allow: PPO, 64x64 ReLU actor and critic, lr 3e-4, gamma 1.0
(the cake's own discount is already in the reward, so the RL objective is the game's payoff),
GAE lambda 0.95, clip 0.2, entropy 0.01, 4 epochs, action masks on (built-in: native; RLlib:
`gymwright.train.rllib`'s masked module; SB3: the mask appended to the observation and illegal
logits set to -1e8 by `MaskedPolicy` below), 2,048 samples per update in minibatches of 256:
built-in 128 copies x 16 steps (8 minibatches, no lr annealing: otherwise its defaults, which
share one policy between the bargainers as RLlib's one module per role and SB3's parameter
sharing do); RLlib 2,048 env steps (32 envs per runner, fragments of 8, sampling in the driver);
SB3 8 copies x 2 agents x 128 steps (2,048 agent-steps: SuperSuit gives the waiting bargainer a
slot too, its all-zero mask makes that a no-op for the policy). Torch uses one thread everywhere.

    python benchmarks/training.py            # 3 seeds, cap 200,000 env steps per run
    python benchmarks/training.py --quick    # 1 seed, cap 20,000: a smoke run (a minute or two)
    python benchmarks/training.py --json     # the same as JSON
    python benchmarks/training.py --only rllib,sb3 --cap 100000
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from gymwright.compile import compile_spec  # noqa: E402

SPEC = "cake_negotiation"
PARAMS: dict[str, Any] = {"discount": 0.5, "max_rounds": 10, "offer_levels": 21}
TOLERANCE = 0.05
MAX_ROUNDS_MEAN = 0.2
CONSECUTIVE = 2
PPO_SHARED = {"lr": 3e-4, "gamma": 1.0, "lam": 0.95, "clip": 0.2, "ent": 0.01, "epochs": 4, "hidden": (64, 64)}


# ---------------------------------------------------------------- the equilibrium


def spe_first_share(discount: float, max_rounds: int, grid: list[float] | np.ndarray,
                    accept_ties: bool = True) -> float | None:
    """The first proposer's share in the subgame-perfect equilibrium of the spec's game.

    Rules (cake_negotiation.yaml): round r = 0, 1, ...; bargainer r % 2 proposes a share s of
    the grid for itself; the other accepts (payoffs discount**r * s and discount**r * (1 - s),
    the episode ends) or rejects (round r + 1, roles swap); when round reaches max_rounds the
    cake is lost (0 each). Backward induction on (value of the proposer, value of the responder)
    of round r, in undiscounted-from-0 units: the responder accepts s when its payoff now is at
    least (with `accept_ties`, else strictly more than) what it gets as the next proposer; the
    proposer takes the largest accepted s, unless being refused pays it more. None: no deal.
    """
    proposer_v = responder_v = 0.0  # after the last round: the cake is gone
    share: float | None = None
    for r in reversed(range(max_rounds)):
        d = discount**r
        if accept_ties:
            accepted = [s for s in grid if d * (1 - s) >= proposer_v - 1e-12]
        else:
            accepted = [s for s in grid if d * (1 - s) > proposer_v + 1e-12]
        best = max(accepted) if accepted else None
        if best is not None and d * best >= responder_v - 1e-12:
            proposer_v, responder_v, share = d * best, d * (1 - best), float(best)
        else:  # refused: the roles of the next round, one round later
            proposer_v, responder_v, share = responder_v, proposer_v, None
    return share


def offer_grid(params: dict[str, Any]) -> np.ndarray:
    """The spec's offer grid: `linspace(0, 1, offer_levels)` (11 levels in older specs)."""
    return np.linspace(0.0, 1.0, int(params.get("offer_levels", 11)))


class Threshold:
    """Watches reports; records the wall time of the first of CONSECUTIVE passing ones."""

    def __init__(self, target: float, t0: float) -> None:
        self.target, self.t0 = target, t0
        self.streak = 0
        self.reached_s: float | None = None
        self.reached_steps: int | None = None
        self.last: dict[str, float] = {}

    def report(self, first_share: float | None, rounds: float | None, env_steps: int) -> bool:
        if first_share is None or rounds is None:
            return self.reached_s is not None
        self.last = {"first_share": first_share, "rounds": rounds}
        ok = abs(first_share - self.target) <= TOLERANCE and rounds <= MAX_ROUNDS_MEAN
        self.streak = self.streak + 1 if ok else 0
        if self.streak >= CONSECUTIVE and self.reached_s is None:
            self.reached_s = time.perf_counter() - self.t0
            self.reached_steps = env_steps
        return self.reached_s is not None


class _Reached(Exception):
    """Raised from a progress callback to end a run once the threshold is met."""


# ---------------------------------------------------------------- backends


def run_builtin(seed: int, cap: int, target: float, out: Path) -> dict[str, Any]:
    from gymwright.train import TrainConfig, train  # the built-in trainer

    cfg = TrainConfig(
        spec=SPEC, params=dict(PARAMS), total_steps=cap, num_envs=128, rollout_len=16,
        lr=PPO_SHARED["lr"], anneal_lr=False, gamma=PPO_SHARED["gamma"], gae_lambda=PPO_SHARED["lam"],
        clip=PPO_SHARED["clip"], epochs=PPO_SHARED["epochs"], minibatches=8, ent_coef=PPO_SHARED["ent"],
        hidden=PPO_SHARED["hidden"], seed=seed, out=out, checkpoint_every=10_000, threads=1,
        agent_index=False,  # one policy for both bargainers, as in RLlib and SB3 (the default)
    )
    t0 = time.perf_counter()
    watch = Threshold(target, t0)
    rows: list[dict[str, Any]] = []

    def progress(row: dict[str, Any]) -> None:
        rows.append(row)
        if watch.report(row.get("metrics/first_share"), row.get("metrics/rounds"), row["env_steps"]):
            raise _Reached

    try:
        train(cfg, progress=progress)
    except _Reached:
        pass
    loop_s = sum(r["time_s"] - (rows[i - 1]["time_s"] if i else 0.0) for i, r in enumerate(rows))
    steps = rows[-1]["env_steps"] if rows else 0
    env_s = sum(r.get("time/env_s", 0.0) for r in rows)
    net_s = sum(r.get("time/network_s", 0.0) for r in rows)
    return {"reached_s": watch.reached_s, "reached_steps": watch.reached_steps, "env_steps": steps,
            "env_steps_per_second": steps / loop_s if loop_s else 0.0, "last": watch.last,
            "wall_s": time.perf_counter() - t0,
            "time_split": {"env_s": env_s, "network_s": net_s, "loop_s": loop_s}}


def run_rllib(seed: int, cap: int, target: float, out: Path) -> dict[str, Any]:
    from gymwright.train.rllib import train_rllib

    t0 = time.perf_counter()
    watch = Threshold(target, t0)
    ppo = {"lr": PPO_SHARED["lr"], "gamma": PPO_SHARED["gamma"], "lambda_": PPO_SHARED["lam"],
           "clip_param": PPO_SHARED["clip"], "entropy_coeff": PPO_SHARED["ent"],
           "num_epochs": PPO_SHARED["epochs"], "train_batch_size_per_learner": 2048, "minibatch_size": 256}

    def stop(info: dict[str, Any]) -> bool:
        m = info.get("metrics", {})
        return watch.report(m.get("first_share"), m.get("rounds"), info["env_steps"])

    result = train_rllib(SPEC, dict(PARAMS), steps=cap, out=out, seed=seed, ppo=ppo, stop=stop)
    return {"reached_s": watch.reached_s, "reached_steps": watch.reached_steps,
            "env_steps": result["env_steps"], "env_steps_per_second": result["env_steps_per_second"],
            "last": watch.last, "wall_s": time.perf_counter() - t0,
            "setup_s": (time.perf_counter() - t0) - result["seconds"]}


def _sb3_pieces() -> dict[str, Any]:
    import gymnasium
    import supersuit as ss
    from pettingzoo import ParallelEnv
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.common.utils import set_random_seed
    from stable_baselines3.common.vec_env import VecMonitor

    class MaskInObs(ParallelEnv):
        """Every agent every step (SuperSuit needs that), with its action mask appended."""

        metadata = {"name": "mask_in_obs", "is_parallelizable": True}

        def __init__(self, env: Any) -> None:
            self.env = env
            self.render_mode = None
            self.possible_agents = list(env.possible_agents)
            self.agents: list[str] = []
            self._spaces = {}
            for a in self.possible_agents:
                base, n = env.observation_space(a), env.action_space(a).n
                self._spaces[a] = gymnasium.spaces.Box(
                    np.concatenate([base.low, np.zeros(n, np.float32)]),
                    np.concatenate([base.high, np.ones(n, np.float32)]), dtype=np.float32)

        def observation_space(self, agent: str) -> Any:
            return self._spaces[agent]

        def action_space(self, agent: str) -> Any:
            return self.env.action_space(agent)

        def _obs(self, obs: dict, infos: dict) -> dict:
            return {a: np.concatenate([o, infos[a]["action_mask"].astype(np.float32)]) for a, o in obs.items()}

        def reset(self, seed: int | None = None, options: dict | None = None):
            obs, infos = self.env.reset(seed=seed, options=options)
            self.agents = list(self.env.agents)
            return self._obs(obs, infos), infos

        def step(self, actions: dict):
            obs, rew, term, trunc, infos = self.env.step(actions)
            self.agents = list(self.env.agents)
            return self._obs(obs, infos), rew, term, trunc, infos

    class MaskedPolicy(ActorCriticPolicy):
        """SB3's MLP actor-critic with the action mask (the last n inputs) applied to the logits."""

        def _with_mask(self, obs: torch.Tensor) -> None:
            self._legal = obs[..., -self.action_space.n:] > 0.5

        def forward(self, obs, deterministic=False):
            self._with_mask(obs)
            return super().forward(obs, deterministic)

        def evaluate_actions(self, obs, actions):
            self._with_mask(obs)
            return super().evaluate_actions(obs, actions)

        def get_distribution(self, obs):
            self._with_mask(obs)
            return super().get_distribution(obs)

        def _get_action_dist_from_latent(self, latent_pi):
            logits = self.action_net(latent_pi).masked_fill(~self._legal, -1e8)
            return self.action_dist.proba_distribution(action_logits=logits)

    class Watch(BaseCallback):
        """Collects first_share / rounds of episodes (one slot per copy) and checks after each rollout."""

        def __init__(self, watch: Threshold, n_agents: int) -> None:
            super().__init__()
            self.watch, self.n_agents = watch, n_agents
            self.first: list[float] = []
            self.rounds: list[float] = []

        def _on_step(self) -> bool:
            for i, (done, info) in enumerate(zip(self.locals["dones"], self.locals["infos"], strict=True)):
                if done and i % self.n_agents == 0 and "metrics" in info:
                    self.first.append(info["metrics"]["first_share"])
                    self.rounds.append(info["metrics"]["rounds"])
            return self.watch.reached_s is None

        def _on_rollout_end(self) -> None:
            if self.first:
                self.watch.report(float(np.mean(self.first)), float(np.mean(self.rounds)),
                                  self.num_timesteps // self.n_agents)
            self.first, self.rounds = [], []

    return {"ss": ss, "PPO": PPO, "set_random_seed": set_random_seed, "VecMonitor": VecMonitor,
            "MaskInObs": MaskInObs, "MaskedPolicy": MaskedPolicy, "Watch": Watch}


def run_sb3(seed: int, cap: int, target: float, out: Path) -> dict[str, Any]:
    p = _sb3_pieces()
    ss = p["ss"]
    t0 = time.perf_counter()
    watch = Threshold(target, t0)
    par = p["MaskInObs"](compile_spec(SPEC, PARAMS).parallel_env())
    n_agents = len(par.possible_agents)
    venv = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(par), 8, num_cpus=0,
                                 base_class="stable_baselines3")
    venv = p["VecMonitor"](venv)
    # PPO(seed=...) and venv.seed() fail on ConcatVecEnv; the cake env draws nothing at random,
    # so seeding torch and numpy is all a seed needs to do here
    p["set_random_seed"](seed)
    model = p["PPO"](
        p["MaskedPolicy"], venv, learning_rate=PPO_SHARED["lr"], n_steps=128, batch_size=256,
        n_epochs=PPO_SHARED["epochs"], gamma=PPO_SHARED["gamma"], gae_lambda=PPO_SHARED["lam"],
        clip_range=PPO_SHARED["clip"], ent_coef=PPO_SHARED["ent"], device="cpu", verbose=0,
        policy_kwargs={"net_arch": list(PPO_SHARED["hidden"]), "activation_fn": torch.nn.ReLU},
    )
    t_loop = time.perf_counter()
    model.learn(total_timesteps=cap * n_agents, callback=p["Watch"](watch, n_agents))
    loop_s = time.perf_counter() - t_loop
    venv.close()
    steps = model.num_timesteps // n_agents
    return {"reached_s": watch.reached_s, "reached_steps": watch.reached_steps, "env_steps": steps,
            "env_steps_per_second": steps / loop_s, "last": watch.last,
            "wall_s": time.perf_counter() - t0}


BACKENDS: dict[str, tuple[str, Callable[..., dict[str, Any]]]] = {
    "builtin": ("built-in PPO (gymwright.train)", run_builtin),
    "rllib": ("RLlib 2.60 PPO", run_rllib),
    "sb3": ("SB3 2.9 PPO + SuperSuit", run_sb3),
}


# ---------------------------------------------------------------- driver and table


def median_time(runs: list[dict[str, Any]]) -> float | None:
    """Median time to threshold, a run not reaching it counting as +inf; None if that is the median."""
    times = sorted(r["reached_s"] if r.get("reached_s") is not None else float("inf") for r in runs)
    med = statistics.median(times) if times else float("inf")
    return None if med == float("inf") else med


def run_all(backends: list[str], seeds: list[int], cap: int) -> dict[str, Any]:
    torch.set_num_threads(1)
    target = spe_first_share(PARAMS["discount"], PARAMS["max_rounds"], offer_grid(PARAMS))
    out: dict[str, Any] = {"spec": SPEC, "params": PARAMS, "target_first_share": target,
                           "tolerance": TOLERANCE, "cap_env_steps": cap, "seeds": seeds,
                           "machine": f"{platform.machine()}, {os.cpu_count()} cpus", "backends": {}}
    for key in backends:
        label, fn = BACKENDS[key]
        runs = []
        for seed in seeds:
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    run = fn(seed, cap, target, Path(tmp))
                except Exception as e:  # a backend that cannot run is a row, not a crash
                    run = {"error": f"{type(e).__name__}: {e}".splitlines()[0]}
                    traceback.print_exc(file=sys.stderr)
            run["seed"] = seed
            runs.append(run)
            print(f"[{key} seed {seed}] {json.dumps(run, default=str)}", file=sys.stderr, flush=True)
        ok = [r for r in runs if "error" not in r]
        out["backends"][key] = {
            "label": label, "runs": runs,
            "median_time_s": median_time(ok) if ok else None,
            "reached": sum(r.get("reached_s") is not None for r in ok),
            "median_env_steps_per_second": statistics.median(r["env_steps_per_second"] for r in ok) if ok else None,
            "error": None if ok else runs[0].get("error"),
        }
    return out


def table(res: dict[str, Any]) -> str:
    n = len(res["seeds"])
    lines = [
        f"cake_negotiation {res['params']}: equilibrium first-proposer share {res['target_first_share']:.3f} "
        f"(± {res['tolerance']}), cap {res['cap_env_steps']:,} env steps, seeds {res['seeds']}",
        "",
        "| trainer | time to threshold (median) | reached | steps to threshold (median) | env-steps/s (median) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for b in res["backends"].values():
        if b["error"]:
            lines.append(f"| {b['label']} | error: {b['error']} | – | – | – |")
            continue
        med = b["median_time_s"]
        steps = sorted(r["reached_steps"] if r.get("reached_steps") else float("inf") for r in b["runs"])
        med_steps = statistics.median(steps)
        lines.append(
            f"| {b['label']} | {f'{med:.1f} s' if med is not None else 'not reached'} | {b['reached']}/{n} | "
            f"{f'{med_steps:,.0f}' if med_steps != float('inf') else '–'} | "
            f"{b['median_env_steps_per_second']:,.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1 seed, a 20,000-step cap")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument("--only", default="builtin,rllib,sb3", help="comma-separated: builtin, rllib, sb3")
    ap.add_argument("--cap", type=int, default=None, help="env-step cap per run (default 200,000)")
    ap.add_argument("--seeds", type=int, default=None, help="number of seeds (default 3)")
    args = ap.parse_args(argv)
    cap = args.cap or (20_000 if args.quick else 200_000)
    seeds = list(range(args.seeds or (1 if args.quick else 3)))
    backends = [b.strip() for b in args.only.split(",") if b.strip()]
    unknown = set(backends) - set(BACKENDS)
    if unknown:
        ap.error(f"unknown backend(s) {sorted(unknown)}; choose from {sorted(BACKENDS)}")
    res = run_all(backends, seeds, cap)
    print(json.dumps(res, indent=2, default=str) if args.json else table(res))


if __name__ == "__main__":
    main()
