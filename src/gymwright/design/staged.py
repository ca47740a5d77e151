"""Spec mode: the four-stage designer and its repair loop.

1. roles, goals and what success means;  2. state, actions, episode start and end;
3. reward terms, with the reasoning about hacking and equilibria;  4. the spec itself, as JSON
validated against the schema. Each stage's plan is carried into the next stage's prompt; the
spec stage also gets the generated spec-language reference and 1-2 library specs of the task's
kind of game (`choose_examples`). After every spec the verifier runs; on errors its report
(`to_prompt()`) goes back to the model with the previous spec, up to `max_repairs` times.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymwright.design.plans import STAGE_PLANS, carried, length_limits
from gymwright.design.prompts import (
    EXAMPLES_BUDGET,
    PromptSet,
    compact_json,
    example_block,
    mechanics_of,
    planning_shapes,
    spec_keys,
    spec_reference,
)
from gymwright.design.retrieval import (
    game_types,
    library_game_types,
    names_the_library_spec,
    rank_library,
)
from gymwright.design.session import DesignSession, DesignStopped, ReplyUnusable
from gymwright.llm.base import Message
from gymwright.mechanics.registry import MECHANICS as REGISTRY
from gymwright.spec.names import spec_note
from gymwright.spec.reference import MECHANICS
from gymwright.verify.report import VerificationReport

N_EXAMPLES = 2
# A spec prompt (with the grid reference, 20 KB) keeps under 30 KB with the system prompt and
# schema: a second example only while it fits, else the one example trimmed, else compact.
SPEC_PROMPT_CAP = 28_500
# Without a mechanics module the reference is smaller, and the prompt is held to 25 KB with the
# system prompt (issue 17's target): fewer or shorter examples, never a shorter reference.
PLAIN_PROMPT_CAP = 24_000
# Room left for the findings when a repair is held to the spec prompt's size (a six-line
# verifier report, or a review's failed checks, are well under 2,000 characters).
REPAIR_FINDINGS_ROOM = 2_000
# A spec-stage request is held to "a JSON object" only: the whole EnvSpec schema (26 KB) would
# repeat the reference the prompt already has; the verifier's schema stage checks the reply.
SPEC_SCHEMA: dict[str, Any] = {"type": "object"}


def nearest_examples(task: str, n: int = N_EXAMPLES,
                     mechanics: frozenset[str] | None = None) -> list[str]:
    """The library specs offered as few-shot examples, best first (`choose_examples`)."""
    return choose_examples(task, n, mechanics)[0]


def _module_kinds(mechanics: frozenset[str]) -> frozenset[str]:
    """The kinds of game the plan's mechanics modules make it (a `grid` plan is grid movement),
    from each module's name and description in the registry."""
    kinds: frozenset[str] = frozenset()
    for name in mechanics:
        mech = REGISTRY.get(name)
        if mech is not None:
            kinds |= game_types(f"{mech.name} {mech.doc}")
    return kinds


def choose_examples(task: str, n: int = N_EXAMPLES, mechanics: frozenset[str] | None = None,
                    ) -> tuple[list[str], str]:
    """The library specs offered as examples, and how the prompt introduces them.

    With `mechanics`, only specs that use no module outside it (the reference covers no other).
    First a spec the task names ("a sealed-bid auction"), introduced as the library's own version
    of that game, not as an example of something else; then specs of a kind of game the task is
    (`retrieval.game_types` of the task text, and of the plan's modules), nearest first. When none
    is of the task's kind, the nearest one is shown for the language only, and said so: a
    two-car intersection gets no commons as if it were one."""
    ranked = [m.name for m in rank_library(task)]
    if mechanics is not None:
        ranked = [x for x in ranked if mechanics_of(x) <= mechanics]
    kinds = game_types(task) | _module_kinds(mechanics or frozenset())
    own = [x for x in ranked if names_the_library_spec(task, x)]
    alike = [x for x in ranked if x not in own and library_game_types(x) & kinds]
    chosen = (own + alike)[:n]
    parts = []
    if any(x in own for x in chosen):
        named = ", ".join(f"`{x}`" for x in chosen if x in own)
        parts.append(f"{named}: the library's own version of the game the task names; follow the "
                     "task wherever they differ.")
    if any(x not in own for x in chosen):
        named = ", ".join(f"`{x}`" for x in chosen if x not in own)
        shared = sorted(set().union(*(library_game_types(x) & kinds for x in chosen if x not in own)))
        parts.append(f"{named}: the same kind of game ({', '.join(shared)}), not the task's rules.")
    if not chosen and ranked:
        chosen = ranked[:1]
        kind = f" ({', '.join(sorted(kinds))})" if kinds else ""
        parts.append(f"No library spec is the task's kind of game{kind}: `{chosen[0]}` shows the "
                     "language only, not its rules.")
    return chosen, " ".join(parts)


def mechanics_guide() -> str:
    """What each mechanics module does, one item each, for stage 2 (the model picks the modules
    there): generated from the registry, each module's section docstring (what it adds, its
    options) and the keys it adds to an action choice, so a new module or option shows here."""
    lines = []
    for mech in REGISTRY.values():
        doc = " ".join((mech.section.__doc__ or mech.doc).split())
        keys = " ".join(f"A choice's `{key}`: {info.description}" for key, (_, info) in mech.choice_fields.items())
        lines.append(f"- `{mech.name}`: {doc} {keys}".rstrip())
    return "\n".join(lines)


def plan_stages(session: DesignSession, task: str) -> dict[str, str]:
    """Stages 1-3; each plan (compact JSON) is carried into the next prompt."""
    plans: dict[str, str] = {}
    for stage, model in STAGE_PLANS.items():
        user = session.prompts.render(stage, task=task, limits=length_limits(),
                                      shapes=planning_shapes(), mechanics=mechanics_guide(), **plans)
        value, _ = session.ask_json(stage, [session.system(), Message("user", user)],
                                    model.model_json_schema(), model.model_validate)
        plans[stage] = compact_json(carried(value))
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
    plan asks for, the examples of `choose_examples` as YAML (held to `SPEC_PROMPT_CAP`, `PLAIN_PROMPT_CAP` without mechanics)."""
    mechanics = planned_mechanics(plans)
    n, budget, short = (1 if compact else N_EXAMPLES), EXAMPLES_BUDGET, compact
    while True:
        examples, intro = choose_examples(task, n, mechanics)
        block = example_block(examples, short, budget)
        user = prompts.render("spec", task=task, reference=spec_reference(compact, mechanics),
                              examples=f"{intro}\n\n{block}" if intro else block, keys=spec_keys(),
                              names=spec_note(), **plans)
        if len(user.encode()) <= (SPEC_PROMPT_CAP if mechanics else PLAIN_PROMPT_CAP) or not examples or short:
            return user, examples
        if len(examples) > 1:  # a second example only while the prompt stays under the cap,
            n = len(examples) - 1
        elif budget:  # then the one example trimmed (no prose doc, two probes: `example_block`),
            budget = 0
        else:  # then as compact JSON without doc, text and baselines, with one probe
            short = True


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
