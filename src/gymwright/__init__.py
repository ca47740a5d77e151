"""gymwright: a language model designs multi-agent RL environments.

The public verbs, by pipeline stage:
"""

from gymwright.compile import CompiledEnv, compile_spec, export_source
from gymwright.compile.make import make, make_aec
from gymwright.design import DesignOptions, DesignResult, design
from gymwright.diagnostic import Diagnostic, Severity
from gymwright.errors import CompileError, ExprError, GymwrightError, SpecError
from gymwright.spec import EnvSpec, check_spec, library_names, load_spec
from gymwright.store import Store
from gymwright.verify.validate import validate
from gymwright.verify.verifier import verify

__version__ = "0.1.0"

__all__ = [
    # spec
    "EnvSpec",
    "load_spec",
    "check_spec",
    "library_names",
    # design
    "design",
    "DesignOptions",
    "DesignResult",
    "Store",
    # compile
    "make",
    "make_aec",
    "compile_spec",
    "export_source",
    "CompiledEnv",
    # verify
    "verify",
    "validate",
    "Diagnostic",
    "Severity",
    # errors
    "GymwrightError",
    "SpecError",
    "ExprError",
    "CompileError",
]
