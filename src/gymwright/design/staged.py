"""Spec mode: the four-stage designer and its repair loop.

1. roles, goals and what success means;  2. state, actions, episode start and end;
3. reward terms, with the reasoning about hacking and equilibria;  4. the spec itself, as JSON
validated against the schema. Each stage's plan is carried into the next stage's prompt; the
spec stage also gets the generated spec-language reference and the 1-2 library specs nearest
the task. After every spec the verifier runs; on errors its report (`to_prompt()`) goes back to
the model with the previous spec, up to `max_repairs` times.
"""

from __future__ import annotations

from typing import Any

from gymwright.design.plans import STAGE_PLANS
from gymwright.design.prompts import compact_json, example_block, spec_reference
from gymwright.design.retrieval import rank_library
from gymwright.design.session import DesignSession, DesignStopped, ReplyUnusable
from gymwright.llm.base import Message
from gymwright.spec.model import EnvSpec
from gymwright.verify.report import VerificationReport

N_EXAMPLES = 2


def nearest_examples(task: str, n: int = N_EXAMPLES) -> list[str]:
    """The library specs nearest the task (few-shot examples), best first."""
    return [m.name for m in rank_library(task)[:n]]


def plan_stages(session: DesignSession, task: str) -> dict[str, str]:
    """Stages 1-3; each plan (compact JSON) is carried into the next prompt."""
    plans: dict[str, str] = {}
    for stage, model in STAGE_PLANS.items():
        user = session.prompts.render(stage, task=task, **plans)
        value, _ = session.ask_json(stage, [session.system(), Message("user", user)],
                                    model.model_json_schema(), model.model_validate)
        plans[stage] = compact_json(value.model_dump(mode="json", exclude_defaults=True))
    return plans


def spec_prompt(session: DesignSession, task: str, plans: dict[str, str]) -> list[Message]:
    compact = session.short_context
    examples = nearest_examples(task, 1 if compact else N_EXAMPLES)
    session.note("spec", f"few-shot examples: {', '.join(examples) or 'none'}"
                         + (" (compact prompt for a short context)" if compact else ""))
    user = session.prompts.render("spec", task=task, reference=spec_reference(compact),
                                  examples=example_block(examples, compact), **plans)
    return [session.system(), Message("user", user)]


def as_spec_dict(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ReplyUnusable(f"expected a JSON object (the spec), got {type(data).__name__}")
    return data


def write_spec(session: DesignSession, base: list[Message]) -> tuple[dict[str, Any] | None, VerificationReport | None]:
    """Stage 4 and the repair loop: the passing spec, or None and the last report."""
    return session.repair_loop("spec", base, EnvSpec.model_json_schema(),
                               lambda text: session.parse_reply(text, as_spec_dict))


def run_spec_mode(session: DesignSession, task: str) -> tuple[dict[str, Any] | None, VerificationReport | None]:
    plans = plan_stages(session, task)
    spec, report = write_spec(session, spec_prompt(session, task, plans))
    if spec is None and report is None:
        raise DesignStopped(
            f"the model gave no spec that parses in {session.max_repairs + 1} tries",
            hint="try a stronger model (--model), or raise --max-repairs")
    return spec, report
