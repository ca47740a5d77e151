"""The text game a module carries: `TEXT_LAYOUT` (compile/textlayout.py) and the methods that
render it with the inlined `runtime/textview.py`, so an exported env plays as text on its own."""

from __future__ import annotations

import pprint

from gymwright.compile.pygen.context import GenContext
from gymwright.compile.textlayout import text_layout


def text_game(g: GenContext) -> None:
    """`TEXT_LAYOUT`, `text_rules`, `text_prompt`, `parse_reply` and `text_fallback`."""
    w = g.w
    lines = pprint.pformat(text_layout(g.cs), width=96, sort_dicts=False).splitlines()  # long strings split in pieces
    w(f"TEXT_LAYOUT = {lines[0]}", comment="the text view (docs/text-games.md)")
    for line in lines[1:]:
        w(f"    {line}")
    w("")
    methods = (
        ("text_rules", "agent", "The rules card of `agent`: a text game's system message.", "tv_rules(self.TEXT_LAYOUT, AGENT_INDEX[agent])"),
        ("text_prompt", "agent, observation, action_mask",
         "One turn's message to `agent`: its observation as text, its legal actions by name, how to answer.",
         "tv_prompt(self.TEXT_LAYOUT, AGENT_INDEX[agent], observation, action_mask)"),
        ("parse_reply", "agent, reply, action_mask",
         "(action, how, error): the legal action a reply names, or (None, '', why) for an invalid reply.",
         "tv_parse(self.TEXT_LAYOUT, AGENT_INDEX[agent], reply, action_mask)"),
        ("text_fallback", "agent, action_mask, rng",
         "The action an invalid reply becomes (TEXT_LAYOUT['invalid']: a random legal one, or the first).",
         "tv_fallback(self.TEXT_LAYOUT, tv_legal(self.TEXT_LAYOUT, AGENT_INDEX[agent], action_mask), rng)"),
    )
    for name, args, doc, body in methods:
        with w.block(f"def {name}(self, {args}):"):
            w(f'"""{doc}"""')
            w(f"return {body}")
        w("")
