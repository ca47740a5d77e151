"""Run the scenario probes written in a spec against its compiled Python backend."""

from __future__ import annotations

import ast
import functools
import importlib
import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from gymwright.compile.build import CompiledEnv, compile_spec
from gymwright.compile.inline import runtime_files
from gymwright.compile.pyexpr import PyEmitter
from gymwright.diagnostic import Diagnostic, error
from gymwright.errors import GymwrightError
from gymwright.spec.checked import CProbe
from gymwright.spec.expr.check import Checked
from gymwright.spec.expr.types import info_of

STAGE = "probes"
F64_TOLERANCE = (1e-9, 1e-12)
"""(relative, absolute) tolerance of a probe's comparisons of floats, as `isclose`."""
F32_TOLERANCE = (1e-6, 1e-9)
"""... and of those that read an observation: observations are float32 (about 7 digits), so
`obs.a.offer == 0.7` holds for the float32 nearest 0.7."""
MAX_PARTS = 16
"""Lines of a failed expectation's parts shown at most."""


def run_probes(compiled: CompiledEnv) -> list[Diagnostic]:
    """One diagnostic per failed probe (empty when all pass)."""
    out = []
    for probe in compiled.checked.probes:
        try:
            d = run_probe(compiled, probe)
        except GymwrightError as e:
            d = error(STAGE, probe.path, f"probe `{probe.name}` could not run: {e.message}", e.hint)
        except Exception as e:  # noqa: BLE001 - a crash inside the env is a finding, not a traceback
            d = error(STAGE, probe.path, f"probe `{probe.name}` crashed: {type(e).__name__}: {e}",
                      "the environment raised while replaying the probe's actions")
        if d is not None:
            out.append(d)
    return out


def _flat_action(module: Any, role: str, choice: str, kwargs: dict[str, Any]) -> int:
    for i, (name, args) in enumerate(module.DECODE[role]):
        if name == choice and all(np.isclose(args[k], v) for k, v in kwargs.items()):
            return i
    raise GymwrightError(f"no action {choice}({kwargs}) for role {role}")


def run_probe(compiled: CompiledEnv, probe: CProbe) -> Diagnostic | None:
    """Replay `probe`'s actions and check its expectations: the first failure, or None."""
    c, env = _start_env(compiled, probe)
    P = _replay(env, c.module, probe)
    if isinstance(P, Diagnostic):
        return P
    _record_state(P, c, env)
    return _check_expectations(c, env, P, probe)


def _start_env(compiled: CompiledEnv, probe: CProbe) -> tuple[CompiledEnv, Any]:
    """The probe's compiled env and its env, reset to the probe's seed and start state."""
    # probes are written for the defaults: keep only the structure of `compiled`, then the probe's own params
    structural = {k: v for k, v in compiled.params.items() if k in compiled.checked.structural}
    defaults = {k: p.default for k, p in compiled.checked.spec.params.items()}
    c = compiled if not probe.params else compile_spec(compiled.checked.spec, {**structural, **probe.params})
    env = c.module.parallel_env(**{**defaults, **structural, **probe.params})
    env.reset(seed=probe.seed, options={"state": probe.start} if probe.start else None)
    return c, env


def _step_actions(env: Any, module: Any, probe: CProbe, k: int,
                  step: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, int] | Diagnostic:
    """Step `k`'s flat action per agent, or the diagnostic of a choice that is not legal."""
    actions = {}
    for agent, (choice, kwargs) in step.items():
        i = module.AGENTS.index(agent)
        a = _flat_action(module, module.ROLE_OF[i], choice, kwargs)
        if not probe.illegal and not env.action_mask(agent)[a]:
            return error(STAGE, f"{probe.path}.actions[{k}].{agent}",
                         f"probe `{probe.name}`: `{choice}` is not legal for {agent} at step {k}",
                         "check the choice's `legal` condition and whose turn it is",
                         trace=env.render_text().splitlines())
        actions[agent] = a
    return actions


def _replay(env: Any, module: Any, probe: CProbe) -> SimpleNamespace | Diagnostic:
    """Step through the probe's actions: the last reward, the return and how the episode ended,
    or the diagnostic of a step that could not be taken."""
    n = len(module.AGENTS)
    ret = np.zeros(n)
    reward = np.zeros(n)
    terminated = truncated = False
    for k, step in enumerate(probe.actions):
        if not env.agents:
            return error(STAGE, f"{probe.path}.actions[{k}]",
                         f"probe `{probe.name}`: the episode ended before step {k}",
                         "remove the extra steps or check terminate/truncate")
        actions = _step_actions(env, module, probe, k, step)
        if isinstance(actions, Diagnostic):
            return actions
        _, rew, term, trunc, _ = env.step(actions)
        reward = np.array([rew.get(a, 0.0) for a in module.AGENTS])
        ret += reward
        # the episode's end: `terminate` held (every live agent terminated) or the last live agents all left
        # through terminate_agent; one agent leaving on a step that was only truncated is not the episode's end
        terminated = bool(term) and all(term.values())
        truncated = any(trunc.values())
    return SimpleNamespace(reward=reward, ret=ret, terminated=terminated, truncated=truncated)


