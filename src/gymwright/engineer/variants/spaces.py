"""Whether a policy's shapes survive a spec edit: the same roles, observation sizes and action counts.

A stage whose edit keeps every role's observation and action space may keep its policy as it is;
otherwise it must restart the policy (or carry over what it can, matched by name) and say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gymwright.compile.build import check


@dataclass
class SpaceMatch:
    same: bool
    differences: list[str] = field(default_factory=list)
    """one line per difference (`bargainer: actions 13 -> 14`), empty when `same`"""

    def __bool__(self) -> bool:
        return self.same

    def describe(self) -> str:
        return ("the same observation and action spaces for every role: the policy carries over as it is" if self.same
                else "the spaces differ (" + "; ".join(self.differences) + "): the policy cannot carry over as it is")


def same_spaces(parent: Any, child: Any, parent_params: dict[str, Any] | None = None,
                child_params: dict[str, Any] | None = None) -> SpaceMatch:
    """Compare per role the flat observation size and the number of actions of two specs (each at
    its params; `child_params` defaults to `parent_params`). The agent count may differ: a policy
    shared by a role runs for any number of its agents."""
    a = check(parent, parent_params)
    b = check(child, parent_params if child_params is None else child_params)
    roles_a, roles_b = {r.name: r for r in a.roles}, {r.name: r for r in b.roles}
    diffs = [f"role {r} is gone" for r in roles_a if r not in roles_b]
    diffs += [f"role {r} is new" for r in roles_b if r not in roles_a]
    for name in roles_a.keys() & roles_b.keys():
        ra, rb = roles_a[name], roles_b[name]
        if ra.obs_dim != rb.obs_dim:
            diffs.append(f"{name}: observation size {ra.obs_dim} -> {rb.obs_dim}")
        if ra.n_actions != rb.n_actions:
            diffs.append(f"{name}: actions {ra.n_actions} -> {rb.n_actions}")
    return SpaceMatch(not diffs, sorted(diffs))
