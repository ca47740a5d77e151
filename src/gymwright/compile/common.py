"""What both backends' generators share: the env class name, the spec hash and versioned name,
the render modes, the step rules' groups, a baseline rule's action text and the generated check
of a baseline name."""

from __future__ import annotations

import ast
from typing import Any

from gymwright.compile.inline import runtime
from gymwright.mechanics.registry import MECHANICS
from gymwright.spec.checked import CheckedSpec, CRule, CVar
from gymwright.spec.digest import spec_hash as store_spec_hash


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


def spec_sha(cs: CheckedSpec) -> str:
    """The spec's content hash: sha256 (hex) of its canonical JSON after schema validation (every
    default written out), by the function that addresses specs in the store (`spec_hash` of
    spec/digest, which the store applies to a spec as given). It names what the spec says, not
    how its file is written: key order, layout, comments and omitted defaults do not change it,
    and it is the same in every process and on every machine."""
    return store_spec_hash(cs.spec.model_dump(mode="json", by_alias=True))


def spec_hash(cs: CheckedSpec) -> str:
    """`spec_sha`, shortened to 16 hex digits (the module's `SPEC_HASH`)."""
    return spec_sha(cs)[:16]


def versioned_name(cs: CheckedSpec) -> str:
    """The env's versioned name, `metadata['name']` of its module: `<spec name>_v<first 8 hex
    digits of spec_sha>` (PettingZoo's `rps_v2`, with the version read off the content)."""
    return f"{cs.spec.name}_v{spec_sha(cs)[:8]}"


def render_modes(cs: CheckedSpec) -> list[str]:
    """The env's render modes (`metadata['render_modes']`): an RGB frame where a mechanics module the
    spec uses draws one (a grid)."""
    frames = any(m.legend is not None for m in MECHANICS.values() if m.name in cs.mechanics)
    return ["ansi", "rgb_array", "human"] if frames else ["ansi", "human"]


def baseline_action_text(rule: Any) -> str:
    """A baseline rule's action as it reads in the spec: `propose(share=0.5)`."""
    args = ", ".join(f"{a.name}={value.source}" for a, value in rule.args)
    return f"{rule.choice.name}({args})" if args else rule.choice.name


def rule_groups(rules: list[CRule]) -> list[list[CRule]]:
    """The step rules in order, each exclusive group (`first:`, `else`) as one list."""
    out: list[list[CRule]] = []
    for rule in rules:
        if out and rule.group >= 0 and out[-1][0].group == rule.group:
            out[-1].append(rule)
        else:
            out.append([rule])
    return out


def inits_after_start(cs: CheckedSpec) -> list[tuple[CVar, tuple[str, ...]]]:
    """The variables whose `init` reads another variable, directly or through that one's init,
    in declaration order, each with the names whose given start value (reset's
    `options={'state': ...}`, a probe's `start:`) makes its init run again after the given values
    are set: a total drawn from food levels follows the food levels a scenario gives."""
    names = {var.name for var in cs.state + cs.agent_state}
    reach: dict[str, set[str]] = {}
    out = []
    for var in cs.state + cs.agent_state:
        if var.builtin or var.init is None:
            continue
        read = {n.id for n in ast.walk(var.init.tree) if isinstance(n, ast.Name) and n.id in names} - {var.name}
        deps = set(read).union(*(reach.get(d, set()) for d in read))
        reach[var.name] = deps
        if deps:
            out.append((var, tuple(sorted(deps))))
    return out
