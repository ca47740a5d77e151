"""Run the scenario probes written in a spec against its compiled Python backend."""

from __future__ import annotations

import ast
import re
from types import SimpleNamespace
from typing import Any

import numpy as np

from gymwright.compile.build import CompiledEnv, compile_spec
from gymwright.compile.pyexpr import PyEmitter
from gymwright.diagnostic import Diagnostic, error
from gymwright.errors import GymwrightError
from gymwright.spec.checked import CProbe
from gymwright.spec.expr.check import Checked

STAGE = "probes"


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
    # probes are written for the defaults: keep only the structure of `compiled`, then the probe's own params
    structural = {k: v for k, v in compiled.params.items() if k in compiled.checked.structural}
    defaults = {k: p.default for k, p in compiled.checked.spec.params.items()}
    c = compiled if not probe.params else compile_spec(compiled.checked.spec, {**structural, **probe.params})
    env = c.module.parallel_env(**{**defaults, **structural, **probe.params})
    env.reset(seed=probe.seed, options={"state": probe.start} if probe.start else None)
    module = c.module
    n = len(module.AGENTS)
    ret = np.zeros(n)
    reward = np.zeros(n)
    terminated = truncated = False
    for k, step in enumerate(probe.actions):
        if not env.agents:
            return error(STAGE, f"{probe.path}.actions[{k}]",
                         f"probe `{probe.name}`: the episode ended before step {k}",
                         "remove the extra steps or check terminate/truncate")
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
        _, rew, term, trunc, _ = env.step(actions)
        reward = np.array([rew.get(a, 0.0) for a in module.AGENTS])
        ret += reward
        terminated = any(term.values())
        truncated = any(trunc.values())
    P = SimpleNamespace(reward=reward, ret=ret, terminated=terminated, truncated=truncated)
    for name, value in env.episode_metrics().items():
        setattr(P, f"metric_{name}", value)
    for agent in module.AGENTS:  # what each agent sees and may do now
        setattr(P, f"obs_{agent}", np.asarray(env.observe(agent), dtype=np.float64))
        setattr(P, f"mask_{agent}", np.asarray(env.action_mask(agent), dtype=bool))
    for j, expect in enumerate(probe.expect):
        ok, detail = _evaluate(c, env, P, expect)
        if not ok:
            return error(STAGE, f"{probe.path}.expect[{j}]",
                         f"probe `{probe.name}` failed after {len(probe.actions)} steps: `{probe.sources[j] if j < len(probe.sources) else expect.source}` is false",
                         "the environment does not do what the probe says; fix the rules or the probe",
                         trace=detail + env.render_text().splitlines())
    return None


def _as_written(text: str, agents: list[str]) -> str:
    """Undo the probe rewriting: `reward[0]` -> `reward.walker_0`, `metric_x` -> `metric.x`."""
    text = re.sub(r"\b(reward|ret)\[(\d+)\]", lambda m: f"{m.group(1)}.{agents[int(m.group(2))]}", text)
    text = re.sub(r"\b(obs|mask)_(" + "|".join(map(re.escape, agents)) + r")\b", r"\1.\2", text)
    return re.sub(r"\bmetric_(\w+)", r"metric.\1", text)


def _evaluate(c: CompiledEnv, env: Any, P: SimpleNamespace, expect: Checked) -> tuple[bool, list[str]]:
    names = ["reward", "ret", "terminated", "truncated",
             *(k for k in vars(P) if k.startswith(("metric_", "obs_", "mask_")))]
    em = PyEmitter(c.checked.symbols, overrides={k: f"P.{k}" for k in names})
    ns = dict(c.module.__dict__)
    scope = {"p": env.p, "v": env.v, "P": P}

    def run(node: ast.AST) -> Any:
        return eval(em.emit(node), ns, scope)  # noqa: S307 - lowered from a checked expression

    ok = bool(run(expect.tree.body))
    detail = []
    body = expect.tree.body
    if not ok and isinstance(body, ast.Compare):
        for side in [body.left, *body.comparators]:
            value = run(side)
            shown = value.tolist() if hasattr(value, "tolist") else value
            detail.append(f"{_as_written(ast.unparse(side), c.module.AGENTS)} = {shown!r}")
    return ok, detail
