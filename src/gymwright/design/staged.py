"""Spec mode: the four-stage designer and its repair loop.

1. roles, goals and what success means;  2. state, actions, episode start and end;
3. reward terms, with the reasoning about hacking and equilibria;  4. the spec itself, as JSON
validated against the schema. Each stage's plan is carried into the next stage's prompt; the
spec stage also gets the generated spec-language reference and the 1-2 library specs nearest
the task. After every spec the verifier runs; on errors its report (`to_prompt()`) goes back to
the model with the previous spec, up to `max_repairs` times.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymwright.design.plans import STAGE_PLANS, length_limits
from gymwright.design.prompts import (
    PromptSet,
    compact_json,
    example_block,
    mechanics_of,
    planning_shapes,
    spec_keys,
    spec_reference,
)
from gymwright.design.retrieval import rank_library
from gymwright.design.session import DesignSession, DesignStopped, ReplyUnusable
from gymwright.llm.base import Message
from gymwright.spec.reference import MECHANICS
from gymwright.verify.report import VerificationReport

N_EXAMPLES = 2
# Room left for the findings when a repair is held to the spec prompt's size (a six-line
# verifier report, or a review's failed checks, are well under 2,000 characters).
REPAIR_FINDINGS_ROOM = 2_000
# A spec-stage request is held to "a JSON object" only: the whole EnvSpec schema (26 KB) would
# repeat the reference the prompt already has; the verifier's schema stage checks the reply.
SPEC_SCHEMA: dict[str, Any] = {"type": "object"}


def nearest_examples(task: str, n: int = N_EXAMPLES,
                     mechanics: frozenset[str] | None = None) -> list[str]:
    """The library specs nearest the task (few-shot examples), best first; with `mechanics`,
    only those that use no mechanics module outside it (a non-grid task gets no grid example)."""
    names = [m.name for m in rank_library(task)]
    if mechanics is not None:
        names = [n_ for n_ in names if mechanics_of(n_) <= mechanics]
    return names[:n]


def plan_stages(session: DesignSession, task: str) -> dict[str, str]:
    """Stages 1-3; each plan (compact JSON) is carried into the next prompt."""
    plans: dict[str, str] = {}
    for stage, model in STAGE_PLANS.items():
        user = session.prompts.render(stage, task=task, limits=length_limits(),
                                      shapes=planning_shapes(), **plans)
        value, _ = session.ask_json(stage, [session.system(), Message("user", user)],
                                    model.model_json_schema(), model.model_validate)
        plans[stage] = compact_json(value.model_dump(mode="json", exclude_defaults=True))
    return plans


def planned_mechanics(plans: dict[str, str]) -> frozenset[str]:
    """The mechanics modules the dynamics plan asks for."""
    import json

    try:
        asked = json.loads(plans.get("dynamics", "{}")).get("mechanics", [])
    except (ValueError, AttributeError):
        asked = []
    return frozenset(str(x) for x in asked if x in MECHANICS)


def render_spec_prompt(prompts: PromptSet, task: str, plans: dict[str, str],
                       compact: bool = False) -> tuple[str, list[str]]:
    """The spec-stage user prompt and its examples: the reference with only the mechanics the
    plan asks for, the nearest library specs that use no other mechanics, as YAML."""
    mechanics = planned_mechanics(plans)
    examples = nearest_examples(task, 1 if compact else N_EXAMPLES, mechanics)
    user = prompts.render("spec", task=task, reference=spec_reference(compact, mechanics),
                          examples=example_block(examples, compact), keys=spec_keys(), **plans)
    return user, examples


def render_repair_context(prompts: PromptSet, task: str, plans: dict[str, str],
                          compact: bool = False) -> str:
    """The first user message of every repair: the task and the same reference, no examples
    and no plans (a repair is about the spec in front of the model and its findings)."""
    return prompts.render("repair_context", task=task, keys=spec_keys(),
                          reference=spec_reference(compact, planned_mechanics(plans)))


def fitted_repair_context(prompts: PromptSet, task: str, plans: dict[str, str], previous: str,
                          spec_chars: int, compact: bool = False) -> str:
    """The repair's opening with the full reference while the repair (this, the previous spec
    and room for the findings) stays within the spec prompt's `spec_chars`, else with the
    compact reference (a long previous spec): a repair is never longer than the spec prompt."""
    context = render_repair_context(prompts, task, plans, compact)
    if len(context) + len(previous) + REPAIR_FINDINGS_ROOM > spec_chars:
        context = render_repair_context(prompts, task, plans, compact=True)
    return context


def spec_prompt(session: DesignSession, task: str, plans: dict[str, str]) -> list[Message]:
    compact = session.short_context
    user, examples = render_spec_prompt(session.prompts, task, plans, compact)
    mechanics = ", ".join(sorted(planned_mechanics(plans))) or "none"
    session.note("spec", f"few-shot examples: {', '.join(examples) or 'none'}; mechanics: {mechanics}"
                         + (" (compact prompt for a short context)" if compact else ""))
    return [session.system(), Message("user", user)]


def as_spec_dict(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ReplyUnusable(f"expected a JSON object (the spec), got {type(data).__name__}")
    return data


def write_spec(session: DesignSession, base: list[Message],
               repair_base: Callable[[str], list[Message]] | None = None,
               ) -> tuple[dict[str, Any] | None, VerificationReport | None]:
    """Stage 4 and the repair loop: the passing spec, or None and the last report."""
    return session.repair_loop("spec", base, SPEC_SCHEMA,
                               lambda text: session.parse_reply(text, as_spec_dict),
                               repair_base=repair_base)


def run_spec_mode(session: DesignSession, task: str) -> tuple[dict[str, Any] | None, VerificationReport | None]:
    plans = plan_stages(session, task)
    base = spec_prompt(session, task, plans)
    budget = sum(len(m.content) for m in base)

    def repair_base(previous: str) -> list[Message]:
        context = fitted_repair_context(session.prompts, task, plans, previous, budget,
                                        session.short_context)
        return [session.system(), Message("user", context)]

    spec, report = write_spec(session, base, repair_base)
    if spec is None and report is None:
        raise DesignStopped(
            f"the model gave no spec that parses in {session.max_repairs + 1} tries",
            hint="try a stronger model (--model), or raise --max-repairs")
    return spec, report
