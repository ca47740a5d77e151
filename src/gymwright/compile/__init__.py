"""Compile checked specs to environments: the Python backend (PettingZoo)."""

from gymwright.compile.build import CompiledEnv, compile_spec, export_source

__all__ = ["CompiledEnv", "compile_spec", "export_source"]
