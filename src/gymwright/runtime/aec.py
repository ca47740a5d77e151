"""AEC (agent-environment-cycle) view of a generated parallel environment.

STANDALONE module: it imports only numpy, gymnasium, pettingzoo and the standard library,
because its source is inlined verbatim into exported environment files.

The wrapped parallel env must provide, besides the usual ``pettingzoo.ParallelEnv`` API:

* ``observe(agent)``: the current observation of ``agent`` (also after the episode ended);
* ``turn_agent()``: the agent whose turn it is, or ``None`` for a simultaneous game;
* ``infos[agent]["action_mask"]``: an int8 mask of legal actions (1 = legal).

Two modes, fixed at ``reset``:

* turn-based (``turn_agent()`` is not ``None`` after reset): ``agent_selection`` follows
  ``turn_agent()`` and every AEC step is one parallel step ``{agent_selection: action}``;
* simultaneous: the live agents act one by one; their actions are buffered and a single
  parallel step with all of them runs when the last agent of the cycle has acted.

Rewards of a parallel step go to every agent and are accumulated the PettingZoo way: an
agent's ``_cumulative_rewards`` entry is reset when it acts and collects every reward
handed out since. Agents flagged terminated or truncated must then be stepped with
``None`` once each, which removes them (the AEC convention checked by ``api_test``).

Actions are checked when they are given, before anything is buffered: ``rt_action`` (also
called by the generated parallel ``step``) accepts a Python or numpy int, or a 0-d or
1-element integer array, and raises ``ValueError`` naming the agent and the value for
anything else (bools, floats, strings, other arrays); out of ``Discrete(n)`` is a
``ValueError`` too. ``None`` for a live agent is no action, as in the parallel form.
"""

from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers


def _shown(x: Any) -> str:
    """A value for an error message: its repr, cut short, and its type."""
    text = repr(x)
    return f"{text if len(text) <= 80 else text[:77] + '...'} ({type(x).__name__})"


def rt_actions(actions: Any) -> dict:
    """A parallel step's argument: a dict (or another mapping) {agent: action}; ValueError otherwise."""
    if isinstance(actions, dict):
        return actions
    if hasattr(actions, "keys") and hasattr(actions, "items"):
        return dict(actions.items())
    raise ValueError(f"step() takes a dict {{agent: action}}, got {_shown(actions)}; "
                     "an agent left out (or given None) takes no action")


def rt_action(agent: str, a: Any, n: int) -> int:
    """The action `a` of `agent` as a Python int: a Python or numpy int, or a 0-d or 1-element
    integer array. Anything else raises ValueError naming the agent and the value: bools (a
    flag is not an index, although Gymnasium's Discrete.contains accepts Python's), floats
    (never truncated), strings (never parsed), complex numbers and other arrays. The caller
    checks the range 0..n-1."""
    if isinstance(a, int | np.integer) and not isinstance(a, bool):
        return int(a)
    if isinstance(a, np.ndarray) and a.dtype.kind in "iu" and a.ndim <= 1 and a.size == 1:
        return int(a.reshape(-1)[0])
    raise ValueError(f"action of {agent} must be an int in 0..{n - 1} (Discrete({n})), got {_shown(a)}; "
                     "pass a Python or numpy int or a 0-d or 1-element integer array, or None for no action")


