"""The spec language: models, expressions, mechanics and the checker."""

from gymwright.spec.checker import check_spec
from gymwright.spec.loader import library_names, load_spec
from gymwright.spec.model import EnvSpec

__all__ = ["EnvSpec", "check_spec", "library_names", "load_spec"]
