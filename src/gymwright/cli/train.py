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

from gymwright.cli.common import err, out, seed_option
from gymwright.cli.config_options import (
    BY_NAME,
    FIELDS,
    ConfigChoice,
    check_combination,
    check_device_of,
    config_options,
    describe,
    plain,
    resolved,
    rllib_settings,
    save_config,
)
from gymwright.diagnostic import shown

if TYPE_CHECKING:
    from gymwright.train import Policy, Team

ALGOS = ("ippo", "mappo")  # gymwright.train.ALGOS, imported lazily below (torch is slow to import)
BACKENDS = ("builtin", "rllib")


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
        sides = any(k.startswith("npc/return/") for k in row)  # NPCs: the trained and the fixed agents apart
        for k, v in row.items():
            side, _, role = k.partition("/return/")
            if role and (side in ("trained", "npc") if sides else side == "charts"):
                figures.append(f"return {role}{f' ({side})' if sides else ''} {v:.3f}")
        metric = next(((k, v) for k, v in row.items() if k.startswith("metrics/")), None)
        if metric is not None:
            figures.append(f"{metric[0].removeprefix('metrics/')} {metric[1]:.3f}")
        self.bar.update(self.task, completed=row["update"], total=row["updates_total"], figures="  ".join(figures))

    def stop(self) -> None:
        self.bar.stop()


def default_out(spec: str | dict[str, Any], algo: str, seed: int) -> Path:
    name = str(spec.get("name", "spec")) if isinstance(spec, dict) else Path(spec).stem
    return Path("runs") / f"{name}-{algo}-s{seed}"


TRAIN_FIELDS = tuple(f.name for f in FIELDS if f.name not in ("spec", "params", "copies"))
RUN_FIELDS = ("spec", "params", "total_steps", "seed", "out")  # given to the trainers as arguments


@config_options("train", TRAIN_FIELDS, flags={"total_steps": ("--steps", "-n"), "seed": ("-s",), "out": ("-o",)},
                shown={"out": "runs/SPEC-ALGO-sSEED"}, file_only=("spec", "params", "copies"))
