"""Fixed-policy agents (NPCs): a role, or some agents of a role, played by a fixed policy.

During training (`TrainConfig.npc`, `gymwright train SPEC --npc ROLE=PLAYER`) and evaluation an
NPC's actions come from one of

- a scripted baseline of the spec (`baselines:`), by name (or `scripted:NAME`),
- `random`: a uniformly random legal action,
- a frozen earlier policy: a run folder or its `checkpoint.pt` (`gymwright train --out DIR`),
  whose network for the role must read the role's observation and choose among its actions,
- `llm:MODEL`: a language model playing from the text view (`gymwright.textgame.policy`; MODEL is
  any `--model` name, e.g. `llm:openai:gpt-4o`, `llm:hf:smollm2-135m`, `llm:hf:RUN/model`).

Keys: `ROLE` (every agent of the role), `ROLE[I]` (agent I of the role, `ROLE_I`), `ROLE[I,J]`,
or a slice `ROLE[I:J]` (`ROLE[:2]`: the first two; `ROLE[-1:]`: the last), indices within the
role as in Python. Every player respects the action masks. NPC agents are not trained: they
stay out of the policy loss, the value loss and the value normalizer. `Team` is a trained
policy with its NPCs, acting for every agent; a checkpoint records its NPCs (`describe`), and
`load_policy` gives the `Team` back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gymwright.diagnostic import shown
from gymwright.errors import GymwrightError
from gymwright.train import checkpoint as ck
from gymwright.train.baselines import RandomLegalPolicy, ScriptedPolicy
from gymwright.train.policy import Policy, Role, sample

SYNTAX = ("ROLE=PLAYER, ROLE[I]=PLAYER (agent I of the role; also I,J or a slice I:J); PLAYER: a scripted "
          "baseline of the spec, `random`, a run folder (or checkpoint.pt) of a frozen policy, or llm:MODEL")
KEY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[([^\]]*)\])?\s*$")
INDEX = re.compile(r"^-?\d+$")


# --------------------------------------------------------------------------- players
class FrozenRole:
    """The frozen network of one role of an earlier run, acting for this env's agents of the role."""

    def __init__(self, policy: Policy, saved_role: Role, role: Role) -> None:
        self.net = next(n for n in policy.model.nets if n.role.name == saved_role.name)
        self.role = role

    def act(self, obs: Any, masks: Any, deterministic: bool = False) -> np.ndarray:
        r = self.role
        o = torch.as_tensor(np.asarray(obs, dtype=np.float32)[:, r.agents, : r.obs_dim])
        m = torch.as_tensor(np.asarray(masks)[:, r.agents, : r.n_actions] != 0)
        acts = np.full(np.asarray(masks).shape[:2], -1, dtype=np.int64)
        with torch.no_grad():
            a = sample(self.net.logits(o, m), deterministic)
        acts[:, r.agents] = torch.where(m.any(-1), a, -1).numpy()
        return acts


@dataclass
class Npc:
    """One entry of `npc`: which agents, and the fixed policy that plays them."""

    key: str  # as written: ROLE or ROLE[...]
    player: str  # as written
    kind: str  # scripted, random or frozen
    role: str
    agents: tuple[int, ...]  # global agent indices
    actor: Any  # act(obs, masks, deterministic) -> (B, N); bind(env) where it reads the env
    source: str = ""  # the baseline's name, or the checkpoint's path

    def describe(self, agent_names: list[str]) -> dict[str, Any]:
        return {"key": self.key, "player": self.player, "kind": self.kind, "role": self.role,
                "agents": [agent_names[i] for i in self.agents], "agent_index": list(self.agents),
                "source": self.source}


