"""Check a whole spec: resolve names, type every expression, fix every shape.

`check_spec(spec, params)` returns the `CheckedSpec` (None if there were errors) and the
list of diagnostics. It keeps going after an error so that one run reports as much as it
can: the repair loop needs every finding at once.

Each section's checks are functions of one `CheckContext` (`spec/checks/context.py`), in their own
module (`spec/checks/`: params, agents, variables, actions, rules, outcomes, observe, text, probes,
baselines); each mechanics module of the registry (`gymwright/mechanics/registry.py`) brings its
own (`checks.py` in its folder). `run` calls them in the order a spec's names become known.
"""

from __future__ import annotations

from typing import Any

from gymwright.diagnostic import Diagnostic, has_errors
from gymwright.mechanics.registry import MECHANICS
from gymwright.spec.checked import CheckedSpec
from gymwright.spec.checks.actions import check_actions, check_turns
from gymwright.spec.checks.agents import check_builtins, check_roles
from gymwright.spec.checks.baselines import check_baselines
from gymwright.spec.checks.context import CheckContext
from gymwright.spec.checks.observe import check_observe
from gymwright.spec.checks.outcomes import check_agent_end, check_end, check_metrics, check_rewards
from gymwright.spec.checks.params import (
    check_constraints,
    check_consts,
    check_params,
    check_shape_params,
)
from gymwright.spec.checks.probes import check_probes
from gymwright.spec.checks.rules import check_rules
from gymwright.spec.checks.text import check_text
from gymwright.spec.checks.variables import check_vars
from gymwright.spec.limits import count_diagnostics
from gymwright.spec.model import EnvSpec


def check_spec(spec: EnvSpec, params: dict[str, Any] | None = None) -> tuple[CheckedSpec | None, list[Diagnostic]]:
    """Check `spec` under the param assignment `params` (defaults for the rest)."""
    too_many = count_diagnostics(spec)  # refused before any work that grows with the counts
    if too_many:
        return None, too_many
    ctx = CheckContext(spec, dict(params or {}))
    result = run(ctx)
    return (None if has_errors(ctx.diags) else result), ctx.diags


def run(ctx: CheckContext) -> CheckedSpec | None:
    """Every section's checks, in the order a spec's names become known."""
    check_params(ctx)
    constraints = check_constraints(ctx)
    check_consts(ctx)
    check_roles(ctx)
    if not ctx.roles:
        return None
    check_builtins(ctx)
    for m in MECHANICS.values():  # its section, names and variables (before the spec's own)
        m.checks.declare(ctx, getattr(ctx.spec, m.name))
    state = check_vars(ctx, "state", per_agent=False)
    agent_state = check_vars(ctx, "agent_state", per_agent=True)
    check_actions(ctx)
    active = check_turns(ctx)
    late = [m.checks.after_actions(ctx) for m in MECHANICS.values()]  # what reads the actions and turns
    rules = check_rules(ctx)
    check_rewards(ctx)
    metrics = check_metrics(ctx)
    terminate, truncate = check_end(ctx, "terminate"), check_end(ctx, "truncate")
    agent_end = check_agent_end(ctx)
    check_observe(ctx)
    text_render = check_text(ctx)
    baselines = check_baselines(ctx)
    ctx.structural |= ctx.shape_names & set(ctx.spec.params)
    probes = check_probes(ctx, metrics, ctx.builtin_state + state + ctx.builtin_agent_state + agent_state)
    check_shape_params(ctx)
    if has_errors(ctx.diags) or not all(late) or terminate is None or truncate is None:
        return None
    return CheckedSpec(
        spec=ctx.spec, params=ctx.params,
        param_types={k: p.type or "float" for k, p in ctx.spec.params.items()},
        structural=ctx.structural, consts=ctx.consts, roles=ctx.roles,
        state=ctx.builtin_state + state, agent_state=ctx.builtin_agent_state + agent_state,
        rules=rules, metrics=metrics, terminate=terminate, truncate=truncate,
        active=active, mechanics=ctx.mechanics, builtin_values=ctx.builtin_values, text_render=text_render,
        probes=probes, symbols=ctx.symbols, n_sites=ctx.sites[0], used=ctx.used,
        arg_names=ctx.arg_dtypes, choice_names=ctx.choice_names, baselines=baselines, constraints=constraints,
        agent_end=agent_end,
    )
