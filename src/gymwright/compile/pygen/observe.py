"""Observations: per role, agent by agent or over the agent axis, and the global `state()`."""

from __future__ import annotations

import ast

from gymwright.compile.agent_axis import NotOnAxis
from gymwright.compile.pyexpr import PyEmitter
from gymwright.compile.pygen.axis_values import ValuesAxisEmitter
from gymwright.compile.pygen.base import unconditional
from gymwright.compile.pygen.context import GenContext
from gymwright.compile.sharing import repeated_calls
from gymwright.spec.checked import CFeature, CRole
from gymwright.spec.expr.types import draws

# A feature lowered over the agent axis: the feature, its first column in the observation, and its
# code (a list of codes, one per column, for a list literal written out).
AxisFeature = tuple[CFeature, int, str | list[str]]


class Observations:
    """`observe`, `_observe_<role>`, `_observe_all__<role>` and `state`; and the code of the
    observations an unrolled step writes out (`observe_all_calls`, `obs_code`). It keeps, per
    role, how that role is observed (over the agent axis, in one loop, or agent by agent)."""

    AXIS_MIN_AGENTS = 3  # roles this large with array features observe all their agents at once

    def __init__(self, g: GenContext) -> None:
        self.g = g
        self._axis: dict[str, list[AxisFeature] | None] = {}  # role -> its features over the agent axis
        self._axis_shared: dict[str, dict[str, str]] = {}  # role -> shared call code -> local
        self._axis_windows: dict[str, dict[str, tuple[str, str, str | None]]] = {}  # role -> AxisEmitter.windows
        self._loop: dict[str, list[ast.AST]] = {}  # role -> parts of its features the same for every agent

    def observe(self) -> None:
        cs, w = self.g.cs, self.g.w
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
            elif self.loop_invariants(r):
                self.observe_loop(r)

    def axis_features(self, r: CRole) -> list[AxisFeature] | None:
        """Every feature of `r` lowered over the role's agent axis (`agent_axis`), or None where
        that does not pay (few agents, only scalar features) or is not covered."""
        if r.name not in self._axis:
            self._axis[r.name] = self._axis_features(r)
        return self._axis[r.name]

    def _axis_features(self, r: CRole) -> list[AxisFeature] | None:
        if not self.g.unrolled or r.count < self.AXIS_MIN_AGENTS or all(not f.expr.info.shape for f in r.features):
            return None
        em = ValuesAxisEmitter(self.g.cs.symbols, r.start, r.start + r.count, self.g.n, self.g.nonzero,
                               self.g.em(per_agent=True))
        out: list[AxisFeature] = []
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
        self._axis_windows[r.name] = dict(em.windows)
        return out

    def observe_all(self, r: CRole) -> None:
        """`_observe_all__<role>()`: the observations of all the role's agents, one row each,
        computed over the agent axis (same values as `_observe_<role>(me)` for each agent)."""
        w = self.g.w
        feats = self.axis_features(r)
        assert feats is not None
        with w.block(f"def _observe_all__{r.name}(self):"):
            w("p, v = self.p, self.v")
            self.shared_locals(r)
            w(f"o = np.empty(({r.count}, {r.obs_dim}), dtype=FLOAT32)")
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

    def shared_locals(self, r: CRole) -> None:
        """The calls that `_observe_all__<role>` computes once, in order; the windows over the
        agents around the same centres and radius (counts and sums of values) as one
        `rt_agents_windows_rows` call, where the first of them was."""
        w = self.g.w
        windows = self._axis_windows[r.name]
        groups: dict[tuple[str, str], list[str]] = {}
        for name, (centres, radius, _) in windows.items():
            groups.setdefault((centres, radius), []).append(name)
        written: set[str] = set()
        for code, name in self._axis_shared[r.name].items():
            if name in written:
                continue
            group = groups.get(windows[name][:2], []) if name in windows else []
            if len(group) < 2:
                w(f"{name} = {code}", comment="used by several features")
                continue
            centres, radius = windows[name][:2]
            values = ", ".join("None" if windows[k][2] is None else str(windows[k][2]) for k in group)
            w(f"{', '.join(group)} = rt_agents_windows_rows(v, {centres}, {radius}, {values})",
              comment="windows over the agents around the same centres: counts (None) and sums")
            written.update(group)

    def observed_together(self, r: CRole) -> bool:
        """Whether `_observe_all__<role>` observes the role's agents at once (over the agent
        axis, or in one loop with the parts shared by every agent computed once)."""
        return self.axis_features(r) is not None or bool(self.loop_invariants(r))

    def observe_all_calls(self) -> None:
        """Locals `obs_<role>` for the roles observed all at once, and the spec paths of the roles
        whose observations are written out (see `obs_code`)."""
        for r in self.g.cs.roles:
            if self.observed_together(r):
                self.g.w(f"obs_{r.name} = self._observe_all__{r.name}()")
            elif self.written_out(r):
                self.g.w("", comment="; ".join(f.path for f in r.features) + f" (as _observe_{r.name}, per agent)")

    def obs_code(self, i: int) -> str:
        r = self.g.cs.role_of(i)
        if self.observed_together(r):
            return f"obs_{r.name}[{i - r.start}]"
        if self.written_out(r):
            return self.obs_array(r, self.g.em(per_agent=True, me=str(i)))
        return f"self._observe_{r.name}({i})"

    def written_out(self, r: CRole) -> bool:
        """Whether an unrolled step writes the observation of each agent of `r` out (one
        `np.array` of its scalar features, as `_observe_<role>` returns), saving a call per
        agent: where every feature is a scalar and no call is shared between features."""
        return (self.g.unrolled and all(not f.expr.info.shape for f in r.features)
                and not self.shared_calls(self.g.em(per_agent=True), r))

    @staticmethod
    def obs_array(r: CRole, em: PyEmitter) -> str:
        """The observation of one agent of `r`, all of whose features are scalars: one array."""
        return f"np.array([{', '.join(em(f.expr) for f in r.features)}], dtype=FLOAT32)"

    def loop_invariants(self, r: CRole) -> list[ast.AST]:
        """Where the agent-axis lowering does not cover a role of several agents: the largest
        parts of its features that are the same for every agent (no `me`, no random draw) and
        always evaluated, computed once per step instead of once per agent (an empty list when
        there are none, or the role is observed over its axis)."""
        if r.name not in self._loop:
            found: list[ast.AST] = []
            if self.axis_features(r) is None and self.g.unrolled and r.count >= self.AXIS_MIN_AGENTS:
                for f in r.features:
                    found += _invariant_parts(f.expr.tree.body)
            self._loop[r.name] = found
        return self._loop[r.name]

    def observe_loop(self, r: CRole) -> None:
        """`_observe_all__<role>()` as one loop over the role's agents: the same rows as
        `_observe_<role>(me)`, with `loop_invariants` computed before the loop."""
        w = self.g.w
        em = self.g.em(per_agent=True)
        with w.block(f"def _observe_all__{r.name}(self):"):
            w("p, v = self.p, self.v")
            names: dict[str, str] = {}
            for node in self.loop_invariants(r):
                code = em.emit(node)
                if code not in names:
                    names[code] = f"i{len(names)}"
                    w(f"{names[code]} = {code}", comment="the same for every agent")
                em.hoisted[id(node)] = names[code]
            w(f"rows = np.empty(({r.count}, {r.obs_dim}), dtype=FLOAT32)")
            with w.block(f"for me in range({r.start}, {r.start + r.count}):"):
                for name, code in self.shared_calls(em, r):
                    w(f"{name} = {code}", comment="used by several features")
                w(f"o = rows[me - {r.start}]" if r.start else "o = rows[me]")
                at = 0
                for f in r.features:
                    self.feature(em, f, at)
                    at += f.size
            w("return rows")
        w("")

    def observe_role(self, r: CRole) -> None:
        w = self.g.w
        em = self.g.em(per_agent=True)
        with w.block(f"def _observe_{r.name}(self, me):"):
            w("p, v = self.p, self.v")
            for name, code in self.shared_calls(em, r):
                w(f"{name} = {code}", comment="used by several features")
            if all(not f.expr.info.shape for f in r.features):  # all scalars: one array call
                w(f"return {self.obs_array(r, em)}", comment="; ".join(f.path for f in r.features))
            else:
                w(f"o = np.empty({r.obs_dim}, dtype=FLOAT32)")
                at = 0
                for f in r.features:
                    self.feature(em, f, at)
                    at += f.size
                w("return o")
        w("")

    def feature(self, em: PyEmitter, f: CFeature, at: int) -> None:
        w = self.g.w
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
        for k, (code, nodes) in enumerate(repeated_calls(trees, em.emit, unconditional)):
            out.append((f"c{k}", code))
            for n in nodes:
                em.hoisted[id(n)] = f"c{k}"
        return out

    def state(self) -> None:
        cs, w = self.g.cs, self.g.w
        with w.block("def state(self):"):
            w('"""Global state for centralized critics: every variable, flattened, as float32."""')
            w("v = self.v")
            parts = ", ".join(f"np.asarray(v.{x.name}, dtype=FLOAT32).ravel()" for x in cs.state + cs.agent_state)
            w(f"return np.concatenate([{parts}])" if parts else "return np.zeros(0, dtype=FLOAT32)")
        w("")


_CHEAP = (ast.Name, ast.Constant, ast.Subscript, ast.List, ast.Tuple, ast.Slice)


def _invariant_parts(tree: ast.AST) -> list[ast.AST]:
    """The largest subexpressions of `tree` without `me` or a random draw that are always
    evaluated (not in a branch of `x if c else y`, not after the first operand of `and` / `or`),
    read some variable or param, and cost more than a name, a constant or an indexing."""
    out: list[ast.AST] = []

    def free(node: ast.AST) -> bool:
        names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
        drawn = any(draws(n) for n in ast.walk(node))
        return "me" not in names and not drawn and any(n not in ("True", "False") for n in names)

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.expr) and not isinstance(node, _CHEAP) and free(node):
            out.append(node)
            return
        for child in ast.iter_child_nodes(node):
            guarded = isinstance(node, ast.IfExp) and child is not node.test or \
                isinstance(node, ast.BoolOp) and child is not node.values[0]
            if not guarded:
                visit(child)

    visit(tree)
    return out
