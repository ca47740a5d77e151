"""Rendering: `render`, `render_text` (the spec's `text.render` or a default) and `text_observation`."""

from __future__ import annotations

from typing import Any

from gymwright.compile.pygen.context import GenContext


def render(g: GenContext) -> None:
    """`render`, `render_text`, `text_observation` and `close`."""
    cs, w = g.cs, g.w
    with w.block("def render(self):"):
        with w.block("if self.render_mode is None:"):
            w("gymnasium.logger.warn('render() called without a render_mode; pass render_mode=\"ansi\"')")
            w("return None")
        if frame(g, 16):
            with w.block("if self.render_mode == 'rgb_array':"):
                w(f"return {frame(g, 16)}")
        with w.block("if self.render_mode == 'human':"):
            small = frame(g, 4)
            w(f"rt_show(self.render_text(), {f'lambda: {small}' if small else 'None'})", comment="prints; the frame only on a terminal")
            w("return None")
        w("return self.render_text()")
    w("")
    with w.block("def render_text(self):"):
        w('"""A text picture of the current state."""')
        w("p, v = self.p, self.v")
        if cs.text_render:
            w(f"lines = [{template(g, cs.text_render)}]", comment="text.render")
        else:
            fields = ["'t=' + str(v.t)"] + [f"{x.name + '='!r} + _fmt(v.{x.name})" for x in cs.state if not x.shape]
            w(f"lines = ['  '.join([{', '.join(fields)}])]")
        for part in g.parts:  # a mechanics module's picture (a grid's map)
            text = part.text(g)
            if text is not None:
                w(f"lines.append({text})")
        shown = [x for x in cs.agent_state if not x.shape and not x.builtin]
        with w.block("for i, agent in enumerate(AGENTS):"):
            parts = ["f'{agent}: {_action_text(ROLE_OF[i], self._last[i])}'", "f'reward={self._last_reward[i]:.3g}'"]
            parts += [f"{x.name + '='!r} + _fmt(v.{x.name}[i])" for x in shown]
            w(f"lines.append('  '.join([{', '.join(parts)}]))")
        w("return '\\n'.join(lines)")
    w("")
    with w.block("def text_observation(self, agent):"):
        w('"""The text observation of `agent` (spec `text.observe`), or the rendering."""')
        w("p, v = self.p, self.v")
        w("me = AGENT_INDEX[agent]")
        for r in cs.roles:
            if r.text_observe:
                with w.block(f"if ROLE_OF[me] == {r.name!r}:"):
                    w(f"return {template(g, r.text_observe, per_agent=True)}")
        w("return self.render_text()")
    w("")
    w("def close(self):")
    w("    pass")
    w("")


def frame(g: GenContext, cell: int) -> str | None:
    """Code of the RGB frame of the first mechanics module that draws one (None: none does)."""
    return next((f for part in g.parts if (f := part.frame(g, cell)) is not None), None)


def template(g: GenContext, parts: list[Any], per_agent: bool = False) -> str:
    """Code of a text template: its literal parts and its (expression, format) parts joined."""
    em = g.em(per_agent=per_agent)
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(repr(part))
        else:
            c, fmt = part
            out.append(f"format({em(c)}, {fmt!r})" if fmt else f"_fmt({em(c)})")
    return f"''.join([{', '.join(out)}])" if len(out) > 1 else (out[0] if out else "''")
