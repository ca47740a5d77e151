"""`TrainConfig`'s fields as CLI options and as keys of a `--config FILE.yaml`: one source of truth.

Every field of the dataclass in `gymwright/train/config.py` becomes an option named after it
(`ent_coef` -> `--ent-coef`; bools get `--x/--no-x`), whose help is the field's docstring and
whose default is the field's default, as CleanRL's `Args` does. The table is read from the
dataclass itself (`gymwright.train.config` imports without torch): its fields' types and
defaults, and their docstrings (which Python keeps only in the source). A new field needs nothing
here, unless its type is new: then `KINDS` needs an entry, and importing this module fails until
it has one.

Precedence: the dataclass default < the config file < an option given on the command line.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import inspect
import math
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import yaml

from gymwright.diagnostic import shown
from gymwright.errors import GymwrightError, SpecError
from gymwright.train.config import TrainConfig, combination_problems, value_problem

if TYPE_CHECKING:
    from gymwright.train.rllib_settings import Settings

CLASS = TrainConfig.__name__
NO_DEFAULT = object()  # a field with a default_factory: the dataclass makes it


# --------------------------------------------------------------------------- value kinds
@dataclass(frozen=True)
class Kind:
    """How one annotation's values are read: the CLI type, and the check of a file's value."""

    what: str  # "a number", said in errors
    cli_type: Any  # the Python type typer builds the option from (None: not a CLI option)
    check: Callable[[Any], Any]  # value -> the field's value, or ValueError
    metavar: str = ""


def _int(x: Any) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError
    return x


def _float(x: Any) -> float:
    if isinstance(x, bool):
        raise ValueError
    value = float(x)  # an int, a float, or text such as 3e-4 (YAML 1.1 reads that as a string)
    if not math.isfinite(value):
        raise ValueError
    return value


def _bool(x: Any) -> bool:
    if not isinstance(x, bool):
        raise ValueError
    return x


def _str(x: Any) -> str:
    if not isinstance(x, str) or not x:
        raise ValueError
    return x


def _path(x: Any) -> str:
    """A file or folder name: text without NUL, at most 4,096 characters (the system's limit)."""
    if "\x00" in _str(x) or len(x) > 4096:
        raise ValueError
    return x


def _optional_path(x: Any) -> str | None:
    return None if x is None else _path(x)


def _sizes(x: Any) -> tuple[int, ...]:
    """Layer sizes: a list (YAML) or text such as `128,128` (the CLI)."""
    items = [t for t in x.replace(" ", ",").split(",") if t] if isinstance(x, str) else x
    if not isinstance(items, list | tuple) or not items:
        raise ValueError
    sizes = tuple(int(s) if isinstance(s, str) and s.strip().isdigit() else _int(s) for s in items)
    if any(s < 1 for s in sizes):
        raise ValueError
    return sizes


def _spec(x: Any) -> str | dict[str, Any]:
    return x if isinstance(x, dict) else _path(x)


def _pairs(x: Any) -> dict[str, str]:
    """NAME=VALUE pairs: a mapping (a file), or a list of `NAME=VALUE` texts (a repeated option)."""
    if isinstance(x, list | tuple):
        pairs = [_str(t).partition("=") for t in x]
        if not all(sep and name.strip() and value.strip() for name, sep, value in pairs):
            raise ValueError
        return {name.strip(): value.strip() for name, _, value in pairs}
    if not isinstance(x, dict) or not all(isinstance(k, str) and k for k in x):
        raise ValueError
    return {k: _str(v) for k, v in x.items()}


def _params(x: Any) -> dict[str, Any] | list[dict[str, Any]]:
    if isinstance(x, dict) or (isinstance(x, list) and x and all(isinstance(p, dict) for p in x)):
        return x
    raise ValueError


def _optional_counts(x: Any) -> list[int] | None:
    """Copies per config of a params list: whole numbers of at least 1 (a file's list), or null."""
    if x is None:
        return None
    if not isinstance(x, list) or not x or any(_int(c) < 1 for c in x):
        raise ValueError
    return list(x)


KINDS: dict[str, Kind] = {
    "int": Kind("a whole number", int, _int),
    "float": Kind("a finite number", float, _float),
    "bool": Kind("true or false", bool, _bool),
    "str": Kind("a text", str, _str),
    "str | Path": Kind("a path", str, _path, "PATH"),
    "str | Path | None": Kind("a path (or null)", str, _optional_path, "PATH"),
    "tuple[int, ...]": Kind("layer sizes (128,128 on the command line, [128, 128] in a file)", str, _sizes, "N,N,..."),
    "dict[str, str]": Kind("NAME=VALUE pairs (a repeated option NAME=VALUE, a mapping in a file)", list[str], _pairs,
                           "NAME=VALUE"),
    # set by the SPEC argument and --param on the command line, and by the file
    "str | Path | dict[str, Any]": Kind("a library name, a spec file or a spec mapping", None, _spec),
    "dict[str, Any] | list[dict[str, Any]]": Kind("a mapping of params (or a list of them)", None, _params),
    "list[int] | None": Kind("a list of whole numbers of at least 1, one per config of params (or null)", None,
                             _optional_counts),
}


# --------------------------------------------------------------------------- the fields, from the source
@dataclass(frozen=True)
class ConfigField:
    """One field of `TrainConfig`: name, annotation, default, docstring and kind."""

    name: str
    annotation: str
    default: Any
    doc: str
    kind: Kind

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    def shown_default(self) -> str:
        if self.default is NO_DEFAULT:
            return ""
        if isinstance(self.default, tuple):
            return ",".join(map(str, self.default))
        return str(self.default).lower() if isinstance(self.default, bool) else str(self.default)


def read_fields(cls: type = TrainConfig) -> tuple[ConfigField, ...]:
    """The fields of dataclass `cls` (default: `TrainConfig`), in order: each one's type (as
    written: the module defers annotations), default and docstring."""
    kinds = {f.name: f.type if isinstance(f.type, str) else getattr(f.type, "__name__", repr(f.type))
             for f in dataclasses.fields(cls)}
    for name, annotation in kinds.items():
        if annotation not in KINDS:
            raise TypeError(f"{cls.__name__}.{name}: no CLI kind for {annotation!r}; add one to KINDS")
    docs = field_docs(cls)
    return tuple(ConfigField(f.name, kinds[f.name], NO_DEFAULT if f.default is dataclasses.MISSING else f.default,
                             docs.get(f.name, ""), KINDS[kinds[f.name]]) for f in dataclasses.fields(cls))


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of class `cls` (the string after `name: type = default`),
    on one line: Python does not keep these, so they are read from the class's source."""
    body = next(n for n in ast.parse(textwrap.dedent(inspect.getsource(cls))).body if isinstance(n, ast.ClassDef)).body
    docs = {}
    for node, nxt in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(nxt, ast.Expr) \
                and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str):
            docs[node.target.id] = " ".join(nxt.value.value.split())
    return docs


