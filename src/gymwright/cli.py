"""The `gymwright` command line: a thin shell over load, validate, compile and export.

Domain errors (`GymwrightError`, `SpecError` with its diagnostics) are caught only at the
command boundary (`domain_errors`) and printed as short bullets on stderr, then exit 1.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Annotated, Any, NoReturn

import numpy as np
import typer
import yaml
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gymwright.atomic import write_atomic
from gymwright.compile import compile_spec, export_source
from gymwright.diagnostic import Diagnostic, Severity
from gymwright.errors import GymwrightError, SpecError
from gymwright.spec.loader import library_names, load_spec
from gymwright.spec.model import EnvSpec
from gymwright.verify.report import VerificationReport
from gymwright.verify.validate import validate as validate_spec
from gymwright.verify.verifier import DEFAULT_EPISODES
from gymwright.verify.verifier import verify as verify_spec

app = typer.Typer(
    name="gymwright",
    help="Design, check and play multi-agent environments written in the gymwright spec language.",
    no_args_is_help=True,
    add_completion=False,
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

DEMO_FRAMES = 4
SEVERITY_STYLE = {Severity.error: "red", Severity.warning: "yellow", Severity.info: "dim"}


# --------------------------------------------------------------------------- errors at the boundary
def fail(lines: list[str], next_step: str = "") -> NoReturn:
    """Print each line as a bullet on stderr (plus what to do next) and exit 1."""
    for line in lines:
        err.print(Text("- " + line.replace("\n", "\n  "), style="red"))
    if next_step:
        err.print(Text(next_step))
    raise typer.Exit(1)


def next_step(diags: list[Diagnostic], spec: str) -> str:
    """What to do after a SpecError, judged by where its first diagnostic points."""
    first = diags[0] if diags else None
    if first is not None and first.message.startswith(("no spec file", "file not found")):
        return "`gymwright library` lists the library specs; otherwise check the file path"
    if first is not None and first.path.startswith("params."):
        return "`gymwright library` lists each spec's params with their defaults and ranges"
    return f"`gymwright validate {spec}` lists every problem; fix them and try again"


@contextmanager
def domain_errors(spec: str = "SPEC") -> Iterator[None]:
    """Turn gymwright's own errors (user mistakes, not bugs) into bullets and exit 1."""
    try:
        yield
    except SpecError as e:
        fail([d.format() for d in e.diagnostics] or [str(e)], next_step(e.diagnostics, spec))
    except GymwrightError as e:
        fail([str(e)])
    except OSError as e:
        fail([f"{e.filename or ''}: {e.strerror or e}".lstrip(": ")])


def check_writable(path: Path, force: bool) -> None:
    """Refuse to overwrite without --force, or to write into a missing folder."""
    if path.exists() and not force:
        fail(
            [f"{path} already exists; not overwriting it"],
            "pass --force to overwrite it, or choose another file with -o",
        )
    if not path.parent.is_dir():
        fail(
            [f"folder {path.parent} does not exist"],
            "create it first or choose another path with -o",
        )


# --------------------------------------------------------------------------- shared options
def parse_params(values: list[str] | None) -> dict[str, Any]:
    """`k=v` strings -> {k: v}; values are YAML scalars (`0.8`, `3`, `true`)."""
    params: dict[str, Any] = {}
    for item in values or []:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or not name or not raw.strip():
            raise typer.BadParameter(
                f"expected NAME=VALUE (e.g. --param discount=0.8), got {item!r}",
                param_hint="'--param'",
            )
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = raw
        if isinstance(value, list | dict):
            raise typer.BadParameter(
                f"{name}: a param value is a number or a bool, got {raw!r}", param_hint="'--param'"
            )
        if _non_finite(value):
            raise typer.BadParameter(
                f"{name}={raw.strip()}: NaN and infinities are not param values (they compare false against "
                f"every range); give a finite number (`gymwright library` lists each param's range)",
                param_hint="'--param'",
            )
        params[name] = value
    return params