class AECFromParallel(AECEnv):
    """AEC env driving one generated parallel env (set ``parallel_class`` in a subclass)."""

    parallel_class: type[ParallelEnv]
    metadata: dict[str, Any] = {"render_modes": [], "is_parallelizable": False}

    def __init__(self, render_mode: str | None = None, **params: Any) -> None:
        super().__init__()
        self._par = self.parallel_class(render_mode=render_mode, **params)
        self.render_mode = getattr(self._par, "render_mode", render_mode)
        self.possible_agents = list(self._par.possible_agents)
        self.observation_spaces = {a: self._par.observation_space(a) for a in self.possible_agents}
        self.action_spaces = {a: self._par.action_space(a) for a in self.possible_agents}
        self._turn_based = False
        self._cycle: list[str] = []
        self._actions: dict[str, Any] = {}
        self._skip_agent_selection: str | None = None

    # ------------------------------------------------------------------ spaces / views

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        """The observation space of ``agent`` (the parallel env's own object)."""
        return self._par.observation_space(agent)

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        """The action space of ``agent`` (the parallel env's own object)."""
        return self._par.action_space(agent)

    @property
    def state_space(self) -> gymnasium.spaces.Space:
        """The global state space of the parallel env."""
        return self._par.state_space

    def observe(self, agent: str) -> np.ndarray:
        """The current observation of ``agent``."""
        return self._par.observe(agent)

    def state(self) -> np.ndarray:
        """The global state of the parallel env."""
        return self._par.state()

    def render(self) -> Any:
        """Render the parallel env."""
        return self._par.render()

    def close(self) -> None:
        """Close the parallel env."""
        self._par.close()

    # ------------------------------------------------------------------ episode control

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Reset the parallel env and all per-agent bookkeeping."""
        _, infos = self._par.reset(seed=seed, options=options)
        self.agents = list(self._par.agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: dict(infos.get(a, {})) for a in self.agents}
        self._skip_agent_selection = None
        self._turn_based = self._par.turn_agent() is not None
        self._start_cycle()

    def step(self, action: Any) -> None:
        """Act for ``agent_selection`` (``None`` for an agent that is already done)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = self._checked(agent, action)
        self._cumulative_rewards[agent] = 0.0
        if self._turn_based:
            self._parallel_step({agent: action})
            return
        self._actions[agent] = action
        if len(self._actions) == len(self._cycle):
            self._parallel_step(self._actions)
            return
        self._clear_rewards()
        self.agent_selection = self._cycle[len(self._actions)]

    # ------------------------------------------------------------------ helpers

    def _checked(self, agent: str, action: Any) -> Any:
        """`action` of a live agent as an int in its Discrete space (None: no action), checked
        now, so that a bad action is refused at its own step and nothing is buffered."""
        n = getattr(self.action_space(agent), "n", None)
        if action is None or n is None:
            return action
        a = action if action.__class__ is int else rt_action(agent, action, int(n))
        if not 0 <= a < n:
            raise ValueError(f"action {a} of {agent} is outside Discrete({n}): give 0..{n - 1}, or None for no action")
        return a

    def _is_done(self, agent: str) -> bool:
        """Whether ``agent`` is terminated or truncated."""
        return self.terminations[agent] or self.truncations[agent]

    def _start_cycle(self) -> None:
        """Select the next acting agent (turn agent, or first live agent of a new cycle)."""
        self._cycle = [a for a in self.agents if not self._is_done(a)]
        self._actions = {}
        if self._turn_based:
            turn = self._par.turn_agent()
            self.agent_selection = turn if turn is not None else self._first_agent()
        else:
            self.agent_selection = self._cycle[0] if self._cycle else self._first_agent()

    def _first_agent(self) -> str | None:
        """Fallback selection when nobody is live: the first agent, if any is left."""
        return self.agents[0] if self.agents else None

    def _parallel_step(self, actions: dict[str, Any]) -> None:
        """Run one parallel step and publish its results to every agent."""
        _, rewards, terminations, truncations, infos = self._par.step(dict(actions))
        for a in self.agents:
            self.rewards[a] = float(rewards.get(a, 0.0))
            self.terminations[a] = bool(terminations.get(a, False))
            self.truncations[a] = bool(truncations.get(a, False))
            self.infos[a] = dict(infos.get(a, self.infos[a]))
        self._accumulate_rewards()
        self._start_cycle()
        self._deads_step_first()


def wrap_aec(env: AECEnv) -> AECEnv:
    """Apply PettingZoo's OrderEnforcingWrapper. Its AssertOutOfBoundsWrapper is left out: the
    env checks every action itself (a ValueError naming the agent, where that wrapper's
    `assert` names none and is gone under `python -O`)."""
    return wrappers.OrderEnforcingWrapper(env)
