"""Verify a model's module the way spec mode verifies a spec, with the env in a sandbox.

Stages: `vet` (static, `gymwright.codemode.vet`), `load` (the module runs in a worker and one
instance is made), `dynamic` (PettingZoo's own `parallel_api_test` and `parallel_seed_test`
on the sandboxed proxy; seeded random legal play checking observations against their spaces,
NaN and infinities in observations and rewards, action masks, episode ends, metrics in the
final infos; whole-episode determinism), `degeneracy` (warnings: constant reward, episodes
that end at once, frozen observations). Whatever the audit hook refused, even where the code
caught the refusal, is an error. Then the model's own worked cases, where it wrote some
(`scenarios`: actions by index, expected rewards, returns, ends and masks; `codemode/scenarios.py`).
The result is a `VerificationReport`, whose `to_prompt()`
the repair loop sends back, each finding with its `code:LINE`.
"""

from __future__ import annotations

import contextlib
import io
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.test import parallel_api_test, parallel_seed_test

from gymwright.codemode.proxy import SandboxedParallelEnv, load_module, metric_values
from gymwright.codemode.sandbox import Layers, Limits, Sandbox, SandboxError
from gymwright.codemode.scenarios import scenario_findings
from gymwright.codemode.vet import vet_source
from gymwright.diagnostic import Diagnostic, error, warning
from gymwright.verify.report import StageResult, VerificationReport

MAX_EPISODE_STEPS = 1_000
KINDS = {"code": "the code raised an error", "timeout": "timed out", "crashed": "the sandbox worker died",
         "protocol": "the worker broke the protocol"}
API_CYCLES = 100


@dataclass
class Play:
    """What random legal play saw."""

    rewards: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    obs: list[np.ndarray] = field(default_factory=list)
    metrics: list[dict[str, float]] = field(default_factory=list)


def sandbox_finding(e: SandboxError, stage: str) -> Diagnostic:
    """A worker failure as a finding: the model's line when there is one, what was refused."""
    where = f" in `{e.where}`" if e.where and e.kind == "code" else ""
    kind = KINDS.get(e.kind, e.kind)
    refused = f"; the sandbox refused: {'; '.join(e.refused[:3])}" if e.refused else ""
    hint = e.hint or ("fix the error at that line" if e.line else
                      "the env must finish every call quickly within the sandbox's limits")
    return error(stage, e.path, f"{kind}{where}: {e.message}{refused}", hint)


def unusable(e: Exception, what: str) -> Diagnostic:
    """A reply that decoded but that gymwright cannot use: the worker's frames were not its own."""
    return error("dynamic", "", f"{what}: the sandbox worker sent a reply gymwright cannot use "
                 f"({type(e).__name__}: {str(e)[:160]})",
                 "write observations, rewards and infos as the PettingZoo API says; never write to the pipe")


def refused_findings(sandbox: Sandbox, stage: str) -> list[Diagnostic]:
    found = [error(stage, "", f"the code tried something the sandbox refuses: {r}",
                   "an environment opens no files, sockets or processes and needs no interpreter internals")
             for r in dict.fromkeys(sandbox.refused)]
    sandbox.refused.clear()
    return found[:10]


def _masked_sample(env: SandboxedParallelEnv, agent: str, info: Any, rng: np.random.Generator) -> Any:
    space = env.action_space(agent)
    mask = info.get("action_mask") if isinstance(info, dict) else None
    if isinstance(space, spaces.Discrete) and mask is not None:
        legal = np.flatnonzero(np.asarray(mask))
        if legal.size == 0:
            raise AssertionError(f"{agent} has no legal action (its action_mask is all zeros)")
        return int(space.start + rng.choice(legal))
    return space.sample()


def _finite(value: Any) -> bool:
    try:
        return bool(np.all(np.isfinite(np.asarray(value, dtype=np.float64))))
    except (TypeError, ValueError):
        return False


def _check_obs(env: SandboxedParallelEnv, obs: dict[str, Any], when: str) -> None:
    for agent, o in obs.items():
        space = env.observation_space(agent)
        if isinstance(space, spaces.Box) and not _finite(o):
            raise AssertionError(f"{when}: the observation of {agent} holds NaN or infinity")
        if not space.contains(np.asarray(o, dtype=getattr(space, "dtype", None)) if isinstance(space, spaces.Box) else o):
            raise AssertionError(f"{when}: the observation of {agent} is outside its observation_space "
                                 f"({np.asarray(o).ravel()[:6]} vs {space})")


