"""`gymwright play SPEC --policy RUN`: watch a trained policy (or a scripted baseline) play, and
with --gif write its episodes as an animated GIF (registered in `gymwright.cli`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from gymwright.cli.common import (  # an inert console (gymwright.cli.inert)
    npc_option,
    out,
    seed_option,
)
from gymwright.cli.inert import inert

if TYPE_CHECKING:
    from gymwright.train import Policy, Team


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
    policy_path: Annotated[Path, typer.Option("--policy", help="A checkpoint (checkpoint.pt) or a run folder, `scripted:NAME` for a scripted baseline of the spec, or llm:MODEL for a language model playing from the text view (with --render its replies are shown).")],
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, help="Episodes to play.")] = 3,
    seed: Annotated[int, seed_option("Seed of the first episode, then +1.")] = 0,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", metavar="NAME=VALUE", help="Override a param the policy was trained with.")] = None,
    render: Annotated[bool, typer.Option("--render", help="Print the ansi frame after every step.")] = False,
    deterministic: Annotated[bool, typer.Option("--deterministic", help="Play the most likely action, not a sample.")] = False,
    max_steps: Annotated[int, typer.Option("--max-steps", min=1, help="Cut episodes this long.")] = 1000,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
    gif: Annotated[Path | None, typer.Option("--gif", metavar="PATH", help="Also write the episodes (all of them, one after the "
                                             "other) as an animated GIF with a colour legend: which colour is which agent (grid specs).")] = None,
    npc: Annotated[list[str] | None, npc_option()] = None,
) -> None:
    """Watch a trained policy play (the spec must be the one it was trained on), or a scripted
    baseline; --gif PATH also writes the episodes as an animated GIF with a colour legend (grid specs)."""
    from gymwright.cli.common import check_seeds, domain_errors, fail, parse_params, play, with_npc
    from gymwright.codemode.source import is_code_source
    from gymwright.train import checkpoint as ck
    from gymwright.train.npc import team_from
    from gymwright.train.policy import roles_of
    from gymwright.train.rollout import make_env

    if gif is not None:
        play_gif(gif, spec=spec, policy_path=policy_path, episodes=episodes, seed=seed, param=param, render=render,
                 deterministic=deterministic, max_steps=max_steps, as_json=as_json)
        return
    check_seeds(seed, episodes)
    if render and as_json:
        fail(["--render and --json both write to stdout; choose one"], f"e.g. `gymwright play {spec} --policy {policy_path} --render`")
    if str(policy_path).startswith("llm:"):
        play_llm(spec, str(policy_path), episodes=episodes, seed=seed, param=param, render=render,
                 max_steps=max_steps, as_json=as_json, npc=npc)
        return
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
        policy = with_npc(team_from(saved, seed, spec=spec), spec, params, npc)
        player = play_code if is_code_source(spec) else play
        results = player(spec, params, episodes=episodes, seed=seed, frames=-1 if render else 0,
                         max_steps=max_steps, quiet=as_json, choose=policy_chooser(policy, deterministic))
    npcs = policy.players.by_agent() if hasattr(policy, "players") else {}
    fixed = ", ".join(f"{a} by {p}" for a, p in npcs.items())
    show_results(results, f"policy {saved['path']} (update {saved['update']}), {len(results)} episodes"
                 + (f"; fixed: {fixed}" if fixed else ""), as_json)


def play_llm(spec: str, policy: str, *, episodes: int, seed: int, param: list[str] | None, render: bool,
             max_steps: int, as_json: bool, npc: list[str] | None = None) -> None:
    """`--policy llm:MODEL`: a language model plays every agent from the text view; with --render each
    reply is printed (escaped) before the frame it led to."""
    from gymwright.cli.common import domain_errors, llm_progress, parse_params, play, with_npc
    from gymwright.evaluate.play import act_parallel
    from gymwright.textgame.policy import make_llm_policy

    with domain_errors(spec):
        params = parse_params(param)
        llm = make_llm_policy(policy.removeprefix("llm:"), spec, params, seed=seed,
                              progress=None if (as_json or render) else llm_progress())
        team = with_npc(llm, spec, params, npc)

        def choose(env: Any, obs: Any, infos: Any, rng: Any) -> dict[str, int]:
            llm.last.clear()
            actions = act_parallel(env, team, obs, infos, deterministic=True)
            if render:
                for d in llm.last.values():
                    verdict = "" if d.valid else f" (invalid reply: {d.error})"
                    out.print(Text(f"{d.agent} -> {d.action_name}{verdict}: ", style="bold")
                              + Text(inert(" ".join(d.reply.split())[:400])))
            return actions
        results = play(spec, params, episodes=episodes, seed=seed, frames=-1 if render else 0,
                       max_steps=max_steps, quiet=as_json, choose=choose)
    t = llm.tally.to_dict()
    show_results(results, f"{policy}, {len(results)} episodes: {t['decisions']} decisions, valid-action rate "
                 f"{t['valid_rate']:.3f}, {t['tokens']:,} tokens", as_json)


def play_code(spec: str, params: dict[str, Any], *, episodes: int, seed: int, frames: int, max_steps: int,
              quiet: bool, choose: Any) -> list[Any]:
    """`cli.common.play` for a code-mode module: one instance in a sandbox worker (no frames)."""
    from gymwright.cli.common import fail, play_episode, print_episode, warn_unended
    from gymwright.codemode.source import check_code_params, parallel_env

    if frames:
        fail([f"--render: {spec} is a code-mode module; its frames are not drawn over the sandbox's pipe"],
             f"drop --render: `gymwright play {spec} --policy RUN`")
    env = parallel_env(spec, check_code_params(spec, [params]))
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


def play_gif(gif: Path, *, spec: str, policy_path: Path, episodes: int, seed: int, param: list[str] | None,
             render: bool, deterministic: bool, max_steps: int, as_json: bool) -> None:
    """Play a trained policy with the evaluator's recorder (`gymwright.evaluate.record`) and write
    the frames of the episodes it played, above their colour legend, to `gif`."""
    from gymwright.cli.common import (
        Episode,
        check_seeds,
        domain_errors,
        fail,
        parse_params,
        print_episode,
    )
    from gymwright.codemode.source import is_code_source
    from gymwright.compile import compile_spec
    from gymwright.evaluate.trajectories import frame_images, legend, record, write_gif
    from gymwright.train import checkpoint as ck
    from gymwright.train.npc import team_from

    check_seeds(seed, episodes)  # as plain `play` does
    if is_code_source(spec):
        fail([f"--gif {gif}: {spec} is a code-mode module; its frames are not drawn over the sandbox's pipe"],
             f"drop --gif: `gymwright play {spec} --policy {policy_path}`", path="--gif")
    if str(policy_path).startswith("scripted:"):
        fail([f"--gif draws a trained policy's episodes, not a scripted baseline's ({policy_path})"],
             f"pass --policy RUN (a run folder or checkpoint.pt), or drop --gif: `gymwright play {spec} --policy {policy_path}`")
    if render and as_json:
        fail(["--render and --json both write to stdout; choose one"], f"e.g. `gymwright play {spec} --policy {policy_path} --gif {gif}`")
    if not gif.parent.is_dir():
        fail([f"--gif {gif}: folder {gif.parent} does not exist"], "create it first or choose another path")
    with domain_errors(spec):
        saved = ck.load(policy_path)
        ck.check_fits(saved, ck.spec_identity(spec)[0], None)
        params = {**saved["params"][0], **parse_params(param)}
        compiled = compile_spec(spec, params)
        if "rgb_array" not in compiled.module.raw_env.metadata["render_modes"]:
            fail([f"--gif {gif}: {spec} has no grid, so its episodes have no frames to draw"],
                 f"watch its text frames instead: `gymwright play {spec} --policy {policy_path} --render`")
        trajs = record(spec, params, team_from(saved, spec=spec), episodes, seed, deterministic, frames=True, max_steps=max_steps)
    results = []
    for i, tr in enumerate(trajs):
        results.append(Episode(tr.seed, len(tr.steps), dict(tr.returns), dict(tr.metrics), len(tr.steps) < max_steps))
        if render:
            out.print(Text(inert("\n\n".join(s.text for s in tr.steps))))
        if not as_json:
            print_episode(i + 1, results[-1])
    images = frame_images([f for tr in trajs for f in tr.frames])
    write_gif(images, gif, legend_entries=legend(compiled))
    show_results(results, f"policy {saved['path']} (update {saved['update']}), {len(results)} episodes; "
                          f"GIF: {gif} ({len(images)} frames)", as_json)
