"""Mechanics modules: optional parts of the spec language, one folder each (`grid/`, `channel/`),
listed in `registry.MECHANICS`; `base.Mechanics` says what an entry declares, and
docs/extending.md how to add one.

This file imports nothing: a module's runtime files (standalone numpy, inlined into generated
code) are imported on their own, and importing them must not import the rest of gymwright.
"""
