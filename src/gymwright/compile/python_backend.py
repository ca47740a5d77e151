"""The Python backend: a readable, standalone PettingZoo module generated from a checked spec.

The module holds the runtime helpers (inlined, numpy only), a `ParallelEnv` class, an AEC
class `raw_env` and the PettingZoo-style factories `env(**params)` / `parallel_env(**params)`.
Comments cite the spec path each block comes from.

The generator is composed of parts, one concern each, every one a function or a small object over
the generation's `GenContext` (`compile/pygen/context.py`, their whole shared interface):
`compile/pygen/` (constants, step, metrics, actions, rewards, observe, baselines, render, text); the
class body's skeleton (init, spaces, reset, initial values, scenarios, bounds, factories) is here.
The mechanics modules a spec uses add their Python parts (`mechanics.emit.PythonPart`, one
`python.py` in each module's folder) at fixed points, iterated as `g.parts`.
"""

from __future__ import annotations

import numpy as np

from gymwright.compile.audit import audit_module
from gymwright.compile.card import card_text
from gymwright.compile.common import inits_after_start, render_modes, versioned_name
from gymwright.compile.inline import GENERATED_IMPORTS, assemble
from gymwright.compile.pygen import (
    actions,
    baselines,
    constants,
    metrics,
    render,
    rewards,
    step,
    text,
)
from gymwright.compile.pygen.base import NP_DTYPE, uses_me_or_random
from gymwright.compile.pygen.context import GenContext
from gymwright.compile.pygen.observe import Observations
from gymwright.compile.writer import docstring_text
from gymwright.spec.checked import CheckedSpec, CVar


def generate(cs: CheckedSpec, instrument: bool = False, solved_pools: dict[str, str] | None = None) -> str:
    """Python source of a standalone PettingZoo module for the checked spec.

    `instrument=True` adds a call of `self._hook(path)` after every variable init and every
    step rule: the verifier uses it to check bounds where a value goes wrong. `solved_pools`
    (pool name -> packed text, from `gymwright.mapf.bake`) are carried by the module, so that an
    export of a `grid.solve` spec needs no gymwright at those params.
    """
    source = module(GenContext(cs, instrument, solved_pools or {}))
    audit_module(source, cs)
    return source



def module(g: GenContext) -> str:
    """The module: its tables, `make_params`, the env class (each method from its part) and the
    factories."""
    cs, w = g.cs, g.w
    observations = Observations(g)
    doc = docstring_text(card_text(cs)) + "\n"
    w("inf = math.inf  # unbounded observation and state bounds")
    w("")
    constants.tables(g)
    constants.make_params(g)
    with w.block(f"class {g.cls}(ParallelEnv):"):
        w(f'"""{cs.spec.name} as a PettingZoo ParallelEnv."""')
        w("")
        w(f"metadata = {{'name': {versioned_name(cs)!r}, 'render_modes': {render_modes(cs)!r}, "
          "'is_parallelizable': True}")
        w(f"AGENT_ENDS = {cs.agent_end is not None}", comment="agents leave one by one (terminate_agent)")
        w("")
        init(g)
        spaces(g)
        reset(g, observations)
        for part in g.parts:  # methods of the mechanics modules (a grid's `solved_config`)
            part.methods(g)
        step.step(g, observations)
        actions.masks(g)
        if not g.unrolled:
            rewards.rewards(g)
        observations.observe()
        observations.state()
        step.ends_now(g)
        start_state(g)
        bounds(g)
        baselines.baselines(g)
        render.render(g)
        text.text_game(g)
    factories(g)
    return assemble(doc, w.source(), GENERATED_IMPORTS)



def init(g: GenContext) -> None:
    w = g.w
    with w.block("def __init__(self, render_mode=None, max_cycles=None, action_mask_in_obs=False, **params):"):
        w("self.p = make_params(params)")
        with w.block("if render_mode is not None and render_mode not in self.metadata['render_modes']:"):
            w("raise ValueError(f'render_mode {render_mode!r} is not one of {self.metadata[\"render_modes\"]}')")
        w("self.render_mode = render_mode")
        w("self.max_cycles = rt_max_cycles(max_cycles)", comment="PettingZoo conventions (runtime/conventions.py)")
        w("self.action_mask_in_obs = rt_flag('action_mask_in_obs', action_mask_in_obs)")
        w("self.possible_agents = list(AGENTS)")
        w("self.agents = []")
        w("self.v = Vars()")
        w("self.v._rng = Draws()")
        w("self._hook = None")
        w("self._build_spaces()")
        with w.block("if self.action_mask_in_obs:"):
            w("self._obs_spaces = rt_mask_spaces(self._obs_spaces, self._act_spaces)")
        w("self._masks = [np.ones(N_ACTIONS[ROLE_OF[i]], dtype=np.int8) for i in range(N_AGENTS)]")
        w("self._last = [-1] * N_AGENTS")
        w("self._last_reward = [0.0] * N_AGENTS")
        w("self._mask_cache = {}")
        w("self._all_legal = [np.ones(N_ACTIONS[ROLE_OF[i]], dtype=np.int8) for i in range(N_AGENTS)]")
        with w.block("for m in self._all_legal:"):
            w("m.setflags(write=False)")
        if g.cs.agent_end is not None:
            w("self._no_actions = [np.zeros(N_ACTIONS[ROLE_OF[i]], dtype=np.int8) for i in range(N_AGENTS)]",
              comment="the mask of an agent whose own episode ended")
            with w.block("for m in self._no_actions:"):
                w("m.setflags(write=False)")
        w("self._observers = [" + ", ".join(f"self._observe_{g.cs.role_of(i).name}" for i in range(g.n)) + "]")
    w("")


