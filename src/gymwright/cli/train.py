"""The training commands of the CLI: `train` and `play` (registered in `gymwright.cli`).

Progress goes to stderr (a rich bar with steps/s, the return per role and the spec's first
metric), results to stdout, so `--json` output stays clean for scripts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

if TYPE_CHECKING:
    from gymwright.train import Policy

ALGOS = ("ippo", "mappo")  # gymwright.train.ALGOS, imported lazily below (torch is slow to import)
BACKENDS = ("builtin", "rllib")

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


# --------------------------------------------------------------------------- train
class TrainProgress:
    """A rich progress bar over updates: steps/s, return per role, the first metric."""

    def __init__(self, console: Console, total: int) -> None:
        self.bar = Progress(
            TextColumn("[bold]train"), BarColumn(), MofNCompleteColumn(), TextColumn("updates"),
            TimeElapsedColumn(), TextColumn("{task.fields[figures]}"), console=console,
            transient=False,
        )
        self.task = self.bar.add_task("train", total=total, figures="")
        self.bar.start()

    def __call__(self, row: dict[str, Any]) -> None:
        figures = [f"{row['charts/agent_sps']:,.0f} agent-steps/s"]
        figures += [f"return {k.split('/')[-1]} {v:.3f}" for k, v in row.items() if k.startswith("charts/return/")]
        metric = next(((k, v) for k, v in row.items() if k.startswith("metrics/")), None)
        if metric is not None:
            figures.append(f"{metric[0].removeprefix('metrics/')} {metric[1]:.3f}")
        self.bar.update(self.task, completed=row["update"], total=row["updates_total"], figures="  ".join(figures))

    def stop(self) -> None:
        self.bar.stop()


def default_out(spec: str, algo: str, seed: int) -> Path:
    return Path("runs") / f"{Path(spec).stem}-{algo}-s{seed}"


def train_command(
    spec: Annotated[str, typer.Argument(metavar="SPEC", help="A spec file or a library spec name.", show_default=False)],
    steps: Annotated[int, typer.Option("--steps", "-n", min=1, help="Env steps to train for (copies x steps).")] = 1_000_000,
    algo: Annotated[str, typer.Option("--algo", help="ippo (a critic per agent's observation) or mappo (centralized critic on state()).")] = "ippo",
    param: Annotated[list[str] | None, typer.Option("--param", "-p", metavar="NAME=VALUE", help="Set a spec param (repeatable).")] = None,
    num_envs: Annotated[int | None, typer.Option("--num-envs", min=1, help="Copies of the env stepped together (default: the trainer's, 128).")] = None,
    seed: Annotated[int, typer.Option("--seed", "-s", min=0, help="Seed of the networks and the envs.")] = 0,
    out_dir: Annotated[Path | None, typer.Option("--out", "-o", help="Run folder (default: runs/SPEC-ALGO-sSEED).")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the run in --out from its checkpoint.")] = False,
    tensorboard: Annotated[bool, typer.Option("--tensorboard", help="Also write TensorBoard events to OUT/tb.")] = False,
    backend: Annotated[str, typer.Option("--backend", help="builtin (PPO on the batch backend) or rllib (Ray RLlib).")] = "builtin",
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="Ray cluster address for --backend rllib (default: a local Ray).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
) -> None:
    """Train agents with PPO (IPPO or MAPPO) on the batch backend, or with RLlib on Ray."""
    from gymwright.cli.common import domain_errors, fail, parse_params, to_json

    params = parse_params(param)
    if algo not in ALGOS:
        fail([f"unknown --algo {algo!r}; choose one of {', '.join(ALGOS)}"], f"e.g. `gymwright train {spec} --algo mappo`")
    if backend not in BACKENDS:
        fail([f"unknown --backend {backend!r}; choose one of {', '.join(BACKENDS)}"])
    folder = out_dir or default_out(spec, algo, seed)
    if backend == "rllib":
        with domain_errors(spec):
            result = train_with_rllib(spec, params, steps, folder, seed, ray_address)
        if as_json:
            typer.echo(to_json(result))
        else:
            out.print(to_json(result))
        return
    if not resume and (folder / "checkpoint.pt").exists():
        fail([f"{folder} already holds a run (checkpoint.pt)"], "pass --resume to continue it, or choose another folder with --out")

    from gymwright.train import TrainConfig, train

    cfg = TrainConfig(spec=spec, params=params, algo=algo, total_steps=steps, seed=seed, out=folder,
                      resume=resume, tensorboard=tensorboard)
    if num_envs is not None:
        cfg.num_envs = num_envs
    progress = TrainProgress(err, cfg.updates)
    try:
        with domain_errors(spec):
            result = train(cfg, progress=progress)
    finally:
        progress.stop()
    if as_json:
        typer.echo(to_json({**result.to_dict(), "out": str(folder), "log": str(folder / "train.jsonl")}))
        return
    returns = "  ".join(f"{k}={v:.4g}" for k, v in result.final_return.items())
    metrics = "  ".join(f"{k}={v:.4g}" for k, v in result.metrics.items()) or "-"
    out.print(f"[bold]trained[/bold] {result.updates} updates, {result.env_steps:,} env steps, "
              f"{result.agent_steps_per_second:,.0f} agent-steps/s "
              f"(env {result.time['env_s']:.1f} s, network {result.time['network_s']:.1f} s)")
    out.print(Text(f"  return   {returns}\n  metrics  {metrics}"))
    out.print(f"Wrote {result.checkpoint} and {folder / 'train.jsonl'}.")
    out.print(f"Next: `gymwright play {spec} --policy {result.checkpoint} --render --episodes 1`.")


def train_with_rllib(spec: str, params: dict[str, Any], steps: int, folder: Path, seed: int,
                     ray_address: str | None) -> dict[str, Any]:
    from gymwright.cli.common import fail

    try:
        from gymwright.train.rllib import train_rllib
    except ImportError as e:
        missing = getattr(e, "name", "") or ""
        what = "--backend rllib: the RLlib adapter (gymwright.train.rllib) is not in this install" if missing.startswith("gymwright") \
            else f"--backend rllib needs Ray RLlib ({e})"
        fail([what], "install the extra: pip install 'gymwright[rllib]', or use --backend builtin")
    return train_rllib(spec, params, steps=steps, out=folder, seed=seed, ray_address=ray_address)


# --------------------------------------------------------------------------- play
def policy_chooser(policy: Policy, deterministic: bool) -> Any:
    """`choose` for `gymwright.cli.play`: the policy's actions for the live agents of one env."""
    from gymwright.evaluate.play import act_parallel

    return lambda env, obs, infos, rng: act_parallel(env, policy, obs, infos, deterministic)