def _non_finite(value: Any) -> bool:
    """True for a NaN or infinite float, and for text that float() reads as one (`nan`, `-inf`)."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return False
    return isinstance(value, float) and not math.isfinite(value)


ParamOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--param",
        "-p",
        metavar="NAME=VALUE",
        help="Set a spec param (repeatable), e.g. --param discount=0.8.",
    ),
]
SpecArg = Annotated[
    str,
    typer.Argument(metavar="SPEC", help="A spec file or a library spec name.", show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]


def to_json(data: Any) -> str:
    def default(x: Any) -> Any:
        if isinstance(x, np.generic):
            return x.item()
        if isinstance(x, np.ndarray):
            return x.tolist()
        return str(x)

    return json.dumps(data, indent=2, default=default)


def version_callback(value: bool) -> None:
    if value:
        try:
            v = package_version("gymwright")
        except PackageNotFoundError:
            v = "unknown (not installed)"
        typer.echo(f"gymwright {v}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Design, check and play multi-agent environments written in the gymwright spec language."""


# --------------------------------------------------------------------------- library
def spec_card(spec: EnvSpec) -> dict[str, Any]:
    """What `library --json` says about one spec."""
    return {
        "name": spec.name,
        "description": spec.description,
        "tags": list(spec.tags),
        "agents": {role: r.count for role, r in spec.agents.items()},
        "params": {name: p.model_dump() for name, p in spec.params.items()},
    }


def library_cards() -> list[dict[str, Any]]:
    cards = []
    for name in library_names():
        try:
            cards.append(spec_card(load_spec(name)))
        except SpecError as e:
            err.print(
                Text(
                    f"- library spec {name} does not load: {e.diagnostics[0].format()}",
                    style="yellow",
                )
            )
    return cards


def format_params(params: dict[str, dict[str, Any]]) -> str:
    def one(name: str, p: dict[str, Any]) -> str:
        bounded = p["min"] is not None and p["max"] is not None and p["type"] != "bool"
        rng = f" [{p['min']:g}, {p['max']:g}]" if bounded else ""
        return f"{name}={p['default']}{rng}"

    return "".join(f"\n  {one(n, p)}" for n, p in params.items()) or " none"


def library_table(cards: list[dict[str, Any]]) -> Table:
    table = Table(title="gymwright library", show_lines=True)
    table.add_column("name / tags", no_wrap=True)
    table.add_column("about", ratio=1)
    for c in cards:
        name = Text.assemble((c["name"], "bold"), "\n", (fill_tags(c["tags"]), "dim"))
        agents = ", ".join(f"{role} x {n}" for role, n in c["agents"].items())
        about = Text.assemble(
            c["description"].strip(),
            "\n",
            ("agents: ", "dim"),
            agents,
            "\n",
            ("params (default [min, max]):", "dim"),
            format_params(c["params"]),
        )
        table.add_row(name, about)
    return table


def fill_tags(tags: list[str], width: int = 24) -> str:
    """Tags as short comma-separated lines."""
    lines = [""]
    for tag in tags:
        sep = ", " if lines[-1] else ""
        if lines[-1] and len(lines[-1]) + len(sep) + len(tag) > width:
            lines.append(tag)
        else:
            lines[-1] += sep + tag
    return "\n".join(lines)


@app.command()
def library(as_json: JsonOpt = False) -> None:
    """List the library specs: tags, agents, params with their defaults and ranges, description."""
    cards = library_cards()
    if as_json:
        typer.echo(to_json(cards))
        return
    out.print(library_table(cards))
    out.print(
        f"{len(cards)} specs. Next: `gymwright run NAME --render` or "
        "`gymwright export NAME -o env.py`."
    )


# --------------------------------------------------------------------------- validate
def validate_source(spec: str, params: dict[str, Any]) -> tuple[str, list[Diagnostic]]:
    """The spec's name (or the argument if it does not load) and every diagnostic."""
    try:
        loaded = load_spec(spec)
    except SpecError as e:
        return spec, list(e.diagnostics)
    return loaded.name, validate_spec(loaded, params)