def train_command(
    spec: Annotated[str | None, typer.Argument(metavar="SPEC", show_default=False,
                                               help="A spec file or a library spec name (default: `spec` of the --config file).")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", metavar="NAME=VALUE", help="Set a spec param (repeatable; over the file's `params`).")] = None,
    backend: Annotated[str, typer.Option("--backend", help="builtin (PPO on the batch backend) or rllib (Ray RLlib).")] = "builtin",
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="Ray cluster address for --backend rllib (default: a local Ray).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
    config: ConfigChoice | None = None,
) -> None:
    """Train agents with PPO (IPPO or MAPPO) on the batch backend, or with RLlib on Ray.

    Every field of the trainer's TrainConfig is an option below; --config FILE.yaml sets them from
    a file (options given here win), and the run folder gets the resolved config.yaml."""
    from gymwright.cli.common import domain_errors, fail, to_json

    choice = config or ConfigChoice()
    values = choice.values()
    source = spec if spec is not None else values.get("spec")
    if source is None:
        fail(["no spec: give SPEC (a spec file or a library name), or `spec:` in the --config file"],
             "e.g. `gymwright train cake_negotiation`; `gymwright library` lists the library specs")
    label = source if isinstance(source, str) else str(source.get("name", "spec"))
    values["spec"], values["params"] = source, with_params(values.get("params", {}), param)
    algo, seed = values.get("algo", "ippo"), values.get("seed", 0)
    if algo not in ALGOS:
        fail([f"unknown --algo {shown(repr(algo))} ({choice.where('algo')}); choose one of {', '.join(ALGOS)}"],
             f"e.g. `gymwright train {label} --algo mappo`", path=choice.where("algo"))
    if backend not in BACKENDS:
        fail([f"unknown --backend {shown(repr(backend))}; choose one of {', '.join(BACKENDS)}"], path="--backend")
    refuse_for_code(source, backend, values, choice)
    folder = Path(values.get("out") or default_out(source, algo, seed))
    if backend == "rllib":
        train_on_rllib(source, label, values, choice, folder, ray_address, as_json)
        return
    if not values.get("resume") and (folder / "checkpoint.pt").exists():
        fail([f"{folder} already holds a run (checkpoint.pt)"], "pass --resume to continue it, or choose another folder with --out")

    from gymwright.train import TrainConfig, train

    check_combination(choice, "train")
    with domain_errors(label):
        check_device_of(choice)
        if values.get("npc"):  # now, with the option's name in any error, not after the first update
            from gymwright.train.npc import check_npc

            check_npc(source, values["params"], values["npc"], where=choice.where("npc"))
        cfg = TrainConfig(**{**values, "out": folder})
        saved = save_config(folder, plain(resolved(tuple(BY_NAME), {**values, "out": folder})), "train")
    if settings := describe(choice):
        err.print(Text(settings, style="dim"))
    progress = TrainProgress(err, cfg.updates)
    try:
        with domain_errors(label):
            result = train(cfg, progress=progress)
    finally:
        progress.stop()
    if as_json:
        typer.echo(to_json({**result.to_dict(), "out": str(folder), "log": str(folder / "train.jsonl"), "config": str(saved)}))
        return
    out.print(Text.assemble(("trained", "bold"), f" {result.updates} updates, {result.env_steps:,} env steps, "
                            f"{result.agent_steps_per_second:,.0f} agent-steps/s "
                            f"(env {result.time['env_s']:.1f} s, network {result.time['network_s']:.1f} s)"))
    out.print(outcome_lines(result.final_return, result.metrics))
    if result.npc:
        fixed = "  ".join(f"{a}={p}" for a, p in result.npc.items())
        out.print(Text(f"  fixed    {fixed} (not trained; train.jsonl: trained/return/ROLE, npc/return/ROLE)"))
    out.print(f"Wrote {result.checkpoint}, {folder / 'train.jsonl'} and {saved}.")
    out.print(next_step(label, result.checkpoint))


def outcome_lines(final_return: dict[str, float], metrics: dict[str, float]) -> Text:
    """The last update's return per role and the episode metrics, as a trained run's summary shows them."""
    returns = "  ".join(f"{k}={v:.4g}" for k, v in final_return.items())
    shown = "  ".join(f"{k}={v:.4g}" for k, v in metrics.items()) or "-"
    return Text(f"  return   {returns}\n  metrics  {shown}")


def next_step(label: str, checkpoint: Any) -> str:
    return f"Next: `gymwright play {label} --policy {checkpoint} --render --episodes 1`."


def refuse_for_code(source: Any, backend: str, values: dict[str, Any], choice: ConfigChoice) -> None:
    """A code-mode module (SPEC ending in .py) trains on the built-in trainer only, without NPCs:
    the RLlib adapter and the NPCs are built on a spec, which a code-mode design has not."""
    from gymwright.cli.common import fail
    from gymwright.codemode.source import is_code_source

    if not is_code_source(source):
        return
    if backend == "rllib":
        fail([f"--backend rllib: {source} is a code-mode module; the RLlib adapter builds its envs by "
              "compiling a spec, and a code-mode module runs only in the built-in trainer's sandbox workers"],
             f"use the built-in trainer (the default): `gymwright train {source}`", path="--backend")
    if values.get("npc"):
        fail([f"{choice.where('npc')}: {source} is a code-mode module; fixed-policy agents (NPCs) are "
              "resolved on a spec's roles and baselines, which a code-mode design has not"],
             f"drop --npc: `gymwright train {source}` trains every agent, or design the task in spec mode",
             path=choice.where("npc"))


def with_params(base: dict[str, Any] | list[dict[str, Any]], given: list[str] | None) -> Any:
    """The file's params (a dict, or a list of dicts: mixed configs) with each --param over them."""
    from gymwright.cli.common import parse_params

    extra = parse_params(given)
    if isinstance(base, list):
        return [{**p, **extra} for p in base]
    return {**base, **extra}


def train_on_rllib(source: Any, label: str, values: dict[str, Any], choice: Any, folder: Path,
                   ray_address: str | None, as_json: bool) -> None:
    """`train --backend rllib`: the fields RLlib takes, a progress bar, the built-in run's summary."""
    from gymwright.cli.common import domain_errors, fail, to_json
    from gymwright.train.rllib_ray import LOCAL, host_port

    steps = values.get("total_steps", BY_NAME["total_steps"].default)
    with domain_errors(label):  # every setting, before Ray is imported or started
        rllib_settings(choice, {n: v for n, v in values.items() if n not in ("spec", "params")}, steps,
                       0 if ray_address in LOCAL else None)
        if ray_address is not None and ray_address not in LOCAL:
            host_port(ray_address)  # its form and port (whether it answers is seen when it is joined)
    if (folder / "checkpoint.pt").exists():
        fail([f"{folder} already holds a run (checkpoint.pt); an RLlib run does not resume one"],
             "choose another folder with --out", path=choice.where("out"))
    try:
        from gymwright.train.rllib import train_rllib
    except ImportError as e:
        missing = getattr(e, "name", "") or ""
        what = "--backend rllib: the RLlib adapter (gymwright.train.rllib) is not in this install" if missing.startswith("gymwright") \
            else f"--backend rllib needs Ray RLlib ({e})"
        fail([what], "install the extra: pip install 'gymwright[rllib]', or use --backend builtin")
    config = {n: v for n, v in values.items() if n not in RUN_FIELDS}
    progress = None if as_json else TrainProgress(err, 1)
    try:
        with domain_errors(label):
            result = train_rllib(source, values["params"], steps=steps, out=folder, seed=values.get("seed", 0),
                                 ray_address=ray_address, config=config,
                                 progress=None if progress is None else (lambda info: progress(info["row"])))
    finally:
        if progress is not None:
            progress.stop()
    if as_json:
        typer.echo(to_json({k: v for k, v in result.items() if k != "history"}))
        return
    out.print(Text.assemble(("trained", "bold"), f" with RLlib: {result['iterations']} iterations, "
                            f"{result['env_steps']:,} env steps, {result['agent_steps_per_second']:,.0f} agent-steps/s"))
    out.print(outcome_lines(result["final_return"], result["metrics"]))
    out.print(f"Wrote {result['checkpoint']} (the policy, built-in format), {result['rllib_checkpoint']}, "
              f"{result['log']} and {result['config']}.")
    out.print(next_step(label, result["checkpoint"]))


# --------------------------------------------------------------------------- play
def policy_chooser(policy: Policy | Team, deterministic: bool) -> Any:
    """`choose` for `gymwright.cli.play`: the policy's actions for the live agents of one env."""
    from gymwright.evaluate.play import act_parallel

    return lambda env, obs, infos, rng: act_parallel(env, policy, obs, infos, deterministic)  # binds a Team's NPCs


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
    seed: Annotated[int, seed_option("Seed of the first episode, then +1.")] = 0,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", metavar="NAME=VALUE", help="Override a param the policy was trained with.")] = None,
    render: Annotated[bool, typer.Option("--render", help="Print the ansi frame after every step.")] = False,
    deterministic: Annotated[bool, typer.Option("--deterministic", help="Play the most likely action, not a sample.")] = False,
    max_steps: Annotated[int, typer.Option("--max-steps", min=1, help="Cut episodes this long.")] = 1000,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
) -> None:
    """Watch a trained policy play (the spec must be the one it was trained on), or a scripted baseline."""

    from gymwright.cli.common import check_seeds, domain_errors, fail, parse_params, play
    from gymwright.codemode.source import is_code_source
    from gymwright.train import checkpoint as ck
    from gymwright.train.npc import team_from
    from gymwright.train.policy import roles_of
    from gymwright.train.rollout import make_env

    check_seeds(seed, episodes)
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
        policy = team_from(saved, seed)
        player = play_code if is_code_source(spec) else play
        results = player(spec, params, episodes=episodes, seed=seed, frames=-1 if render else 0,
                         max_steps=max_steps, quiet=as_json, choose=policy_chooser(policy, deterministic))
    npcs = policy.players.by_agent() if hasattr(policy, "players") else {}
    fixed = ", ".join(f"{a} by {p}" for a, p in npcs.items())
    show_results(results, f"policy {saved['path']} (update {saved['update']}), {len(results)} episodes"
                 + (f"; fixed: {fixed}" if fixed else ""), as_json)


def play_code(spec: str, params: dict[str, Any], *, episodes: int, seed: int, frames: int, max_steps: int,
              quiet: bool, choose: Any) -> list[Any]:
    """`cli.common.play` for a code-mode module: one instance in a sandbox worker (no frames)."""
    from gymwright.cli.common import fail, play_episode, print_episode, warn_unended
    from gymwright.codemode.source import check_no_params, parallel_env

    if frames:
        fail([f"--render: {spec} is a code-mode module; its frames are not drawn over the sandbox's pipe"],
             f"drop --render: `gymwright play {spec} --policy RUN`")
    check_no_params(spec, [params])
    env = parallel_env(spec)
    try:
        results = [play_episode(env, seed + i, frames=0, max_steps=max_steps, choose=choose, name=spec)
                   for i in range(episodes)]
    finally:
        env.close()
    for i, ep in enumerate(results):
        if not ep.ended:
            warn_unended(ep, max_steps)
        if not quiet:
            print_episode(i + 1, ep)
    return results


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