def spaces(g: GenContext) -> None:
    cs, w = g.cs, g.w
    with w.block("def _build_spaces(self):"):
        w("self._obs_spaces, self._act_spaces = {}, {}")
        for r in cs.roles:
            lo = np.concatenate([f.low for f in r.features]).tolist()
            hi = np.concatenate([f.high for f in r.features]).tolist()
            w(f"low = np.array({lo!r}, dtype=np.float32)", comment=f"observe.{r.name}")
            w(f"high = np.array({hi!r}, dtype=np.float32)")
            with w.block(f"for agent in AGENTS[{r.start}:{r.start + r.count}]:"):
                w(f"self._obs_spaces[agent] = gymnasium.spaces.Box(low, high, ({r.obs_dim},), np.float32)")
                w(f"self._act_spaces[agent] = gymnasium.spaces.Discrete({r.n_actions})")
        lo, hi = [], []
        for var in cs.state + cs.agent_state:
            size = int(np.prod(var.shape)) * (g.n if var.per_agent else 1)
            lo += [var.lo] * size
            hi += [var.hi] * size
        w(f"self.state_space = gymnasium.spaces.Box(np.array({lo!r}, dtype=np.float32), np.array({hi!r}, dtype=np.float32), ({len(lo)},), np.float32)")
    w("")
    w("def observation_space(self, agent):")
    w("    return self._obs_spaces[agent]")
    w("")
    w("def action_space(self, agent):")
    w("    return self._act_spaces[agent]")
    w("")
    with w.block("def action_mask(self, agent):"):
        w('"""1 for each legal action of `agent` now (all 0 when it is not its turn)."""')
        w("return self._masks[AGENT_INDEX[agent]]")
    w("")
    with w.block("def turn_agent(self):"):
        w('"""The agent whose turn it is (turn-based specs), or None when all act at once."""')
        if cs.active is None:
            w("return None")
        else:
            w("p, v = self.p, self.v")
            w(f"return AGENTS[int({g.em()(cs.active)})] if self.agents else None", comment="turns.active")
    w("")


def reset(g: GenContext, observations: Observations) -> None:
    """`reset(seed, options)`: the variables' start values, the masks and the first observations."""
    cs, w = g.cs, g.w
    with w.block("def reset(self, seed=None, options=None):"):
        w("p, v = self.p, self.v")
        w("v._rng.reset(seed)")
        w("v.t = 0")
        for part in g.parts:  # the mechanics modules' variables (a grid's layout), before the spec's own
            part.reset(g)
        for var in cs.state + cs.agent_state:
            if not var.builtin:
                var_init(g, var)
        with w.block("if options:"):
            w("self._start_state(options)", comment="a scenario: start values given by the caller")
        actions.clear_actions(g)
        w("self.agents = list(AGENTS)")
        if cs.agent_end is not None:
            w("self._gone = [False] * N_AGENTS", comment="terminate_agent: the agents whose own episode has ended")
        w("self._last = [-1] * N_AGENTS")
        w("self._last_reward = [0.0] * N_AGENTS")
        w("self._returns = [0.0] * N_AGENTS")
        folded = metrics.accumulated(cs)
        if folded:
            w("self._metric_acc = [" + ", ".join(metrics.start(m.reduce) for m in folded) + "]",
              comment="metrics folded over the episode: " + ", ".join(m.name for m in folded))
        w("self._compute_masks()")
        if g.unrolled:
            ids = cs.agent_ids
            w("masks = self._masks")
            observations.observe_all_calls()
            w("obs = {" + ", ".join(f"{ids[i]!r}: {observations.obs_code(i)}" for i in range(g.n)) + "}")
            w("infos = {" + ", ".join(f"{ids[i]!r}: {{'action_mask': masks[{i}]}}" for i in range(g.n)) + "}")
        else:
            w("obs = {a: self.observe(a) for a in self.agents}")
            w("infos = {a: {'action_mask': self._masks[i]} for i, a in enumerate(self.agents)}")
        with w.block("if self.action_mask_in_obs:"):
            w("obs = rt_mask_obs(AGENTS, obs, self._masks)")
        w("return obs, infos")
    w("")


