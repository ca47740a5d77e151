"""The `channel` mechanics module's schema (`Channel`) and checks: the vocabulary and the built-in `msg` variable."""

from __future__ import annotations

from pydantic import Field

from gymwright.spec.checked import CVar
from gymwright.spec.checks.base import CheckerBase
from gymwright.spec.expr.check import Symbol
from gymwright.spec.expr.types import Info
from gymwright.spec.fields import DOC, _Strict
from gymwright.spec.limits import MAX_VOCAB


class Channel(_Strict):
    """A message channel: choices with `message` send a symbol; `msg` holds each agent's last symbol (-1 = silent)."""

    vocab: int | str = Field(description="Number of symbols (int or param expression).")
    doc: str = Field("", description=DOC)


class ChannelChecks(CheckerBase):
    """`channel`."""

    def check_channel(self) -> None:
        ch = self.spec.channel
        if ch is None:
            return
        vocab = ch.vocab if isinstance(ch.vocab, int) else self.const_int(ch.vocab, "channel.vocab", "vocab", 1, MAX_VOCAB)
        if vocab is None or not 1 <= vocab <= MAX_VOCAB:
            self.error("channel.vocab", f"vocab must be an int in 1..{MAX_VOCAB}", value=vocab,
                       hint="a channel needs a symbol per thing worth saying: a few dozen at most")
            return
        self.vocab = vocab
        self.declare(Symbol("vocab", "builtin", Info("int", (), vocab, vocab, True, vocab), "p.vocab", "number of symbols"), "channel.vocab")
        var = CVar("msg", "int", (), None, -1.0, vocab - 1.0, True, doc="last symbol sent (-1 = silent)", builtin=True)
        self.builtin_agent_state.append(var)
        self.declare(Symbol("msg", "agent_state", Info("int", (self.n_agents,), -1.0, vocab - 1.0), "v.msg", var.doc), "channel")
