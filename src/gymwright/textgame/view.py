"""`TextView`: one environment's text form (rules card, observations, legal actions, the reply
parser), read from its layout: `compile/textlayout.py`'s for a spec, a code-mode module's own
`TEXT` hook over a generic fallback for any other PettingZoo env."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gymwright.compile.build import as_spec
from gymwright.compile.textlayout import INVALID_DEFAULT, text_layout
from gymwright.errors import GymwrightError, SpecError
from gymwright.runtime import textview as tv
from gymwright.spec.checker import check_spec
from gymwright.textgame.hook import layout_of_env


@dataclass(frozen=True)
class Parsed:
    """What a reply names: the flat action index (None: no legal action), how it named it
    (`json`, `name`, `index`, `mention`; '' when invalid) and, when invalid, why."""

    action: int | None
    how: str
    error: str

    @property
    def valid(self) -> bool:
        return self.action is not None


class TextView:
    """The text form of one environment, by agent name (see `runtime/textview.py`)."""

    def __init__(self, layout: dict[str, Any]) -> None:
        self.layout = layout
        self.agents: list[str] = list(layout["agents"])
        self.index = {a: i for i, a in enumerate(self.agents)}

    @classmethod
    def of(cls, spec: Any, params: dict[str, Any] | None = None, invalid: str = INVALID_DEFAULT) -> TextView:
        """The view of a spec (a library name, a file, an EnvSpec or its dict) at `params`."""
        checked, diagnostics = check_spec(as_spec(spec), params)
        if checked is None:
            raise SpecError([d for d in diagnostics if d.severity.value == "error"])
        return cls.of_checked(checked, invalid)

    @classmethod
    def of_checked(cls, checked: Any, invalid: str = INVALID_DEFAULT) -> TextView:
        try:
            return cls(text_layout(checked, invalid))
        except ValueError as e:
            raise GymwrightError(str(e), path="invalid") from None

    @classmethod
    def of_env(cls, env: Any, invalid: str = INVALID_DEFAULT) -> TextView:
        """The view of any PettingZoo ParallelEnv: a gymwright module's `TEXT_LAYOUT`, a code-mode
        module's `TEXT` hook, or the generic fallback (features `x`, actions `action_K`)."""
        return cls(layout_of_env(env, invalid))

    @property
    def name(self) -> str:
        return str(self.layout["name"])

    def role(self, agent: str) -> str:
        return str(self.layout["role_of"][self._i(agent)])

    def rules(self, agent: str) -> str:
        return str(tv.tv_rules(self.layout, self._i(agent)))

    def observation(self, agent: str, obs: Any) -> str:
        return str(tv.tv_observation(self.layout, self._i(agent), obs))

    def legal(self, agent: str, mask: Any) -> list[tuple[int, str]]:
        return list(tv.tv_legal(self.layout, self._i(agent), mask))

    def action_name(self, agent: str, action: int) -> str:
        return str(self.layout["roles"][self.role(agent)]["actions"][action])

    def prompt(self, agent: str, obs: Any, mask: Any) -> str:
        return str(tv.tv_prompt(self.layout, self._i(agent), obs, mask))

    def parse(self, agent: str, reply: str, mask: Any) -> Parsed:
        action, how, error = tv.tv_parse(self.layout, self._i(agent), reply, mask)
        return Parsed(None if action is None else int(action), how, error)

    def fallback(self, agent: str, mask: Any, rng: np.random.Generator) -> int:
        """The action an invalid reply becomes under the declared rule (`layout['invalid']`)."""
        return int(tv.tv_fallback(self.layout, self.legal(agent, mask), rng))

    def _i(self, agent: str) -> int:
        try:
            return self.index[agent]
        except KeyError:
            raise GymwrightError(f"no agent {agent!r} in {self.name}", path="agent",
                                 hint=f"agents: {', '.join(self.agents)}") from None