def _check_mask(env: SandboxedParallelEnv, agent: str, info: Any, when: str) -> None:
    space = env.action_space(agent)
    mask = info.get("action_mask") if isinstance(info, dict) else None
    if isinstance(space, spaces.Discrete) and mask is not None and np.asarray(mask).shape != (space.n,):
        raise AssertionError(f"{when}: the action_mask of {agent} has shape {np.asarray(mask).shape}, "
                             f"its action space has {space.n} actions")


def play_episode(env: SandboxedParallelEnv, seed: int, rng: np.random.Generator, play: Play,
                 trace: list[Any] | None = None) -> None:
    """One episode of random legal play with every check; AssertionError names what broke."""
    obs, infos = env.reset(seed=seed)
    _check_obs(env, obs, "after reset")
    for t in range(1, MAX_EPISODE_STEPS + 1):
        for a in env.agents:
            _check_mask(env, a, infos.get(a), f"step {t}")
        actions = {a: _masked_sample(env, a, infos.get(a), rng) for a in env.agents}
        obs, rew, term, trunc, infos = env.step(actions)
        _check_obs(env, obs, f"step {t}")
        for a, r in rew.items():
            if isinstance(r, bool) or not isinstance(r, int | float) or not np.isfinite(r):
                raise AssertionError(f"step {t}: the reward of {a} is {r!r}, not a finite number")
            play.rewards.append(float(r))
        play.obs += [np.asarray(o, dtype=np.float64).ravel() for o in obs.values() if not isinstance(o, dict)]
        if trace is not None:
            trace.append((actions, {a: np.asarray(o).tolist() for a, o in obs.items()}, rew, term, trunc))
        if not env.agents:
            play.lengths.append(t)
            play.metrics.append(_final_metrics(infos, t))
            return
    raise AssertionError(f"an episode did not end within {MAX_EPISODE_STEPS} steps")


def _final_metrics(infos: dict[str, Any], t: int) -> dict[str, float]:
    found = next((i["metrics"] for i in infos.values() if isinstance(i, dict) and isinstance(i.get("metrics"), dict)), None)
    if found is None:
        return {}
    try:
        values = metric_values(found)  # names bounded before anything is done with them
    except ValueError as e:
        raise AssertionError(f"step {t}: the final infos' metrics {e}") from None
    if not all(np.isfinite(v) for v in values.values()):
        raise AssertionError(f"step {t}: the final infos' metrics must be finite numbers, got {found}")
    return values


def _quietly(run: Callable[[], None]) -> None:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        run()


