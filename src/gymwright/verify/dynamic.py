"""The dynamic stage: PettingZoo's own tests, then seeded random legal play with checks.

Random play runs the instrumented module, whose `_hook(path)` is called after every variable
init and step rule, so a bound violation is reported at the rule that caused it. The episodes
are kept (`Rollouts`) for the degeneracy stage.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

from gymwright.compile.build import CompiledEnv
from gymwright.compile.cites import cited_path
from gymwright.compile.inline import MARKER
from gymwright.diagnostic import Diagnostic, error, info, warning
from gymwright.spec.checked import CheckedSpec, CRole

STAGE = "dynamic"


@dataclass
class Rollouts:
    """What random legal play saw, for the degeneracy checks."""

    rewards: dict[str, list[float]] = field(default_factory=dict)  # role -> every agent-step reward
    terms: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # (role, term) -> values
    obs: dict[str, list[np.ndarray]] = field(default_factory=dict)  # role -> observations
    masks: dict[str, np.ndarray] = field(default_factory=dict)  # role -> how often each action was legal
    metrics: list[dict[str, float]] = field(default_factory=list)  # per finished episode
    lengths: list[int] = field(default_factory=list)
    states: list[Any] = field(default_factory=list)  # env snapshots for counterfactual probing

    def record(self, module: Any, obs: dict[str, Any], rew: dict[str, float] | None,
               infos: dict[str, Any], ended: bool) -> None:
        """One reset (`rew` None) or step of the env of `module`: observations, which actions
        were legal while the episode went on, rewards and reward terms, by role."""
        for agent, o in obs.items():
            role = module.ROLE_OF[module.AGENTS.index(agent)]
            self.obs.setdefault(role, []).append(np.asarray(o))
            if rew is None or not ended:
                mask = np.asarray(infos[agent]["action_mask"], dtype=np.int64)
                self.masks[role] = self.masks.get(role, 0) + mask
            if rew is None:
                continue
            self.rewards.setdefault(role, []).append(float(rew[agent]))
            for k, x in infos[agent].get("reward_terms", {}).items():
                self.terms.setdefault((role, k), []).append(float(x))


def api_tests(compiled: CompiledEnv, cycles: int = 100) -> list[Diagnostic]:
    """PettingZoo's parallel_api_test, api_test and seed tests, each reported on its own."""
    out = []
    tests = [
        ("parallel_api_test", lambda: parallel_api_test(_seeded(compiled.parallel_env()), num_cycles=cycles)),
        ("api_test", lambda: api_test(_seeded(compiled.aec_env()), num_cycles=cycles)),
        ("seed_test", lambda: seed_test(lambda: compiled.aec_env(), num_cycles=cycles // 2)),
        ("parallel_seed_test", lambda: parallel_seed_test(lambda: compiled.parallel_env(), num_cycles=cycles // 2)),
    ]
    for name, run in tests:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("always")
            try:
                run()
            except Exception as e:  # noqa: BLE001 - a failed contract is a finding
                first = (str(e).strip().splitlines() or [""])[0]
                out.append(error(STAGE, "", f"PettingZoo's {name} failed: {type(e).__name__}: {first}",
                                 "the compiled env breaks the PettingZoo contract; see the message for which part "
                                 "(a NaN found below also fails the seed tests, since NaN != NaN: fix that first)"))
        for w in {str(w.message) for w in caught if "pettingzoo" in (w.filename or "")}:
            out.append(info(STAGE, "", f"PettingZoo's {name} warns: {w}"))
    return out


def acting_agents(env: Any) -> list[str]:
    """Who must act now: the agent whose turn it is, or every live agent."""
    turn = env.turn_agent()
    return [turn] if turn is not None else list(env.agents)


def _seeded(env: Any) -> Any:
    """The env with its action spaces seeded, so PettingZoo's tests sample reproducibly."""
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(i)
    return env


class _Player:
    """Plays seeded random legal episodes on the instrumented env and checks every step."""

    def __init__(self, compiled: CompiledEnv, rollouts: Rollouts, max_steps: int) -> None:
        self.c = compiled
        self.cs: CheckedSpec = compiled.checked
        self.env = compiled.parallel_env()
        self.env._hook = self.on_hook
        self.r = rollouts
        self.max_steps = max_steps
        self.diags: list[Diagnostic] = []
        self.flagged: set[str] = set()
        self.where = ""  # the episode and step, for messages
        self.label = ""  # who plays ("baseline `name`, "), for messages
        self.initializing = False
        self.bounds: dict[str, tuple[float, float]] = {}
        self.rule_sets = {r.path: {t for t, _ in r.sets} for r in self.cs.rules}

    # -- checks
    def once(self, key: str, d: Diagnostic) -> None:
        if key not in self.flagged:
            self.flagged.add(key)
            self.diags.append(d)

    def on_hook(self, path: str) -> None:
        v = self.env.v
        checked = self.bounds.items()
        if self.initializing:  # only the variable just initialized holds this episode's value
            name = path.split(".")[1] if path.count(".") >= 2 else ""
            checked = [(name, self.bounds[name])] if name in self.bounds else []
        for name, (lo, hi) in checked:
            x = np.asarray(getattr(v, name, 0.0), dtype=np.float64)
            bad_nan = np.isnan(x).any()
            if not bad_nan and (x >= lo).all() and (x <= hi).all():
                continue
            where = f"{path}.set.{name}" if name in self.rule_sets.get(path, ()) else path
            values = x.tolist() if x.size <= 16 else f"array with min {np.nanmin(x):g}, max {np.nanmax(x):g}"
            what = "became NaN" if bad_nan else f"= {values} left its declared range [{lo:g}, {hi:g}]"
            self.once(f"bound:{name}", error(
                STAGE, where, f"`{name}` {what} after {path} ({self.where})",
                "clamp the value (min, max, clip), tighten the rule's `when`, or widen the declared min/max",
                value=values))

    def check_step(self, obs: dict[str, Any], rew: dict[str, float], infos: dict[str, Any]) -> None:
        for agent, r in rew.items():
            if not np.isfinite(r):
                role = self.c.module.ROLE_OF[self.c.module.AGENTS.index(agent)]
                terms = infos[agent].get("reward_terms", {})
                bad = next((k for k, x in terms.items() if not np.isfinite(x)), None)
                path = next((t.path + ".expr" for t in self.role(role).terms if t.name == bad), f"rewards.{role}")
                self.once(f"reward:{path}", error(STAGE, path, f"reward of {agent} is {r} ({self.where})",
                                                  "guard divisions and logarithms (e.g. log(max(x, 1e-9)))", value=r))
        for agent, o in obs.items():
            space = self.env.observation_space(agent)
            if space.contains(o):
                continue
            self.flag_observation(agent, o, space)

    def flag_observation(self, agent: str, o: np.ndarray, space: Any) -> None:
        role = self.role(self.c.module.ROLE_OF[self.c.module.AGENTS.index(agent)])
        at = 0
        for f in role.features:
            part, lo, hi = o[at:at + f.size], space.low[at:at + f.size], space.high[at:at + f.size]
            at += f.size
            if np.isnan(part).any():
                self.once(f"obs:{f.path}", error(STAGE, f.path, f"observation feature `{f.name}` of {agent} is NaN ({self.where})",
                                                 "guard divisions and logarithms in the feature and the variables it reads"))
            elif (part < lo).any() or (part > hi).any():
                shown = part.tolist() if f.size <= 8 else "values"
                self.once(f"obs:{f.path}", error(
                    STAGE, f.path, f"observation feature `{f.name}` of {agent} = {shown} is outside its bounds "
                    f"[{lo.min():g}, {hi.max():g}] ({self.where})",
                    "declare min/max on the variables it reads, or set `low`/`high` on the feature"))

    def role(self, name: str) -> CRole:
        return next(r for r in self.cs.roles if r.name == name)

    # -- play
    def episode(self, seed: int, policy: np.random.Generator, keep_states: int) -> bool:
        env = self.env
        self.where = f"{self.label}seed {seed}, at reset"
        self.bounds = env.var_bounds()
        self.initializing = True
        try:
            obs, infos = env.reset(seed=seed)
        except Exception as e:  # noqa: BLE001 - a crash is a finding, reported where it happened
            self.crash(e)
            return False
        self.initializing = False
        self.check_step(obs, {}, infos)
        self.record(obs, None, infos)
        steps = 0
        while env.agents:
            if steps >= self.max_steps:
                self.no_end(seed)
                return False
            try:
                actions = self.choose(infos, policy, steps)
            except Exception as e:  # noqa: BLE001 - a baseline's rule that crashes is a finding
                self.where = f"{self.label}seed {seed}, choosing step {steps + 1}"
                self.crash(e)
                return False
            if len(self.r.states) < keep_states and policy.random() < 0.3:
                self.r.states.append((self.snapshot(), dict(actions)))
            steps += 1
            self.where = f"{self.label}seed {seed}, step {steps}"
            try:
                obs, rew, term, trunc, infos = env.step(actions)
            except Exception as e:  # noqa: BLE001 - a crash is a finding, reported where it happened
                self.crash(e)
                return False
            self.check_step(obs, rew, infos)
            self.record(obs, rew, infos)
            if not env.agents:
                self.r.metrics.append(next(iter(infos.values())).get("metrics", {}))
        self.r.lengths.append(steps)
        return True

    def snapshot(self) -> Any:
        """A deep copy of the env as it is now (without the hook)."""
        self.env._hook = None
        try:
            return copy.deepcopy(self.env)
        finally:
            self.env._hook = self.on_hook

    def choose(self, infos: dict[str, Any], policy: np.random.Generator, step: int) -> dict[str, int]:
        env = self.env
        acting = acting_agents(env)
        actions = {}
        for agent in acting:
            legal = np.flatnonzero(infos[agent]["action_mask"])
            if len(legal) == 0:
                role = self.c.module.ROLE_OF[self.c.module.AGENTS.index(agent)]
                self.once(f"mask:{role}", error(
                    STAGE, f"actions.{role}", f"{agent} must act but no action is legal ({self.where})",
                    "make some choice legal in every state an agent acts in (e.g. a `wait` choice)",
                    trace=env.render_text().splitlines()[:12]))
                continue
            actions[agent] = int(policy.choice(legal))
        return actions

    def record(self, obs: dict[str, Any], rew: dict[str, float] | None, infos: dict[str, Any]) -> None:
        self.r.record(self.c.module, obs, rew, infos, ended=not self.env.agents)

    def no_end(self, seed: int) -> None:
        cs = self.cs
        if cs.truncate.source == "False":
            msg = f"an episode (seed {seed}) did not end within {self.max_steps} steps, and the spec has no `truncate`"
            hint = "add `truncate: t >= max_steps` (with a `max_steps` param) so every episode ends"
        else:
            msg = f"an episode (seed {seed}) did not end within {self.max_steps} steps: neither terminate nor truncate held"
            hint = "check that `truncate` can become true (e.g. `t >= max_steps` with a bounded max_steps)"
        self.once("end", error(STAGE, "truncate", msg, hint))

    def crash(self, e: Exception) -> None:
        path = spec_path_of(e, self.c.source) or "step"
        if isinstance(e, ValueError) and str(e).startswith(_DRAWS):  # runtime/core.py's draw checks
            self.once(f"draw:{path}", error(
                STAGE, path, f"a random function got invalid arguments: {e} ({self.where})",
                "keep the arguments valid in every state the rule can see, e.g. randint(lo, max(hi, lo + 1)), "
                "bernoulli(clip(p, 0, 1)), uniform(lo, max(lo, hi)), normal(m, max(s, 0))"))
            return
        self.once(f"crash:{path}", error(STAGE, path, f"the env raised {type(e).__name__}: {e} ({self.where})",
                                         "check indexing and arithmetic here: an index may leave its range, "
                                         "or a value may be of the wrong size"))


_DRAWS = ("uniform(lo, hi) ", "normal(mean, std) ", "randint(lo, hi) ", "bernoulli(p) ")  # how their errors start


def spec_path_of(e: BaseException, source: str) -> str | None:
    """The spec path cited by the generated-code comment nearest above the line that raised
    (the innermost line of the generated part: an error raised inside an inlined runtime helper,
    such as a draw function refusing its arguments, is placed at the generated line calling it)."""
    lines = source.splitlines()
    start = next((i + 1 for i, line in enumerate(lines) if line == MARKER), 0)
    tb = e.__traceback__
    lineno = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<gymwright:") and tb.tb_lineno > start:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    if lineno is None:
        return None
    for i in range(min(lineno, len(lines)) - 1, -1, -1):
        path = cited_path(lines[i])
        if path:
            return path + ".expr" if re.fullmatch(r"rewards\.\w+\[\d+\]", path) else path
    return None


def random_play(compiled: CompiledEnv, episodes: int = 50, seed: int = 0, max_steps: int = 1000,
                keep_states: int = 24) -> tuple[list[Diagnostic], Rollouts]:
    """Seeded random legal episodes with every check; returns findings and what was seen."""
    r = Rollouts()
    player = _Player(compiled, r, max_steps)
    policy = np.random.default_rng(seed)
    for k in range(episodes):
        if not player.episode(seed + k, policy, keep_states) and any(d.path == "truncate" for d in player.diags):
            break
    return player.diags, r


class _BaselinePlayer(_Player):
    """Plays scripted baseline `name` (a random legal action where no rule applies), with every
    check of random play; counts, per role, the agent-steps on which a rule applied."""

    def __init__(self, compiled: CompiledEnv, name: str, max_steps: int) -> None:
        super().__init__(compiled, Rollouts(), max_steps)
        self.name = name
        self.label = f"baseline `{name}`, "
        self.applied: dict[str, int] = {}  # role -> agent-steps a rule of the role applied

    def choose(self, infos: dict[str, Any], policy: np.random.Generator, step: int) -> dict[str, int]:
        actions = {}
        module = self.c.module
        for agent in acting_agents(self.env):
            a, k = self.env.scripted_action(self.name, agent, with_rule=True, rng=policy)
            role = module.ROLE_OF[module.AGENTS.index(agent)]
            self.applied[role] = self.applied.get(role, 0) + (k >= 0)
            if a is not None:
                actions[agent] = int(a)
            elif np.flatnonzero(infos[agent]["action_mask"]).size:  # the fallback must play
                raise RuntimeError(f"{agent} has a legal action but the baseline chose none")
        return actions

    def record(self, obs: dict[str, Any], rew: dict[str, float] | None, infos: dict[str, Any]) -> None:
        pass  # the degeneracy checks read random play only


def baseline_play(compiled: CompiledEnv, seeds: tuple[int, ...] = (0, 1, 2), max_steps: int = 1000,
                  ) -> list[Diagnostic]:
    """Every scripted baseline of the spec, a few seeded episodes each, with every check of
    random play (a finding names the baseline); a role whose rules never applied is a warning."""
    out: list[Diagnostic] = []
    for b in compiled.checked.baselines:
        player = _BaselinePlayer(compiled, b.name, max_steps)
        played = 0
        for seed in seeds:
            played += player.episode(seed, np.random.default_rng(seed), keep_states=0)
            if player.diags:
                break
        out += [_named(d, b.name) for d in player.diags]
        if player.diags or not played:
            continue
        for role, rules in b.rules.items():
            if rules and player.applied.get(role, 0) == 0:
                out.append(warning(
                    STAGE, f"baselines.{b.name}.{role}",
                    f"no rule of baseline `{b.name}` for role `{role}` applied in {played} episodes "
                    f"(seeds {', '.join(map(str, seeds[:played]))}): its agents played random legal actions only",
                    "check each rule's `when` (it may never hold, e.g. compare with a value the variable never "
                    "takes) and that its action is legal when it holds"))
    return out


def _named(d: Diagnostic, baseline: str) -> Diagnostic:
    """A finding of baseline play, whose path is the env's: say which baseline found it."""
    if f"baseline `{baseline}`" in d.message:
        return d
    return dataclasses.replace(d, message=f"{d.message} (playing baseline `{baseline}`)")


def determinism(compiled: CompiledEnv, seeds: tuple[int, ...] = (0, 1, 2), max_steps: int = 300) -> list[Diagnostic]:
    """Same seed and same actions give the same whole episode (obs, rewards, ends, state)."""
    for s in seeds:
        try:
            a, b = _trajectory(compiled, s, max_steps), _trajectory(compiled, s, max_steps)
        except Exception:  # noqa: BLE001 - a crash is reported by random play; nothing to compare
            continue
        for step, (x, y) in enumerate(zip(a, b, strict=False)):
            if not same(x, y):
                return [error(STAGE, "", f"seed {s} gave two different episodes (they differ at step {step})",
                              "randomness must come only from the spec's random functions")]
        if len(a) != len(b):
            return [error(STAGE, "", f"seed {s} gave episodes of different lengths ({len(a)} and {len(b)} steps)")]
    return []


def _trajectory(compiled: CompiledEnv, seed: int, max_steps: int) -> list[Any]:
    env = compiled.parallel_env()
    policy = np.random.default_rng(seed)
    obs, infos = env.reset(seed=seed)
    out: list[Any] = [(obs, env.state())]
    for _ in range(max_steps):
        if not env.agents:
            break
        acting = acting_agents(env)
        actions = {}
        for agent in acting:
            legal = np.flatnonzero(infos[agent]["action_mask"])
            if len(legal):
                actions[agent] = int(policy.choice(legal))
        obs, rew, term, trunc, infos = env.step(actions)
        out.append((obs, rew, term, trunc, env.state()))
    return out


def same(x: Any, y: Any) -> bool:
    """Equal step outcomes: nested dicts, tuples and arrays, NaN equal to NaN."""
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, tuple | list):
        return len(x) == len(y) and all(same(a, b) for a, b in zip(x, y, strict=True))
    return bool(np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True))
