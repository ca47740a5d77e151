"""What every command shares: the typer app, the consoles, errors at the command boundary,
the shared options, and random legal play (run, play and demo print episodes alike)."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import numpy as np
import typer
import yaml
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from gymwright.cli.inert import InertConsole, inert
from gymwright.compile import compile_spec
from gymwright.diagnostic import Diagnostic, Severity, error, shown
from gymwright.errors import GymwrightError, SpecError
from gymwright.runtime.core import SEED_LIMIT

if TYPE_CHECKING:
    from gymwright.train.trainers import Trainer

JSON_ERRORS: ContextVar[bool] = ContextVar("JSON_ERRORS", default=False)


class JsonErrorsGroup(TyperGroup):
    """The app's group: with `--json` among the arguments, every error (a usage error such as a
    bad option value as well as a domain error) is one JSON object on stdout, exit code non-zero."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        if "--json" not in argv:
            return super().main(argv, prog_name, complete_var, standalone_mode, **extra)
        token = JSON_ERRORS.set(True)
        try:
            code = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.TyperException as e:  # usage errors: unknown options, bad values
            hint = getattr(e, "param_hint", None) or getattr(getattr(e, "param", None), "opts", None)
            where = hint if isinstance(hint, str) else "/".join(hint) if hint else ""
            code = int(getattr(e, "exit_code", 2))
            message = e.format_message() if hasattr(e, "format_message") else str(e)
            echo_error([error("cli", where.replace("'", ""), message, _usage_hint(e))], code)
        except typer.Abort:
            echo_error([error("cli", "", "aborted")], 1)
            code = 1
        finally:
            JSON_ERRORS.reset(token)
        if standalone_mode:
            sys.exit(code if isinstance(code, int) else 0)
        return code


def _usage_hint(e: Exception) -> str:
    ctx = getattr(e, "ctx", None)
    return f"`{ctx.command_path} --help` lists the options" if ctx is not None else "`gymwright --help` lists the commands"


def echo_error(diags: list[Diagnostic], code: int, next_step: str = "") -> None:
    """The JSON form of an error: the first diagnostic's fields, all of them, what to do next."""
    first = diags[0].to_dict() if diags else {"message": "error"}
    typer.echo(json.dumps({"ok": False, "exit_code": code, **first, "next": next_step,
                           "diagnostics": [d.to_dict() for d in diags]}, indent=2, default=str))


app = typer.Typer(
    cls=JsonErrorsGroup,
    name="gymwright",
    help="Design, check and play multi-agent environments written in the gymwright spec language.",
    no_args_is_help=True,
    add_completion=False,
)
out = InertConsole()  # what a command prints: inert (gymwright.cli.inert), markup off
err = InertConsole(stderr=True)

DEMO_FRAMES = 4
SEVERITY_STYLE = {Severity.error: "red", Severity.warning: "yellow", Severity.info: "dim"}


# --------------------------------------------------------------------------- errors at the boundary
def fail(lines: list[str], next_step: str = "", *, diagnostics: list[Diagnostic] | None = None,
         path: str = "") -> NoReturn:
    """Print each line as a bullet on stderr (plus what to do next) and exit 1; under `--json`,
    one JSON object on stdout instead (`diagnostics`, else one per line, at `path`)."""
    if JSON_ERRORS.get():
        echo_error(diagnostics or [error("cli", path, line) for line in lines], 1, next_step)
        raise typer.Exit(1)
    for line in lines:
        err.print(Text("- " + inert(line).replace("\n", "\n  "), style="red"))
    if next_step:
        err.print(Text(next_step))
    raise typer.Exit(1)


def chosen_trainer(backend: str) -> Trainer:
    """The trainer `--backend` names (`gymwright.train.trainers.TRAINERS`); exit 1 naming the choices otherwise."""
    from gymwright.train.trainers import TRAINERS

    if backend not in TRAINERS:
        fail([f"unknown --backend {shown(repr(backend))}; choose one of {', '.join(TRAINERS)}"], path="--backend")
    return TRAINERS[backend]


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
        fail([d.format() for d in e.diagnostics] or [str(e)], next_step(e.diagnostics, spec),
             diagnostics=list(e.diagnostics) or None)
    except GymwrightError as e:
        fail([str(e)], diagnostics=getattr(e, "diagnostics", None)
             or [error(type(e).__name__, e.path, e.message, e.hint, value=e.value)])
    except OSError as e:
        fail([f"{e.filename or ''}: {e.strerror or e}".lstrip(": ")], path=str(e.filename or ""))


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
                f"expected NAME=VALUE (e.g. --param discount=0.8), got {shown(repr(item))}",
                param_hint="'--param'",
            )
        value = _param_value(name, raw)
        if isinstance(value, list | dict):
            raise typer.BadParameter(
                f"{name}: a param value is a number or a bool, got {shown(repr(raw))}", param_hint="'--param'"
            )
        if _non_finite(value):
            raise typer.BadParameter(
                f"{name}={raw.strip()}: NaN and infinities are not param values (they compare false against "
                f"every range); give a finite number (`gymwright library` lists each param's range)",
                param_hint="'--param'",
            )
        params[name] = value
    return params


