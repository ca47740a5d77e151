"""The commands on one spec: library, validate, verify, run, export and schema."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from gymwright.atomic import write_atomic
from gymwright.cli.common import (
    JsonOpt,
    ParamOpt,
    SpecArg,
    app,
    check_seeds,
    check_writable,
    domain_errors,
    err,
    fail,
    out,
    parse_params,
    play,
    print_diagnostics,
    seed_option,
    summary_table,
    to_json,
)
from gymwright.compile.build import export_module
from gymwright.diagnostic import Diagnostic, Severity
from gymwright.errors import SpecError
from gymwright.spec.loader import library_names, load_spec
from gymwright.spec.model import EnvSpec
from gymwright.verify.report import VerificationReport
from gymwright.verify.validate import validate as validate_spec
from gymwright.verify.verifier import DEFAULT_EPISODES
from gymwright.verify.verifier import verify as verify_spec


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
    seed: Annotated[int, seed_option("First seed of the random episodes.")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Verify a spec: schema, static, compile, dynamic, probes, degeneracy. Exit 0 if it passed."""
    params = parse_params(param)
    check_seeds(seed, episodes)
    with domain_errors(spec):
        report = verify_spec(spec, params, episodes=episodes, seed=seed)
    if as_json:
        typer.echo(report.to_json())
    else:
        print_report(report, spec)
    raise typer.Exit(0 if report.passed else 1)


@app.command()
def run(
    spec: SpecArg,
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, help="Episodes to play.")] = 3,
    seed: Annotated[int, seed_option("Seed of the first episode, then +1.")] = 0,
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
    check_seeds(seed, episodes)
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
    raw: Annotated[
        bool, typer.Option("--raw", help="A code-mode module: write the model's class itself, which runs "
                           "UNSANDBOXED when imported (the file's header says so), instead of a module that "
                           "runs it in gymwright's sandbox.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Write the compiled environment as one standalone Python module. A code-mode module (SPEC
    ending in .py) is checked in the sandbox again and written as a PettingZoo module that runs
    the model's code only in gymwright's sandbox worker (`--raw`: the model's module itself)."""
    params = parse_params(param)
    check_writable(output, force)
    if raw and not str(spec).endswith(".py"):
        fail(["--raw: applies to a code-mode module (SPEC ending in .py) only"],
             "A spec compiles to generated code that needs no sandbox: drop --raw.", path="--raw")
    name = None  # the env's versioned name (a spec's export)
    with domain_errors(spec):
        if str(spec).endswith(".py"):
            from gymwright.codemode.export import exported_module

            source = exported_module(Path(spec), raw=raw)
        else:
            exported = export_module(spec, params)
            source, name = exported.source, exported.name
        write_atomic(output, source)
    if as_json:
        typer.echo(to_json({"output": str(output), "lines": len(source.splitlines()), "params": params,
                            "name": name, "import": import_hint(output),
                            "solved_pools": "SOLVED_POOLS = {\n" in source}))
        return
    if str(spec).endswith(".py") and raw:
        out.print(f"Wrote {output} ({len(source.splitlines())} lines): the model's module itself (it passed the "
                  "checks in the sandbox). Imported, it runs UNSANDBOXED with your rights; its header says so.")
        return
    if str(spec).endswith(".py"):
        out.print(f"Wrote {output} ({len(source.splitlines())} lines): a PettingZoo module whose `parallel_env()` "
                  "and `env()` run the model's code in gymwright's sandbox worker (it needs gymwright).")
        out.print(Text(f"Use it:  {import_hint(output)}\n         e = parallel_env(); obs, infos = e.reset(seed=0); "
                       "...; e.close()"))
        return
    given = ", ".join(f"{k}={v}" for k, v in params.items())
    out.print(
        f"Wrote {output} ({len(source.splitlines())} lines): the env `{name}`"
        + (f", with param defaults {given}." if given else ".") + " Its docstring is the env's card."
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


