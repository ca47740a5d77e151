"""An RLlib iteration as a `train.jsonl` row, with the built-in trainer's (CleanRL-style) names.

`gymwright.train.rllib`'s episode callback sums, per iteration, what the episodes that ended in
it did (under `env_runners/gymwright_iter`: `episodes`, `length`, `return/AGENT`, `agent_episodes/AGENT`,
`metrics/NAME`, `terms/ROLE/NAME`, and per env copy of a mixture `config/C/...`); the row divides them into the built-in trainer's means over
the episodes that ended in the update, so the curves of both backends read alike:

| row key | from RLlib |
| --- | --- |
| `update`, `updates_total`, `env_steps`, `time_s` | the iteration, the iterations the budget needs, env steps sampled, loop seconds |
| `charts/sps`, `charts/agent_sps` | env steps (times agents) of the iteration per second of it |
| `charts/learning_rate` | `learners/ROLE/default_optimizer_learning_rate` (mean over roles) |
| `time/env_s`, `time/network_s` | `timers/env_runner_sampling_timer`, `timers/learner_update_timer` |
| `charts/episodes`, `charts/episode_length`, `charts/return/ROLE`, `metrics/NAME` | the callback's sums / episodes (a role's return: the mean over its agents' episodes) |
| `reward_terms/ROLE/NAME` | the callback's term sums / env steps of those episodes (per step, mean over the role's agents) |
| `configC/return/ROLE`, `configC/metrics/NAME` | a mixture's copy C alone (`config/C/...` sums), as the built-in log has them |
| `losses/policy_loss`, `losses/value_loss`, `losses/entropy`, `losses/approx_kl`, `losses/explained_variance` | `policy_loss`, `vf_loss`, `entropy`, `mean_kl_loss`, `vf_explained_var` of `learners/ROLE` (mean over roles) |

RLlib's PPO computes no clip fraction, so `losses/clipfrac` is absent; its `vf_loss` is the
squared error of unnormalized values (the built-in one's targets are normalized).
"""

from __future__ import annotations

from typing import Any

ITER = "gymwright_iter"  # the callback's per-iteration sums, under env_runners/
LOSSES = {"policy_loss": "policy_loss", "value_loss": "vf_loss", "entropy": "entropy",
          "approx_kl": "mean_kl_loss", "explained_variance": "vf_explained_var"}


def role_of(agent_id: str, *args: Any, **kwargs: Any) -> str:
    """The role (RLlib module id) of an agent id `role_i`; RLlib's `policy_mapping_fn` as well."""
    return agent_id.rsplit("_", 1)[0]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def log_row(result: dict[str, Any], roles: list[str], *, iteration: int, iterations_total: int, env_steps: int,
            new_steps: int, seconds: float, n_agents: int) -> dict[str, Any]:
    """The `train.jsonl` row of one RLlib result (`Algorithm.train()`); `new_steps` are the env
    steps sampled in this iteration, `seconds` the loop's time so far."""
    timers = result.get("timers", {})
    elapsed = float(result.get("time_this_iter_s") or 0.0) or 1e-9
    learners = result.get("learners", {})
    row: dict[str, Any] = {"update": iteration, "updates_total": max(iterations_total, iteration), "env_steps": env_steps,
                           "time_s": seconds, "charts/sps": new_steps / elapsed,
                           "charts/agent_sps": new_steps * n_agents / elapsed}
    lr = _mean([float(learners[r]["default_optimizer_learning_rate"]) for r in roles
                if "default_optimizer_learning_rate" in learners.get(r, {})])
    if lr is not None:
        row["charts/learning_rate"] = lr
    row["time/env_s"] = float(timers.get("env_runner_sampling_timer", 0.0))
    row["time/network_s"] = float(timers.get("learner_update_timer", 0.0))
    row.update(episode_stats(result.get("env_runners", {}).get(ITER, {}), roles))
    for ours, theirs in LOSSES.items():
        value = _mean([float(learners[r][theirs]) for r in roles if theirs in learners.get(r, {})])
        if value is not None:
            row[f"losses/{ours}"] = value
    return row


def episode_stats(sums: dict[str, Any], roles: list[str]) -> dict[str, Any]:
    """Means over the episodes that ended in the iteration (nothing but the count if none did)."""
    episodes = int(sums.get("episodes", 0) or 0)
    if not episodes:
        return {"charts/episodes": 0}
    length = float(sums.get("length", 0.0))
    row: dict[str, Any] = {"charts/episodes": episodes, "charts/episode_length": length / episodes}
    returns, counts = sums.get("return", {}), sums.get("agent_episodes", {})
    for role in roles:
        mine = [a for a in returns if role_of(a) == role]
        if mine:  # the mean over the role's agents and episodes (a mixture's copies may differ in agents)
            total = sum(float(counts.get(a, episodes)) for a in mine)
            row[f"charts/return/{role}"] = sum(float(returns[a]) for a in mine) / total
    for name, total in sums.get("metrics", {}).items():
        row[f"metrics/{name}"] = float(total) / episodes
    for role, terms in sums.get("terms", {}).items():
        for name, total in terms.items():
            row[f"reward_terms/{role}/{name}"] = float(total) / max(length, 1.0)
    for copy, mine in sorted(sums.get("config", {}).items(), key=lambda kv: int(kv[0])):  # a mixture, per env copy
        for key, value in episode_stats(mine, roles).items():
            if key.startswith(("charts/return/", "metrics/")):
                row[f"config{copy}/" + key.removeprefix("charts/")] = value
    return row


__all__ = ["ITER", "episode_stats", "log_row", "role_of"]