def _record_state(P: SimpleNamespace, c: CompiledEnv, env: Any) -> None:
    """Add the episode's metrics and each agent's observation and mask to `P`."""
    module = c.module
    for name, value in env.episode_metrics().items():
        setattr(P, f"metric_{name}", value)
    for name, m in c.checked.spec.metrics.items():  # per agent: `chips.player_0`, ... -> metric_chips[i]
        if m.per_agent:
            setattr(P, f"metric_{name}", np.array([getattr(P, f"metric_{name}.{a}") for a in module.AGENTS]))
    for agent in module.AGENTS:  # what each agent sees and may do now
        setattr(P, f"obs_{agent}", np.asarray(env.observe(agent), dtype=np.float64))
        setattr(P, f"mask_{agent}", np.asarray(env.action_mask(agent), dtype=bool))


def _check_expectations(c: CompiledEnv, env: Any, P: SimpleNamespace, probe: CProbe) -> Diagnostic | None:
    """The diagnostic of the first expectation that is false or cannot be evaluated, or None."""
    for j, expect in enumerate(probe.expect):
        text = probe.sources[j] if j < len(probe.sources) else expect.source
        try:
            ok, detail = _evaluate(c, env, P, expect)
        except Exception as e:  # noqa: BLE001 - an expectation that cannot be evaluated is a finding
            return error(STAGE, f"{probe.path}.expect[{j}]",
                         f"probe `{probe.name}`: the expectation `{text}` could not be evaluated after "
                         f"{len(probe.actions)} steps: {type(e).__name__}: {e}",
                         "the steps ran; evaluating this expectation raised: check its indices and operands",
                         trace=env.render_text().splitlines())
        if not ok:
            return error(STAGE, f"{probe.path}.expect[{j}]",
                         f"probe `{probe.name}` failed after {len(probe.actions)} steps: `{text}` is false",
                         "the environment does not do what the probe says; fix the rules or the probe",
                         trace=detail + env.render_text().splitlines())
    return None


def _as_written(text: str, agents: list[str]) -> str:
    """Undo the probe rewriting: `reward[0]` -> `reward.walker_0`, `metric_x` -> `metric.x`."""
    text = re.sub(r"\b(reward|ret)\[(\d+)\]", lambda m: f"{m.group(1)}.{agents[int(m.group(2))]}", text)
    text = re.sub(r"\b(obs|mask)_(" + "|".join(map(re.escape, agents)) + r")\b", r"\1.\2", text)
    text = re.sub(r"\bmetric_(\w+)\[(\d+)\]", lambda m: f"metric.{m.group(1)}.{agents[int(m.group(2))]}", text)
    return re.sub(r"\bmetric_(\w+)", r"metric.\1", text)


@functools.cache
def runtime_namespace() -> dict[str, Any]:
    """Every runtime helper (`rt_div_s`, ...): a generated module carries only those its own code
    uses, and a probe's expectation may need others."""
    ns: dict[str, Any] = {}
    for file in runtime_files():
        module = importlib.import_module("gymwright." + file.removesuffix(".py").replace("/", "."))
        ns.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    return ns


def probe_compare(op: str, a: Any, b: Any, rtol: float, atol: float) -> Any:
    """`a op b` where numbers within the tolerance count as equal for `==`, `!=`, `<=` and `>=`
    (`<=` is less or close). `<` and `>` compare exactly: a strict comparison often carries its
    own slack (`x > y - 1e-9`), which a tolerance of the same size would turn false."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    close = np.isclose(x, y, rtol=rtol, atol=atol)
    out = {"==": close, "!=": ~close, "<": x < y, "<=": (x <= y) | close,
           ">": x > y, ">=": (x >= y) | close}[op]
    return out if out.shape else bool(out)


def _reads_obs(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id.startswith("obs_") for n in ast.walk(node))


class ProbeEmitter(PyEmitter):
    """Lowers a probe's expectation: a comparison of floats holds within a tolerance (float32's
    where an operand reads an observation, see `F32_TOLERANCE`); ints and bools compare exactly."""

    _OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}

    def emit(self, node: ast.AST) -> str:
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isclose"
                and _reads_obs(node)):
            a, b = self.args(node)
            return f"probe_compare('==', {a}, {b}, *{F32_TOLERANCE!r})"
        return super().emit(node)

    def _compare(self, node: ast.Compare) -> str:
        items = [node.left, *node.comparators]
        codes = [self._operand(i) for i in items]
        parts = []
        for i, op in enumerate(node.ops):
            a, b = items[i], items[i + 1]
            if "float" in (info_of(a).dtype, info_of(b).dtype):
                tol = F32_TOLERANCE if _reads_obs(a) or _reads_obs(b) else F64_TOLERANCE
                parts.append(f"probe_compare({self._OPS[type(op)]!r}, {codes[i]}, {codes[i + 1]}, *{tol!r})")
            else:
                parts.append(f"({codes[i]} {self._OPS[type(op)]} {codes[i + 1]})")
        if len(parts) == 1:
            return parts[0]
        return "(" + (" & " if info_of(node).shape else " and ").join(parts) + ")"

    def _operand(self, node: ast.AST) -> str:
        return self.num(node) if info_of(node).dtype == "bool" and info_of(node).shape else self.emit(node)


def _indices(node: ast.Subscript) -> list[ast.AST]:
    """A subscript's indices, slices left out."""
    index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return [ix for ix in index if not isinstance(ix, ast.Slice)]


