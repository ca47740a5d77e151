"""Mechanics modules' checks, one file per module, registered here (`CHECKS`, parts of
`spec.checker`'s builder). Their code generation is in `compile/mechanics/`, their runtime in
`runtime/`."""

from __future__ import annotations

from gymwright.spec.mechanics.channel import ChannelChecks
from gymwright.spec.mechanics.grid import GridChecks

CHECKS = (GridChecks, ChannelChecks)
