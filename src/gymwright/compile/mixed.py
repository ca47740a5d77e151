"""`MixedBatchEnv`: one batch whose copies differ in structural params (e.g. map size).

A generated `BatchEnv` is specialised on the structural params (those that size arrays or count
agents, `CheckedSpec.structural`), so one module cannot step a 4x4 and a 6x6 lake together. A
mixed batch holds one generated `BatchEnv` per distinct structural signature (a *group*) and
presents them as one batch of the same interface: copies keep the order of the per-copy params
(copy b is the copy that `params[b]` describes, wherever its group is), `done_idx` holds global
copy indices, and `reset(seed)` seeds copy b with `seed + b`, exactly as a single batch would, so
what a copy does never depends on how the batch is grouped.

The policy sees one shape for the whole batch: every group must give the same agents, roles,
observation widths and action counts (an egocentric view makes the map size free; a different
`view_radius` or agent count does not). `state()` is defined only where the groups' state widths
agree (MAPPO's centralized critic reads it; IPPO never calls it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gymwright.errors import GymwrightError


def _fmt(params: dict[str, Any]) -> str:
    return repr(dict(params))



def fill_random_legal(actions: Any, masks: Any, rng: np.random.Generator) -> np.ndarray:
    """`actions` (..., N) with every -1 of an agent that has a legal action (per `masks`,
    (..., N, A)) replaced by a uniformly random legal one: the k-th legal action, k = floor(u *
    number legal), one draw of `rng` per such agent in row-major order (so one copy of a batch
    and the same agents of a PettingZoo env draw alike). The one home of this draw in gymwright's
    process (the trainers' baselines and a mixed batch); a generated module writes it inline,
    since it stands alone."""
    acts = np.array(actions, dtype=np.int64)
    m = np.asarray(masks) != 0
    free = (acts < 0) & m.any(-1)
    if free.any():
        legal = m[free]
        n = legal.sum(-1)
        k = np.minimum((rng.random(len(n)) * n).astype(np.int64), n - 1)
        acts[free] = (np.cumsum(legal, -1) <= k[:, None]).sum(-1)
    return acts

class MixedBatchEnv:
    """Copies of one spec under configs whose structural params differ, stepped as one batch.

    `groups` is a list of `(copies, env, params)`: the global copy indices of a group (ascending),
    its generated `BatchEnv` (of `len(copies)` copies, built with those copies' params) and the
    first of its param dicts (named in errors). Every global copy belongs to exactly one group.
    """

    def __init__(self, groups: list[tuple[np.ndarray, Any, dict[str, Any]]],
                 structural: dict[str, Any] | None = None) -> None:
        if not groups:
            raise GymwrightError("a mixed batch needs at least one group of copies")
        copies = [np.asarray(c, dtype=np.int64) for c, _, _ in groups]
        self.size = int(sum(len(c) for c in copies))
        seen = np.zeros(self.size, dtype=np.int64)
        for c in copies:
            if len(c) == 0 or c.min() < 0 or c.max() >= self.size:
                raise GymwrightError(f"group copies {c.tolist()} are out of the batch of {self.size}")
            np.add.at(seen, c, 1)
        if (seen != 1).any():
            raise GymwrightError("every copy of a mixed batch must belong to exactly one group")
        self.groups = [env for _, env, _ in groups]
        self.group_params = [dict(p) for _, _, p in groups]
        self.copies = copies
        # a slice where a group's copies are contiguous (the usual case: `spread` makes blocks)
        self._sel: list[Any] = [slice(int(c[0]), int(c[-1]) + 1) if (np.diff(c) == 1).all() else c for c in copies]
        self._structural = structural or {}
        first = self.groups[0]
        for env, params in zip(self.groups[1:], self.group_params[1:], strict=True):
            self._check_same_shapes(first, self.group_params[0], env, params)
        self.ROLES = [tuple(r) for r in first.ROLES]
        self.N_AGENTS = int(first.N_AGENTS)
        self.AGENT_ENDS = bool(getattr(first, "AGENT_ENDS", False))  # terminate_agent (one spec: every group alike)
        self.possible_agents = list(first.possible_agents)
        self.obs_buf = np.zeros((self.size,) + first.obs_buf.shape[1:], dtype=first.obs_buf.dtype)
        self.masks = np.zeros((self.size,) + first.masks.shape[1:], dtype=first.masks.dtype)
        self._state_dims: list[int] | None = None
        self._finished: list[dict[str, Any] | None] = [None] * len(self.groups)
        for gi, env in enumerate(self.groups):
            self._capture_finish(gi, env)

    # ------------------------------------------------------------------ shapes
    def _differs(self, a: dict[str, Any], b: dict[str, Any]) -> str:
        """The structural params two configs set differently, as `name a vs b`."""
        names = [n for n in sorted(self._structural) if a.get(n, self._structural[n]) != b.get(n, self._structural[n])]
        if not names:
            return ""
        parts = [f"{n} {a.get(n, self._structural[n])!r} vs {b.get(n, self._structural[n])!r}" for n in names]
        return " (their structural params differ: " + ", ".join(parts) + ")"

    def _check_same_shapes(self, a: Any, pa: dict[str, Any], b: Any, pb: dict[str, Any]) -> None:
        what: list[str] = []
        if list(a.possible_agents) != list(b.possible_agents):
            what.append(f"agents {len(a.possible_agents)} vs {len(b.possible_agents)} "
                        f"({a.possible_agents} vs {b.possible_agents})")
        else:
            ra, rb = {r[0]: r for r in a.ROLES}, {r[0]: r for r in b.ROLES}
            if list(ra) != list(rb):
                what.append(f"roles {list(ra)} vs {list(rb)}")
            for name in ra:
                if name not in rb:
                    continue
                (_, sa, ca, da, na), (_, sb, cb, db, nb) = ra[name], rb[name]
                if (sa, ca) != (sb, cb):
                    what.append(f"role {name} agents {sa}..{sa + ca - 1} vs {sb}..{sb + cb - 1}")
                if da != db:
                    what.append(f"role {name} obs dims {da} vs {db}")
                if na != nb:
                    what.append(f"role {name} action counts {na} vs {nb}")
        if not what and (a.obs_buf.shape[1:] != b.obs_buf.shape[1:] or a.masks.shape[1:] != b.masks.shape[1:]):
            what.append(f"obs {a.obs_buf.shape[1:]} vs {b.obs_buf.shape[1:]}, masks {a.masks.shape[1:]} vs {b.masks.shape[1:]}")
        if what:
            raise GymwrightError(
                f"params {_fmt(pa)} and {_fmt(pb)} cannot share a batch: the policy would see different shapes: "
                + "; ".join(what) + self._differs(pa, pb),
                path="params",
                hint="a batch may mix structural params (e.g. map size) only where the observations, action "
                     "masks, agents and roles keep their shapes; give every config the same value of the params "
                     "that change them (e.g. view_radius, n_agents), or train the configs in separate runs",
            )

    def obs_bounds(self, role: str) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) of one role's observation: the widest over the groups."""
        lows, highs = zip(*(env.obs_bounds(role) for env in self.groups), strict=True)
        return np.min(np.stack(lows), axis=0), np.max(np.stack(highs), axis=0)

    # ------------------------------------------------------------------ episodes
    def _capture_finish(self, gi: int, env: Any) -> None:
        """Keep each group's episode results (and its final state, taken before the reset)."""
        inner = env._finish

        def finish(idx: np.ndarray) -> dict[str, Any]:
            out = inner(idx)
            out.setdefault("final_state", env.state()[idx])
            self._finished[gi] = out
            return out

        env._finish = finish

    def _gather(self, gi: int) -> None:
        sel, env = self._sel[gi], self.groups[gi]
        self.obs_buf[sel] = env.obs_buf
        self.masks[sel] = env.masks

    def reset(self, seed: Any = 0) -> tuple[np.ndarray, np.ndarray]:
        """Reset every copy: copy b gets seed `seed + b` (or seeds[b] for an array). Returns obs, masks."""
        seeds = np.asarray(seed)
        if seeds.dtype.kind not in "iu" or isinstance(seed, bool | np.bool_):
            got = repr(seed) if seeds.ndim == 0 else f"an array of dtype {seeds.dtype}"
            raise ValueError(f"reset(seed=...) takes an int or an integer array of shape ({self.size},) (one seed per "
                             f"copy), got {got}")
        seeds = seeds.astype(np.int64) + np.arange(self.size) if seeds.ndim == 0 else seeds
        if seeds.shape != (self.size,):
            raise ValueError(f"seed must be one int or {self.size} seeds, got shape {seeds.shape}")
        for gi, env in enumerate(self.groups):
            env.reset(seed=seeds[self.copies[gi]])
            self._gather(gi)
        return self.obs_buf, self.masks

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """actions int (B, N) -> obs, rewards, terminated, truncated, infos (as a generated BatchEnv)."""
        actions = np.asarray(actions)
        if actions.dtype.kind not in "iu":  # each group checks the values (naming the copy in its group)
            raise ValueError(f"actions must be an integer array of shape ({self.size}, {self.N_AGENTS}) (-1 = no action), "
                             f"got dtype {actions.dtype}; nothing is truncated or parsed here")
        if actions.shape[:1] != (self.size,):
            raise ValueError(f"actions must have shape ({self.size}, {self.N_AGENTS}), got {actions.shape}")
        parts: list[tuple[Any, ...]] = []
        for gi, env in enumerate(self.groups):
            self._finished[gi] = None
            parts.append(env.step(actions[self._sel[gi]]))
            self._gather(gi)
        rewards = self._scatter([p[1] for p in parts])
        term = self._scatter([p[2] for p in parts])
        trunc = self._scatter([p[3] for p in parts])
        finished = [(gi, f) for gi, f in enumerate(self._finished) if f is not None]
        done_keys = set().union(*(f.keys() for _, f in finished)) if finished else set()
        infos = self._merge_per_copy([{k: v for k, v in p[4].items() if k not in done_keys} for p in parts])
        if finished:
            infos.update(self._merge_finished(finished))
        return self.obs_buf, rewards, term, trunc, infos

    # ------------------------------------------------------------------ merging
    def _scatter(self, xs: list[Any]) -> Any:
        """Per-group arrays (K_g, ...) -> one (B, ...) array in global copy order."""
        first = np.asarray(xs[0])
        out = np.empty((self.size,) + first.shape[1:], dtype=np.result_type(*xs))
        for sel, x in zip(self._sel, xs, strict=True):
            out[sel] = x
        return out

    def _merge_per_copy(self, infos: list[Any]) -> Any:
        first = infos[0]
        if isinstance(first, dict):
            return {k: self._merge_per_copy([d[k] for d in infos]) for k in first if all(k in d for d in infos)}
        if isinstance(first, np.ndarray) and all(isinstance(x, np.ndarray) and x.shape[:1] == (len(c),)
                                                 for x, c in zip(infos, self.copies, strict=True)):
            if all(x.shape[1:] == first.shape[1:] for x in infos):
                return self._scatter(infos)
        return first

    def _merge_finished(self, finished: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
        """Episode results of the groups -> one set ordered by global copy index."""
        idx = np.concatenate([self.copies[gi][f["done_idx"]] for gi, f in finished])
        order = np.argsort(idx, kind="stable")

        def cat(xs: list[Any]) -> Any:
            if isinstance(xs[0], dict):
                return {k: cat([x[k] for x in xs]) for k in xs[0] if all(k in x for x in xs)}
            arrays = [np.asarray(x) for x in xs]
            if any(a.shape[1:] != arrays[0].shape[1:] for a in arrays):
                return None
            return np.concatenate(arrays)[order]

        out: dict[str, Any] = {"done_idx": idx[order]}
        keys = [k for k in finished[0][1] if k != "done_idx" and all(k in f for _, f in finished)]
        if len(set(self.state_dims())) > 1:  # no one global state: never report one (not just sometimes)
            keys = [k for k in keys if k != "final_state"]
        for k in keys:
            merged = cat([f[k] for _, f in finished])
            if merged is not None:  # results whose shapes differ across groups are left out
                out[k] = merged
        return out

    # ------------------------------------------------------------------ global state
    def state_dims(self) -> list[int]:
        """The width of each group's `state()` (after a reset)."""
        if self._state_dims is None:
            self._state_dims = [int(env.state().shape[1]) for env in self.groups]
        return list(self._state_dims)

    def state(self) -> np.ndarray:
        """Global state per copy (B, S), for centralized critics; only where the groups' widths agree."""
        dims = self.state_dims()
        if len(set(dims)) > 1:
            j = next(i for i, d in enumerate(dims) if d != dims[0])
            a, b = self.group_params[0], self.group_params[j]
            raise GymwrightError(
                f"params {_fmt(a)} and {_fmt(b)} give global states of different widths ({dims[0]} vs {dims[j]})"
                + self._differs(a, b) + ": a centralized critic (MAPPO) needs one state shape for the whole batch",
                path="algo",
                hint="train this mixture with algo='ippo' (its critic reads the observations, whose shapes agree), "
                     "or mix only configs whose states have the same shape",
            )
        return self._scatter([env.state() for env in self.groups])

    # ------------------------------------------------------------------ scripted baselines
    @property
    def BASELINES(self) -> Any:  # noqa: N802 - the generated BatchEnv's name
        return getattr(self.groups[0], "BASELINES", ())

    def scripted_actions(self, name: str, with_rule: bool = False, rng: Any = None) -> Any:
        """The spec's scripted baseline `name` on every copy (see the generated `scripted_actions`;
        with `rng`, where no rule applies a random legal action, drawn in row-major order over
        the whole batch)."""
        parts = [env.scripted_actions(name, with_rule) for env in self.groups]
        act = self._scatter([a for a, _ in parts] if with_rule else parts)
        if rng is not None:
            act = fill_random_legal(act, self.masks, rng)
        return (act, self._scatter([r for _, r in parts])) if with_rule else act