_CHILDREN: tuple[tuple[type[ast.AST], Callable[[Any], list[ast.AST]]], ...] = (
    (ast.BoolOp, lambda n: list(n.values)),
    (ast.BinOp, lambda n: [n.left, n.right]),
    (ast.UnaryOp, lambda n: [n.operand]),
    (ast.IfExp, lambda n: [n.test, n.body, n.orelse]),
    (ast.Call, lambda n: [*n.args, *(k.value for k in n.keywords)]),
    (ast.List, lambda n: list(n.elts)),
    (ast.Subscript, _indices),
)
"""The operands `_parts` looks into, per kind of node (a comparison's are handled apart)."""


def _children(node: ast.AST) -> list[ast.AST]:
    """The operands of `node` that `_parts` visits (none for a kind not in `_CHILDREN`)."""
    for kind, children in _CHILDREN:
        if isinstance(node, kind):
            return children(node)
    return []


def _is_constant(node: ast.AST) -> bool:
    """A literal: a constant, `True` or `False`."""
    return isinstance(node, ast.Constant) or isinstance(node, ast.Name) and node.id in ("True", "False")


def _visit_part(node: ast.AST, depth: int, out: list[tuple[int, ast.AST]], side: bool = False) -> None:
    """Append `node` (unless the root, depth -1) and its parts below it to `out`; a constant only
    as a `side` of a comparison."""
    if _is_constant(node):
        if side:
            out.append((depth, node))
        return
    if depth >= 0:
        out.append((depth, node))
    if isinstance(node, ast.Compare):
        for item in [node.left, *node.comparators]:
            _visit_part(item, depth + 1, out, side=True)
        return
    for child in _children(node):
        _visit_part(child, depth + 1, out)


def _parts(body: ast.AST) -> list[tuple[int, ast.AST]]:
    """The parts of an expectation worth a value when it fails, in reading order, each with its
    depth: every operand of a comparison (a constant too: the sides read as before) and every
    non-constant operand of arithmetic, calls, `and`/`or`/`not` and indices."""
    out: list[tuple[int, ast.AST]] = []
    _visit_part(body, -1, out)
    return out


def _evaluate(c: CompiledEnv, env: Any, P: SimpleNamespace, expect: Checked) -> tuple[bool, list[str]]:
    names = ["reward", "ret", "terminated", "truncated",
             *(k for k in vars(P) if k.startswith(("metric_", "obs_", "mask_")))]
    em = ProbeEmitter(c.checked.symbols, overrides={k: f"P.{k}" for k in names})
    ns = {**runtime_namespace(), **c.module.__dict__, "probe_compare": probe_compare}
    scope = {"p": env.p, "v": env.v, "P": P}

    def run(node: ast.AST) -> Any:
        return eval(em.emit(node), ns, scope)  # noqa: S307 - lowered from a checked expression

    body = expect.tree.body
    if bool(run(body)):
        return True, []
    detail: list[str] = []
    seen: set[tuple[int, str]] = set()
    for depth, node in _parts(body):
        text = _as_written(ast.unparse(node), c.module.AGENTS)
        if (depth, text) in seen:
            continue
        seen.add((depth, text))
        if len(detail) == MAX_PARTS:
            detail.append("...")
            break
        try:
            value = run(node)
            shown = repr(value.tolist() if hasattr(value, "tolist") else value)
        except Exception as e:  # noqa: BLE001 - one part that cannot be shown does not hide the others
            shown = f"(could not evaluate: {type(e).__name__}: {e})"
        detail.append("  " * depth + f"{text} = {shown}")
    return False, detail
