"""One error hierarchy. Every error carries where (`path`), what (`message`) and the fix (`hint`)."""

from __future__ import annotations

from typing import Any


class GymwrightError(Exception):
    """Base of every error gymwright raises on purpose."""

    def __init__(self, message: str, *, path: str = "", hint: str = "", value: Any = None) -> None:
        self.message = message
        self.path = path
        self.hint = hint
        self.value = value
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        fix = f"\n  hint: {self.hint}" if self.hint else ""
        return f"{where}{self.message}{fix}"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled whole (path, hint and a subclass's own fields), so an error raised in a worker
        process reaches the caller as it was raised."""
        return (_restore, (type(self), self.args, dict(self.__dict__)))


def _restore(cls: type[GymwrightError], args: tuple[Any, ...], state: dict[str, Any]) -> GymwrightError:
    err = cls.__new__(cls)
    Exception.__init__(err, *args)
    err.__dict__.update(state)
    return err


class SpecError(GymwrightError):
    """A spec is malformed. Carries every diagnostic found, not just the first."""

    def __init__(self, diagnostics: list[Any]) -> None:
        self.diagnostics = diagnostics
        first = diagnostics[0] if diagnostics else None
        super().__init__(
            "\n".join(d.format() for d in diagnostics) if diagnostics else "invalid spec",
            path=getattr(first, "path", ""),
        )

    def __str__(self) -> str:
        return self.message


class ExprError(GymwrightError):
    """An expression is not in the language, names something undeclared, or is mistyped.

    `col` is the 0-based column of the offending construct inside `source`.
    """

    def __init__(
        self, message: str, *, source: str = "", col: int | None = None, hint: str = "",
        path: str = "",
    ) -> None:
        self.source = source
        self.col = col
        super().__init__(message, path=path, hint=hint, value=source)

    def caret(self) -> str:
        """The source line with a caret under the offending column."""
        if not self.source or self.col is None:
            return ""
        return f"    {self.source}\n    {' ' * self.col}^"

    def __str__(self) -> str:
        base = super().__str__()
        caret = self.caret()
        return f"{base}\n{caret}" if caret else base


class CompileError(GymwrightError):
    """Code generation failed for a spec that passed its checks (a gymwright bug or a limit)."""