class FixedPlayers:
    """Every NPC of a run: `act` gives their actions (-1 in the trained agents' columns)."""

    def __init__(self, npcs: list[Npc], n_agents: int, agent_names: list[str], seed: int = 0) -> None:
        self.npcs = npcs
        self.agent_names = agent_names
        self.fixed = np.zeros(n_agents, dtype=bool)
        for npc in npcs:
            self.fixed[list(npc.agents)] = True
        self.reseed(seed)

    def __bool__(self) -> bool:
        return bool(self.npcs)

    def reseed(self, *seed: int) -> None:
        """Seed the random legal choices of scripted and random players (the trainer: per update)."""
        for k, npc in enumerate(self.npcs):
            if isinstance(npc.actor, ScriptedPolicy | RandomLegalPolicy):
                npc.actor.rng = np.random.default_rng([*seed, k])

    def bind(self, env: Any) -> None:
        for npc in self.npcs:
            if callable(getattr(npc.actor, "bind", None)):
                npc.actor.bind(env)

    def act(self, obs: Any, masks: Any, deterministic: bool = False) -> np.ndarray:
        m = np.asarray(masks)
        out = np.full(m.shape[:2], -1, dtype=np.int64)
        for npc in self.npcs:
            cols = list(npc.agents)
            out[:, cols] = npc.actor.act(obs, m, deterministic)[:, cols]
        out[:, self.fixed] = np.where((m[:, self.fixed] != 0).any(-1), out[:, self.fixed], -1)
        return out

    def describe(self) -> list[dict[str, Any]]:
        """Plain data for the checkpoint, `npc.json` and the report: one dict per entry."""
        return [npc.describe(self.agent_names) for npc in self.npcs]

    def by_agent(self) -> dict[str, str]:
        """agent -> what plays it (`scripted:NAME`, `random`, `frozen:PATH`); trained agents left out."""
        return {a: f"{d['kind']}:{d['source']}" if d["source"] else d["kind"]
                for d in self.describe() for a in d["agents"]}


class FixedAgents:
    """A run's fixed-policy agents as the trainer uses them (`players`: None when every agent is
    trained): which agents they are, their actions put in place of the policy's, and what the
    checkpoint and the run's result say of them."""

    def __init__(self, players: FixedPlayers | None, n_agents: int, device: torch.device) -> None:
        self.players = players if players else None
        self.fixed_np = self.players.fixed if self.players else np.zeros(n_agents, dtype=bool)
        self.fixed = torch.from_numpy(self.fixed_np).to(device)  # (N,): agents a fixed policy plays (no gradient)

    def trained(self, roles: list[Role]) -> list[torch.Tensor]:
        """Per role: bool over its agents, those the run trains."""
        return [~self.fixed[r.agents] for r in roles]

    def reseed(self, seed: int, update: int) -> None:
        """Bit-for-bit on resume: the fixed players' choices are seeded by the update."""
        if self.players:
            self.players.reseed(seed, update)

    def substitute(self, actions: torch.Tensor, obs: np.ndarray, masks: np.ndarray) -> None:
        """Put the NPCs' actions in place of the policy's in `actions` (B, N) (their columns leave the loss)."""
        if self.players:
            actions[:, self.fixed] = torch.from_numpy(self.players.act(obs, masks)[:, self.fixed_np]).to(actions.device)

    def describe(self) -> list[dict[str, Any]]:
        return self.players.describe() if self.players else []

    def by_agent(self) -> dict[str, str]:
        return self.players.by_agent() if self.players else {}

    def marked(self) -> np.ndarray | None:
        """bool per agent (the fixed ones) for the log's trained and NPC returns; None without NPCs."""
        return self.fixed_np if self.players else None


class Team:
    """A trained policy plus its NPCs: one `act` for every agent (the NPCs' columns overwritten)."""

    def __init__(self, policy: Any, players: FixedPlayers) -> None:
        self.policy = policy
        self.players = players

    @property
    def npc_agents(self) -> np.ndarray:
        """bool (N,): the agents a fixed policy plays."""
        return self.players.fixed

    def __getattr__(self, name: str) -> Any:  # roles, info, model, n_agents: the trained policy's
        if name in ("policy", "players"):
            raise AttributeError(name)
        return getattr(self.policy, name)

    def bind(self, env: Any) -> None:
        """Hand the env to the players that read it (scripted baselines: a batch env or a
        PettingZoo parallel env of the Python backend)."""
        if callable(getattr(self.policy, "bind", None)):
            self.policy.bind(env)
        self.players.bind(env)

    def act(self, obs: Any, masks: Any, deterministic: bool = False) -> np.ndarray:
        acts = np.array(self.policy.act(obs, masks, deterministic), dtype=np.int64)
        fixed = self.players.fixed
        acts[:, fixed] = self.players.act(obs, masks, deterministic)[:, fixed]
        return acts


