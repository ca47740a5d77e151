"""The `channel` module's entry in the registry: what it adds to each stage."""

from __future__ import annotations

from gymwright.mechanics.base import Mechanics
from gymwright.mechanics.channel.checks import ChannelChecks
from gymwright.mechanics.channel.schema import CHOICE_FIELDS, Channel

CHANNEL = Mechanics(
    name="channel",
    section=Channel,
    doc="The message channel module (communication games).",
    checks=ChannelChecks(),
    choice_fields=CHOICE_FIELDS,
    maintained=frozenset({"msg"}),
    card=lambda vocab: f"{vocab} symbols",
    choice_card={"message": lambda message: f"sends `{message.source}`"},
    python="gymwright.mechanics.channel.python",
    batch="gymwright.mechanics.channel.batch",
)
