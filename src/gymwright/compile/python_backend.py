"""The Python backend: a readable, standalone PettingZoo module generated from a checked spec.

The module holds the runtime helpers (inlined, numpy only), a `ParallelEnv` class, an AEC
class `raw_env` and the PettingZoo-style factories `env(**params)` / `parallel_env(**params)`.
Comments cite the spec path each block comes from.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from typing import Any

import numpy as np

from gymwright.compile.agent_axis import AxisEmitter, NotOnAxis
from gymwright.compile.audit import audit_module
from gymwright.compile.inline import GENERATED_IMPORTS, assemble, runtime
from gymwright.compile.pyexpr import PyEmitter, hoist
from gymwright.compile.sharing import repeated_calls
from gymwright.compile.tables import baseline_tables, fixed_values, grid_tables
from gymwright.compile.writer import Writer, docstring_text
from gymwright.spec.checked import CheckedSpec, CRole, CRule, CVar
from gymwright.spec.expr.check import Checked

_NP_DTYPE = {"bool": "bool", "int": "np.int64", "float": "np.float64"}


def class_name(spec_name: str) -> str:
    """The env class of a spec: `cake_negotiation` -> `CakeNegotiationEnv` (`...SpecEnv` where the
    plain form would shadow a name the module already binds, such as PettingZoo's `ParallelEnv`)."""
    camel = "".join(part.capitalize() for part in spec_name.split("_"))
    defs, imports = runtime()
    taken = set(defs) | set(imports) | {"BatchEnv"}
    return f"{camel}Env" if f"{camel}Env" not in taken and f"{camel}BatchEnv" not in taken else f"{camel}SpecEnv"


def check_baseline_name(w: Any) -> None:
    """Generated code: a clear error when `name` is not one of the spec's scripted baselines
    (the same check in both backends' scripted-action methods)."""
    with w.block("if name not in BASELINES:"):
        w("raise ValueError(f'no scripted baseline {name!r}; this spec declares: {\", \".join(BASELINES) or \"none\"}')")


def spec_hash(cs: CheckedSpec) -> str:
    data = json.dumps(cs.spec.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


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


def baseline_action_text(rule: Any) -> str:
    """A baseline rule's action as it reads in the spec: `propose(share=0.5)`."""
    args = ", ".join(f"{a.name}={value.source}" for a, value in rule.args)
    return f"{rule.choice.name}({args})" if args else rule.choice.name


def _uses_me_or_random(c: Checked) -> bool:
    if "me" in c.names:
        return True
    return any(hasattr(n, "gw_site") for n in ast.walk(c.tree))


def all_trees(cs: CheckedSpec) -> list[ast.AST]:
    """Every checked expression tree of the spec (for whole-spec analyses)."""
    found: list[Checked | None] = [cs.terminate, cs.truncate, cs.active]
    found += [x for var in cs.state + cs.agent_state for x in (var.init, var.min_expr, var.max_expr)]
    found += [r.when for r in cs.rules] + [c for r in cs.rules for _, c in r.sets]
    found += [m.expr for m in cs.metrics] + [e for pr in cs.probes for e in pr.expect]
    for role in cs.roles:
        found += [t.expr for t in role.terms] + [f.expr for f in role.features]
        found += [c.legal for c in role.choices] + [c.message for c in role.choices]
        found += [part[0] for part in (role.text_observe or []) if not isinstance(part, str)]
    found += [part[0] for part in (cs.text_render or []) if not isinstance(part, str)]
    if cs.grid is not None:
        found += [cs.grid.can_move, cs.grid.slip, *cs.grid.densities]
    return [c.tree for c in found if c is not None]


_IMPLICIT = {"tiles", "pos"}  # read by grid functions (tile, view, agents_view) without being named


def _as_bool(code: str) -> str:
    return code if code.startswith("bool(") or code in ("True", "False") else f"bool({code})"


def _unconditional(root: ast.AST, target: ast.AST) -> bool:
    """True if `target` is evaluated whenever `root` is (not inside a branch or a short-circuit)."""
    def walk(node: ast.AST) -> bool | None:
        if node is target:
            return True
        for child in ast.iter_child_nodes(node):
            found = walk(child)
            if found is not None:
                guarded = isinstance(node, ast.IfExp) and child is not node.test or \
                    isinstance(node, ast.BoolOp) and child is not node.values[0]
                return found and not guarded
        return None
    return bool(walk(root))


def rule_groups(rules: list[CRule]) -> list[list[CRule]]:
    """The step rules in order, each exclusive group (`first:`, `else`) as one list."""
    out: list[list[CRule]] = []
    for rule in rules:
        if out and rule.group >= 0 and out[-1][0].group == rule.group:
            out[-1].append(rule)
        else:
            out.append([rule])
    return out


def _is_true(c: Checked | None) -> bool:
    return c is None or c.source == "True"


class _Gen:
    def __init__(self, cs: CheckedSpec, instrument: bool = False, solved_pools: dict[str, str] | None = None) -> None:
        self.cs = cs
        self.instrument = instrument
        self.solved_pools = solved_pools or {}
        self.w = Writer()
        self.n = cs.n_agents
        self.cls = class_name(cs.spec.name)
        self._axis: dict[str, Any] = {}  # role -> its features over the agent axis (or None)
        self._axis_shared: dict[str, dict[str, str]] = {}  # role -> shared call code -> local

    def em(self, per_agent: bool = False, **overrides: str) -> PyEmitter:
        return PyEmitter(self.cs.symbols, per_agent=per_agent, overrides=overrides, nonzero=self.nonzero)

    @functools.cached_property
    def nonzero(self) -> frozenset[str]:
        """Scalar params whose declared range excludes 0 and scalar consts that are not 0:
        dividing by them needs no guard (make_params enforces the ranges)."""
        out = set()
        for name, prm in self.cs.spec.params.items():
            lo, hi = prm.min, prm.max
            if prm.type != "bool" and (lo is not None and lo > 0 or hi is not None and hi < 0):
                out.add(name)
        for name, value in self.cs.consts.items():
            if isinstance(value, int | float) and not isinstance(value, bool) and value != 0:
                out.add(name)
        return frozenset(n for n in out if n in self.cs.symbols)

    # ------------------------------------------------------------------ module
    def module(self) -> str:
        cs, w = self.cs, self.w
        doc = "\n\n".join(part for part in (
            f"{cs.spec.name}: generated by gymwright from its spec (hash {spec_hash(cs)}). Do not edit.",
            docstring_text((cs.spec.doc or cs.spec.description or "").strip()),
            "Factories: `parallel_env(**params)` (ParallelEnv), `env(**params)` (AEC, wrapped), `raw_env`.\n") if part)
        w("inf = math.inf  # unbounded observation and state bounds")
        w("")
        self.tables()
        self.make_params()
        with w.block(f"class {self.cls}(ParallelEnv):"):
            w(f'"""{cs.spec.name} as a PettingZoo ParallelEnv."""')
            w("")
            modes = ["ansi", "rgb_array", "human"] if cs.grid else ["ansi", "human"]
            w(f"metadata = {{'name': {cs.spec.name!r}, 'render_modes': {modes!r}, 'is_parallelizable': True}}")
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

    def tables(self) -> None:
        cs, w = self.cs, self.w
        w(f"SPEC_NAME = {cs.spec.name!r}")
        w(f"SPEC_HASH = {spec_hash(cs)!r}")
        defaults = {k: p.default for k, p in cs.spec.params.items()}
        defaults.update(cs.params)
        w(f"DEFAULTS = {defaults!r}")
        specs = {k: (p.type, p.min, p.max) for k, p in cs.spec.params.items()}
        w(f"PARAM_SPECS = {specs!r}")
        w(f"STRUCTURAL = {{{', '.join(f'{k!r}: {cs.params[k]!r}' for k in sorted(cs.structural))}}}")
        w(f"AGENTS = {cs.agent_ids!r}")
        w("AGENT_INDEX = {a: i for i, a in enumerate(AGENTS)}")
        w(f"N_AGENTS = {self.n}")
        w(f"ROLE_OF = {[cs.role_of(i).name for i in range(self.n)]!r}")
        decode = {}
        for r in cs.roles:
            decode[r.name] = [(c.name, combo) for c in r.choices for combo in c.combos()]
        w("# per role: flat action index -> (choice, argument values)")
        w(f"DECODE = {decode!r}")
        for r in cs.roles:
            for c in r.choices:
                for arg in c.args:
                    vals = [combo[arg.name] for combo in c.combos()]
                    w(f"ARGV_{r.name}__{c.name}__{arg.name} = {vals!r}", comment=f"{c.path}.args.{arg.name} of each action of the choice")
        w(f"N_ACTIONS = {{{', '.join(f'{r.name!r}: {r.n_actions}' for r in cs.roles)}}}")
        w(f"CHOICES = {cs.choice_names!r}")
        w(f"ARGS = {cs.arg_names!r}")
        w(f"BASELINES = {[b.name for b in cs.baselines]!r}", comment="scripted baselines (spec `baselines:`)")
        w(f"STATE_VARS = {tuple(x.name for x in cs.state + cs.agent_state)!r}", comment="what a scenario may set")
        baseline_tables(w, cs)
        grid_tables(w, cs)
        if cs.grid is not None and cs.grid.wait_ratio is not None:
            self.solved_table()
        if cs.grid is not None:
            moves = []
            for i in range(self.n):
                r = cs.role_of(i)
                moves.append([tuple(c.move or (0, 0)) for c in r.choices for _ in range(c.n)] + [(0, 0)])
            w("# per agent: (row, col) step of each action; the last entry (action -1) is no move")
            w(f"GRID_MOVES = {moves!r}")
        w("")
        w("")

    def solved_table(self) -> None:
        """`SOLVED_POOLS`: the solved layout pools the module carries (empty: gymwright solves them)."""
        w = self.w
        if not self.solved_pools:
            w("SOLVED_POOLS = {}", comment="grid.solve: pools of solved layouts carried by this module (none: gymwright solves them)")
            return
        w("SOLVED_POOLS = {", comment="grid.solve: pools of solved layouts carried by this module (npz, base64)")
        for name, text in self.solved_pools.items():
            w(f"    {name!r}: (")
            for i in range(0, len(text), 88):
                w(f"        {text[i:i + 88]!r}")
            w("    ),")
        w("}")

    def make_params(self) -> None:
        cs, w = self.cs, self.w
        with w.block("class Params(Namespace):"):
            w('"""Param values, consts and derived sizes of one env instance (read as `p.<name>`)."""')
        w("")
        w("")
        with w.block("def make_params(overrides):"):
            w('"""Check param overrides against their types and ranges (ValueError naming the param)."""')
            w("unknown = sorted(set(overrides) - set(DEFAULTS))")
            with w.block("if unknown:"):
                w("raise ValueError(f'unknown param(s) {unknown}; this env has: {sorted(DEFAULTS)}' + rt_close(unknown, DEFAULTS))")
            w("p = Params()")
            with w.block("for name, (kind, lo, hi) in PARAM_SPECS.items():"):
                w("x = rt_param(name, kind, overrides.get(name, DEFAULTS[name]), lo, hi)")
                with w.block("if name in STRUCTURAL and x != STRUCTURAL[name]:"):
                    w("raise ValueError(f'param `{name}` fixes shapes or agent counts; this module was generated for '")
                    w("                 f'{name}={STRUCTURAL[name]!r}. Generate it again with that value (gymwright export --param).')")
                w("p._set(name, x)")
            fixed_values(w, cs)
            w("return p")
        w("")
        w("")
        with w.block("class Vars(Namespace):"):
            w('"""State of one episode (read as `v.<name>`)."""')
        w("")
        w("")

    # ------------------------------------------------------------------ class body
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

    def grid_reset(self) -> None:
        g, w = self.cs.grid, self.w
        assert g is not None
        if g.wait_ratio is not None:  # grid.solve: layout k of the pool of solved MAPF instances
            w("config = self.solved_config()", comment="grid.solve: layout k of the pool of solved MAPF instances")
            w("k = min(int(v._rng.u(GRID_SITE - 1, 0, 1)[0] * config[0]), config[0] - 1)")
            w("tiles, starts, goals, cost = solved_layouts(*config, [k], SOLVED_POOLS)")
            w("v.tiles, starts, goals, v.optimal_cost = tiles[0], starts[0], goals[0], int(cost[0])")
            w("v.pos, v.goal = starts.copy(), goals.copy()")
            return
        dens, pool = self.layout_codes()
        w(f"pool = int({pool})", comment="grid: layout, starts and goals (from a pool, or fresh)")
        with w.block("if pool > 0:"):
            w(f"tiles, starts, goals = layout_pool(pool, {g.height}, {g.width}, {self.n}, [{dens}], GRID_BLOCKED, GRID_MAP, GRID_STARTS, GRID_GOALS, GRID_SITE)")
            w("k = min(int(v._rng.u(GRID_SITE - 1, 0, 1)[0] * pool), pool - 1)")
            w("v.tiles, starts, goals = tiles[k].copy(), starts[k], goals[k]")
        with w.block("else:"):
            w("uniforms = lambda stream, n: v._rng.u(GRID_SITE + stream, 0, n)")
            w(f"v.tiles, starts, goals = generate_layout({g.height}, {g.width}, {self.n}, [{dens}], GRID_BLOCKED, uniforms, GRID_MAP, GRID_STARTS, GRID_GOALS)")
        w("v.pos, v.goal = starts.copy(), goals.copy()" if g.has_goals else "v.pos = starts.copy()")

    def layout_codes(self) -> tuple[str, str]:
        """Code of the grid's tile densities (a list's items) and of its pool size."""
        g = self.cs.grid
        assert g is not None
        dens = ", ".join(("float(" + self.em()(d) + ")") if d is not None else "0.0" for d in g.densities)
        return dens, (self.em()(g.pool) if g.pool is not None else "0")

    def solved_config(self) -> None:
        """`solved_config()`: the pool of solved layouts an instance draws from (grid.solve)."""
        g, w = self.cs.grid, self.w
        if g is None or g.wait_ratio is None:
            return
        dens, pool = self.layout_codes()
        with w.block("def solved_config(self):"):
            w('"""(pool size, height, width, agents, densities, blocked kinds, wait ratio) of this instance\'s')
            w('layouts (grid.solve): the arguments of `solved_layouts`, and the name of the pool an export carries."""')
            w("p = self.p")
            w(f"return (int({pool}), {g.height}, {g.width}, {self.n}, [{dens}], GRID_BLOCKED, float({self.em()(g.wait_ratio)}))")
        w("")

    def hook(self, path: str) -> None:
        if self.instrument:
            with self.w.block("if self._hook is not None:"):
                self.w(f"self._hook({path!r})")

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
        if not _uses_me_or_random(var.init):
            code = self.em(per_agent=True)(var.init)
            w(f"v.{var.name} = np.array(np.broadcast_to({code}, {full!r}), dtype={_NP_DTYPE[var.dtype]})",
              comment=f"{var.path}.init: {var.init.source}")
            return
        w(f"v.{var.name} = np.zeros({full!r}, dtype={_NP_DTYPE[var.dtype]})", comment=f"{var.path}.init: {var.init.source}")
        with w.block(f"for me in range({self.n}):"):
            w(f"v.{var.name}[me] = {self.em(per_agent=True)(var.init)}")

    def cast(self, var: CVar, code: str) -> str:
        if var.shape:
            return f"np.array(np.broadcast_to({code}, {var.shape!r}), dtype={_NP_DTYPE[var.dtype]})"
        try:
            value = ast.literal_eval(code)
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, bool | int | float) and not (isinstance(value, bool) and var.dtype != "bool"):
            return repr({"bool": bool, "int": int, "float": float}[var.dtype](value))  # a constant: cast now
        return f"{var.dtype}({code})"

    def clear_actions(self) -> None:
        w = self.w
        lists = self.list_actions
        zero = {"bool": "False", "int": "0", "float": "0.0"}
        for c in self.cs.choice_names:
            w(f"v.{c} = [False] * {self.n}" if c in lists else f"v.{c} = np.zeros({self.n}, dtype=bool)")
        for a, dt in self.cs.arg_names.items():
            w(f"v.{a} = [{zero[dt]}] * {self.n}" if a in lists else f"v.{a} = np.zeros({self.n}, dtype={_NP_DTYPE[dt]})")
        w(f"v.action = [-1] * {self.n}" if "action" in lists else f"v.action = np.full({self.n}, -1, dtype=np.int64)")

    @functools.cached_property
    def list_actions(self) -> set[str]:
        """Action names read only as `x[scalar]`: plain lists are faster than numpy for those."""
        names = set(self.cs.choice_names) | set(self.cs.arg_names) | {"action"}
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

    # ------------------------------------------------------------------ step
    def step(self) -> None:
        cs, w = self.cs, self.w
        with w.block("def step(self, actions):"):
            with w.block("if not self.agents:"):
                w("raise RuntimeError('the episode is over (no live agents); call reset() first')")
            w("p, v = self.p, self.v")
            w("v._rng.step = v.t + 1")
            self.decode()
            if cs.grid:
                self.grid_step()
                self.hook("grid")
            if cs.vocab is not None:
                self.channel_step()
            for group in rule_groups(cs.rules):
                self.rules(group)
            w("v.t += 1")
            if self.unrolled:
                self.rewards_inline()
            else:
                w("rewards, terms = self._rewards()")
            for m in cs.metrics:
                if self.lazy_metric(m):
                    continue
                code = self.metric_code(m)
                acc = f"self._metric_acc[{self.accumulated.index(m)}]"
                update = {"sum": f"{acc} += {code}", "mean": f"{acc} += {code}", "last": f"{acc} = {code}",
                          "max": f"{acc} = max({acc}, {code})", "min": f"{acc} = min({acc}, {code})"}[m.reduce]
                w(update, comment=f"{m.path}: {m.expr.source} ({m.reduce})")
            terminated, truncated = self.end_codes()
            w(f"terminated = {terminated}", comment=f"terminate: {cs.terminate.source}")
            w(f"truncated = {truncated}", comment=f"truncate: {cs.truncate.source}")
            with w.block("if self.max_cycles is not None and v.t >= self.max_cycles:"):
                w("truncated = True", comment="max_cycles: the caller's cap on the episode length")
            w("done = terminated or truncated")
            with w.block("if not done:"):
                w("self._compute_masks()")
            with w.block("else:"):
                w("self._masks = self._all_legal", comment="every action is legal after the end (read-only masks)")
            w("self._last_reward = rewards")
            w("# every agent is live until the episode ends (self.agents is AGENTS or empty)")
            if self.unrolled:
                self.outputs_unrolled()
            else:
                w("self._returns = [x + r for x, r in zip(self._returns, rewards)]")
                w("observers = self._observers")
                w("obs = {a: observers[i](i) for i, a in enumerate(AGENTS)}")
                w("rew = dict(zip(AGENTS, rewards))")
                w("term = dict.fromkeys(AGENTS, terminated)")
                w("trunc = dict.fromkeys(AGENTS, truncated)")
                w("infos = {a: {'action_mask': m, 'reward_terms': x} for a, m, x in zip(AGENTS, self._masks, terms)}")
            with w.block("for a in illegal:"):
                w("infos[a]['illegal_action'] = True")
            with w.block("if done:"):
                w("metrics = self.episode_metrics()")
                with w.block("for a, ret in zip(AGENTS, self._returns):"):
                    w("infos[a]['metrics'] = metrics")
                    w("infos[a]['episode'] = {'r': ret, 'l': v.t}  # Gymnasium's and SB3's names")
                w("self.agents = []")
            with w.block("if self.action_mask_in_obs:"):
                w("obs = rt_mask_obs(AGENTS, obs, self._masks)")
            w("return obs, rew, term, trunc, infos")
        w("")
        with w.block("def episode_metrics(self):"):
            w('"""Metric values of the episode so far, reduced as the spec says."""')
            w("p, v = self.p, self.v")
            items = []
            for m in cs.metrics:
                if self.lazy_metric(m):  # the value after the last step is the value now
                    items.append(f"{m.name!r}: {self.metric_code(m)} if v.t else 0.0")
                else:
                    acc = f"self._metric_acc[{self.accumulated.index(m)}]"
                    items.append(f"{m.name!r}: {acc} / max(v.t, 1)" if m.reduce == "mean" else f"{m.name!r}: {acc}")
            w("return {" + ", ".join(items) + "}")
        w("")

    def metric_code(self, m: Any) -> str:
        code = self.em()(m.expr)
        return code if code.startswith("float(") else f"float({code})"

    @functools.cached_property
    def accumulated(self) -> list[Any]:
        """The metrics folded step by step (`self._metric_acc`): all but the lazy ones."""
        return [m for m in self.cs.metrics if not self.lazy_metric(m)]

    @staticmethod
    def lazy_metric(m: Any) -> bool:
        """A `last` metric without random draws is evaluated when asked for, not at every step
        (the state does not change between the last step and the end of the episode)."""
        return m.reduce == "last" and not _uses_me_or_random(m.expr)

    def grid_step(self) -> None:
        g, w = self.cs.grid, self.w
        assert g is not None
        small = self.n <= 16  # resolve_moves_small: plain Python lists
        slip = g.slip is not None and g.slip.source not in ("0", "0.0")
        if small:
            w("delta = [GRID_MOVES[i][a] for i, a in enumerate(v.action)]", comment="grid: moves (the last entry, a = -1, is no move), slip, collisions")
        else:
            w(f"delta = np.zeros(({self.n}, 2), dtype=np.int64)", comment="grid: moves, slip, collisions")
            for r in self.cs.roles:
                for c in r.choices:
                    if c.move is not None and tuple(c.move) != (0, 0):
                        w(f"delta[v.{c.name}] = {list(c.move)!r}", comment=f"{c.path}.move")
        if _is_true(g.can_move):
            w(f"can_move = [True] * {self.n}" if small else f"can_move = np.ones({self.n}, dtype=bool)")
        else:
            code = f"[{self.em(per_agent=True)(g.can_move)} for me in range({self.n})]"
            w(f"can_move = {code}" if small else f"can_move = np.array({code}, dtype=bool)", comment=f"grid.can_move: {g.can_move.source}")
        if slip:
            w(f"slip = float({self.em()(g.slip)})", comment=f"grid.slip: {g.slip.source}")
            with w.block("if slip > 0:"):
                if small:
                    w(f"delta = np.array(delta, dtype=np.int64).reshape({self.n}, 2)")
                w("delta = apply_slip(delta, slip, lambda stream, n: v._rng.u(GRID_SITE + stream, 0, n), 0)")
        if small:
            w(f"v.pos, v.moved, v.conflict = resolve_moves_small(v.pos, delta, can_move, v.tiles, {g.collision!r}, GRID_PASSABLE)")
        else:
            w(f"v.pos, v.moved, v.conflict = resolve_moves(v.pos, delta, can_move, GRID_PASSABLE[v.tiles], {g.collision!r})")

    def channel_step(self) -> None:
        w = self.w
        w(f"msg = np.full({self.n}, -1, dtype=np.int64)", comment="channel: symbols sent this step")
        for r in self.cs.roles:
            for c in r.choices:
                if c.message is not None:
                    with w.block(f"for me in range({r.start}, {r.start + r.count}):"):
                        with w.block(f"if v.{c.name}[me]:"):
                            w(f"msg[me] = {self.em(per_agent=True)(c.message)}", comment=f"{c.path}.message")
        w("v.msg = msg")

    def rules(self, group: list[CRule]) -> None:
        """One rule, or an exclusive group (`first:`, `else`) as an if/elif chain: only the first
        rule whose `when` holds fires (per agent in a group over agent_state)."""
        w = self.w
        em = self.em(per_agent=group[0].per_agent)
        for rule in group:
            w("", comment=f"{rule.path}: when {rule.when.source}" + (f" ({rule.doc})" if rule.doc else ""))
        if not group[0].per_agent:
            for k, rule in enumerate(group):
                cond = None if _is_true(rule.when) else em(rule.when)
                header = "else:" if cond is None and k else f"{'elif' if k else 'if'} {cond}:"
                with (w.block(header) if cond is not None or k else _null()):
                    self.global_sets(rule, em)
                    if len(group) > 1:
                        self.hook(rule.path)
                if cond is None:
                    break
            if len(group) == 1:
                self.hook(group[0].path)
            return
        targets = list(dict.fromkeys(t for rule in group for t, _ in rule.sets))
        trees = [x.tree.body for rule in group for x in [rule.when] + [c for _, c in rule.sets]]
        for name, code in hoist(em, trees, f"h{group[0].index}_"):
            w(f"{name} = {code}", comment="the same for every agent")
        for j, target in enumerate(targets):
            w(f"new{j} = v.{target}.copy()")
        with w.block(f"for me in range({self.n}):"):
            for k, rule in enumerate(group):
                cond = None if _is_true(rule.when) else em(rule.when)
                header = "else:" if cond is None and k else f"{'elif' if k else 'if'} {cond}:"
                with (w.block(header) if cond is not None or k else _null()):
                    self.agent_sets(rule, em, targets)
                if cond is None:
                    break
        for j, target in enumerate(targets):
            w(f"v.{target} = new{j}")
        self.hook(group[0].path if len(group) == 1 else group[0].path.split(".")[0])

    def global_sets(self, rule: CRule, em: PyEmitter) -> None:
        """A global rule's assignments: each value reads the state before the rule."""
        w = self.w
        vars_ = {v.name: v for v in self.cs.state + self.cs.agent_state}
        later: list[tuple[int, str]] = []  # sets read the old values: a target read later waits
        for j, (target, c) in enumerate(rule.sets):
            read_later = any(target in c2.names or target in _IMPLICIT for _, c2 in rule.sets[j + 1:])
            name = f"new{j}" if read_later else f"v.{target}"
            w(f"{name} = {self.cast(vars_[target], em(c))}", comment=f"{rule.path}.set.{target}: {c.source}")
            if read_later:
                later.append((j, target))
        for j, target in later:
            w(f"v.{target} = new{j}")

    def agent_sets(self, rule: CRule, em: PyEmitter, targets: list[str]) -> None:
        """A per-agent rule's assignments for agent `me`, into the copies `new<j>` of `targets`."""
        w = self.w
        trees = [c.tree.body for _, c in rule.sets]
        for k, (code, nodes) in enumerate(repeated_calls(trees, em.emit, _unconditional)):
            w(f"c{k} = {code}", comment="used by several sets")
            for n in nodes:
                em.hoisted[id(n)] = f"c{k}"
        for target, c in rule.sets:
            w(f"new{targets.index(target)}[me] = {em(c)}", comment=f"{rule.path}.set.{target}: {c.source}")

    def decode(self) -> None:
        """The action dict -> this step's action arrays (inline in step); `illegal` lists the
        agents whose action was illegal (it counts as no action)."""
        w = self.w
        w("", comment="actions: set this step's choice and argument arrays")
        self.clear_actions()
        w("last = self._last = [-1] * N_AGENTS")
        w("illegal = []")
        w("masks = self._masks")
        with w.block("if actions.__class__ is not dict:"):
            w("actions = rt_actions(actions)", comment="a mapping, or ValueError")
        with w.block("for agent, a in actions.items():"):
            w("i = AGENT_INDEX.get(agent)")
            with w.block("if i is None:"):
                w("raise ValueError(f'unknown agent {agent!r}; agents: {AGENTS}')")
            with w.block("if a is None:"):
                w("continue")
            with w.block("if a.__class__ is not int:"):
                w("a = rt_action(agent, a, N_ACTIONS[ROLE_OF[i]])", comment="numpy ints and 1-element int arrays; ValueError for the rest")
            roles = self.cs.roles
            for k, r in enumerate(roles):
                if len(roles) == 1:
                    ctx = _null()
                elif k == len(roles) - 1:
                    ctx = w.block("else:", comment=f"actions.{r.name}")
                else:
                    ctx = w.block(f"{'if' if k == 0 else 'elif'} i < {r.start + r.count}:", comment=f"actions.{r.name}")
                with ctx:
                    self.decode_role(r)
            w("v.action[i] = a")
            w("last[i] = a")

    def decode_role(self, r: CRole) -> None:
        """Check one action of an agent of role `r` (`i`, `a`) and set its choice and arguments."""
        w = self.w
        with w.block(f"if not 0 <= a < {r.n_actions}:"):
            w(f"raise ValueError(f'action {{a}} of {{agent}} is outside Discrete({r.n_actions}): give 0..{r.n_actions - 1}, or None for no action')")
        with w.block("if not masks[i][a]:"):
            w("illegal.append(agent)")
            w("last[i] = -2 - a")
            w("continue")
        for k, c in enumerate(r.choices):
            if len(r.choices) == 1:
                ctx = _null()
            elif k == len(r.choices) - 1:
                ctx = w.block("else:")
            else:
                ctx = w.block(f"{'if' if k == 0 else 'elif'} a < {c.offset + c.n}:")
            with ctx:
                w(f"v.{c.name}[i] = True", comment=f"{c.path}")
                for arg in c.args:
                    w(f"v.{arg.name}[i] = ARGV_{r.name}__{c.name}__{arg.name}[a - {c.offset}]" if c.offset else
                      f"v.{arg.name}[i] = ARGV_{r.name}__{c.name}__{arg.name}[a]")

    def masks(self) -> None:
        cs, w = self.cs, self.w
        with w.block("def _compute_masks(self):"):
            w('"""Action masks of every agent (those made of per-choice flags only: cached, read-only)."""')
            w("p, v = self.p, self.v")
            w("masks = []")
            w("cache = self._mask_cache")
            if cs.active is not None:
                w(f"active = int({self.em()(cs.active)})", comment=f"turns.active: {cs.active.source}")
            for r in cs.roles:
                scalar = all(c.legal is None or not c.legal.info.shape for c in r.choices)
                shared = self.shared_flags(r) if scalar else {}
                for k, (code, name) in enumerate(shared.items()):
                    w(f"{name} = {_as_bool(code)}", comment="" if k else f"actions.{r.name}: flags that are the same for every agent")
                with w.block(f"for me in range({r.start}, {r.start + r.count}):", comment=f"actions.{r.name}"):
                    if scalar:
                        self.cached_mask(r, shared)
                    else:
                        self.built_mask(r)
                    w("masks.append(m)")
            w("self._masks = masks")
        w("")
        with w.block("def _frozen_mask(self, key, role, spans):"):
            w("m = np.zeros(N_ACTIONS[role], dtype=np.int8)")
            with w.block("if key is not None:"):
                with w.block("for flag, (lo, hi) in zip(key, spans):"):
                    w("m[lo:hi] = flag")
            w("m.setflags(write=False)")
            w("return m")
        w("")

    def legal_code(self, r: CRole, c: Any) -> str:
        over = {a.name: f"p._argv_{r.name}__{c.name}__{a.name}" for a in c.args}
        return "True" if _is_true(c.legal) else self.em(per_agent=True, **over)(c.legal)  # type: ignore[arg-type]

    def shared_flags(self, r: CRole) -> dict[str, str]:
        """Legal flags of role `r` that do not depend on `me` (and cannot raise: no indexing,
        no draws): computed once before the per-agent loop. Code -> local name."""
        out: dict[str, str] = {}
        for c in r.choices:
            if c.legal is None or "me" in c.legal.names or any(
                    isinstance(n, ast.Subscript) or hasattr(n, "gw_site") for n in ast.walk(c.legal.tree)):
                continue
            code = self.legal_code(r, c)
            if code != "True" and code not in out:
                out[code] = f"legal_{r.name}_{len(out)}"
        return out

    def cached_mask(self, r: CRole, shared: dict[str, str]) -> None:
        w, cs = self.w, self.cs
        codes: dict[str, str] = dict(shared)  # legal code -> its local flag (choices often share one)
        for c in r.choices:
            code = self.legal_code(r, c)
            if code not in codes and code != "True":
                codes[code] = f"f{len(codes)}"
        flags = ", ".join("True" if (code := self.legal_code(r, c)) == "True" else codes[code] for c in r.choices)
        comment = "; ".join(f"{c.path}.legal: {c.legal.source if c.legal else True}" for c in r.choices)
        ctx = w.block("if me == active:") if cs.active is not None else _null()
        with ctx:
            for code, name in codes.items():
                if code not in shared:
                    w(f"{name} = {_as_bool(code)}")
            w(f"key = ({r.name!r}, {flags})", comment=comment)
        if cs.active is not None:
            with w.block("else:"):
                w(f"key = ({r.name!r}, None)")
        spans = [(c.offset, c.offset + c.n) for c in r.choices]
        w("m = cache.get(key)")
        with w.block("if m is None:"):
            w(f"m = self._frozen_mask(key[1:] if key[1] is not None else None, {r.name!r}, {spans!r})")
            w("cache[key] = m")

    def built_mask(self, r: CRole) -> None:
        w, cs = self.w, self.cs
        w(f"m = np.zeros({r.n_actions}, dtype=np.int8)")
        ctx = w.block("if me == active:") if cs.active is not None else _null()
        with ctx:
            for c in r.choices:
                sl = f"{c.offset}" if c.n == 1 else f"{c.offset}:{c.offset + c.n}"
                w(f"m[{sl}] = {self.legal_code(r, c)}", comment=f"{c.path}.legal: {c.legal.source if c.legal else True}")

    def rewards(self) -> None:
        cs, w = self.cs, self.w
        with w.block("def _rewards(self):"):
            w('"""Reward of every agent and the value of each of its terms."""')
            w("p, v = self.p, self.v")
            w(f"rewards = [0.0] * {self.n}")
            w(f"terms = [None] * {self.n}")
            for r in cs.roles:
                em = self.em(per_agent=True)
                for name, code in hoist(em, [t.expr.tree.body for t in r.terms], f"h_{r.name}_"):
                    w(f"{name} = {code}", comment="the same for every agent")
                with w.block(f"for me in range({r.start}, {r.start + r.count}):", comment=f"rewards.{r.name}"):
                    names = []
                    for j, term in enumerate(r.terms):
                        w(f"x{j} = float({em(term.expr)})", comment=f"{term.path}: {term.name} = {term.expr.source}")
                        names.append(f"{term.name!r}: x{j}")
                    total = " + ".join(f"x{j}" if t.weight == 1.0 else f"{t.weight!r} * x{j}" for j, t in enumerate(r.terms)) or "0.0"
                    w(f"rewards[me] = {total}")
                    w("terms[me] = {" + ", ".join(names) + "}")
            w("return rewards, terms")
        w("")

    UNROLL = 8  # up to this many agents, step is written out per agent (no per-agent loops)

    @property
    def unrolled(self) -> bool:
        return self.n <= self.UNROLL

    def rewards_inline(self) -> None:
        """Rewards and their terms, agent by agent: locals x<i>_<j> (term j of agent i), r<i>."""
        cs, w = self.cs, self.w
        for r in cs.roles:
            em = self.em(per_agent=True)
            for name, code in hoist(em, [t.expr.tree.body for t in r.terms], f"h_{r.name}_"):
                w(f"{name} = {code}", comment="the same for every agent")
            for i in range(r.start, r.start + r.count):
                em.overrides["me"] = str(i)
                w("", comment=f"rewards.{r.name} of {cs.agent_ids[i]}")
                for j, term in enumerate(r.terms):
                    w(f"x{i}_{j} = float({em(term.expr)})",
                      comment=f"{term.path}: {term.name} = {term.expr.source}" if i == r.start else "")
                total = " + ".join(f"x{i}_{j}" if t.weight == 1.0 else f"{t.weight!r} * x{i}_{j}" for j, t in enumerate(r.terms)) or "0.0"
                w(f"r{i} = {total}")
        w(f"rewards = [{', '.join(f'r{i}' for i in range(self.n))}]")

    def outputs_unrolled(self) -> None:
        cs, w = self.cs, self.w
        ids = cs.agent_ids
        def unpack(prefix: str) -> str:
            return ", ".join(f"{prefix}{i}" for i in range(self.n)) + ("," if self.n == 1 else "")

        w(f"{unpack('m')} = self._masks")
        w(f"{unpack('g')} = self._returns")
        w(f"self._returns = [{', '.join(f'g{i} + r{i}' for i in range(self.n))}]")

        def literal(name: str, value: Any) -> None:
            w(f"{name} = {{")
            for i in range(self.n):
                w(f"    {ids[i]!r}: {value(i)},")
            w("}")

        self.observe_all_calls()
        literal("obs", self.obs_code)
        literal("rew", lambda i: f"r{i}")
        literal("term", lambda i: "terminated")
        literal("trunc", lambda i: "truncated")
        terms = {i: ", ".join(f"{t.name!r}: x{i}_{j}" for j, t in enumerate(cs.role_of(i).terms)) for i in range(self.n)}
        literal("infos", lambda i: f"{{'action_mask': m{i}, 'reward_terms': {{{terms[i]}}}}}")

    def observe(self) -> None:
        cs, w = self.cs, self.w
        with w.block("def observe(self, agent):"):
            w('"""The current observation of `agent`: a float32 vector (with action_mask_in_obs, a dict with its mask)."""')
            w("i = AGENT_INDEX[agent]")
            with w.block("if self.action_mask_in_obs:"):
                w("return {'observation': self._observers[i](i), 'action_mask': self._masks[i]}")
            w("return self._observers[i](i)")
        w("")
        for r in cs.roles:
            self.observe_role(r)
            if self.axis_features(r) is not None:
                self.observe_all(r)

    AXIS_MIN_AGENTS = 3  # roles this large with array features observe all their agents at once

    def axis_features(self, r: CRole) -> list[tuple[Any, int, str | list[str]]] | None:
        """Every feature of `r` lowered over the role's agent axis (`agent_axis`), or None where
        that does not pay (few agents, only scalar features) or is not covered."""
        if r.name not in self._axis:
            self._axis[r.name] = self._axis_features(r)
        return self._axis[r.name]

    def _axis_features(self, r: CRole) -> list[tuple[Any, int, str | list[str]]] | None:
        if not self.unrolled or r.count < self.AXIS_MIN_AGENTS or all(not f.expr.info.shape for f in r.features):
            return None
        em = AxisEmitter(self.cs.symbols, r.start, r.start + r.count, self.n, self.nonzero)
        out: list[tuple[Any, int, str | list[str]]] = []
        at = 0
        try:
            for f in r.features:
                body = f.expr.tree.body
                if isinstance(body, ast.List) and len(f.expr.info.shape) == 1:
                    out.append((f, at, [em.emit(item)[0] for item in body.elts]))
                else:
                    code, axis = em.emit(body)
                    if f.expr.info.shape:
                        code = f"{code}.reshape({r.count}, {f.size})" if axis else f"np.ravel({code})"
                    out.append((f, at, code))
                at += f.size
        except NotOnAxis:
            return None
        self._axis_shared[r.name] = dict(em.shared)
        return out

    def observe_all(self, r: CRole) -> None:
        """`_observe_all__<role>()`: the observations of all the role's agents, one row each,
        computed over the agent axis (same values as `_observe_<role>(me)` for each agent)."""
        w = self.w
        feats = self.axis_features(r)
        assert feats is not None
        with w.block(f"def _observe_all__{r.name}(self):"):
            w("p, v = self.p, self.v")
            for code, name in self._axis_shared[r.name].items():
                w(f"{name} = {code}", comment="used by several features")
            w(f"o = np.empty(({r.count}, {r.obs_dim}), dtype=np.float32)")
            for f, at, code in feats:
                comment = f"{f.path}: {f.expr.source}"
                if isinstance(code, list):
                    for k, item in enumerate(code):
                        w(f"o[:, {at + k}] = {item}", comment=comment if k == 0 else "")
                elif f.expr.info.shape:
                    w(f"o[:, {at}:{at + f.size}] = {code}", comment=comment)
                else:
                    w(f"o[:, {at}] = {code}", comment=comment)
            w("return o")
        w("")

    def observe_all_calls(self) -> None:
        """Locals `obs_<role>` for the roles observed over their agent axis (see `obs_code`)."""
        for r in self.cs.roles:
            if self.axis_features(r) is not None:
                self.w(f"obs_{r.name} = self._observe_all__{r.name}()")

    def obs_code(self, i: int) -> str:
        r = self.cs.role_of(i)
        if self.axis_features(r) is not None:
            return f"obs_{r.name}[{i - r.start}]"
        return f"self._observe_{r.name}({i})"

    def observe_role(self, r: CRole) -> None:
        w = self.w
        em = self.em(per_agent=True)
        with w.block(f"def _observe_{r.name}(self, me):"):
            w("p, v = self.p, self.v")
            for name, code in self.shared_calls(em, r):
                w(f"{name} = {code}", comment="used by several features")
            if all(not f.expr.info.shape for f in r.features):  # all scalars: one array call
                items = ", ".join(em(f.expr) for f in r.features)
                w(f"return np.array([{items}], dtype=np.float32)", comment="; ".join(f.path for f in r.features))
            else:
                w(f"o = np.empty({r.obs_dim}, dtype=np.float32)")
                at = 0
                for f in r.features:
                    self.feature(em, f, at)
                    at += f.size
                w("return o")
        w("")

    def feature(self, em: PyEmitter, f: Any, at: int) -> None:
        w = self.w
        body = f.expr.tree.body
        shape = f.expr.info.shape
        comment = f"{f.path}: {f.expr.source}"
        if isinstance(body, ast.List) and len(shape) == 1:  # [a, b, c]: one write each, no array
            for k, item in enumerate(body.elts):
                w(f"o[{at + k}] = {em.emit(item)}", comment=comment if k == 0 else "")
        elif len(shape) == 1:
            w(f"o[{at}:{at + f.size}] = {em(f.expr)}", comment=comment)
        elif shape:
            w(f"o[{at}:{at + f.size}] = ({em(f.expr)}).ravel()", comment=comment)
        else:
            w(f"o[{at}] = {em(f.expr)}", comment=comment)

    @staticmethod
    def shared_calls(em: PyEmitter, r: CRole) -> list[tuple[str, str]]:
        """Calls that several features evaluate identically (e.g. one view window): compute once."""
        out = []
        trees = [f.expr.tree.body for f in r.features]
        for k, (code, nodes) in enumerate(repeated_calls(trees, em.emit, _unconditional)):
            out.append((f"c{k}", code))
            for n in nodes:
                em.hoisted[id(n)] = f"c{k}"
        return out

    def state(self) -> None:
        cs, w = self.cs, self.w
        with w.block("def state(self):"):
            w('"""Global state for centralized critics: every variable, flattened, as float32."""')
            w("v = self.v")
            parts = ", ".join(f"np.asarray(v.{x.name}, dtype=np.float32).ravel()" for x in cs.state + cs.agent_state)
            w(f"return np.concatenate([{parts}])" if parts else "return np.zeros(0, dtype=np.float32)")
        w("")

    def baselines(self) -> None:
        """`scripted_action(name, agent)`: the spec's scripted baselines, rule by rule."""
        cs, w = self.cs, self.w
        with w.block("def scripted_action(self, name, agent, with_rule=False):"):
            w('"""The action scripted baseline `name` (spec `baselines:`) has `agent` play now.')
            w("")
            w("The action of the first rule of the agent's role whose `when` holds and whose action is")
            w("legal; None when no rule applies (always so when the agent has no legal action): the")
            w("baseline then plays a uniformly random legal action, which the caller draws (see")
            w("gymwright.train.baselines; the env draws only from its seeded stream).")
            w("`with_rule=True` returns (action, index of the rule in the role's list, -1 for none).")
            w('"""')
            check_baseline_name(w)
            with w.block("if agent not in AGENT_INDEX:"):
                w("raise ValueError(f'unknown agent {agent!r}; agents: {AGENTS}')")
            scripts = ", ".join(f"{b.name!r}: self._script_{b.name}" for b in cs.baselines)
            w(f"a, k = {{{scripts}}}[name](AGENT_INDEX[agent])")
            w("a = None if a < 0 else a")
            w("return (a, k) if with_rule else a")
        w("")
        for b in cs.baselines:
            with w.block(f"def _script_{b.name}(self, me):"):
                w(f'"""baselines.{b.name}: (action, rule) of agent `me`; (-1, -1) when none applies."""')
                w("p, v = self.p, self.v")
                w("m = self._masks[me]")
                for r in cs.roles:
                    rules = b.rules.get(r.name)
                    if not rules:
                        continue
                    with w.block(f"if {r.start} <= me < {r.start + r.count}:", comment=f"baselines.{b.name}.{r.name}"):
                        for k, rule in enumerate(rules):
                            self.baseline_rule(rule, k)
                w("return -1, -1")
            w("")

    def baseline_rule(self, rule: Any, k: int) -> None:
        w, c = self.w, rule.choice
        ctx = w.block(f"if {_as_bool(self.em(per_agent=True)(rule.when))}:", comment=f"{rule.path}.when: {rule.when.source}") \
            if rule.when is not None else _null()
        with ctx:
            flat, stride = [str(c.offset)] if c.offset or not rule.args else [], c.n
            for a, value in rule.args:
                stride //= len(a.values)
                nearest = f"int(np.abs(SCRIPT_VALUES_{c.role}__{c.name}__{a.name} - float({self.em(per_agent=True)(value)})).argmin())"
                flat.append(nearest if stride == 1 else f"{nearest} * {stride}")
            w(f"a = {' + '.join(flat)}", comment=f"{rule.path}.action: {baseline_action_text(rule)}")
            with w.block("if m[a]:"):
                w(f"return a, {k}")

    def end_codes(self) -> tuple[str, str]:
        """Code of `terminate` and of `truncate` (step and ends_now evaluate the same)."""
        return _as_bool(self.em()(self.cs.terminate)), _as_bool(self.em()(self.cs.truncate))

    def ends_now(self) -> None:
        """`ends_now()`: whether `terminate` and `truncate` hold in the current state."""
        w = self.w
        with w.block("def ends_now(self):"):
            w('"""(terminated, truncated) in the current state: what `step` would report if it changed nothing."""')
            w("p, v = self.p, self.v")
            w(f"return {', '.join(self.end_codes())}")
        w("")

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

    def render(self) -> None:
        cs, w = self.cs, self.w
        with w.block("def render(self):"):
            with w.block("if self.render_mode is None:"):
                w("gymnasium.logger.warn('render() called without a render_mode; pass render_mode=\"ansi\"')")
                w("return None")
            if cs.grid:
                with w.block("if self.render_mode == 'rgb_array':"):
                    w(f"return render_rgb(self.v.tiles, GRID_COLORS, self.v.pos, {self.goals()})")
            with w.block("if self.render_mode == 'human':"):
                frame = f"lambda: render_rgb(self.v.tiles, GRID_COLORS, self.v.pos, {self.goals()}, 4)" if cs.grid else "None"
                w(f"rt_show(self.render_text(), {frame})", comment="prints; the frame only on a terminal")
                w("return None")
            w("return self.render_text()")
        w("")
        with w.block("def render_text(self):"):
            w('"""A text picture of the current state."""')
            w("p, v = self.p, self.v")
            if cs.text_render:
                w(f"lines = [{self.template(cs.text_render)}]", comment="text.render")
            else:
                fields = ["'t=' + str(v.t)"] + [f"{x.name + '='!r} + _fmt(v.{x.name})" for x in cs.state if not x.shape]
                w(f"lines = ['  '.join([{', '.join(fields)}])]")
            if cs.grid:
                w(f"lines.append(render_ansi(v.tiles, GRID_CHARS, v.pos, {self.goals()}))")
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
                        w(f"return {self.template(r.text_observe, per_agent=True)}")
            w("return self.render_text()")
        w("")
        w("def close(self):")
        w("    pass")
        w("")

    def goals(self) -> str:
        assert self.cs.grid is not None
        return "self.v.goal" if self.cs.grid.has_goals else "np.zeros((0, 2), dtype=np.int64)"

    def template(self, parts: list[Any], per_agent: bool = False) -> str:
        em = self.em(per_agent=per_agent)
        out = []
        for part in parts:
            if isinstance(part, str):
                out.append(repr(part))
            else:
                c, fmt = part
                out.append(f"format({em(c)}, {fmt!r})" if fmt else f"_fmt({em(c)})")
        return f"''.join([{', '.join(out)}])" if len(out) > 1 else (out[0] if out else "''")

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


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: object) -> None:
        return None