def _param_value(name: str, raw: str) -> Any:
    """A --param value read as YAML within the spec's reading limits (`spec.limits.VALUE`); text
    that is not YAML stays text, for the spec's check to judge."""
    from gymwright.spec.limits import VALUE, load_yaml

    try:
        return load_yaml(raw, f"--param {name}", VALUE)
    except yaml.YAMLError:
        return raw
    except SpecError as e:
        raise typer.BadParameter(f"{name}: {e.diagnostics[0].message}", param_hint="'--param'") from None
    except ValueError:  # an int of more than 4,300 digits
        raise typer.BadParameter(f"{name}={shown(raw)}: a number this long cannot be read; give one of at most a "
                                 "few dozen digits", param_hint="'--param'") from None


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


def seed_option(help: str) -> Any:
    """`--seed/-s`: an env seed, an int in [0, 2**63) (typer refuses any other as a usage error)."""
    return typer.Option("--seed", "-s", min=0, max=SEED_LIMIT - 1, help=help)


def check_seeds(seed: int, episodes: int) -> None:
    """Episodes are seeded seed, seed + 1, ...: a usage error when the last passes the envs' largest seed."""
    if seed + episodes > SEED_LIMIT:
        raise typer.BadParameter(
            f"{episodes:,} episodes from seed {seed:,} would use seeds up to {seed + episodes - 1:,}, past the envs' "
            f"largest seed 2**63 - 1 = {SEED_LIMIT - 1:,}; give a seed of at most {SEED_LIMIT - episodes:,}",
            param_hint="'--seed'")


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



def print_diagnostics(diags: list[Diagnostic]) -> None:
    for d in diags:
        out.print(Text(inert(d.format()), style=SEVERITY_STYLE.get(d.severity, "")))


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
                 choose: Chooser = random_legal_chooser, name: Any = None) -> Episode:
    """Play from `reset(seed)` with `choose` (default: random legal actions); render the first
    `frames` steps (-1 = all). Every observation and reward must be a finite number (errors name
    the env: `name`, a spec or a module's path, else the env's metadata name)."""
    from gymwright.train.boundary import check_agent_step  # here: gymwright.train imports torch

    name = name if name is not None else env.metadata.get("name", "the env")
    rng = np.random.default_rng(seed)
    obs, infos = env.reset(seed=seed)
    check_agent_step(name, 0, obs)
    ep = Episode(seed, returns={a: 0.0 for a in env.agents})
    if frames:
        show_frame(env, f"seed {seed}: reset")
    while env.agents and ep.length < max_steps:
        obs, rewards, _, _, infos = env.step(choose(env, obs, infos, rng))
        ep.length += 1
        check_agent_step(name, ep.length, obs, rewards)
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
    out.print(Text.assemble((f"episode {i}", "bold"), f" (seed {ep.seed}): length {ep.length}"))
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
            ep = play_episode(env, seed + i, name=spec, frames=frames if i == 0 or frames < 0 else 0,
                              max_steps=max_steps, choose=choose)
            results.append(ep)
            if not ep.ended:
                warn_unended(ep, max_steps)
            if not quiet:
                print_episode(i + 1, ep)
    finally:
        env.close()
    return results




def llm_progress(every: float = 2.0) -> Callable[[Any], None]:
    """A progress callback for a language model's play (`LLMPolicy.progress`): decisions, valid
    share, tokens and rate on stderr; rewritten in place on a terminal, a plain line every
    `every` seconds otherwise."""
    import time

    last = [0.0]
    live = sys.stderr.isatty()

    def show(tally: Any) -> None:
        now = time.monotonic()
        if not live and now - last[0] < every:
            return
        last[0] = now
        t = tally.to_dict()
        line = (f"llm: {t['decisions']} decisions, valid {t['valid_rate']:.2f}, {t['tokens']:,} tokens, "
                f"{t['decisions_per_s']:.3g}/s")
        sys.stderr.write(("\r" + line + "\033[K") if live else line + "\n")
        sys.stderr.flush()
    return show


def npc_option() -> Any:
    """`--npc ROLE=PLAYER` for the commands that play a policy (evaluate, play)."""
    return typer.Option("--npc", metavar="ROLE=PLAYER",
                        help="Have a fixed player play a role or some of its agents (repeatable): ROLE, ROLE[I], "
                             "ROLE[I:J]; PLAYER: a scripted baseline, random, a run folder, or llm:MODEL.")


def with_npc(policy: Any, spec: str, params: dict[str, Any], npc: list[str] | None) -> Any:
    """`policy` with the `--npc` players beside it (a `Team`), or `policy` alone without any; a
    language model asks only for the agents left to it."""
    if not npc:
        return policy
    from gymwright.train.npc import Team, players_for
    from gymwright.train.policy import roles_of
    from gymwright.train.rollout import make_env

    pairs = {}
    for item in npc:
        key, eq, player = item.partition("=")
        if not eq or not key.strip() or not player.strip():
            fail([f"--npc {shown(item)}: expected ROLE=PLAYER"], "e.g. --npc bargainer[1]=scripted:even_split")
        pairs[key.strip()] = player.strip()
    if hasattr(policy, "players"):
        fail(["--npc: this run was trained with fixed players of its own, which play them here too"],
             "drop --npc, or evaluate a run trained without fixed players")
    benv = make_env(spec, [params], 1)
    players = players_for(pairs, benv, roles_of(benv), spec, where="--npc")
    if hasattr(policy, "agents") and getattr(policy, "kind", "") == "llm":
        policy.agents = {i for i in range(len(benv.possible_agents)) if not players.fixed[i]}
    return Team(policy, players)