def print_diagnostics(diags: list[Diagnostic]) -> None:
    for d in diags:
        out.print(Text(d.format(), style=SEVERITY_STYLE.get(d.severity, "")))


def report_validation(spec: str, name: str, diags: list[Diagnostic], advise: bool = True) -> bool:
    n_err = sum(d.severity is Severity.error for d in diags)
    n_warn = sum(d.severity is Severity.warning for d in diags)
    counts = f"{n_err} error{'s' * (n_err != 1)}, {n_warn} warning{'s' * (n_warn != 1)}"
    verdict = Text(f"{name}: ")
    verdict.append("invalid" if n_err else "valid", style="bold red" if n_err else "bold green")
    verdict.append(f" ({counts})")
    out.print(verdict)
    print_diagnostics(diags)
    if advise:
        out.print(
            f"Fix the errors above, then run `gymwright validate {spec}` again."
            if n_err
            else f"Next: `gymwright run {spec} --render` to watch random legal play."
        )
    return n_err == 0


@app.command()
def validate(spec: SpecArg, param: ParamOpt = None, as_json: JsonOpt = False) -> None:
    """Check a spec (schema, static checks, compilation, probes). Exit 1 if any error."""
    params = parse_params(param)
    with domain_errors(spec):
        name, diags = validate_source(spec, params)
    ok = not any(d.severity is Severity.error for d in diags)
    if as_json:
        typer.echo(
            to_json({"valid": ok, "spec": name, "diagnostics": [d.to_dict() for d in diags]})
        )
    else:
        report_validation(spec, name, diags)
    raise typer.Exit(0 if ok else 1)


# --------------------------------------------------------------------------- verify
def print_report(report: VerificationReport, spec: str) -> None:
    """The report grouped by stage, with timings; errors red, warnings yellow."""
    verdict = Text(f"{report.spec}: ")
    verdict.append("passed" if report.passed else "FAILED", style="bold green" if report.passed else "bold red")
    verdict.append(f" ({sum(s.seconds for s in report.stages):.2f} s)")
    out.print(verdict)
    for stage in report.stages:
        style = "red" if stage.errors else "yellow" if stage.warnings else "green"
        out.rule(Text(f"{stage.name}: {stage.errors} errors, {stage.warnings} warnings, {stage.seconds * 1000:.0f} ms", style=style))
        print_diagnostics([d for d in report.diagnostics if d.stage == stage.name])
    if report.stopped_at:
        out.print(f"Stopped at stage `{report.stopped_at}`. Fix its errors, then run `gymwright verify {spec}` again.")
    else:
        out.print(f"Next: `gymwright run {spec} --render` to watch random legal play.")


