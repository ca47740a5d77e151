"""The error for an optional package that is not installed, naming the extra that brings it."""

from __future__ import annotations

from gymwright.errors import GymwrightError


def missing_extra(package: str, extra: str) -> GymwrightError:
    """`package` is missing: install gymwright's `extra`."""
    return GymwrightError(
        f"{package} is not installed; serving gymwright environments this way needs it",
        path="serve", hint=f"pip install 'gymwright[{extra}]'",
    )
