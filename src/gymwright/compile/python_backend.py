"""The Python backend: a readable, standalone PettingZoo module generated from a checked spec.

The module holds the runtime helpers (inlined, numpy only), a `ParallelEnv` class, an AEC
class `raw_env` and the PettingZoo-style factories `env(**params)` / `parallel_env(**params)`.
Comments cite the spec path each block comes from.

The generator is composed of parts, one concern each: `compile/pygen/` (constants, step, actions,
rewards, observe, baselines, render) and `compile/mechanics/` (grid, channel); the class body's
skeleton (init, spaces, reset, initial values, scenarios, bounds, factories) is here.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable

import numpy as np

from gymwright.compile.audit import audit_module
from gymwright.compile.card import card_text
from gymwright.compile.common import render_modes, versioned_name
from gymwright.compile.inline import GENERATED_IMPORTS, assemble
from gymwright.compile.mechanics import PYTHON
from gymwright.compile.pygen.actions import ActionsGen
from gymwright.compile.pygen.base import NP_DTYPE, all_trees, uses_me_or_random
from gymwright.compile.pygen.baselines import BaselinesGen
from gymwright.compile.pygen.constants import ConstantsGen
from gymwright.compile.pygen.observe import ObserveGen
from gymwright.compile.pygen.render import RenderGen
from gymwright.compile.pygen.rewards import RewardsGen
from gymwright.compile.pygen.step import StepGen
from gymwright.compile.writer import docstring_text
from gymwright.spec.checked import CheckedSpec, CVar


def generate(cs: CheckedSpec, instrument: bool = False, solved_pools: dict[str, str] | None = None) -> str:
    """Python source of a standalone PettingZoo module for the checked spec.

    `instrument=True` adds a call of `self._hook(path)` after every variable init and every
    step rule: the verifier uses it to check bounds where a value goes wrong. `solved_pools`
    (pool name -> packed text, from `gymwright.mapf.bake`) are carried by the module, so that an
    export of a `grid.solve` spec needs no gymwright at those params.
    """
    source = _Gen(cs, instrument, solved_pools or {}).module()
    audit_module(source, cs)
    return source


class _Gen(ConstantsGen, StepGen, ActionsGen, RewardsGen, ObserveGen, BaselinesGen, RenderGen, *PYTHON):
    """One generation of a module: the parts composed, and the class body's skeleton."""

    # ------------------------------------------------------------------ module
    def module(self) -> str:
        cs, w = self.cs, self.w
        doc = docstring_text(card_text(cs)) + "\n"
        w("inf = math.inf  # unbounded observation and state bounds")
        w("")
        self.tables()
        self.make_params()
        with w.block(f"class {self.cls}(ParallelEnv):"):
            w(f'"""{cs.spec.name} as a PettingZoo ParallelEnv."""')
            w("")
            w(f"metadata = {{'name': {versioned_name(cs)!r}, 'render_modes': {render_modes(cs)!r}, "
              "'is_parallelizable': True}")
            w("")
            self.init()
            self.spaces()
            self.reset()
            self.solved_config()
            self.step()
            self.masks()
            if not self.unrolled:
                self.rewards()
            self.observe()
            self.state()
            self.ends_now()
            self.start_state()
            self.bounds()
            self.baselines()
            self.render()
        self.factories()
        return assemble(doc, w.source(), GENERATED_IMPORTS)

    def init(self) -> None:
        w = self.w
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
            w("self._observers = [" + ", ".join(f"self._observe_{self.cs.role_of(i).name}" for i in range(self.n)) + "]")
        w("")

    def spaces(self) -> None:
        cs, w = self.cs, self.w
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
                size = int(np.prod(var.shape)) * (self.n if var.per_agent else 1)
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
                w(f"return AGENTS[int({self.em()(cs.active)})] if self.agents else None", comment="turns.active")
        w("")

    def reset(self) -> None:
        cs, w = self.cs, self.w
        with w.block("def reset(self, seed=None, options=None):"):
            w("p, v = self.p, self.v")
            w("v._rng.reset(seed)")
            w("v.t = 0")
            if cs.grid:
                self.grid_reset()
            for var in cs.state + cs.agent_state:
                if not var.builtin:
                    self.var_init(var)
                elif var.name in ("moved", "conflict"):
                    w(f"v.{var.name} = np.zeros({self.n}, dtype=bool)")
                elif var.name == "msg":
                    w(f"v.msg = np.full({self.n}, -1, dtype=np.int64)")
            with w.block("if options:"):
                w("self._start_state(options)", comment="a scenario: start values given by the caller")
            self.clear_actions()
            w("self.agents = list(AGENTS)")
            w("self._last = [-1] * N_AGENTS")
            w("self._last_reward = [0.0] * N_AGENTS")
            w("self._returns = [0.0] * N_AGENTS")
            if self.accumulated:
                w("self._metric_acc = [" + ", ".join(self.metric_start(m.reduce) for m in self.accumulated) + "]",
                  comment="metrics folded over the episode: " + ", ".join(m.name for m in self.accumulated))
            w("self._compute_masks()")
            if self.unrolled:
                ids = cs.agent_ids
                w("masks = self._masks")
                self.observe_all_calls()
                w("obs = {" + ", ".join(f"{ids[i]!r}: {self.obs_code(i)}" for i in range(self.n)) + "}")
                w("infos = {" + ", ".join(f"{ids[i]!r}: {{'action_mask': masks[{i}]}}" for i in range(self.n)) + "}")
            else:
                w("obs = {a: self.observe(a) for a in self.agents}")
                w("infos = {a: {'action_mask': self._masks[i]} for i, a in enumerate(self.agents)}")
            with w.block("if self.action_mask_in_obs:"):
                w("obs = rt_mask_obs(AGENTS, obs, self._masks)")
            w("return obs, infos")
        w("")

    @staticmethod
    def metric_start(reduce: str) -> str:
        return {"max": "-math.inf", "min": "math.inf"}.get(reduce, "0.0")

    def var_init(self, var: CVar) -> None:
        self._var_init(var)
        self.hook(f"{var.path}.init")

    def _var_init(self, var: CVar) -> None:
        w = self.w
        assert var.init is not None
        if not var.per_agent:
            w(f"v.{var.name} = {self.cast(var, self.em()(var.init))}", comment=f"{var.path}.init: {var.init.source}")
            return
        full = (self.n, *var.shape)
        if not uses_me_or_random(var.init):
            code = self.em(per_agent=True)(var.init)
            fill = f"np.zeros({full!r}" if code in ("False", "0", "0.0") else f"np.full({full!r}, {code}"
            w(f"v.{var.name} = {fill}, dtype={NP_DTYPE[var.dtype]})", comment=f"{var.path}.init: {var.init.source}")
            return
        w(f"v.{var.name} = np.zeros({full!r}, dtype={NP_DTYPE[var.dtype]})", comment=f"{var.path}.init: {var.init.source}")
        with w.block(f"for me in range({self.n}):"):
            w(f"v.{var.name}[me] = {self.em(per_agent=True)(var.init)}")

    def clear_actions(self, listed: Callable[[str], str] | None = None) -> None:
        """The choice and argument arrays, cleared; `listed(value)` writes a list of one value per
        agent (default `[value] * n`)."""
        w = self.w
        lists = self.list_actions
        fill = listed or (lambda value: f"[{value}] * {self.n}")
        zero = {"bool": "False", "int": "0", "float": "0.0"}
        for c in self.cs.choice_names:
            w(f"v.{c} = {fill('False')}" if c in lists else f"v.{c} = np.zeros({self.n}, dtype=bool)")
        for a, dt in self.cs.arg_names.items():
            w(f"v.{a} = {fill(zero[dt])}" if a in lists else f"v.{a} = np.zeros({self.n}, dtype={NP_DTYPE[dt]})")
        w(f"v.action = {fill('-1')}" if "action" in lists else f"v.action = np.full({self.n}, -1, dtype=np.int64)")

    @functools.cached_property
    def list_actions(self) -> set[str]:
        """Action names read only as `x[scalar]`: plain lists are faster than numpy for those."""
        names = set(self.cs.choice_names) | set(self.cs.arg_names) | {"action"}
        if self.cs.grid is not None and self.n > 16:  # grid_step's `delta[v.<choice>] = move`
            names -= {c.name for r in self.cs.roles for c in r.choices if c.move is not None}
        for tree in all_trees(self.cs):
            parents = {id(ch): node for node in ast.walk(tree) for ch in ast.iter_child_nodes(node)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and node.id in names:
                    parent = parents.get(id(node))
                    scalar_index = (isinstance(parent, ast.Subscript) and parent.value is node
                                    and not isinstance(parent.slice, ast.Tuple | ast.Slice)
                                    and not parent.slice.gw.shape)  # type: ignore[attr-defined]
                    if not scalar_index:
                        names.discard(node.id)
        return names

    def start_state(self) -> None:
        """`_start_state(options)`: reset's `options={'state': {name: value}}`, checked like the spec."""
        w = self.w
        with w.block("def _start_state(self, options):"):
            w('"""Set the start values given in `options[\'state\']` (after every init: a later init')
            w("that reads a variable saw its drawn value), each checked for its shape, type and bounds.")
            w('"""')
            w("v = self.v")
            w("bounds = self.var_bounds()")
            with w.block("for name, value in rt_scenario(options, STATE_VARS).items():"):
                w("v._set(name, rt_state_value(name, value, v._get(name), bounds.get(name)))")
        w("")

    def bounds(self) -> None:
        cs, w = self.cs, self.w
        with w.block("def var_bounds(self):"):
            w('"""Declared (min, max) of every bounded variable, at this instance\'s params."""')
            w("p = self.p")
            items = []
            for var in cs.state + cs.agent_state:
                lo = self.em()(var.min_expr) if var.min_expr is not None else (repr(var.lo) if var.lo > -np.inf else "-inf")
                hi = self.em()(var.max_expr) if var.max_expr is not None else (repr(var.hi) if var.hi < np.inf else "inf")
                if lo != "-inf" or hi != "inf":
                    items.append(f"{var.name!r}: ({lo}, {hi})")
            w("return {" + ", ".join(items) + "}")
        w("")

    def factories(self) -> None:
        w = self.w
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
            w(f'"""{self.cs.spec.name} as a PettingZoo AECEnv (turns follow the spec)."""')
            w("")
            w(f"parallel_class = {self.cls}")
            w(f"metadata = dict({self.cls}.metadata, is_parallelizable=True)")
        w("")
        w("")
        with w.block("def env(**params):"):
            w('"""The AEC env with PettingZoo\'s standard wrappers."""')
            w("return wrap_aec(raw_env(**params))")
        w("")
        w("")
        with w.block("def parallel_env(**params):"):
            w('"""The ParallelEnv."""')
            w(f"return {self.cls}(**params)")
