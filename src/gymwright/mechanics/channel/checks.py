"""The `channel` section's checks: the vocabulary, the built-in `msg` variable and the `message`
of a choice. Its checked form is the vocabulary's size (an int)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gymwright.mechanics.channel.schema import Channel
from gymwright.spec.checked import CChoice, CheckedSpec, CRole, CVar
from gymwright.spec.checks.context import CheckContext
from gymwright.spec.expr.check import Checked
from gymwright.spec.limits import MAX_VOCAB

if TYPE_CHECKING:
    from gymwright.spec.model import Choice


class ChannelChecks:
    """`channel` (and the `message` of a choice): the channel module's `ModuleChecks`."""

    def declare(self, ctx: CheckContext, section: Any) -> None:
        if section is None:
            return
        assert isinstance(section, Channel)
        vocab = section.vocab if isinstance(section.vocab, int) else ctx.const_int(section.vocab, "channel.vocab", "vocab", 1, MAX_VOCAB)
        if vocab is None or not 1 <= vocab <= MAX_VOCAB:
            ctx.error("channel.vocab", f"vocab must be an int in 1..{MAX_VOCAB}", value=vocab,
                      hint="a channel needs a symbol per thing worth saying: a few dozen at most")
            return
        ctx.mechanics["channel"] = vocab
        ctx.builtin("vocab", vocab, "number of symbols", "channel.vocab")
        ctx.builtin_var(CVar("msg", "int", (), None, -1.0, vocab - 1.0, True, doc="last symbol sent (-1 = silent)",
                             builtin=True), "channel")

    def choice(self, ctx: CheckContext, role: CRole, cc: CChoice, choice: Choice) -> None:
        if choice.message is None:
            return
        if "channel" not in ctx.mechanics:
            ctx.error(f"{cc.path}.message", "`message` needs a `channel:` section", "declare `channel: {vocab: N}`")
            return
        scope = ctx.scope(f"the message of `{cc.name}`", per_agent=True, me=(role.start, role.start + role.count - 1),
                          actions=True)
        m = ctx.expr(choice.message, scope, f"{cc.path}.message")
        if m is not None and (m.info.dtype != "int" or m.info.shape):
            ctx.error(f"{cc.path}.message", f"message must be an int symbol per agent, got {m.info.describe()}", "e.g. `word[me]`")
        cc.fields["message"] = m

    def after_actions(self, ctx: CheckContext) -> bool:
        return True

    def expressions(self, cs: CheckedSpec) -> list[Checked | None]:
        return [c.fields.get("message") for r in cs.roles for c in r.choices]
