"""From a spec to a live PettingZoo module: check, generate, load (cached)."""

from __future__ import annotations

import hashlib
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymwright.compile.common import versioned_name
from gymwright.compile.python_backend import generate
from gymwright.diagnostic import Diagnostic, has_errors
from gymwright.errors import SpecError
from gymwright.mechanics.emit import python_parts
from gymwright.spec.checked import CheckedSpec
from gymwright.spec.checker import check_spec
from gymwright.spec.loader import load_spec
from gymwright.spec.model import EnvSpec

_CACHE: dict[str, types.ModuleType] = {}


@dataclass
class CompiledEnv:
    """A compiled spec: the checked form, the generated source and the loaded module."""

    checked: CheckedSpec
    source: str
    module: types.ModuleType
    params: dict[str, Any]
    diagnostics: list[Diagnostic]

    def parallel_env(self, render_mode: str | None = None, **params: Any) -> Any:
        return self.module.parallel_env(render_mode=render_mode, **{**self.params, **params})

    def aec_env(self, render_mode: str | None = None, **params: Any) -> Any:
        return self.module.env(render_mode=render_mode, **{**self.params, **params})


def as_spec(spec: EnvSpec | str | Path | dict[str, Any]) -> EnvSpec:
    return spec if isinstance(spec, EnvSpec) else load_spec(spec)


def check(spec: EnvSpec | str | Path | dict[str, Any], params: dict[str, Any] | None = None) -> CheckedSpec:
    """Load and check; raise SpecError with every diagnostic if the spec has errors."""
    cs, diags = check_spec(as_spec(spec), params)
    if cs is None or has_errors(diags):
        raise SpecError([d for d in diags if d.severity.value == "error"])
    return cs


def compile_spec(spec: EnvSpec | str | Path | dict[str, Any], params: dict[str, Any] | None = None,
                 instrument: bool = False) -> CompiledEnv:
    """Check `spec` under `params` and load its generated PettingZoo module (cached by source).

    `instrument=True` builds the verifier's variant, which calls `env._hook(path)` after every
    variable init and step rule.
    """
    es = as_spec(spec)
    cs, diags = check_spec(es, params)
    if cs is None:
        raise SpecError([d for d in diags if d.severity.value == "error"])
    return compile_checked(cs, params, instrument, diags)


def compile_checked(cs: CheckedSpec, params: dict[str, Any] | None = None, instrument: bool = False,
                    diagnostics: list[Diagnostic] | None = None) -> CompiledEnv:
    """Generate and load the module of an already checked spec (no second check)."""
    source = generate(cs, instrument)
    module = load_module(source, cs.spec.name)
    return CompiledEnv(cs, source, module, dict(params or {}), list(diagnostics or []))


def load_module(source: str, name: str) -> types.ModuleType:
    """Execute generated source as a fresh module (the source comes from checked specs only)."""
    key = hashlib.sha256(source.encode()).hexdigest()
    if key in _CACHE:
        return _CACHE[key]
    module = types.ModuleType(f"gymwright_generated_{name}_{key[:8]}")
    module.__file__ = f"<gymwright:{name}>"
    code = compile(source, module.__file__, "exec")
    exec(code, module.__dict__)  # noqa: S102 - generated from a whitelisted, checked spec
    _CACHE[key] = module
    return module


@dataclass(frozen=True)
class Exported:
    """A standalone module: its source and its env's versioned name (`metadata['name']`)."""

    source: str
    name: str


def export_module(spec: EnvSpec | str | Path | dict[str, Any], params: dict[str, Any] | None = None) -> Exported:
    """The standalone module (runs with numpy, gymnasium and pettingzoo only) and its name.

    It carries what its mechanics modules say it needs at `params` (`PythonPart.carried`: a grid
    with `solve:` carries the solved layout pool of `params`, solved here, once, by gymwright's MAPF
    solver; at other values of the pool's params the module needs gymwright).
    """
    cs = check(spec, params)
    carried: dict[str, str] = {}
    for part in python_parts(cs):
        carried.update(part.carried(cs, lambda: compile_checked(cs, params).parallel_env()))
    return Exported(generate(cs, solved_pools=carried), versioned_name(cs))


def export_source(spec: EnvSpec | str | Path | dict[str, Any], params: dict[str, Any] | None = None) -> str:
    """`export_module`'s source."""
    return export_module(spec, params).source
