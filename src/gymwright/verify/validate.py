"""`validate`: schema, static checks, compilation and probes of one spec, as diagnostics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gymwright.compile.build import compile_checked
from gymwright.diagnostic import Diagnostic, error, has_errors
from gymwright.errors import GymwrightError, SpecError
from gymwright.spec.checker import check_spec
from gymwright.spec.loader import load_spec
from gymwright.spec.model import EnvSpec
from gymwright.verify.probes import run_probes


def validate(source: EnvSpec | str | Path | dict[str, Any], params: dict[str, Any] | None = None,
             probes: bool = True) -> list[Diagnostic]:
    """Every finding about the spec; it is valid when none is an error."""
    try:
        spec = source if isinstance(source, EnvSpec) else load_spec(source)
    except SpecError as e:
        return list(e.diagnostics)
    cs, diags = check_spec(spec, params)
    if cs is None or has_errors(diags):
        return diags
    try:
        compiled = compile_checked(cs, params, diagnostics=diags)
    except GymwrightError as e:
        return diags + [error("compile", e.path, e.message, e.hint)]
    except Exception as e:  # noqa: BLE001 - a generator bug must still come back as a finding
        return diags + [error("compile", "", f"code generation failed: {type(e).__name__}: {e}",
                              "this is a gymwright bug; please report it with the spec")]
    if probes:
        diags += run_probes(compiled)
    return diags