# --------------------------------------------------------------------------- resolving `npc`
def resolve(npc: dict[str, str], roles: list[Role], agent_names: list[str], baselines: list[str],
            where: str = "npc", seed: int = 0, spec: Any = None) -> FixedPlayers:
    """The players `npc` asks for in an env of `roles` (errors name `where`: the option, the file)."""
    if not isinstance(npc, dict):
        raise GymwrightError(f"expected a mapping of ROLE to PLAYER, got {shown(repr(npc))}", path=where, hint=SYNTAX)
    npcs: list[Npc] = []
    taken: dict[int, str] = {}
    for key, player in npc.items():
        role, agents = _agents_of(str(key), roles, where)
        for i in agents:
            if i in taken:
                raise GymwrightError(f"{shown(f'{key}={player}')}: agent {agent_names[i]} is already given to "
                                     f"{shown(taken[i])}",
                                     path=where, hint="give each agent one fixed policy")
            taken[i] = f"{key}={player}"
        npcs.append(player_of(str(key), str(player), role, agents, baselines, where, spec))
    if npcs and len(taken) == len(agent_names):
        raise GymwrightError(f"every agent ({', '.join(agent_names)}) would be played by a fixed policy: "
                             "nothing is left to train", path=where,
                             hint="leave at least one agent to train, e.g. only some agents of a role: ROLE[1]=PLAYER")
    return FixedPlayers(npcs, len(agent_names), agent_names, seed)


def _agents_of(key: str, roles: list[Role], where: str) -> tuple[Role, tuple[int, ...]]:
    found = KEY.match(key)
    by_name = {r.name: r for r in roles}
    label = shown(key)  # a key of 5,000 digits is not quoted whole
    if found is None:
        raise GymwrightError(f"{shown(repr(key))} is not ROLE or ROLE[I]", path=where, hint=SYNTAX)
    name, sel = found.group(1), found.group(2)
    if name not in by_name:
        raise GymwrightError(f"{label}: the spec has no role {shown(repr(name))}", path=where,
                             hint=f"its roles: {', '.join(f'{r.name} ({r.count} agents)' for r in roles)}")
    r = by_name[name]
    if sel is None:
        return r, tuple(r.start + i for i in range(r.count))
    picked = _picked(sel, r, label, where)
    if not picked:
        raise GymwrightError(f"{label}: selects none of role {name}'s {r.count} agents", path=where,
                             hint="pick indices within the role")
    return r, tuple(sorted({r.start + i for i in picked}))


def _picked(sel: str, r: Role, label: str, where: str) -> list[int]:
    """The role's agents (local indices) that `sel` names: I, I,J,... or a slice I:J."""
    local = list(range(r.count))
    try:
        if ":" in sel:
            parts = [p.strip() for p in sel.split(":")]
            if len(parts) != 2 or any(p and not INDEX.match(p) for p in parts):
                raise ValueError
            return local[slice(*(int(p) if p else None for p in parts))]
        items = [p.strip() for p in sel.split(",")]
        if not all(INDEX.match(p) for p in items):
            raise ValueError
        return [local[_within(int(p), r, label, where)] for p in items]  # int: ValueError past 4,300 digits
    except ValueError:
        raise GymwrightError(f"{label}: {shown(repr(sel))} is not an agent index, a list I,J or a slice I:J", path=where,
                             hint=SYNTAX) from None


def _within(i: int, r: Role, label: str, where: str) -> int:
    if not -r.count <= i < r.count:
        raise GymwrightError(f"{label}: role {r.name} has {r.count} agents ({r.name}[0] .. {r.name}[{r.count - 1}])",
                             path=where, hint="pick indices within the role")
    return i


