"""Language-model agents in gymwright's games (issue 43, item 3): valid-action rate, task metric,
return, decisions per second and tokens, beside random legal play, the spec's scripted baselines
and PPO trained briefly, for any model gymwright can name (`--models`).

Each game is played from its text view (`gymwright.textgame`): every agent's rules card, then each
turn its own observation and legal actions; a reply that names no legal action plays a random
legal one and counts as invalid. Rows per game:

- `random`, `scripted NAME` (the spec's baselines), `ppo` (built-in IPPO, `--ppo-steps` env steps):
  every agent played by that policy;
- `MODEL` (self-play): the model plays every agent;
- `MODEL vs ppo`: the model plays the first agent, PPO the rest (without PPO: the first scripted baseline).

`first listed` is the share of the model's valid replies that named the first legal action of the
list: near 1, the model answers by position rather than by the game.

Return is the mean episode return of the agents the row's first policy plays (all agents, or the
model's one); each figure has a 95% interval over episodes (1.96 standard errors; episode seeds
are shared by every row: common random numbers; a figure every episode gave alike has no interval
and says so). Decisions per second count the model's own replies (cache hits left out): with 2
cores shared, a local model's speed is a rough figure. Games are kept short (params below) so a local
model on a CPU finishes: these are small samples, and the intervals say how small.

    python benchmarks/llm_agents.py                                   # the local models, every game
    python benchmarks/llm_agents.py --models openai:gpt-4o-mini --episodes 20
    python benchmarks/llm_agents.py --games stag_hunt --models hf:smollm2-135m --episodes 4 --ppo-steps 20000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gymwright.compile import compile_spec  # noqa: E402
from gymwright.evaluate.scorecard import default_task_metric  # noqa: E402
from gymwright.llm.client import LLM, MemoryCache  # noqa: E402
from gymwright.llm.resolve import provider_from_name  # noqa: E402
from gymwright.textgame.policy import LLMPolicy  # noqa: E402
from gymwright.train import TrainConfig, load_policy, train  # noqa: E402
from gymwright.train.baselines import random_legal_policy, scripted_policy  # noqa: E402
from gymwright.train.episodes import play_episodes  # noqa: E402
from gymwright.train.npc import Team, players_for  # noqa: E402
from gymwright.train.policy import roles_of  # noqa: E402
from gymwright.train.rollout import make_env  # noqa: E402

GAMES: dict[str, dict[str, Any]] = {
    "stag_hunt": {"rounds": 5},
    "iterated_prisoners_dilemma": {"rounds": 5},
    "cake_negotiation": {"max_rounds": 3},
    "speaker_listener": {"max_steps": 3},
    "mapf_frozenlake": {"size": 4, "n_agents": 2, "max_steps": 8},
}
MODELS = ("hf:smollm2-135m", "local:qwen2.5-coder-0.5b")
Z95 = 1.959963984540054


def ci(values: np.ndarray) -> tuple[float, float]:
    """(mean, 95% half-width over episodes)."""
    x = np.asarray(values, dtype=float)
    half = Z95 * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
    return float(x.mean()), float(half)


def row(label: str, result: Any, metric: str | None, agents: list[int], llm: Any = None) -> dict[str, Any]:
    returns = result.episode_returns[:, agents].mean(axis=1)
    out: dict[str, Any] = {"policy": label, "episodes": result.episodes, "return": ci(returns)}
    if metric is not None and metric in result.episode_metrics:
        out["metric"] = ci(result.episode_metrics[metric])
    if llm is not None:
        t = llm.tally.to_dict()
        out.update(valid_rate=t["valid_rate"], first_listed=t["first_listed"], decisions=t["decisions"], tokens=t["tokens"],
                   decisions_per_s=t["decisions_per_s"], tokens_per_decision=t["tokens"] / max(1, t["decisions"]))
    return out


def trained_ppo(game: str, params: dict[str, Any], steps: int, out: Path) -> Any:
    """Built-in IPPO trained for `steps` env steps (defaults otherwise), loaded back."""
    folder = out / f"ppo-{game}"
    train(TrainConfig(spec=game, params=params, total_steps=steps, num_envs=64, out=str(folder), seed=0))
    return load_policy(folder)


_CLIENTS: dict[str, LLM] = {}


def client(model: str) -> LLM:
    """A client of `model` with a fresh reply cache (one per row); the provider is made once for
    the whole run (an in-process model is loaded once)."""
    if model not in _CLIENTS:
        _CLIENTS[model] = LLM(provider_from_name(model))
    return LLM(_CLIENTS[model].provider, cache=MemoryCache())


def mixed(game: str, params: dict[str, Any], model: str, other: Any, episodes: int, seed: int,
          max_tokens: int) -> tuple[Any, LLMPolicy]:
    """The model as the first agent; `other` (a policy) plays the rest: the model is a fixed
    player (`--npc ROLE[0]=llm:MODEL`) beside `other`."""
    benv = make_env(game, [params], episodes)
    roles = roles_of(benv)
    players = players_for({f"{roles[0].name}[0]": "random"}, benv, roles, game)
    llm = LLMPolicy(client(model), game, params, max_tokens=max_tokens, agents={0})
    players.npcs[0].actor, players.npcs[0].kind = llm, "llm"
    result = play_episodes(game, params, Team(other, players), episodes, seed)
    return result, llm


def bench_game(game: str, models: list[str], episodes: int, seed: int, ppo_steps: int, max_tokens: int,
               out: Path) -> dict[str, Any]:
    params = GAMES.get(game, {})
    compiled = compile_spec(game, params)
    metric = default_task_metric(compiled)
    n = len(compiled.checked.agent_ids)
    everyone = list(range(n))
    rows = [row("random", play_episodes(game, params, random_legal_policy(seed), episodes, seed), metric, everyone)]
    baselines = [b.name for b in compiled.checked.baselines][:2]
    for b in baselines:
        rows.append(row(f"scripted {b}", play_episodes(game, params, scripted_policy(b, seed), episodes, seed), metric, everyone))
    ppo = trained_ppo(game, params, ppo_steps, out) if ppo_steps else None
    if ppo is not None:
        rows.append(row("ppo", play_episodes(game, params, ppo, episodes, seed), metric, everyone))
    for model in models:
        started = time.perf_counter()
        llm = LLMPolicy(client(model), game, params, max_tokens=max_tokens)
        rows.append(row(model, play_episodes(game, params, llm, episodes, seed), metric, everyone, llm))
        partner = ("ppo", ppo) if ppo is not None else (
            (f"scripted {baselines[0]}", scripted_policy(baselines[0], seed)) if baselines else None)
        if partner is not None:
            result, pl = mixed(game, params, model, partner[1], episodes, seed, max_tokens)
            rows.append(row(f"{model} vs {partner[0]}", result, metric, [0], pl))
        print(f"  {game} {model}: {time.perf_counter() - started:.0f} s", flush=True)
    return {"game": game, "params": params, "metric": metric, "agents": n, "rows": rows}


def fmt(pair: Any) -> str:
    if not pair:
        return ""
    mean, half = pair
    if not np.isfinite(half):
        return f"{mean:.3g}"
    return f"{mean:.3g} ± {half:.2g}" if half > 1e-9 * max(1.0, abs(mean)) else f"{mean:.3g} (every episode)"


def markdown(results: list[dict[str, Any]], command: str) -> str:
    lines = [f"Command: `{command}`", ""]
    for g in results:
        lines += [f"### {g['game']} ({', '.join(f'{k}={v}' for k, v in g['params'].items())}; task metric `{g['metric']}`)", "",
                  "| policy | valid actions | first listed | task metric | return | decisions/s | tokens/decision |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in g["rows"]:
            valid = f"{r['valid_rate']:.3f} ({r['decisions']})" if "valid_rate" in r else "-"
            first = f"{r['first_listed']:.2f}" if np.isfinite(r.get("first_listed", np.nan)) else "-"
            speed = f"{r['decisions_per_s']:.3g}" if "decisions_per_s" in r else "-"
            tokens = f"{r['tokens_per_decision']:.0f}" if "tokens_per_decision" in r else "-"
            lines.append(f"| {r['policy']} | {valid} | {first} | {fmt(r.get('metric'))} | {fmt(r['return'])} | {speed} | {tokens} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default=",".join(GAMES), help="comma-separated library specs")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated --model names (hf:, local:, openai:, ...)")
    ap.add_argument("--episodes", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--ppo-steps", type=int, default=100_000)
    ap.add_argument("--max-tokens", type=int, default=16, help="new tokens of one reply")
    ap.add_argument("--out", type=Path, default=Path("runs/llm-agents"))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/llm_agents.py " + " ".join(argv if argv is not None else sys.argv[1:])
    results = []
    for game in [g for g in args.games.split(",") if g]:
        results.append(bench_game(game, [m for m in args.models.split(",") if m], args.episodes, args.seed,
                                  args.ppo_steps, args.max_tokens, args.out))
        (args.out / "llm_agents.json").write_text(json.dumps(results, indent=1, default=float))
    text = markdown(results, command.strip())
    (args.out / "llm_agents.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
