"""The `channel` section's schema (`Channel`) and the key it adds to an action choice (`message`)."""

from __future__ import annotations

from pydantic import Field

from gymwright.spec.fields import DOC, Expr, _Strict, key_field


class Channel(_Strict):
    """A message channel: choices with `message` send a symbol; `msg` holds each agent's last symbol (-1 = silent)."""

    vocab: int | str = Field(description="Number of symbols (int or param expression).")
    doc: str = Field("", description=DOC)


CHOICE_FIELDS = {
    "message": (Expr | None, key_field(None, description="channel specs: the int symbol this choice sends (per agent, may use the arguments).")),
}
"""The key a choice gains: the symbol it sends."""