def player_of(key: str, player: str, role: Role, agents: tuple[int, ...], baselines: list[str], where: str,
              spec: Any = None) -> Npc:
    if player.startswith("llm:"):
        return Npc(key, player, "llm", role.name, agents, llm_player(player, agents, spec, where), player.removeprefix("llm:"))
    name = player.removeprefix("scripted:")
    if name in baselines:
        return Npc(key, player, "scripted", role.name, agents, ScriptedPolicy(name), name)
    if player.startswith("scripted:"):
        raise _unknown(key, player, baselines, where, f"the spec has no scripted baseline `{shown(name)}`")
    if player == "random":
        return Npc(key, player, "random", role.name, agents, RandomLegalPolicy())
    path = Path(player)
    if _is_run(path):
        return Npc(key, player, "frozen", role.name, agents, frozen(path, role, key, where), str(path))
    raise _unknown(key, player, baselines, where,
                   f"`{shown(player)}` is no scripted baseline of the spec, not `random`, and no run folder or checkpoint")


def llm_player(player: str, agents: tuple[int, ...], spec: Any, where: str) -> Any:
    """`llm:MODEL` as the player of `agents` (the spec's text view; the provider of MODEL)."""
    from gymwright.textgame.policy import make_llm_policy

    model = player.removeprefix("llm:").strip()
    if spec is None or not model:
        raise GymwrightError(f"{shown(player)}: " + ("names no model" if not model else "a language model plays from the "
                             "spec's text view, and no spec was given"), path=where,
                             hint="write llm:MODEL with MODEL a --model name, e.g. llm:openai:gpt-4o or llm:hf:smollm2-135m")
    return make_llm_policy(model, spec, agents=set(agents))


def _is_run(path: Path) -> bool:
    """A run folder (with its checkpoint) or a checkpoint file; False for a name no file can have."""
    try:
        return path.is_dir() and (path / ck.CHECKPOINT).exists() or path.is_file()
    except (OSError, ValueError):  # a name too long for the file system, or with a NUL
        return False


def _unknown(key: str, player: str, baselines: list[str], where: str, what: str) -> GymwrightError:
    declared = ", ".join(baselines) if baselines else "none"
    return GymwrightError(f"{shown(f'{key}={player}')}: {what}", path=where,
                          hint=f"the spec's baselines: {declared}; or `random`; or the folder of a finished run "
                               "(`gymwright train SPEC --out DIR`)")


def frozen(path: Path, role: Role, key: str = "", where: str = "npc") -> FrozenRole:
    """The frozen network of `role` in the run at `path`; an error unless it fits the role here."""
    saved = ck.load(path)
    theirs = {r[0]: Role(*r) for r in saved["roles"]}
    label = f"{shown(f'{key}={path}')}: " if key else f"{shown(str(path))}: "
    if role.name not in theirs:
        raise GymwrightError(f"{label}{saved['path']} has no role {role.name!r} (its roles: {', '.join(theirs)})",
                             path=where, hint="use a run trained on a spec with this role")
    s = theirs[role.name]
    if (s.obs_dim, s.n_actions) != (role.obs_dim, role.n_actions):
        raise GymwrightError(f"{label}its policy for {role.name} reads {s.obs_dim} observation numbers and chooses among "
                             f"{s.n_actions} actions; here the role has {role.obs_dim} and {role.n_actions}",
                             path=where, hint="use a run of the same spec with the same observation and action params "
                                              f"(it was trained on {saved['spec_name']} with {saved['params']})")
    if saved.get("agent_index", True) and s.count != role.count:
        raise GymwrightError(f"{label}its actor reads the agent's index among {s.count} {role.name}s; here there are "
                             f"{role.count}", path=where, hint="use a run trained with the same agent count, or with agent_index off")
    if role.name in untrained_roles(saved):
        raise GymwrightError(f"{label}in that run every {role.name} was itself a fixed policy: its network never trained",
                             path=where, hint="use a run in which the role trained")
    return FrozenRole(ck.policy_from(saved), s, role)


