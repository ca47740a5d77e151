"""Any gymwright environment as a text game, and language models as its players.

`TextView` (view.py) is one environment's text form, generated from the checked spec
(`compile/textlayout.py`, rendered by `runtime/textview.py`, which an exported module carries
too); `TextGame` (game.py) plays one env as text; `hook.py` gives a code-mode module, or any
PettingZoo env, its text form; `policy.py` is a language model acting wherever a policy acts
(`llm:MODEL`). docs/text-games.md says how it reads and what it counts.
"""

from gymwright.textgame.game import TextGame
from gymwright.textgame.view import Parsed, TextView

__all__ = ["Parsed", "TextGame", "TextView"]