FIELDS = read_fields()
BY_NAME = {f.name: f for f in FIELDS}


# --------------------------------------------------------------------------- config files
class ConfigError(GymwrightError):
    """A config file that cannot be read, or holds an unknown key or a value of the wrong type."""

    def __init__(self, problems: list[tuple[str, str, str]]) -> None:
        from gymwright.diagnostic import error

        self.diagnostics = [error("config", where, message, hint) for where, message, hint in problems]
        where, message, hint = problems[0]
        more = "".join(f"\n{d.path}: {d.message}" + (f"\n  hint: {d.hint}" if d.hint else "")
                       for d in self.diagnostics[1:])
        super().__init__(message + (f"\n  hint: {hint}" if hint else "") + more, path=where)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def read_config_file(path: Path, allowed: tuple[str, ...], owner: str) -> dict[str, Any]:
    """The checked values of a YAML (or JSON) config file; `ConfigError` naming file, line and key.

    The file is read as a spec file is (`gymwright.spec.loader.read_document`: its size, encoding,
    nesting and YAML aliases within the spec's limits), then each key is checked as a field of the
    command. `allowed` are the fields the command takes from a file; `owner` names the command,
    for the error about a field it sets itself."""
    from gymwright.spec.limits import CONFIG
    from gymwright.spec.loader import read_document

    try:
        data, text = read_document(path, CONFIG)
    except SpecError as e:
        raise ConfigError([(d.path, d.message, d.hint) for d in e.diagnostics]) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError([(str(path), f"a config file is a mapping of {CLASS} fields, got a {type(data).__name__}",
                            "write one `field: value` per line, e.g. `ent_coef: 0.001`")])
    problems, values = [], {}
    for key, value in data.items():
        checked = _check_key(str(key), value, allowed, owner)
        if isinstance(checked, Problem):
            problems.append((f"{path}:{_key_line(text, str(key))}", checked.message, checked.hint))
        else:
            values[str(key)] = checked
    if problems:
        raise ConfigError(problems)
    return values