def untrained_roles(saved: dict[str, Any]) -> set[str]:
    """The roles of a checkpoint whose every agent was an NPC (their networks never trained)."""
    roles = {r[0]: int(r[2]) for r in saved["roles"]}
    fixed: dict[str, int] = {}
    for d in saved.get("npc") or []:
        fixed[d["role"]] = fixed.get(d["role"], 0) + len(d["agent_index"])
    return {name for name, n in fixed.items() if n >= roles.get(name, 0)}


def baselines_of(benv: Any, spec: Any = None) -> list[str]:
    """The scripted baselines a batch env offers, else (a code-mode env names none) the spec's."""
    baselines = list(getattr(benv, "BASELINES", []))
    if not baselines and spec is not None:
        from gymwright.train.baselines import baseline_names

        baselines = baseline_names(spec)
    return baselines


def players_for(npc: dict[str, str], benv: Any, roles: list[Role], spec: Any = None, where: str = "npc",
                seed: int = 0) -> FixedPlayers:
    """`resolve` against a batch env (its roles, agents and baselines), bound to it."""
    players = resolve(npc, roles, list(benv.possible_agents), baselines_of(benv, spec), where, seed, spec)
    players.bind(benv)
    return players


def check_npc(spec: Any, params: dict[str, Any] | list[dict[str, Any]], npc: dict[str, str],
              where: str = "npc") -> FixedPlayers:
    """Resolve `npc` on a small batch of `spec` now (before any training), errors naming `where`."""
    from gymwright.train.policy import roles_of
    from gymwright.train.rollout import make_env

    plist = [dict(p) for p in params] if isinstance(params, list) else [dict(params or {})]
    benv = make_env(spec, plist, len(plist))
    return players_for(npc, benv, roles_of(benv), spec, where)


# --------------------------------------------------------------------------- from a checkpoint
def players_from(described: list[dict[str, Any]], roles: list[Role], agent_names: list[str],
                 seed: int = 0, spec: Any = None) -> FixedPlayers:
    """The players a checkpoint recorded (`FixedPlayers.describe`), rebuilt."""
    by_name = {r.name: r for r in roles}
    npcs = []
    for d in described:
        agents = tuple(int(i) for i in d["agent_index"])
        if d["kind"] == "scripted":
            actor: Any = ScriptedPolicy(d["source"])
        elif d["kind"] == "random":
            actor = RandomLegalPolicy()
        elif d["kind"] == "llm":
            actor = llm_player(d["player"], agents, spec, "npc")
        else:
            actor = frozen(Path(d["source"]), by_name[d["role"]], d["key"], "npc")
        npcs.append(Npc(d["key"], d["player"], d["kind"], d["role"], agents, actor, d["source"]))
    return FixedPlayers(npcs, len(agent_names), agent_names, seed)


def team_from(saved: dict[str, Any], seed: int = 0, spec: Any = None) -> Policy | Team:
    """A loaded checkpoint's policy, with the NPCs it was trained with (a plain `Policy` if none;
    an `llm:` NPC needs the spec it plays from)."""
    policy = ck.policy_from(saved)
    described = saved.get("npc") or []
    if not described:
        return policy
    roles = [Role(*r) for r in saved["roles"]]
    names = [f"{r.name}_{i}" for r in roles for i in range(r.count)]
    return Team(policy, players_from(described, roles, names, seed, spec))


def load_policy(path: str | Path, spec: Any = None) -> Policy | Team:
    """The policy of a checkpoint (a file, or a run folder holding checkpoint.pt), with its NPCs:
    a `Team` where the run had fixed-policy agents (bind it to the env before play where one is a
    scripted baseline; `play_episodes` does), else the `Policy`. With `spec`, first check that the
    checkpoint was trained on that spec (same sha256)."""
    saved = ck.load(path)
    if spec is not None:
        ck.check_fits(saved, ck.spec_identity(spec)[0], None)
    return team_from(saved, spec=spec)
