"""A harness of benchmarks/ loaded as a module (the folder is not a package), for the tests that
drive one."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.support.paths import ROOT


def benchmark_module(name: str) -> ModuleType:
    """benchmarks/NAME.py, loaded once per process under the name `NAME_bench`."""
    key = f"{name}_bench"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module
