"""Check a whole spec: resolve names, type every expression, fix every shape.

`check_spec(spec, params)` returns the `CheckedSpec` (None if there were errors) and the
list of diagnostics. It keeps going after an error so that one run reports as much as it
can: the repair loop needs every finding at once.

Each section's checks live in their own module (`spec/checks/`: params, agents, variables,
actions, rules, outcomes, observe, text, probes, baselines; `spec/mechanics/`: grid, channel);
`_Builder` composes them and `run` calls them in the order a spec's names become known.
"""

from __future__ import annotations

from typing import Any

from gymwright.diagnostic import Diagnostic, has_errors
from gymwright.spec.checked import CheckedSpec
from gymwright.spec.checks.actions import ActionChecks
from gymwright.spec.checks.agents import AgentChecks
from gymwright.spec.checks.baselines import BaselineChecks
from gymwright.spec.checks.observe import ObserveChecks
from gymwright.spec.checks.outcomes import OutcomeChecks
from gymwright.spec.checks.params import ParamChecks
from gymwright.spec.checks.probes import ProbeChecks
from gymwright.spec.checks.rules import RuleChecks
from gymwright.spec.checks.text import TextChecks
from gymwright.spec.checks.variables import VarChecks
from gymwright.spec.limits import count_diagnostics
from gymwright.spec.mechanics import CHECKS
from gymwright.spec.model import EnvSpec


def check_spec(spec: EnvSpec, params: dict[str, Any] | None = None) -> tuple[CheckedSpec | None, list[Diagnostic]]:
    """Check `spec` under the param assignment `params` (defaults for the rest)."""
    too_many = count_diagnostics(spec)  # refused before any work that grows with the counts
    if too_many:
        return None, too_many
    b = _Builder(spec, dict(params or {}))
    result = b.run()
    return (None if has_errors(b.diags) else result), b.diags


class _Builder(ParamChecks, AgentChecks, *CHECKS, VarChecks, ActionChecks, RuleChecks,
               OutcomeChecks, ObserveChecks, TextChecks, BaselineChecks, ProbeChecks):
    """One check of a spec: every section's checks (see the module docstring), run in order."""

    def run(self) -> CheckedSpec | None:
        self.check_params()
        self.check_consts()
        self.check_roles()
        if not self.roles:
            return None
        self.check_builtins()
        self.check_grid()
        self.check_channel()
        state = self.check_vars("state", per_agent=False)
        agent_state = self.check_vars("agent_state", per_agent=True)
        self.check_actions()
        active = self.check_turns()
        grid_late = self.check_grid_late()
        rules = self.check_rules()
        self.check_rewards()
        metrics = self.check_metrics()
        ends = [self.check_end(k) for k in ("terminate", "truncate")]
        self.check_observe()
        text_render = self.check_text()
        baselines = self.check_baselines()
        self.structural |= self.shape_names & set(self.spec.params)
        probes = self.check_probes(metrics, self.builtin_state + state + self.builtin_agent_state + agent_state)
        self.check_shape_params()
        if has_errors(self.diags) or self.grid is not None and not grid_late:
            return None
        return CheckedSpec(
            spec=self.spec, params=self.params,
            param_types={k: p.type or "float" for k, p in self.spec.params.items()},
            structural=self.structural, consts=self.consts, roles=self.roles,
            state=self.builtin_state + state, agent_state=self.builtin_agent_state + agent_state,
            rules=rules, metrics=metrics, terminate=ends[0], truncate=ends[1],  # type: ignore[arg-type]
            active=active, grid=self.grid, vocab=self.vocab, text_render=text_render,
            probes=probes, symbols=self.symbols, n_sites=self.sites[0], used=self.used,
            arg_names=self.arg_dtypes, choice_names=self.choice_names, baselines=baselines,
        )
