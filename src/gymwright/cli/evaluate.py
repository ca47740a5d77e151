"""`gymwright evaluate SPEC --policy CKPT`: is this a good training environment? (registered in
`gymwright.cli`). Prints the scorecard: each check with its verdict and the evidence in words;
writes scorecard.json, trajectories.jsonl and (grid specs) GIFs of the selected episodes. A
code-mode module (SPEC ending in .py) is played in sandbox workers; its scorecard has the checks
that need only episodes and the training log (the others n/a) and no trajectories."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from gymwright.cli.common import out  # an inert console (gymwright.cli.inert)
from gymwright.cli.inert import inert

STYLE = {"ok": "green", "warning": "yellow", "fail": "red", "n/a": "dim"}


def evaluate_command(
    spec: Annotated[str, typer.Argument(metavar="SPEC", help="A spec file or a library spec name.", show_default=False)],
    policy_path: Annotated[Path, typer.Option("--policy", help="A checkpoint file or run folder (`gymwright train`).")],
    param: Annotated[list[str] | None, typer.Option("--param", "-p", metavar="NAME=VALUE", help="Override a param (non-structural).")] = None,
    metric: Annotated[str | None, typer.Option("--metric", help="The task metric (default: the spec's first metric; a code-mode module's: the first of its final infos' metrics).")] = None,
    band: Annotated[tuple[float, float], typer.Option("--band", help="Target band of the task metric.")] = (0.2, 0.8),
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=2, help="Evaluation episodes.")] = 200,
    output: Annotated[Path | None, typer.Option("--out", "-o", help="Folder for scorecard.json, trajectories and GIFs (default: RUN/eval).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
) -> None:
    """Judge the environment by a trained policy: learnability, difficulty, reward hacking, degeneracy."""
    from gymwright.cli.common import domain_errors, parse_params, to_json
    from gymwright.evaluate import assess
    from gymwright.evaluate.difficulty import check_band
    from gymwright.train import checkpoint as ck
    from gymwright.train.npc import team_from

    with domain_errors(spec):
        check_band(band, "--band", metric)  # before the policy is loaded
        saved = ck.load(policy_path)
        ck.check_fits(saved, ck.spec_identity(spec)[0], None)
        params = {**saved["params"][0], **parse_params(param)}
        folder = output or Path(saved["path"]).parent / "eval"
        card = assess(spec, params, team_from(saved), history=whole_history(saved),
                      task_metric=metric, band=band, episodes=episodes, out=folder)
    if as_json:
        typer.echo(to_json(card.to_dict()))
        return
    table = Table(title=f"{card.spec}: {card.verdict} (task metric: {card.task_metric or 'none'})")
    for col in ("check", "verdict", "finding"):
        table.add_column(col, overflow="fold")
    for c in card.checks:
        table.add_row(c.name, Text(c.verdict, style=STYLE[c.verdict]), c.message)
    out.print(table)
    out.print(policies_table(card))
    for name, path in card.files.items():
        out.print(Text(f"{name}: {path}", style="dim"))


def whole_history(saved: dict[str, Any]) -> list[dict[str, Any]]:
    """The training log the learning curve is judged on: the checkpoint's own, preceded, for a
    curriculum's stage (`evolve`'s OUT/stageK), by the logs of the stages before it."""
    from gymwright.train import checkpoint as ck

    folder = Path(saved["path"]).parent
    stage = re.fullmatch(r"stage(\d+)", folder.name)
    if stage is None or not (folder.parent / "curriculum.jsonl").exists():
        return list(saved.get("history", []))
    earlier = [folder.parent / f"stage{k}" for k in range(int(stage[1]))]
    logs = [ck.load(f).get("history", []) for f in earlier if (f / ck.CHECKPOINT).exists()]
    return [row for log in logs for row in log] + list(saved.get("history", []))


def policies_table(card: Any) -> Table:
    """Mean return per role (and the task metric) of the trained policy, random-legal play and each
    scripted baseline of the spec: one row each, all from the same `evaluate`."""
    rows = {"trained": card.trained, "random legal": card.random,
            **{f"scripted {name}": r for name, r in card.scripted.items()}}
    metric = card.task_metric if card.task_metric in card.trained.metrics else None
    table = Table(title=f"returns by policy ({card.trained.episodes} episodes each, ± 95%)")
    for col in ["policy", *[f"return {role}" for role in card.trained.returns], *([metric] if metric else [])]:
        table.add_column(col, justify="left" if col == "policy" else "right")
    for label, r in rows.items():
        cells = [f"{r.returns[role]:.4g} ± {r.ci95[role]:.2g}" for role in card.trained.returns]
        table.add_row(label, *cells, *([f"{r.metrics.get(metric, float('nan')):.4g}"] if metric else []))
    return table


# --------------------------------------------------------------------------- play, with --gif
def play_command(*, gif: Path | None = None, **given: Any) -> None:
    """Watch a trained policy play (the spec must be the one it was trained on), or a scripted
    baseline; --gif PATH also writes the episodes as an animated GIF with a colour legend (grid specs)."""
    from gymwright.cli import train

    if gif is None:
        train.play_command(**given)
        return
    play_gif(gif, **given)


def _play_signature() -> inspect.Signature:
    """`gymwright play`'s options (cli/train.py's `play_command`) and --gif."""
    from gymwright.cli import train

    sig = inspect.signature(train.play_command, eval_str=True)
    gif = inspect.Parameter("gif", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        Path | None, typer.Option("--gif", metavar="PATH", help="Also write the episodes (all of them, one after the "
                                  "other) as an animated GIF with a colour legend: which colour is which agent (grid specs).")])
    return sig.replace(parameters=[*(p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in sig.parameters.values()), gif])


play_command.__signature__ = _play_signature()  # type: ignore[attr-defined]
play_command.__annotations__ = {}


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
    from gymwright.cli.train import show_results
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
        if compiled.checked.grid is None:
            fail([f"--gif {gif}: {spec} has no grid, so its episodes have no frames to draw"],
                 f"watch its text frames instead: `gymwright play {spec} --policy {policy_path} --render`")
        trajs = record(spec, params, team_from(saved), episodes, seed, deterministic, frames=True, max_steps=max_steps)
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
