"""`gymwright evaluate SPEC --policy CKPT`: is this a good training environment? (registered in
`gymwright.cli`). Prints the scorecard: each check with its verdict and the evidence in words;
writes scorecard.json, trajectories.jsonl and (grid specs) GIFs of the selected episodes. A
code-mode module (SPEC ending in .py) is played in sandbox workers; its scorecard has the checks
that need only episodes and the training log (the others n/a) and no trajectories."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from gymwright.cli.common import npc_option, out  # an inert console (gymwright.cli.inert)

STYLE = {"ok": "green", "warning": "yellow", "fail": "red", "n/a": "dim"}


def evaluate_command(
    spec: Annotated[str, typer.Argument(metavar="SPEC", help="A spec file or a library spec name.", show_default=False)],
    policy_path: Annotated[Path, typer.Option("--policy", help="A checkpoint file or run folder (`gymwright train`), or llm:MODEL: a language model playing every agent from the text view (MODEL: any --model name, e.g. llm:openai:gpt-4o, llm:hf:smollm2-135m).")],
    param: Annotated[list[str] | None, typer.Option("--param", "-p", metavar="NAME=VALUE", help="Override a param (non-structural).")] = None,
    metric: Annotated[str | None, typer.Option("--metric", help="The task metric (default: the spec's first metric; a code-mode module's: the first of its final infos' metrics).")] = None,
    band: Annotated[tuple[float, float], typer.Option("--band", help="Target band of the task metric.")] = (0.2, 0.8),
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=2, help="Evaluation episodes.")] = 200,
    output: Annotated[Path | None, typer.Option("--out", "-o", help="Folder for scorecard.json, trajectories and GIFs (default: RUN/eval).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
    llm_tokens: Annotated[int, typer.Option("--llm-tokens", min=1, help="With --policy llm:MODEL: the most new tokens of one reply.")] = 48,
    npc: Annotated[list[str] | None, npc_option()] = None,
) -> None:
    """Judge the environment by a trained policy (or a language model): learnability, difficulty, reward hacking, degeneracy."""
    from gymwright.cli.common import domain_errors, parse_params, with_npc
    from gymwright.evaluate import assess
    from gymwright.evaluate.difficulty import check_band
    from gymwright.train import checkpoint as ck
    from gymwright.train.npc import team_from

    if str(policy_path).startswith("llm:"):
        with domain_errors(spec):
            check_band(band, "--band", metric)
            policy = llm_policy(str(policy_path), spec, parse_params(param), llm_tokens, quiet=as_json)
            card = assess(spec, parse_params(param), with_npc(policy, spec, parse_params(param), npc), history=[], task_metric=metric, band=band,
                          episodes=episodes, out=output or Path("runs") / "llm-eval")
        show_card(card, as_json, policy.tally.to_dict())
        return
    with domain_errors(spec):
        check_band(band, "--band", metric)  # before the policy is loaded
        saved = ck.load(policy_path)
        ck.check_fits(saved, ck.spec_identity(spec)[0], None)
        params = {**saved["params"][0], **parse_params(param)}
        folder = output or Path(saved["path"]).parent / "eval"
        card = assess(spec, params, with_npc(team_from(saved, spec=spec), spec, params, npc), history=whole_history(saved),
                      task_metric=metric, band=band, episodes=episodes, out=folder)
    show_card(card, as_json)


def llm_policy(policy: str, spec: str, params: dict[str, Any], max_tokens: int, quiet: bool) -> Any:
    """`--policy llm:MODEL`: the model playing every agent, with a progress line on stderr."""
    from gymwright.cli.common import llm_progress
    from gymwright.textgame.policy import make_llm_policy

    return make_llm_policy(policy.removeprefix("llm:"), spec, params, max_tokens=max_tokens,
                           progress=None if quiet else llm_progress())


def show_card(card: Any, as_json: bool, llm: dict[str, Any] | None = None) -> None:
    """The scorecard on stdout: JSON, or the checks and the policies' returns as tables."""
    from gymwright.cli.common import to_json

    if as_json:
        typer.echo(to_json({**card.to_dict(), **({"llm": llm} if llm else {})}))
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
    if llm:
        out.print(Text(f"language model: {llm['decisions']} decisions, valid-action rate {llm['valid_rate']:.3f}, "
                       f"{llm['tokens']:,} tokens, {llm['decisions_per_s']:.3g} decisions/s", style="dim"))


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