@app.command()
def verify(
    spec: SpecArg,
    param: ParamOpt = None,
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, help="Random legal episodes to play.")] = DEFAULT_EPISODES,
    seed: Annotated[int, typer.Option("--seed", "-s", min=0, help="First seed of the random episodes.")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Verify a spec: schema, static, compile, dynamic, probes, degeneracy. Exit 0 if it passed."""
    params = parse_params(param)
    with domain_errors(spec):
        report = verify_spec(spec, params, episodes=episodes, seed=seed)
    if as_json:
        typer.echo(report.to_json())
    else:
        print_report(report, spec)
    raise typer.Exit(0 if report.passed else 1)


# --------------------------------------------------------------------------- run
@dataclass
class Episode:
    """The outcome of one episode of random legal play."""

    seed: int
    length: int = 0
    returns: dict[str, float] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    ended: bool = False


def random_legal_actions(
    env: Any, infos: dict[str, Any], rng: np.random.Generator
) -> dict[str, int]:
    """A uniformly random legal action per live agent; agents with none send nothing."""
    actions = {}
    for agent in env.agents:
        mask = infos.get(agent, {}).get("action_mask")
        if mask is None:
            mask = np.ones(env.action_space(agent).n)
        legal = np.flatnonzero(np.asarray(mask))
        if legal.size:
            actions[agent] = int(rng.choice(legal))
    return actions


def show_frame(env: Any, title: str) -> None:
    out.rule(title, style="dim")
    out.print(Text(str(env.render())), soft_wrap=True)


Chooser = Callable[[Any, dict[str, Any], dict[str, Any], np.random.Generator], dict[str, int]]


def random_legal_chooser(env: Any, obs: dict[str, Any], infos: dict[str, Any],
                         rng: np.random.Generator) -> dict[str, int]:
    return random_legal_actions(env, infos, rng)


def play_episode(env: Any, seed: int, *, frames: int, max_steps: int,
                 choose: Chooser = random_legal_chooser) -> Episode:
    """Play from `reset(seed)` with `choose` (default: random legal actions); render the first
    `frames` steps (-1 = all)."""
    rng = np.random.default_rng(seed)
    obs, infos = env.reset(seed=seed)
    ep = Episode(seed, returns={a: 0.0 for a in env.agents})
    if frames:
        show_frame(env, f"seed {seed}: reset")
    while env.agents and ep.length < max_steps:
        obs, rewards, _, _, infos = env.step(choose(env, obs, infos, rng))
        ep.length += 1
        for agent, r in rewards.items():
            ep.returns[agent] = ep.returns.get(agent, 0.0) + float(r)
        ep.metrics = next(
            (dict(i["metrics"]) for i in infos.values() if "metrics" in i), ep.metrics
        )
        if frames < 0 or ep.length <= frames:
            show_frame(env, f"seed {seed}: step {ep.length}")
    ep.ended = not env.agents
    if 0 < frames < ep.length:
        out.print(Text(f"... {ep.length - frames} more steps not shown", style="dim"))
    return ep


def fmt(x: float) -> str:
    return f"{x:.4g}"


def print_episode(i: int, ep: Episode) -> None:
    returns = "  ".join(f"{a}={fmt(r)}" for a, r in ep.returns.items())
    metrics = "  ".join(f"{k}={fmt(v)}" for k, v in ep.metrics.items()) or "-"
    out.print(f"[bold]episode {i}[/bold] (seed {ep.seed}): length {ep.length}")
    out.print(Text(f"  return   {returns}\n  metrics  {metrics}"))


def warn_unended(ep: Episode, max_steps: int) -> None:
    err.print(
        Text(
            f"- episode with seed {ep.seed} did not end within {max_steps} steps; the spec "
            "may need a `truncate` (e.g. `t >= max_steps`); raise --max-steps to play longer",
            style="yellow",
        )
    )


def summary_table(episodes: list[Episode]) -> Table:
    table = Table(title=f"random legal play, {len(episodes)} episode{'s' * (len(episodes) != 1)}")
    for column in ("", "mean", "min", "max"):
        table.add_column(column, justify="right" if column else "left")
    rows: dict[str, list[float]] = {"length": [float(ep.length) for ep in episodes]}
    for ep in episodes:
        for a, r in ep.returns.items():
            rows.setdefault(f"return {a}", []).append(r)
        for k, v in ep.metrics.items():
            rows.setdefault(f"metric {k}", []).append(float(v))
    for label, xs in rows.items():
        table.add_row(label, fmt(float(np.mean(xs))), fmt(min(xs)), fmt(max(xs)))
    return table


def play(
    spec: str,
    params: dict[str, Any],
    *,
    episodes: int,
    seed: int,
    frames: int,
    max_steps: int,
    quiet: bool = False,
    choose: Chooser = random_legal_chooser,
) -> list[Episode]:
    """Compile `spec` and play `episodes` episodes with seeds seed, seed+1, ..."""
    env = compile_spec(spec, params).parallel_env(render_mode="ansi")
    results = []
    try:
        for i in range(episodes):
            ep = play_episode(env, seed + i, frames=frames if i == 0 or frames < 0 else 0,
                              max_steps=max_steps, choose=choose)
            results.append(ep)
            if not ep.ended:
                warn_unended(ep, max_steps)
            if not quiet:
                print_episode(i + 1, ep)
    finally:
        env.close()
    return results


@app.command()
def run(
    spec: SpecArg,
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, help="Episodes to play.")] = 3,
    seed: Annotated[
        int, typer.Option("--seed", "-s", min=0, help="Seed of the first episode, then +1.")
    ] = 0,
    param: ParamOpt = None,
    render: Annotated[
        bool, typer.Option("--render", help="Print the ansi frame after every step.")
    ] = False,
    max_steps: Annotated[
        int, typer.Option("--max-steps", min=1, help="Cut episodes this long.")
    ] = 1000,
    as_json: JsonOpt = False,
) -> None:
    """Play uniformly random legal actions (per the action masks); report returns and metrics."""
    params = parse_params(param)
    if render and as_json:
        fail(
            ["--render and --json both write to stdout; choose one"],
            f"e.g. `gymwright run {spec} --episodes 1 --render`",
        )
    with domain_errors(spec):
        results = play(
            spec,
            params,
            episodes=episodes,
            seed=seed,
            frames=-1 if render else 0,
            max_steps=max_steps,
            quiet=as_json,
        )
    if as_json:
        typer.echo(to_json([asdict(ep) for ep in results]))
        return
    out.print(summary_table(results))


# --------------------------------------------------------------------------- export and schema
def import_hint(path: Path) -> str:
    module = path.stem
    if module.isidentifier():
        return f"from {module} import parallel_env, env"
    return (
        "rename it to a valid module name (e.g. env.py), then `from env import parallel_env, env`"
    )


@app.command()
def export(
    spec: SpecArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="The Python file to write.")],
    param: ParamOpt = None,
    force: Annotated[
        bool, typer.Option("--force", "-f", help="Overwrite an existing file.")
    ] = False,
) -> None:
    """Write the compiled environment as one standalone Python module."""
    params = parse_params(param)
    check_writable(output, force)
    with domain_errors(spec):
        source = export_source(spec, params)
        write_atomic(output, source)
    given = ", ".join(f"{k}={v}" for k, v in params.items())
    out.print(
        f"Wrote {output} ({len(source.splitlines())} lines)"
        + (f" with param defaults {given}." if given else ".")
    )
    out.print(
        Text(
            f"Use it:  {import_hint(output)}\n"
            "         e = parallel_env(render_mode='ansi'); obs, infos = e.reset(seed=0)"
        )
    )
    out.print("It needs only numpy, gymnasium and pettingzoo (not gymwright).")
    if "SOLVED_POOLS = {\n" in source:
        out.print("It carries the solved layouts of these params; at other values of the pool's params "
                  "(map size, agents, holes, wait ratio, pool size) it needs gymwright's solver.")


@app.command()
def schema(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file.")
    ] = None,
) -> None:
    """Print the JSON schema of the spec language (every section and key, described)."""
    text = json.dumps(EnvSpec.model_json_schema(), indent=2)
    if output is None:
        typer.echo(text)
        return
    check_writable(output, force=True)
    with domain_errors():
        write_atomic(output, text + "\n")
    out.print(f"Wrote the spec JSON schema to {output}.")


# --------------------------------------------------------------------------- design commands
from gymwright import cli_design  # noqa: E402  (registers its commands on this app)

app.command("design")(cli_design.design_command)
app.command("designs")(cli_design.designs_command)
app.command("show")(cli_design.show_command)

# --------------------------------------------------------------------------- training commands
from gymwright import cli_train  # noqa: E402  (registers its commands on this app)

app.command("train")(cli_train.train_command)
app.command("play")(cli_train.play_command)

from gymwright import cli_evaluate  # noqa: E402

app.command("evaluate")(cli_evaluate.evaluate_command)

from gymwright import cli_evolve  # noqa: E402

app.command("evolve")(cli_evolve.evolve_command)

from gymwright import cli_report  # noqa: E402

app.command("report")(cli_report.report_command)

from gymwright import cli_demo  # noqa: E402

app.command("demo")(cli_demo.demo_command)


if __name__ == "__main__":
    app()