def _key_line(text: str, key: str) -> int:
    """The line of a top-level `key:` in a config file's text (1 when it is not on a line of its own)."""
    found = re.search(rf"^['\"]?{re.escape(key)}['\"]?[ \t]*:", text, re.MULTILINE)
    return text.count("\n", 0, found.start()) + 1 if found else 1


@dataclass(frozen=True)
class Problem:
    message: str
    hint: str


def _check_key(key: str, value: Any, allowed: tuple[str, ...], owner: str) -> Any:
    """The field's value for `key: value`, or the `Problem` with it."""
    if key not in BY_NAME:
        close = difflib.get_close_matches(key, list(BY_NAME), n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else f"the keys are {CLASS}'s fields: {', '.join(BY_NAME)}"
        return Problem(f"unknown key {key!r}", hint)
    if key not in allowed:
        return Problem(f"{key}: `gymwright {owner}` sets this itself",
                       f"remove it from the file; the keys {owner} takes: {', '.join(allowed)}")
    f = BY_NAME[key]
    try:
        checked = f.kind.check(value)
    except (ValueError, TypeError):
        return Problem(f"{key}: expected {f.kind.what}, got {shown(repr(value))} ({type(value).__name__})",
                       f"{key} is {f.doc}" if f.doc else "")
    out_of_range = _range_problem(key, checked)
    return Problem(f"{key}: {out_of_range}", f"{key} is {f.doc}") if out_of_range else checked


def _range_problem(name: str, value: Any) -> str | None:
    """`TrainConfig`'s own check of a numeric field's range."""
    return value_problem(name, value)


# --------------------------------------------------------------------------- the options of a command
@dataclass
class ConfigChoice:
    """What a command got: the values of the config file and those given on the command line."""

    file: Path | None = None
    from_file: dict[str, Any] = field(default_factory=dict)
    from_cli: dict[str, Any] = field(default_factory=dict)

    def values(self) -> dict[str, Any]:
        """The fields set by the file or the command line (the command line wins)."""
        return {**self.from_file, **self.from_cli}

    def where(self, name: str) -> str:
        """Where the value of `name` came from, for messages."""
        if name in self.from_cli:
            return BY_NAME[name].option
        return str(self.file) if name in self.from_file else "default"

    def named(self, name: str) -> str:
        """`name` as it was given: its option (`--anneal-lr`), or the key and its file."""
        if name in self.from_cli:
            return BY_NAME[name].option
        return f"`{name}` in {self.file}" if name in self.from_file else name


def _option(f: ConfigField, flags: tuple[str, ...], shown: str) -> inspect.Parameter:
    decls = (f"{f.option}/--no-{f.option[2:]}",) if f.kind.cli_type is bool else (f.option, *flags)
    info = typer.Option(*decls, help=f.doc[:1].upper() + f.doc[1:] + ".", show_default=shown or True,
                        metavar=f.kind.metavar or None, rich_help_panel="Training config (TrainConfig)")
    default = f.shown_default() if isinstance(f.default, tuple) else f.default  # the CLI writes 64,64
    if default is NO_DEFAULT:  # a field with a default_factory (e.g. an empty mapping): unset on the CLI
        default, info.show_default = None, False
    optional = f.annotation.endswith("None")
    typ = (f.kind.cli_type | None) if optional else f.kind.cli_type
    return inspect.Parameter(f"cfg_{f.name}", inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[typ, info])


def config_options(command: str, fields: tuple[str, ...], *, flags: dict[str, tuple[str, ...]] | None = None,
                   shown: dict[str, str] | None = None, file_only: tuple[str, ...] = ()) -> Callable[[Any], Any]:
    """Add an option per field in `fields` and `--config FILE` to a typer command function, which
    receives them as one `ConfigChoice` in its parameter `config`. `flags` adds short names,
    `shown` replaces a default in the help; `file_only` fields come only from the file (the
    command sets them from its own arguments, e.g. SPEC and --param)."""
    flags, shown = flags or {}, shown or {}
    unknown = [n for n in (*fields, *file_only) if n not in BY_NAME]
    if unknown:
        raise TypeError(f"not {CLASS} fields: {unknown}")

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn, eval_str=True)
        own = [p for p in sig.parameters.values() if p.name != "config"]
        extra = [_option(BY_NAME[n], flags.get(n, ()), shown.get(n, "")) for n in fields]
        extra.append(inspect.Parameter("cfg_file", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
            Path | None, typer.Option("--config", metavar="FILE.yaml", rich_help_panel="Training config (TrainConfig)",
                                      help=f"Read {CLASS} fields from a YAML (or JSON) file; options given here override it.")]))
        ctx_param = inspect.Parameter("cfg_ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)

        @functools.wraps(fn)
        def wrapper(**kwargs: Any) -> Any:
            ctx: typer.Context = kwargs.pop("cfg_ctx")
            file = kwargs.pop("cfg_file")
            given = {}
            for n in fields:
                value = kwargs.pop(f"cfg_{n}")
                if getattr(ctx.get_parameter_source(f"cfg_{n}"), "name", "") == "COMMANDLINE":
                    given[n] = _from_cli(BY_NAME[n], value)
            try:
                from_file = read_config_file(file, (*fields, *file_only), command) if file is not None else {}
            except ConfigError as e:
                from gymwright.cli.common import fail

                fail([d.format() for d in e.diagnostics], f"see `gymwright {command} --help` for each field",
                     diagnostics=e.diagnostics)
            return fn(**kwargs, config=ConfigChoice(file, from_file, given))

        wrapper.__signature__ = sig.replace(parameters=[*own, *extra, ctx_param])  # type: ignore[attr-defined]  # inspect.signature (so typer) reads __signature__, which typeshed does not declare on functions
        wrapper.__annotations__ = {}
        return wrapper

    return decorate


def _from_cli(f: ConfigField, value: Any) -> Any:
    try:
        checked = f.kind.check(value)
    except (ValueError, TypeError):
        raise typer.BadParameter(f"expected {f.kind.what}, got {shown(repr(value))}", param_hint=f"'{f.option}'") from None
    out_of_range = _range_problem(f.name, checked)
    if out_of_range:
        raise typer.BadParameter(f"{f.name}: {out_of_range}", param_hint=f"'{f.option}'")
    return checked


def check_combination(choice: ConfigChoice, command: str) -> None:
    """Exit 1 on settings that are each in range but cannot train together (seeds past the envs'
    limit, more minibatches than samples), naming where each setting came from."""
    from gymwright.cli.common import fail
    from gymwright.diagnostic import error

    problems = combination_problems(resolved(tuple(BY_NAME), choice.values()))
    if problems:
        found = [error("config", choice.where(n), f"{n}: {message}", hint) for n, message, hint in problems]
        fail([d.format() for d in found], f"see `gymwright {command} --help` for each field", diagnostics=found)


OWN_ARGUMENTS = ("spec", "params", "total_steps", "seed", "out", "init_from")  # a command sets them by its arguments


def rllib_settings(choice: ConfigChoice, values: dict[str, Any], steps: int, runners: int | None = 0) -> Settings:
    """The RLlib settings of `values` (the TrainConfig fields a command got, but SPEC and params),
    checked before Ray is started or imported (`gymwright.train.rllib_settings`): a field of the
    built-in trainer alone, a value RLlib's PPO cannot take, a sample call too large, and, with
    `runners` env runners (0: a local Ray; None: a cluster's, known once joined), more minibatches
    than the train batch of `steps` has env steps. `GymwrightError` naming where the value came from."""
    from gymwright.train.rllib_settings import CONFIG_FIELDS, settings_of, training_of

    builtin_only = [choice.named(n) for n in values if n not in CONFIG_FIELDS]
    if builtin_only:
        raise GymwrightError(f"--backend rllib does not take {', '.join(builtin_only)}: settings of the built-in trainer",
                             path="--backend", hint="drop them, or use --backend builtin; RLlib takes "
                             + ", ".join(BY_NAME[n].option for n in CONFIG_FIELDS if n not in OWN_ARGUMENTS))
    try:
        settings = settings_of(values)
        if runners is not None:
            training_of(settings, steps, runners)
    except GymwrightError as e:
        where = choice.where(e.path) if e.path in BY_NAME else e.path
        raise GymwrightError(f"--backend rllib: {e.message}", path=where, hint=e.hint) from None
    return settings


# --------------------------------------------------------------------------- what a command does with them
CONFIG_FILE = "config.yaml"


def resolved(names: tuple[str, ...], values: dict[str, Any]) -> dict[str, Any]:
    """Every field of `names`: its value in `values`, else the dataclass default."""
    return {n: values.get(n, BY_NAME[n].default) for n in names if n in values or BY_NAME[n].default is not NO_DEFAULT}


def plain(value: Any) -> Any:
    """A value as YAML writes and reads it back: paths as text, tuples as lists."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return str(value) if isinstance(value, Path) else value


def save_config(folder: Path, values: dict[str, Any], command: str) -> Path:
    """Write the resolved config to FOLDER/config.yaml (atomically): `--config` reads it back."""
    from gymwright.atomic import write_atomic

    head = f"# the resolved {CLASS} of this run; `gymwright {command} --config {folder / CONFIG_FILE}` reads it back\n"
    folder.mkdir(parents=True, exist_ok=True)
    return write_atomic(folder / CONFIG_FILE, head + yaml.safe_dump(plain(values), sort_keys=False))


def describe(choice: ConfigChoice) -> str:
    """The settings that differ from the defaults, each with where it came from."""
    values = choice.values()
    parts = [f"{n}={_short(v)} ({choice.where(n)})" for n, v in values.items() if v != BY_NAME[n].default]
    return "settings: " + ", ".join(parts) if parts else ""


def _short(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return "{...}" if isinstance(value, dict | list) else str(value)


# fields a curriculum (evolve, demo) takes: each stage's run sets the others (spec, params, steps, folder, warm start)
STAGE_FIELDS = tuple(f.name for f in FIELDS if f.name not in ("spec", "params", "copies", "total_steps", "out", "resume",
                                                                "init_from"))
STAGE_SHOWN = {"num_envs": "256 (the curriculum's)"}


def check_device_of(choice: ConfigChoice | None) -> None:
    """`GymwrightError` now (before any work) if the chosen --device cannot be used here."""
    from gymwright.train.config import check_device

    check_device((choice or ConfigChoice()).values().get("device", BY_NAME["device"].default))