def var_init(g: GenContext, var: CVar) -> None:
    """A variable's start value (`<path>.init`), then the instrument hook."""
    _var_init(g, var)
    g.hook(f"{var.path}.init")


def _var_init(g: GenContext, var: CVar) -> None:
    w = g.w
    assert var.init is not None
    if not var.per_agent:
        w(f"v.{var.name} = {g.cast(var, g.em()(var.init))}", comment=f"{var.path}.init: {var.init.source}")
        return
    full = (g.n, *var.shape)
    if not uses_me_or_random(var.init):
        code = g.em(per_agent=True)(var.init)
        fill = f"np.zeros({full!r}" if code in ("False", "0", "0.0") else f"np.full({full!r}, {code}"
        w(f"v.{var.name} = {fill}, dtype={NP_DTYPE[var.dtype]})", comment=f"{var.path}.init: {var.init.source}")
        return
    w(f"v.{var.name} = np.zeros({full!r}, dtype={NP_DTYPE[var.dtype]})", comment=f"{var.path}.init: {var.init.source}")
    with w.block(f"for me in range({g.n}):"):
        w(f"v.{var.name}[me] = {g.em(per_agent=True)(var.init)}")


def start_state(g: GenContext) -> None:
    """`_start_state(options)`: reset's `options={'state': {name: value}}`, checked like the spec."""
    w = g.w
    with w.block("def _start_state(self, options):"):
        w('"""Set the start values given in `options[\'state\']`, each checked for its shape, type and')
        w("bounds; then the init of every variable not given that reads a given one (directly or")
        w("through another init) runs again, in declaration order, with the given values in place.")
        w('"""')
        w("p, v = self.p, self.v")
        w("bounds = self.var_bounds()")
        w("given = rt_scenario(options, STATE_VARS)")
        with w.block("for name, value in given.items():"):
            w("v._set(name, rt_state_value(name, value, v._get(name), bounds.get(name)))")
        for var, deps in inits_after_start(g.cs):
            with w.block(f"if {var.name!r} not in given and not given.keys().isdisjoint({deps!r}):"):
                _var_init(g, var)
    w("")


def bounds(g: GenContext) -> None:
    cs, w = g.cs, g.w
    with w.block("def var_bounds(self):"):
        w('"""Declared (min, max) of every bounded variable, at this instance\'s params."""')
        w("p = self.p")
        items = []
        for var in cs.state + cs.agent_state:
            lo = g.em()(var.min_expr) if var.min_expr is not None else (repr(var.lo) if var.lo > -np.inf else "-inf")
            hi = g.em()(var.max_expr) if var.max_expr is not None else (repr(var.hi) if var.hi < np.inf else "inf")
            if lo != "-inf" or hi != "inf":
                items.append(f"{var.name!r}: ({lo}, {hi})")
        w("return {" + ", ".join(items) + "}")
    w("")


def factories(g: GenContext) -> None:
    w = g.w
    w("")
    with w.block("def _fmt(x):"):
        with w.block("if isinstance(x, (bool, np.bool_)):"):
            w("return 'true' if x else 'false'")
        with w.block("if isinstance(x, (float, np.floating)):"):
            w("return f'{x:.3g}'")
        with w.block("if isinstance(x, np.ndarray):"):
            w("return np.array2string(x, precision=3, separator=',')")
        w("return str(x)")
    w("")
    w("")
    with w.block("def _action_text(role, a):"):
        w('"""The last action as text: `propose(share=0.9)`, `-` for none, `illegal(7)`."""')
        with w.block("if a == -1:"):
            w("return '-'")
        with w.block("if a < -1:"):
            w("return f'illegal({-2 - a})'")
        w("choice, args = DECODE[role][a]")
        w("return choice + ('(' + ', '.join(f'{k}={x:g}' for k, x in args.items()) + ')' if args else '')")
    w("")
    w("")
    with w.block("class raw_env(AECFromParallel):"):
        w(f'"""{g.cs.spec.name} as a PettingZoo AECEnv (turns follow the spec)."""')
        w("")
        w(f"parallel_class = {g.cls}")
        w(f"metadata = dict({g.cls}.metadata, is_parallelizable=True)")
    w("")
    w("")
    with w.block("def env(**params):"):
        w('"""The AEC env with PettingZoo\'s standard wrappers."""')
        w("return wrap_aec(raw_env(**params))")
    w("")
    w("")
    with w.block("def parallel_env(**params):"):
        w('"""The ParallelEnv."""')
        w(f"return {g.cls}(**params)")