def dynamic_checks(sandbox: Sandbox, episodes: int, seed: int) -> tuple[list[Diagnostic], Play]:
    """PettingZoo's tests, random legal play, determinism; stops at a dead worker."""
    found: list[Diagnostic] = []
    play = Play()
    steps: list[tuple[str, Callable[[], None]]] = [
        ("parallel_api_test", lambda: _quietly(lambda: parallel_api_test(SandboxedParallelEnv(sandbox), API_CYCLES))),
        ("parallel_seed_test", lambda: _quietly(lambda: parallel_seed_test(lambda: SandboxedParallelEnv(sandbox), API_CYCLES // 2))),
        ("random legal play", lambda: _random_play(sandbox, episodes, seed, play)),
        ("determinism", lambda: _determinism(sandbox, seed)),
    ]
    for name, run in steps:
        try:
            run()
        except SandboxError as e:
            found.append(sandbox_finding(e, "dynamic"))
            if not sandbox.alive:
                break
        except AssertionError as e:
            first = (str(e).strip().splitlines() or ["an assertion failed"])[0]
            found.append(error("dynamic", "", f"{name} failed: {first}",
                               "the env breaks the PettingZoo contract or its own spaces; see the message"))
        except Exception as e:  # noqa: BLE001 - a reply this process cannot use (a forged frame)
            found.append(unusable(e, name))
            sandbox.close()
            break
    unique = {(d.path, d.message): d for d in found}
    return list(unique.values()) + refused_findings(sandbox, "dynamic"), play


def _random_play(sandbox: Sandbox, episodes: int, seed: int, play: Play) -> None:
    env, rng = SandboxedParallelEnv(sandbox), np.random.default_rng(seed)
    for e in range(episodes):
        play_episode(env, seed + e, rng, play)
    env.close()


def _determinism(sandbox: Sandbox, seed: int) -> None:
    """An episode with reset(seed) on a fresh instance, then again on the same instance after
    an episode with another seed: the same actions must give the same episode."""
    env, traces = SandboxedParallelEnv(sandbox), []
    for s in (seed, seed + 1, seed):
        trace: list[Any] = []
        play_episode(env, s, np.random.default_rng(seed), Play(), trace)
        traces.append(trace)
    env.close()
    if repr(traces[0]) != repr(traces[2]):
        raise AssertionError(f"two episodes with reset(seed={seed}) and the same actions differ: "
                             "draw every random number from a generator seeded in reset")


def degeneracy(play: Play) -> list[Diagnostic]:
    found = []
    if play.rewards and np.ptp(play.rewards) == 0:
        found.append(warning("degeneracy", "", f"the reward is always {play.rewards[0]:g} under random play",
                             "a constant reward teaches nothing: reward progress toward the goal"))
    if play.lengths and max(play.lengths) == 1:
        found.append(warning("degeneracy", "", "every episode ends after one step",
                             "check the termination condition"))
    if len(play.obs) > 2 and len({o.shape for o in play.obs}) == 1 and np.ptp(np.stack(play.obs), axis=0).max() == 0:
        found.append(warning("degeneracy", "", "the observations never change under random play",
                             "observe what changes (positions, offers, the step count)"))
    if play.lengths and not any(play.metrics):
        found.append(warning("degeneracy", "", "no episode's final infos carry `metrics`",
                             'put `infos[agent]["metrics"] = {"success": ...}` in the last step\'s infos'))
    return found


def check_code(code: str, env_class: str | None = None, *, name: str = "code", episodes: int = 10,
               seed: int = 0, limits: Limits | None = None, layers: Layers | None = None,
               vet: bool = True, scenarios: list[dict[str, Any]] | None = None,
               ) -> tuple[VerificationReport, dict[str, Any]]:
    """The report on `code`, and the sandbox layers that were armed (empty when vetting
    refused it: then nothing of it ran). `vet=False` skips vetting (tests of the runtime layers).
    `scenarios` (validated by `scenarios.validate_scenarios`): worked cases played after the
    dynamic checks, each failure an error at `scenarios[i]` (stage `scenarios`)."""
    report = VerificationReport(name, {})
    start = time.perf_counter()
    if vet:
        vetted = vet_source(code, env_class)
        _stage(report, "vet", vetted.diagnostics, start)
        if not vetted.passed:
            report.stopped_at = "vet"
            return report, {}
        env_class = vetted.env_class
    start = time.perf_counter()
    try:
        sandbox = load_module(code, env_class, limits=limits, layers=layers)
    except SandboxError as e:
        _stage(report, "load", [sandbox_finding(e, "load")], start)
        report.stopped_at = "load"
        return report, {}
    with sandbox:
        try:
            SandboxedParallelEnv(sandbox).close()
            loaded = refused_findings(sandbox, "load")
        except SandboxError as e:
            loaded = [sandbox_finding(e, "load"), *refused_findings(sandbox, "load")]
        except Exception as e:  # noqa: BLE001 - a reply this process cannot use (a forged frame)
            loaded = [unusable(e, "make"), *refused_findings(sandbox, "load")]
        _stage(report, "load", loaded, start)
        if report.passed:
            start = time.perf_counter()
            found, play = dynamic_checks(sandbox, episodes, seed)
            _stage(report, "dynamic", found, start)
            if report.passed and scenarios:
                start = time.perf_counter()
                _stage(report, "scenarios", [*scenario_findings(sandbox, scenarios),
                                             *refused_findings(sandbox, "scenarios")], start)
            if report.passed:
                _stage(report, "degeneracy", degeneracy(play), time.perf_counter())
        report.stopped_at = None if report.passed else report.stages[-1].name
        quote_lines(report.diagnostics, code)
        return report, sandbox.layers()


def quote_lines(found: list[Diagnostic], code: str) -> None:
    """Quote the module's line in every run-time finding that names one (as vetting does)."""
    lines = code.splitlines()
    for d in found:
        n = int(d.path.split(":")[1]) if d.path.startswith("code:") and d.path[5:].isdigit() else 0
        if 0 < n <= len(lines) and not d.trace:
            d.trace = [f"{n}: {lines[n - 1].strip()[:160]}"]


def _stage(report: VerificationReport, name: str, found: list[Diagnostic], start: float) -> None:
    report.diagnostics += found
    report.stages.append(StageResult(name, time.perf_counter() - start,
                                     sum(d.severity.value == "error" for d in found),
                                     sum(d.severity.value == "warning" for d in found)))


__all__ = ["check_code", "degeneracy", "dynamic_checks", "play_episode"]
