"""PettingZoo conventions a generated environment offers on request: a `max_cycles` cap, the
classic `{"observation", "action_mask"}` observations and the `human` render mode.

STANDALONE module: it imports only numpy, gymnasium and the standard library, because its
source is inlined verbatim into exported environment files.

* ``max_cycles=N`` truncates every agent after N steps (the built-in step counter ``t``
  reaching N), whatever the spec's own ``truncate`` says; None (the default) adds no cap.
* ``action_mask_in_obs=True`` makes each observation a dict ``{"observation": the float32
  vector, "action_mask": the int8 mask}`` with a ``gymnasium.spaces.Dict`` space, as
  PettingZoo's classic environments do (the mask stays in ``infos`` as well).
* ``render_mode="human"`` prints the text rendering at every ``render()`` call (which returns
  None); a grid env also prints its RGB frame as coloured character cells when the output is
  a terminal.
"""

import sys
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np


def rt_max_cycles(max_cycles: Any) -> int | None:
    """`max_cycles` checked: None, or an int >= 1 (ValueError with the fix otherwise)."""
    if max_cycles is None:
        return None
    if isinstance(max_cycles, int | np.integer) and not isinstance(max_cycles, bool) and max_cycles >= 1:
        return int(max_cycles)
    raise ValueError(f"max_cycles must be an int >= 1 (every agent is truncated after that many steps), "
                     f"got {max_cycles!r}; pass None for no cap")


def rt_flag(name: str, value: Any) -> bool:
    """An on/off option checked: a bool (ValueError naming the option otherwise)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")


def rt_mask_spaces(obs_spaces: dict, act_spaces: dict) -> dict:
    """Per agent, the Dict space of the classic convention: the observation Box and a mask Box."""
    return {a: gymnasium.spaces.Dict({
        "observation": space,
        "action_mask": gymnasium.spaces.Box(0, 1, (int(act_spaces[a].n),), np.int8),
    }) for a, space in obs_spaces.items()}


def rt_mask_obs(agents: Sequence[str], obs: dict, masks: Sequence[np.ndarray]) -> dict:
    """`obs` ({agent: vector}) as classic observations; `masks[i]` is the mask of `agents[i]`."""
    return {a: {"observation": obs[a], "action_mask": m} for a, m in zip(agents, masks, strict=True) if a in obs}


def rt_terminal_frame(rgb: np.ndarray) -> str:
    """An RGB frame (H, W, 3) uint8 as text: one character per two pixel rows (the upper half
    block, coloured with 24-bit ANSI escapes: top pixel as foreground, bottom as background)."""
    rgb = np.asarray(rgb, dtype=np.uint8)
    if rgb.shape[0] % 2:
        rgb = np.concatenate([rgb, np.zeros_like(rgb[:1])])
    rows = []
    for top, bottom in zip(rgb[0::2], rgb[1::2], strict=True):
        cells = [f"\x1b[38;2;{a[0]};{a[1]};{a[2]}m\x1b[48;2;{b[0]};{b[1]};{b[2]}m\u2580" for a, b in zip(top, bottom, strict=True)]
        rows.append("".join(cells) + "\x1b[0m")
    return "\n".join(rows)


def rt_show(text: str, frame: Callable[[], np.ndarray] | None = None) -> None:
    """`render_mode="human"`: print `text`, then, when the standard output is a terminal (where
    colour escapes draw it), the RGB frame that `frame()` returns (None: a text-only env)."""
    print(text, flush=True)
    if frame is not None and sys.stdout.isatty():
        print(rt_terminal_frame(frame()), flush=True)