def scripted_chooser(name: str) -> Any:
    """`choose` for `gymwright.cli.play`: the spec's scripted baseline `name` (Python backend)."""
    import numpy as np

    from gymwright.train.baselines import fill_random_legal

    def choose(env: Any, obs: Any, infos: Any, rng: Any) -> dict[str, int]:
        agents = list(env.agents)
        masks = np.zeros((len(agents), max(env.action_space(a).n for a in agents)), dtype=np.int8)
        for i, a in enumerate(agents):
            mask = infos.get(a, {}).get("action_mask")
            masks[i, : env.action_space(a).n] = 1 if mask is None else mask
        scripted = [env.scripted_action(name, a) for a in agents]
        acts = fill_random_legal([-1 if x is None else x for x in scripted], masks, rng)
        return {a: int(x) for a, x in zip(agents, acts, strict=True) if x >= 0}
    return choose


def play_command(
    spec: Annotated[str, typer.Argument(metavar="SPEC", help="A spec file or a library spec name.", show_default=False)],
    policy_path: Annotated[Path, typer.Option("--policy", help="A checkpoint (checkpoint.pt) or a run folder, or `scripted:NAME` for a scripted baseline of the spec.")],
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, help="Episodes to play.")] = 3,
    seed: Annotated[int, typer.Option("--seed", "-s", min=0, help="Seed of the first episode, then +1.")] = 0,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", metavar="NAME=VALUE", help="Override a param the policy was trained with.")] = None,
    render: Annotated[bool, typer.Option("--render", help="Print the ansi frame after every step.")] = False,
    deterministic: Annotated[bool, typer.Option("--deterministic", help="Play the most likely action, not a sample.")] = False,
    max_steps: Annotated[int, typer.Option("--max-steps", min=1, help="Cut episodes this long.")] = 1000,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
) -> None:
    """Watch a trained policy play (the spec must be the one it was trained on), or a scripted baseline."""

    from gymwright.cli.common import domain_errors, fail, parse_params, play
    from gymwright.train import checkpoint as ck
    from gymwright.train.policy import roles_of
    from gymwright.train.rollout import make_env

    if render and as_json:
        fail(["--render and --json both write to stdout; choose one"], f"e.g. `gymwright play {spec} --policy {policy_path} --render`")
    if str(policy_path).startswith("scripted:"):
        play_scripted(spec, str(policy_path).removeprefix("scripted:"), episodes=episodes, seed=seed, param=param,
                      frames=-1 if render else 0, max_steps=max_steps, as_json=as_json)
        return
    with domain_errors(spec):
        saved = ck.load(policy_path)
        sha = ck.spec_identity(spec)[0]
        ck.check_fits(saved, sha, None)
        params = {**saved["params"][0], **parse_params(param)}
        ck.check_fits(saved, sha, roles_of(make_env(spec, [params], 1)))
        policy = ck.policy_from(saved)
        results = play(spec, params, episodes=episodes, seed=seed, frames=-1 if render else 0,
                       max_steps=max_steps, quiet=as_json, choose=policy_chooser(policy, deterministic))
    show_results(results, f"policy {saved['path']} (update {saved['update']}), {len(results)} episodes", as_json)


def show_results(results: list[Any], title: str, as_json: bool) -> None:
    """Played episodes as JSON on stdout, or as a titled summary table."""
    from dataclasses import asdict

    from gymwright.cli.common import summary_table, to_json

    if as_json:
        typer.echo(to_json([asdict(ep) for ep in results]))
        return
    table = summary_table(results)
    table.title = title
    out.print(table)


def play_scripted(spec: str, name: str, *, episodes: int, seed: int, param: list[str] | None, frames: int,
                  max_steps: int, as_json: bool) -> None:
    """`gymwright play SPEC --policy scripted:NAME`: the spec's scripted baseline NAME."""

    from gymwright.cli.common import domain_errors, parse_params, play
    from gymwright.train.baselines import baseline_names, unknown_baseline

    with domain_errors(spec):
        names = baseline_names(spec)
        if name not in names:
            raise unknown_baseline(name, names)
        results = play(spec, parse_params(param), episodes=episodes, seed=seed, frames=frames,
                       max_steps=max_steps, quiet=as_json, choose=scripted_chooser(name))
    show_results(results, f"scripted baseline {name}, {len(results)} episodes", as_json)
