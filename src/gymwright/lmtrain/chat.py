"""One agent's multi-turn chat as one token sequence: the model's own tokens, and the tokens
between its turns (the end of its reply, the next user message, the opened assistant turn).

Generation at every turn continues the sequence built so far, so the sequence trained on is the
one the model saw, token for token (never a decode and re-encode of its replies). The text between
turns is what the model's chat template renders there; the template must render a chat by
appending (each longer chat extends the shorter one's text), as ChatML templates do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gymwright.errors import GymwrightError

SENTINEL = "\u2063gymwright-reply\u2063"


def render(tokenizer: Any, messages: Sequence[dict[str, str]], opened: bool) -> str:
    return str(tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=opened))


def encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def first_ids(tokenizer: Any, messages: Sequence[dict[str, str]]) -> list[int]:
    """The tokens of the chat up to the first reply (system and user messages, the assistant turn
    opened)."""
    return encode(tokenizer, render(tokenizer, messages, True))


def between(tokenizer: Any, history: Sequence[dict[str, str]], next_user: str, finished: bool) -> list[int]:
    """The tokens after a reply to the last message of `history` up to the next turn's opened
    assistant message: the reply's closing (less the end-of-sequence token when the model wrote
    it, `finished`) and the next user message."""
    asked = render(tokenizer, history, True)
    full = render(tokenizer, [*history, {"role": "assistant", "content": SENTINEL},
                              {"role": "user", "content": next_user}], True)
    if not full.startswith(asked) or SENTINEL not in full:
        raise GymwrightError(
            "the model's chat template does not render a chat by appending turns",
            path="chat_template", hint="use a model whose template is append-only (ChatML: SmolLM2, Qwen2.5)")
    glue = full[full.index(SENTINEL) + len(SENTINEL):]
    eos = str(tokenizer.eos_token or "")
    if finished and eos and glue.startswith(eos):
        glue = glue[len(eos):]
    return encode(tokenizer, glue)
